"""Operations written the way physicists write them are done, and their values are right.

Each request runs end to end through the offline assistant against the catalog-wide
loopback HAPI server; the test reads the computed series back from the session store and
checks its values: a detrended series has no linear trend left, a percent difference is
100 (a - b) / mean(|a|, |b|) of the two fetched series; each statistic asked of the same
bins is computed. Several missions and phrasings per operation.
"""

from __future__ import annotations

import numpy as np
import pytest

from operations_support import computations, differences, stored_frame
from xhelio.tools.workspace import Workspace


@pytest.mark.parametrize(
    "text",
    [
        "ACE |B| for 2016-02-10 minus a linear fit",
        "Wind proton speed on 2019-06-01 with a linear fit subtracted",
        "OMNI flow speed 2015-03-15 to 2015-03-18, linear trend removed",
        "THEMIS-A FGM Bz on 2015-03-17, subtract a straight-line fit",
    ],
)
def test_detrended_series_has_no_linear_trend_left(workspace: Workspace, text: str) -> None:
    answer, ops = computations(workspace, text)
    detrends = [op for op in ops if "polyfit" in str(op["args"].get("code", ""))]
    assert detrends, answer
    frame = stored_frame(workspace, detrends[-1]["args"]["output_label"])
    seconds = (frame.index - frame.index[0]).total_seconds().to_numpy()
    for column in frame.columns:
        values = frame[column].to_numpy(dtype=float)
        ok = np.isfinite(values)
        slope, offset = np.polyfit(seconds[ok], values[ok], 1)
        scale = max(float(np.nanstd(values)), 1e-9)
        assert abs(slope) * seconds[-1] < 1e-6 * scale + 1e-9, (column, slope)
        assert abs(offset) < 1e-6 * scale + 1e-9, (column, offset)
    assert "trend removed" in answer


@pytest.mark.parametrize(
    "text",
    [
        "how much does Wind proton density differ from ACE proton density, in percent, 2016-02-10",
        "relative difference between ACE and Wind solar wind speed for 2016-02-10",
        "by what percentage does ACE |B| deviate from Wind |B| on 2016-02-10",
    ],
)
def test_percent_difference_values(workspace: Workspace, text: str) -> None:
    answer, ops = computations(workspace, text)
    percent = [op for op in ops if "100 * (a - b)" in str(op["args"].get("code", ""))]
    assert percent, answer
    op = percent[-1]
    result = stored_frame(workspace, op["args"]["output_label"]).iloc[:, 0]
    sources = [stored_frame(workspace, label) for label in op["args"]["source_labels"]]
    a, b = (s.iloc[:, 0].astype(float) for s in sources)
    b = b.reindex(b.index.union(a.index)).interpolate(method="time", limit_area="inside")
    b = b.reindex(a.index)
    expected = 100 * (a - b) / ((a.abs() + b.abs()) / 2)  # relative to the mean magnitude
    common = result.dropna().index.intersection(expected.dropna().index)
    assert len(common) > 10
    np.testing.assert_allclose(result[common], expected[common], rtol=1e-6, atol=1e-9)
    assert "percent" in answer.lower()


@pytest.mark.parametrize(
    ("text", "statistics"),
    [
        (
            "daily mean and max of the OMNI solar wind speed, 2015-03-10 to 2015-03-14",
            ("mean", "max"),
        ),
        ("hourly min, median and max of ACE Bz on 2016-02-10", ("min", "median", "max")),
        ("Wind |B| on 2019-06-01 in 3-hour bins: mean and standard deviation", ("mean", "std")),
    ],
)
def test_every_statistic_asked_of_the_same_bins_is_computed(
    workspace: Workspace, text: str, statistics: tuple[str, ...]
) -> None:
    answer, ops = computations(workspace, text)
    binned = [op for op in ops if "resample(" in str(op["args"].get("code", ""))]
    assert binned, answer
    op = binned[-1]
    result = stored_frame(workspace, op["args"]["output_label"])
    assert result.shape[1] == len(statistics), result.columns
    source = stored_frame(workspace, op["args"]["source_labels"][0])
    cadence = str(op["args"]["code"]).split("resample('")[1].split("'")[0]
    for column, statistic in zip(result.columns, statistics, strict=True):
        expected = getattr(source.iloc[:, 0].resample(cadence), statistic)()
        np.testing.assert_allclose(result[column], expected, rtol=1e-9, equal_nan=True)


@pytest.mark.parametrize(
    ("text", "moments", "field"),
    [
        ("ion beta from MMS1 FPI DIS moments and FGM, 2017-07-11", "MMS1_FPI_", "MMS1_FGM_"),
        (
            "Alfven speed from MMS2 FPI ion density and FGM field, 2017-07-11",
            "MMS2_FPI_",
            "MMS2_FGM_",
        ),
        ("proton beta from Wind SWE moments and MFI |B| on 2019-06-01", "WI_H1_SWE", "WI_H0_MFI"),
    ],
)
def test_derived_inputs_come_from_the_instrument_measuring_each(
    workspace: Workspace, text: str, moments: str, field: str
) -> None:
    answer, ops = computations(workspace, text)
    derived = ops[-1]["args"]["source_labels"]
    assert any(label.startswith(field) for label in derived), (derived, answer)
    assert any(label.startswith(moments) for label in derived), (derived, answer)
    assert "is not from" not in answer
    assert not differences(answer), answer
