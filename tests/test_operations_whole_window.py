"""Statistics asked of the whole interval are computed, said with units, and right.

"mean, median and std of Bz", "peak solar wind speed", "min Dst", "5th, 50th and 95th
percentiles of |B|", "how many hours was Bz below -10 nT": no window or cadence is
stated, so each is computed over the whole requested interval, traced as a sandbox step
beside the plotted series, and said in the answer with its unit. A statistic with a
stated window or cadence stays a running or binned one.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from operations_support import computations, stored_frame, with_code
from xhelio.agents.offline.plan import build_plan
from xhelio.language.operations import operation_spans, whole_window_statistics
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.tools.workspace import Workspace


@pytest.mark.parametrize(
    ("text", "statistics"),
    [
        ("mean, median and std of Bz for 2003-10-29", ("mean", "median", "std")),
        ("what was the peak Vsw during the storm", ("max",)),
        ("min Dst of the storm", ("min",)),
        ("average density over the day", ("mean",)),
        ("percentiles (5/50/95) of |B|", ("p5", "p50", "p95")),
        ("the 10th and 90th percentile of the speed", ("p10", "p90")),
        ("how many hours was Bz < -10 nT", ("below:-10",)),
        ("total time with the speed above 600 km/s", ("above:600",)),
        ("variance of the density", ("var",)),
        ("max solar wind speed in 2003", ("max",)),
    ],
)
def test_statistics_of_the_whole_interval_are_read(text: str, statistics: tuple[str, ...]) -> None:
    assert whole_window_statistics(text, set(), []) == statistics


@pytest.mark.parametrize(
    "text",
    [
        "the peak of the storm in Dst",
        "ACE SWICS mean charge state of iron",
        "Wind |B| with its 27-day mean removed",
        "the 10 min average of Bz",
        "OMNI Bz on 2015-03-17",
        "OMNI solar wind speed at solar max",
        "GOES protons near the solar cycle 24 minimum",
    ],
)
def test_no_statistic_of_the_whole_interval_where_none_is_asked(text: str) -> None:
    durations = [m.span() for m in re.finditer(r"\d+\s*min\b", text)]
    assert whole_window_statistics(text, {""} if durations else set(), durations) == ()


def test_percentile_lists_are_operation_words_not_days() -> None:
    text = "5th, 50th and 95th percentiles of ACE |B| on 2015-03-17"
    assert any(a <= text.index("5th") and text.index("95th") < b for a, b in operation_spans(text))


@pytest.mark.parametrize(
    ("text", "statistic"),
    [
        ("standard deviation of ACE |B| on 2016-02-10", "std"),
        ("95th percentile of the Wind proton speed, 2019-06-01", "quantile(0.95)"),
        ("OMNI Bz variance for 2015-03-17", "var"),
        ("min Dst during 2015-03-17 to 2015-03-18", "min"),
    ],
)
def test_statistic_without_a_window_is_computed_over_the_interval(
    vocab: Vocabulary, text: str, statistic: str
) -> None:
    plan = build_plan(vocab, parse_request(text, vocab))
    assert not any(n.startswith("Not done") for n in plan.notes), plan.notes
    codes = [str(s.calls[0].args.get("code", "")) for s in plan.steps if s.kind == "compute"]
    assert any("whole interval" in c and statistic in c for c in codes), codes
    assert any(s.kind == "plot" for s in plan.steps)


def test_statistic_with_a_window_stays_a_window(vocab: Vocabulary) -> None:
    plan = build_plan(vocab, parse_request("hourly max of Wind proton speed 2019-06-01", vocab))
    codes = [str(s.calls[0].args.get("code", "")) for s in plan.steps if s.kind == "compute"]
    assert any("resample('3600s').max()" in c for c in codes), codes
    assert not any("whole interval" in c for c in codes), codes


def test_mean_median_std_match_numpy_and_are_said_with_units(workspace: Workspace) -> None:
    answer, ops = computations(workspace, "mean, median and std of OMNI Bz for 2015-03-17")
    op = with_code(ops, "whole interval")
    table = stored_frame(workspace, op["args"]["output_label"])
    source = stored_frame(workspace, op["args"]["source_labels"][0]).iloc[:, 0].astype(float)
    column = table.columns[0]
    assert table.loc["mean", column] == pytest.approx(np.nanmean(source))
    assert table.loc["median", column] == pytest.approx(np.nanmedian(source))
    assert table.loc["standard deviation", column] == pytest.approx(np.nanstd(source, ddof=1))
    assert re.search(r"median -?[\d.]+ nT", answer), answer
    assert "Plotted" in answer


def test_peak_is_said_with_its_time(workspace: Workspace) -> None:
    answer, ops = computations(workspace, "what was the peak Vsw at ACE on 2016-02-10")
    op = with_code(ops, ".max()")
    source = stored_frame(workspace, op["args"]["source_labels"][0]).iloc[:, 0].astype(float)
    said = re.search(r"maximum (-?[\d.]+) km/s at (\S+ \S+) UTC", answer)
    assert said is not None, answer
    assert float(said[1]) == pytest.approx(float(source.max()), rel=1e-3)
    assert said[2] == str(source.idxmax())[:19]


def test_time_below_a_threshold_is_counted_in_hours(workspace: Workspace) -> None:
    answer, ops = computations(workspace, "how many hours was the ACE Bz below 0 nT on 2016-02-10")
    op = with_code(ops, "< 0")
    source = stored_frame(workspace, op["args"]["source_labels"][0]).iloc[:, 0].astype(float)
    step = float(np.median(np.diff(source.index.asi8)) / 1e9)
    hours = float((source < 0).sum()) * step / 3600
    said = re.search(r"time below 0 nT (-?[\d.]+) h", answer)
    assert said is not None, answer
    assert float(said[1]) == pytest.approx(hours, rel=1e-3)


def test_threshold_words_are_no_layout_or_time(vocab: Vocabulary) -> None:
    intent = parse_request("how many hours was OMNI Bz below -10 nT on 2015-03-17", vocab)
    assert intent.plot.layout == "auto"
    assert not intent.time_unread and intent.time_range is not None
    assert [op.detail for op in intent.operations if op.kind == "statistics"] == ["below:-10"]
