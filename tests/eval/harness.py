"""Runs the request evaluation set against the loopback catalog-wide HAPI server.

Each case of `requests.toml` is one request (after optional earlier turns in the same
session, for follow-ups) with checkable outcomes: which datasets and parameters may be
fetched, the time window asked of the server, whether a spectrogram (heatmap) or
computed series must appear, and what the answer must say. A case is scored:

- PASS: every expectation holds;
- WRONG: data was fetched that is not what the request asked for (another mission,
  instrument, species, parameter or window, or any data at all where the request must be
  asked about) and the answer does not say so ("Differs from the request" or a
  clarification);
- FAIL: anything else that falls short (nothing fetched, an error, a missing plot).

Used by `tests/test_eval_requests.py` (the CI floor) and `benchmarks/bench_requests.py`.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CASES_FILE = Path(__file__).with_name("requests.toml")
# How an answer states that what it shows differs from the request.
STATED = re.compile(r"(?i)differs from the request|could not (?:honour|honor)|not what was asked")
GROUPS = (
    "single",
    "times",
    "computations",
    "comparisons",
    "instruments",
    "spectra",
    "no_fabrication",
    "followups",
)


@dataclass(frozen=True)
class Case:
    """One evaluation request and what its answer must satisfy."""

    group: str
    text: str
    expect: str = "data"
    datasets: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    window: tuple[str, str] | None = None
    hours: float | None = None
    heatmap: bool = False
    computed: tuple[str, ...] = ()
    answer: tuple[str, ...] = ()
    before: tuple[str, ...] = ()
    figure: bool | None = None
    panels: int | None = None
    traces: int | None = None
    log_y: bool = False


@dataclass
class Outcome:
    """The verdict on one case and why."""

    case: Case
    verdict: str
    reasons: list[str] = field(default_factory=list[str])
    answer: str = ""


def load_cases(path: Path = CASES_FILE) -> list[Case]:
    """Read the evaluation set."""
    raw: dict[str, Any] = tomllib.loads(path.read_text())
    cases: list[Case] = []
    for row in raw["case"]:
        row = dict(row)
        for key in ("datasets", "params", "computed", "answer", "before"):
            if key in row:
                row[key] = tuple(row[key])
        if "window" in row:
            row["window"] = (row["window"][0], row["window"][1])
        cases.append(Case(**row))
    return cases


def _when(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _fetches(operations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        op
        for op in operations
        if op.get("tool") == "fetch_data"
        and op.get("status") == "ok"
        and (op.get("result") or {}).get("points")
    ]


def _figure_traces(workspace: Any) -> list[dict[str, Any]]:
    figure = workspace.session.plot.current
    if figure is None:
        return []
    return list(figure.figure.get("data") or [])


def _fetch_problems(case: Case, fetched: list[dict[str, Any]]) -> list[str]:
    """What in the fetched data differs from what the case asks (dataset, parameter, time)."""
    wrong: list[str] = []
    for op in fetched:
        dataset, param = op["args"]["dataset_id"], op["args"]["parameter_id"]
        if case.datasets and not any(re.search(p, dataset) for p in case.datasets):
            wrong.append(f"dataset {dataset}")
        if case.params and not any(re.search(p, param) for p in case.params):
            wrong.append(f"parameter {dataset}.{param}")
        start, _, stop = str(op["args"].get("time_range", "")).partition(" to ")
        if not (start and stop):
            continue
        window = (_when(start), _when(stop))
        if case.window and window != (_when(case.window[0]), _when(case.window[1])):
            wrong.append(f"window {start} to {stop}")
        hours = (window[1] - window[0]).total_seconds() / 3600
        if case.hours is not None and abs(hours - case.hours) > 1e-6:
            wrong.append(f"window of {hours:g} h")
    return wrong


def _result_problems(
    case: Case, fetched: list[dict[str, Any]], operations: list[dict[str, Any]], workspace: Any
) -> list[str]:
    """What the answer lacks: a dataset asked for, a heatmap, a figure, a computation."""
    short: list[str] = [] if fetched else ["nothing fetched"]
    seen = {op["args"]["dataset_id"] for op in fetched}
    short += [
        f"no dataset matching {p}"
        for p in case.datasets
        if fetched and not any(re.search(p, d) for d in seen)
    ]
    traces = _figure_traces(workspace)
    plotted = any(
        op.get("tool") == "render_plotly_json" and op.get("status") == "ok" for op in operations
    )
    if case.heatmap and not any(t.get("type") == "heatmap" for t in traces):
        short.append("no heatmap trace")
    if case.figure and not plotted:
        short.append("no figure")
    if case.traces is not None and len(traces) != case.traces:
        short.append(f"{len(traces)} traces, not {case.traces}")
    labels = [  # a computation: generated code, or an analysis method with its outputs
        " ".join(
            [
                str((op.get("result") or {}).get("label", "")),
                str((op.get("result") or {}).get("method", "")),
                *[str(label) for label in op.get("produced") or []],
                str(op["args"].get("code", "")),
            ]
        )
        for op in operations
        if op.get("phase") == "compute"
        and op.get("status") == "ok"
        and (op["args"].get("code") or (op.get("result") or {}).get("method"))
    ]
    short += [
        f"no computation matching {p}"
        for p in case.computed
        if not any(re.search(p, lb) for lb in labels)
    ]
    return short


def judge(case: Case, answer: str, operations: list[dict[str, Any]], workspace: Any) -> Outcome:
    """Score one case from the answer text and the tool calls its turn made."""
    fetched = _fetches(operations)
    stated = bool(STATED.search(answer))
    if case.expect == "ask":
        wrong = (
            ["fetched " + ", ".join(op["args"]["dataset_id"] for op in fetched)] if fetched else []
        )
        short: list[str] = []
    else:
        wrong = _fetch_problems(case, fetched)
        short = _result_problems(case, fetched, operations, workspace)
    short += [f"answer lacks {p}" for p in case.answer if not re.search(p, answer)]
    if wrong and not stated:
        return Outcome(case, "WRONG", wrong + short, answer)
    if wrong or short:
        return Outcome(case, "FAIL", wrong + short, answer)
    return Outcome(case, "PASS", [], answer)


@contextmanager
def served_home(home: Path) -> Iterator[Any]:
    """Start the catalog-wide loopback server and point xhelio at it and at `home`."""
    import os

    from servers.catalog_hapi import CatalogHapiServer

    keys = ("XHELIO_HOME", "XHELIO_HAPI_URL", "XHELIO_MODEL")
    saved = {k: os.environ.get(k) for k in keys}
    with CatalogHapiServer(max_rows=2000) as server:
        os.environ["XHELIO_HOME"] = str(home)
        os.environ["XHELIO_HAPI_URL"] = server.url
        os.environ.pop("XHELIO_MODEL", None)
        try:
            yield server
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def run_case(case: Case) -> Outcome:
    """Run one case in a fresh ephemeral session (the server must be running)."""
    from xhelio.agents.factory import make_assistant
    from xhelio.agents.turn import run_turn
    from xhelio.config import load_settings
    from xhelio.tools.workspace import open_workspace

    workspace = open_workspace(settings=load_settings(), ephemeral=True)
    try:
        # The assistant `xhelio ask` and the REPL use offline: planning wraps the
        # interpreter, so multi-step requests go through the offline planner.
        assistant, config = make_assistant(workspace)
        assert config.offline, "the evaluation runs offline mode (no model configured)"
        for earlier in case.before:
            run_turn(workspace, assistant, earlier)
        first = len(workspace.session.operations)
        result = run_turn(workspace, assistant, case.text)
        operations = workspace.session.operations[first:]
        answer = result.answer + (f"\n{result.error}" if result.error else "")
        return judge(case, answer, operations, workspace)
    finally:
        workspace.close()


def run_all(cases: list[Case]) -> list[Outcome]:
    """Run every case (the server must be running)."""
    return [run_case(c) for c in cases]


def table(outcomes: list[Outcome]) -> dict[str, tuple[int, int, int]]:
    """Per group: (passed, total, wrong)."""
    rows: dict[str, tuple[int, int, int]] = {}
    for group in GROUPS:
        mine = [o for o in outcomes if o.case.group == group]
        rows[group] = (
            sum(o.verdict == "PASS" for o in mine),
            len(mine),
            sum(o.verdict == "WRONG" for o in mine),
        )
    return rows
