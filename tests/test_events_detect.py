"""Storm, shock and SEP-onset detection: planted events found, none invented; real OMNI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from events_synthetic import dst_with_storms, proton_intensity_with_onsets, solar_wind_with_shocks
from xhelio.errors import UserError
from xhelio.events.sep import cusum_parameters, detect_sep_onsets
from xhelio.events.shipped import shipped_list
from xhelio.events.shocks import detect_shocks
from xhelio.events.storms import detect_storms, storm_class

REAL_OMNI = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "real"
    / "omni_hourly_1999-07_2001-10.csv"
)


@pytest.mark.parametrize("cadence", ["1h", "1min"])
def test_every_planted_storm_found_and_none_invented(cadence: str) -> None:
    dst, planted, dips = dst_with_storms(cadence=cadence)
    found = detect_storms(dst, threshold=-50).frame
    assert len(found) == len(planted)
    for storm, row in zip(planted, found.itertuples(), strict=True):
        assert abs(pd.Timestamp(row.minimum_time) - storm.minimum_time) <= pd.Timedelta("1h")
        assert abs(row.start - storm.onset) <= pd.Timedelta("3h")  # includes the +20 nT SSC
        assert row.minimum == pytest.approx(storm.minimum - 8, abs=15)  # quiet level -8 nT
        assert row.end > pd.Timestamp(row.minimum_time) and row.recovery_complete
        assert row._5 == storm_class(storm.minimum)  # the class column
    for dip in dips:  # -35 nT dips are weak at most, not storms at -50 nT
        assert not ((found["start"] <= dip + pd.Timedelta("1D")) & (found["end"] >= dip)).any()


def test_storm_result_states_definition_and_thresholds() -> None:
    dst, planted, _ = dst_with_storms()
    intense = detect_storms(dst, threshold=-100)
    assert len(intense) == sum(1 for s in planted if s.minimum <= -100)
    assert intense.method["threshold_nT"] == -100 and intense.method["recovery_level_nT"] == -50
    assert "Gonzalez" in intense.citation and "10.1029/93JA02867" in intense.citation
    assert set(intense.frame["class"]) == {"intense"}


def test_every_planted_shock_found_and_none_invented() -> None:
    wind, planted = solar_wind_with_shocks()
    found = detect_shocks(wind["B"], wind["V"], wind["n"], wind["T"]).frame
    assert len(found) == len(planted)  # the discontinuity and the speed ramp are not shocks
    for (when, kind), row in zip(planted, found.itertuples(), strict=True):
        assert abs(row.start - when) <= pd.Timedelta("5min")
        assert row.type == kind
        assert row.B_ratio >= 1.2 and row.n_ratio >= 1.2 and row.dV >= 20


def test_shock_criteria_without_temperature_are_said() -> None:
    wind, planted = solar_wind_with_shocks()
    found = detect_shocks(wind["B"], wind["V"], wind["n"])
    assert len(found) == len(planted)
    assert found.method["T_ratio_min"] == "not used (no T)"
    assert "Kilpua" in found.citation


def test_every_planted_sep_onset_found() -> None:
    counts, onsets = proton_intensity_with_onsets()
    found = detect_sep_onsets(counts, (counts.index[0], counts.index[600]))
    assert len(found) == len(onsets)
    for when, start in zip(onsets, found.frame["start"], strict=True):
        assert pd.Timedelta(0) <= start - when <= pd.Timedelta("10min")
    assert found.method["persistence_points"] == 30 and found.method["h"] in (1.0, 2.0)


def test_cusum_parameters_follow_the_paper() -> None:
    k, h = cusum_parameters(5.0, 2.0)  # mu_d = 9; k = 4 / ln(9/5) = 6.8 -> 7
    assert (k, h) == (7.0, 2.0)
    k, h = cusum_parameters(0.2, 0.05)  # k < 1 is kept unrounded, h = 1
    assert k < 1 and h == 1.0
    with pytest.raises(UserError, match="background"):
        cusum_parameters(0.0, 0.0)


def _real_dst() -> pd.Series:
    if not REAL_OMNI.is_file():
        pytest.skip("the shared real data is absent")
    table = pd.read_csv(REAL_OMNI)
    return pd.Series(table["Dst"].to_numpy(float), index=pd.to_datetime(table["Time"], utc=True))


def test_storms_in_the_real_omni_file() -> None:
    storms = detect_storms(_real_dst(), threshold=-100).frame
    minima = {
        str(t)[:10]: m for t, m in zip(storms["minimum_time"], storms["minimum"], strict=True)
    }
    # well-known intense storms of solar maximum 23 (WDC Kyoto Dst minima)
    assert minima["2000-07-16"] == pytest.approx(-301, abs=1)  # Bastille Day
    assert minima["2001-03-31"] == pytest.approx(-387, abs=1)
    assert minima["2000-04-07"] == pytest.approx(-288, abs=1)
    assert len(storms) == 25  # 2001-09-26, 10-01 and 10-03 apart, not one run
    print(storms[["start", "minimum_time", "minimum", "class", "end"]].to_string())


def test_shipped_storm_list_is_the_rule_applied_to_the_real_file() -> None:
    derived = detect_storms(_real_dst(), "omni-dst-storms-1999-2001").frame
    shipped = shipped_list("omni-dst-storms-1999-2001").frame
    pd.testing.assert_series_equal(derived["start"], shipped["start"])
    assert derived["minimum"].tolist() == shipped["minimum"].tolist()


def test_a_storm_starting_before_the_last_one_recovered_is_its_own_storm() -> None:
    """Dst recovers from -120 only to -45 nT (not to the -25 nT recovery level).

    Then a second storm reaches -95 nT: two storms, the first one's recovery interrupted.
    """
    times = pd.date_range("2015-01-01", periods=10 * 24, freq="1h", tz="UTC")
    hours = np.arange(len(times), dtype=float)
    dst = -8 + np.zeros(len(times))
    dst += np.where((hours >= 48) & (hours < 56), -112 * (hours - 48) / 8, 0)
    first = (hours >= 56) & (hours < 80)
    dst[first] = -120 + 75 * (hours[first] - 56) / 24  # back to -45 nT at 80 h
    second = (hours >= 80) & (hours < 90)
    dst[second] = -45 - 50 * (hours[second] - 80) / 10  # down to -95 nT at 90 h
    after = hours >= 90
    dst[after] = -8 - 87 * np.exp(-(hours[after] - 90) / 10)
    found = detect_storms(pd.Series(dst, index=times)).frame
    assert found["minimum"].tolist() == [-120.0, -95.0]
    assert not found["recovery_complete"].iloc[0] and found["recovery_complete"].iloc[1]
    assert found["end"].iloc[0] == found["start"].iloc[1] == times[80]
    assert found["main_phase_hours"].iloc[1] == 10.0
