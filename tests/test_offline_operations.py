"""Offline operations are done with the parameters the request states, or declined in words.

Each request runs through `run_turn` against the catalog-wide loopback HAPI server, and
the test reads the computations the turn made (the sandbox code or the analysis method)
and the answer. A stated window is the window used; an operation offline mode cannot do
is named in the answer as not done.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from xhelio.agents.factory import make_assistant
from xhelio.agents.offline.plan import build_plan
from xhelio.agents.turn import run_turn
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.tools.workspace import Workspace

DAY = "2016-02-10"


def _turn(ws: Workspace, text: str) -> tuple[str, list[dict[str, Any]]]:
    assistant, _ = make_assistant(ws)
    first = len(ws.session.operations)
    result = run_turn(ws, assistant, text)
    return result.answer + (f"\n{result.error}" if result.error else ""), ws.session.operations[
        first:
    ]


def _computed(ops: list[dict[str, Any]]) -> str:
    """Everything the turn's successful computations said about themselves."""
    return "\n".join(
        " ".join(
            [
                str(op["tool"]),
                str(op["args"].get("code", "")),
                str(op["args"].get("description", "")),
                str((op.get("result") or {}).get("method", "")),
            ]
        )
        for op in ops
        if op.get("phase") == "compute" and op.get("status") == "ok"
    )


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        # running statistics: the stated window, the stated statistic
        (f"ACE |B| with a 20-minute boxcar on {DAY}", r"rolling\('1200s'.*\.mean\(\)"),
        (f"10-minute running median of ACE Bz on {DAY}", r"rolling\('600s'.*\.median\(\)"),
        (f"Wind proton speed on {DAY}, running max over 2 hours", r"rolling\('7200s'.*\.max\(\)"),
        (f"OMNI Bz {DAY} with a 90 s moving standard deviation", r"rolling\('90s'.*\.std\(\)"),
        (f"ACE proton density {DAY} and its 30-min rolling minimum", r"rolling\('1800s'.*\.min\("),
        (f"ACE Bz {DAY} with a 5-point running mean", r"rolling\(5, center.*\.mean\(\)"),
        # resampling to any stated cadence
        (f"ACE proton density from {DAY} to 2016-02-14 as daily means", r"resample\('86400s'\)"),
        (f"OMNI flow speed {DAY} to 2016-02-14, one value per day", r"resample\('86400s'\)"),
        (f"Wind |B| on {DAY} in 30-minute bins", r"resample\('1800s'\)"),
        (f"ACE Bz on {DAY}, hourly averages", r"resample\('3600s'\)"),
        (f"OMNI proton density on {DAY}, one point per hour", r"resample\('3600s'\)"),
        # detrending
        (f"remove the linear trend from Wind proton speed on {DAY}", r"(?i)detrend.*linear"),
        (f"OMNI Bz on {DAY} with the mean removed", r"(?i)detrend.*mean"),
        (f"detrended ACE |B| for {DAY}", r"(?i)detrend.*linear"),
        (f"Wind Bz on {DAY}, subtract the mean", r"(?i)detrend.*mean"),
        # two series
        (
            f"percentage difference of ACE and Wind proton speed on {DAY}",
            r"100 \* \(a - b\)",
        ),
        (f"lagged correlation between ACE and Wind |B| on {DAY}", r"cross_correlation_lag"),
        (f"rate of change of OMNI Dst on {DAY}", r"diff\(\)"),
    ],
)
def test_operation_is_done_with_its_stated_parameters(
    workspace: Workspace, text: str, pattern: str
) -> None:
    answer, ops = _turn(workspace, text)
    assert re.search(pattern, _computed(ops), re.S), (text, _computed(ops), answer)
    assert "Not done" not in answer, answer


def test_a_stated_window_is_never_replaced_by_a_default(workspace: Workspace) -> None:
    answer, ops = _turn(workspace, f"ACE |B| with a 20-minute boxcar on {DAY}")
    code = _computed(ops)
    assert "1200s" in code and "1800s" not in code
    assert "20 min" in answer


def test_psd_is_computed_with_welch(workspace: Workspace) -> None:
    answer, ops = _turn(workspace, f"Welch power spectrum of ACE Bx on {DAY}")
    assert "power_spectrum" in _computed(ops), answer


def test_follow_up_psd_is_of_the_series_on_screen(workspace: Workspace) -> None:
    _turn(workspace, f"Wind proton density {DAY}")
    answer, ops = _turn(workspace, "now its power spectral density")
    fetched = [op["args"]["parameter_id"] for op in ops if op["tool"] == "fetch_data"]
    assert "power_spectrum" in _computed(ops), answer
    assert fetched and all("B" not in p.upper()[:1] for p in fetched), fetched


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (f"Hilbert transform of ACE Bz on {DAY}", "Hilbert"),
        (f"band-pass filter Wind Bx between 1 and 10 mHz on {DAY}", "band-pass"),
        (f"autocorrelation of OMNI Dst on {DAY}", "autocorrelation"),
    ],
)
def test_operation_not_done_is_said(workspace: Workspace, text: str, named: str) -> None:
    answer, _ = _turn(workspace, text)
    line = next((ln for ln in answer.splitlines() if "Not done" in ln), "")
    assert re.search(named, line, re.I), answer


def test_percent_difference_is_never_a_plain_difference(workspace: Workspace) -> None:
    answer, ops = _turn(workspace, f"% difference between ACE and Wind |B| on {DAY}")
    code = _computed(ops)
    assert "100 * (a - b)" in code, code
    assert "percent" in answer.lower()


def test_arithmetic_on_incompatible_units_is_refused_in_words(workspace: Workspace) -> None:
    answer, ops = _turn(workspace, f"OMNI |B| minus OMNI flow speed on {DAY}")
    assert "a - b" not in _computed(ops)
    line = next((ln for ln in answer.splitlines() if "Not done" in ln), "")
    assert "unit" in line.lower(), answer


def test_arithmetic_across_frames_is_said(workspace: Workspace) -> None:
    answer, ops = _turn(workspace, f"ACE Bz GSM minus Wind Bz GSE on {DAY}")
    assert "GSE" in answer and "GSM" in answer and "frame" in answer.lower(), answer
    assert "a - b" in _computed(ops)


@pytest.mark.parametrize(
    "text",
    [
        f"ACE and Wind proton temperature {DAY}",
        f"Wind 3DP proton temperature and ACE proton temperature on {DAY}, one panel",
        f"Wind minus ACE proton temperature on {DAY}",
    ],
)
def test_kelvin_and_ev_never_share_an_axis(vocab: Vocabulary, text: str) -> None:
    """Wind 3DP gives eV and ACE SWEPAM K: the eV series is converted, and it is said."""
    plan = build_plan(vocab, parse_request(text, vocab))
    fetched = [s.candidates[0].units for s in plan.steps if s.kind == "fetch"]
    assert "eV" in fetched, fetched  # the case this test is about
    converted = [s for s in plan.steps if s.kind == "compute" and "eV to K" in s.description]
    assert len(converted) == 1
    assert "11604.518" in converted[0].calls[0].args["code"]
    assert any("from eV to K" in n for n in plan.notes), plan.notes
    plotted = next(s for s in plan.steps if s.kind == "plot")
    assert converted[0].output in plotted.inputs
