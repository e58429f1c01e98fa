"""More operations as physicists write them: each done with its values right, or declined.

Time integrals ("fluence", "integrate over the day", "cumulative"), ratios written with a
slash ("Te/Ti", "Bz/|B|"), statistics in stated windows ("std in 5-min windows", "rolling
variance over 30 s") and element-wise transforms ("log10", "z-score", "normalised by the
mean", "lagged by 45 min"). Each request runs end to end through the offline assistant
against the catalog-wide loopback HAPI server; the values of the computed series are read
back from the session store and checked against numpy.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

from operations_support import computations, differences, stored_frame, with_code
from xhelio.agents.offline.plan import build_plan
from xhelio.catalog.index import open_catalog
from xhelio.language.operations import ratio_slashes
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.tools.workspace import Workspace


@pytest.mark.parametrize(
    ("text", "unit"),
    [
        ("integrate the OMNI flow speed over the day, 2015-03-17", "km"),
        ("cumulative AE index from OMNI for 2015-03-17", "nT s"),
        ("time-integrated Wind proton density over 2019-06-01 to 2019-06-02", " s"),
        ("running total of the ACE |B| on 2016-02-10", "nT s"),
    ],
)
def test_time_integral_is_the_cumulative_trapezoid(
    workspace: Workspace, text: str, unit: str
) -> None:
    answer, ops = computations(workspace, text)
    op = with_code(ops, "cumulative_trapezoid")
    result = stored_frame(workspace, op["args"]["output_label"]).iloc[:, 0]
    source = stored_frame(workspace, op["args"]["source_labels"][0]).iloc[:, 0].astype(float)
    ok = source.notna()
    seconds = (source.index - source.index[0]).total_seconds().to_numpy()[ok.to_numpy()]
    values = source[ok].to_numpy()
    steps = np.diff(seconds) * (values[1:] + values[:-1]) / 2
    expected = np.concatenate([[0.0], np.cumsum(steps)])
    np.testing.assert_allclose(result[ok].to_numpy(), expected, rtol=1e-9, atol=1e-9)
    assert np.isclose(result.dropna().iloc[-1], np.trapezoid(values, seconds))
    assert unit in op["args"]["units"], op["args"]
    assert "Time integral" in answer and "trapezoid" in answer, answer
    assert "Not done" not in answer, answer


def test_fluence_is_the_integral_of_a_flux_per_second_cancelled(workspace: Workspace) -> None:
    answer, ops = computations(
        workspace, "fluence of ACE EPAM particles over 2017-09-10 to 2017-09-12"
    )
    op = with_code(ops, "cumulative_trapezoid")
    units = op["args"]["units"]
    assert "cm" in units and re.search(r"(?<![a-z])s(?![a-z])", units) is None, units
    assert "total over the window" in answer


@pytest.mark.parametrize(
    ("text", "seconds", "statistic"),
    [
        ("std of ACE Bz in 5-min windows, 2016-02-10", 300, "std"),
        ("daily variance of the ACE solar wind speed, 2015-03-10 to 2015-03-14", 86400, "var"),
        ("10-min medians of OMNI Bz for 2015-03-17", 600, "median"),
    ],
)
def test_statistic_in_stated_windows_matches_numpy(
    workspace: Workspace, text: str, seconds: int, statistic: str
) -> None:
    answer, ops = computations(workspace, text)
    op = with_code(ops, f"resample('{seconds}s').{statistic}()")
    result = stored_frame(workspace, op["args"]["output_label"]).iloc[:, 0]
    source = stored_frame(workspace, op["args"]["source_labels"][0]).iloc[:, 0].astype(float)
    numpy_statistic = {
        "std": lambda v: np.std(v, ddof=1),
        "var": lambda v: np.var(v, ddof=1),
        "median": np.median,
    }[statistic]
    checked = 0
    for start, value in result.dropna().items():
        stop = start + pd.Timedelta(seconds=seconds)
        inside = source[(source.index >= start) & (source.index < stop)].dropna().to_numpy()
        assert np.isclose(value, numpy_statistic(inside), rtol=1e-9), (start, value)
        checked += 1
    assert checked >= 3
    assert "Not done" not in answer, answer


def test_rolling_variance_keeps_its_window(workspace: Workspace) -> None:
    answer, ops = computations(workspace, "rolling variance over 30 s of MMS1 |B| on 2017-07-11")
    with_code(ops, "rolling('30s', center=True, min_periods=1).var()")
    assert "running variance over 30 s" in answer, answer


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("PSP radial field with the running mean subtracted, 1-hour window, 2021-04-28", 3600),
        ("anomaly of the OMNI flow speed from the 27-day mean, 2015-01-01 to 2015-04-30", 2332800),
        ("ACE |B| minus its 2-hour running average on 2016-02-10", 7200),
    ],
)
def test_running_mean_removed_is_a_high_pass(workspace: Workspace, text: str, seconds: int) -> None:
    answer, ops = computations(workspace, text)
    op = with_code(ops, f"df - df.rolling('{seconds}s'")
    result = stored_frame(workspace, op["args"]["output_label"]).iloc[:, 0]
    source = stored_frame(workspace, op["args"]["source_labels"][0]).iloc[:, 0].astype(float)
    window = pd.Timedelta(seconds=seconds)
    for when in source.index[:: max(1, len(source) // 7)]:
        near = source[(source.index >= when - window / 2) & (source.index <= when + window / 2)]
        # pandas' centred time window holds the samples in (t - w/2, t + w/2]
        near = near[near.index > when - window / 2]
        expected = source[when] - np.mean(near.dropna().to_numpy())
        assert np.isclose(result[when], expected, rtol=1e-7, atol=1e-9), when
    assert "running mean" in answer and "removed" in answer, answer
    assert not any("smooth" in str(o["args"].get("description", "")) for o in ops), ops


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vocabulary]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XHELIO_HOME", str(tmp_path_factory.mktemp("home")))
        with open_catalog() as catalog:
            yield Vocabulary.from_catalog(catalog)


@pytest.mark.parametrize(
    "text",
    [
        "hourly max of Wind proton speed 2019-06-01 to 2019-06-03",
        "ACE |B| in 10 min averages on 2016-02-10",
        "the peak of the storm in OMNI Dst, 2015-03-17",
    ],
)
def test_statistic_computed_or_not_asked_is_not_said_not_done(vocab: Vocabulary, text: str) -> None:
    plan = build_plan(vocab, parse_request(text, vocab))
    assert not any(n.startswith("Not done") for n in plan.notes), plan.notes


@pytest.mark.parametrize(
    ("text", "first", "second"),
    [
        ("Te/Ti from MMS1 FPI on 2017-07-11", "DES-MOMS", "DIS-MOMS"),
        ("Ti / Te of MMS3 FPI, 2017-07-11", "DIS-MOMS", "DES-MOMS"),
        ("Bz/|B| at ACE on 2016-02-10", "AC_", "AC_"),
    ],
)
def test_slash_ratio_divides_the_two_quantities(
    workspace: Workspace, text: str, first: str, second: str
) -> None:
    answer, ops = computations(workspace, text)
    op = with_code(ops, "(a / b)")
    result = stored_frame(workspace, op["args"]["output_label"]).iloc[:, 0]
    a_label, b_label = op["args"]["source_labels"]
    a = stored_frame(workspace, a_label).iloc[:, 0].astype(float)
    b = stored_frame(workspace, b_label).iloc[:, 0].astype(float)
    b = b.reindex(b.index.union(a.index)).interpolate(method="time", limit_area="inside")
    expected = (a / b.reindex(a.index)).dropna()
    assert len(expected) > 10
    np.testing.assert_allclose(result[expected.index], expected, rtol=1e-9)
    fetched = [o for o in workspace.session.operations if o.get("tool") == "fetch_data"]
    assert first in fetched[0]["args"]["dataset_id"], fetched[0]["args"]
    assert second in fetched[1]["args"]["dataset_id"], fetched[1]["args"]
    assert not differences(answer) and "Not used" not in answer, answer


@pytest.mark.parametrize(
    ("text", "ratio"),
    [
        ("Te/Ti from MMS1 FPI on 2017-07-11", True),
        ("T_perp / T_par of the MMS1 ions", False),  # the derived anisotropy
        ("ACE Bz/|B| on 2016-02-10", True),
        ("ACE speed in km/s on 2016-02-10", False),
        ("STA/STB magnetic field on 2016-02-10", False),
        ("Wind Na/Np on 2019-06-01", False),  # the derived alpha/proton ratio
        ("ACE dB/dt on 2016-02-10", False),
    ],
)
def test_a_slash_is_a_ratio_only_between_two_quantities(text: str, ratio: bool) -> None:
    assert bool(ratio_slashes(text)) is ratio


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("z-score of ACE proton density for 2016-02-10", "zscore"),
        ("OMNI flow speed normalised by the mean, 2015-03-10 to 2015-03-14", "normalised"),
        ("log10 of Wind proton density, 2019-06-01", "log10"),
        ("absolute value of OMNI Bz GSM, 2015-03-17", "abs"),
        ("first difference of ACE |B| on 2017-09-07", "first_difference"),
    ],
)
def test_element_wise_transform_matches_numpy(workspace: Workspace, text: str, key: str) -> None:
    answer, ops = computations(workspace, text)
    piece = {
        "zscore": "df.std()",
        "normalised": "df / df.mean()",
        "log10": "np.log10",
        "abs": ".abs()",
        "first_difference": ".diff()",
    }
    op = with_code(ops, piece[key])
    result = stored_frame(workspace, op["args"]["output_label"]).iloc[:, 0].to_numpy(dtype=float)
    v = stored_frame(workspace, op["args"]["source_labels"][0]).iloc[:, 0].to_numpy(dtype=float)
    expected = {
        "zscore": (v - np.nanmean(v)) / np.nanstd(v, ddof=1),
        "normalised": v / np.nanmean(v),
        "log10": np.log10(np.where(v > 0, v, np.nan)),
        "abs": np.abs(v),
        "first_difference": np.concatenate([[np.nan], v[1:] - v[:-1]]),
    }[key]
    np.testing.assert_allclose(result, expected, rtol=1e-9, equal_nan=True)
    assert "Not done" not in answer, answer


def test_time_shift_is_said_not_done(vocab: Vocabulary) -> None:
    text = "THEMIS-A FGM |B| on 2015-03-17 lagged by 45 min"
    plan = build_plan(vocab, parse_request(text, vocab))
    assert any(n.startswith("Not done: time shift") for n in plan.notes), plan.notes


@pytest.mark.parametrize(
    "text",
    [
        "THA_L2_FFT tha_fff_16_dbpara spectral density 2015-03-17",
        "PSD of THA_L2_FFT tha_fff_16_dbpara on 2015-03-17",
    ],
)
def test_a_spectral_density_is_shown_not_respectralised(workspace: Workspace, text: str) -> None:
    answer, ops = computations(workspace, text)
    assert "already a spectral density ((nT)^2/Hz)" in answer, answer
    assert not any("power spectral" in str(op).lower() for op in ops), ops


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("ACE Bz with a 3 point median filter, 2016-02-10", "rolling(3, center=True"),
        ("OMNI Bz median-filtered (5 min), 2015-03-17", "rolling('300s', center=True"),
        ("ACE |B| filtered with a 7-point median, 2016-02-10", "rolling(7, center=True"),
    ],
)
def test_a_median_filter_is_a_running_median(workspace: Workspace, text: str, call: str) -> None:
    # Not the median of the whole interval, and the window is no product cadence.
    answer, ops = computations(workspace, text)
    op = with_code(ops, call)
    assert op["args"]["code"].rstrip().endswith(".median()"), op["args"]["code"]
    assert "over the whole interval" not in answer and "Differs" not in answer, answer
