"""What a session's report says, gathered from the session itself (no LLM).

`build_report(session)` reads the question and the answer from the chat history, what was
done from the operations log (typed `Operation`s), the figures from the session's gallery
(and its current figure), numbers with units from the data in memory and from tool results,
methods with references from results that carry a `method`/`reference` field, data
citations from each entry's `citations`, limitations from failed calls and unmet success
criteria, the stages of a deep analysis (`session.meta["deep_plans"]`), and the pipeline
that reruns it (`pipelines.extract_pipeline`, as JSON and as a standalone script). The
renderers (`report.html`, `report.markdown`) only lay this out. Imports the session, data,
pipelines and operations layers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.errors import XhelioError
from xhelio.operations import Operation
from xhelio.pipelines.export import Citation, export_script
from xhelio.pipelines.extract import extract_pipeline
from xhelio.session.state import Session

__all__ = [
    "DEEP_PLANS_KEY",
    "Figure",
    "Method",
    "Quantity",
    "Report",
    "Stage",
    "Step",
    "build_report",
    "gallery_folder",
]

DEEP_PLANS_KEY = "deep_plans"
"""Where a deep analysis keeps its finished plans in `session.meta` (a list of dicts)."""
_REFERENCE_KEYS = ("reference", "references", "doi", "citation_text")
_METHOD_KEYS = ("method", "method_name", "technique")
_NOT_RESULTS = frozenset(
    {"points", "rows", "columns", "count", "seq", "index", "limit", "bytes", "pages", "id"}
    | {"duration_ms", "latency_ms", "elapsed_s", "traces", "panels", "round", "status"}
)
_MAX_COLUMNS = 8


@dataclass
class Step:
    """One tool call of the session, as the report lists it."""

    seq: int
    tool: str
    caller: str
    ok: bool
    phase: str
    produced: list[str]
    note: str


@dataclass
class Quantity:
    """A number with its unit: a column's statistics, or a scalar a tool computed."""

    source: str
    name: str
    unit: str
    value: float | None = None
    minimum: float | None = None
    mean: float | None = None
    maximum: float | None = None
    points: int = 0


@dataclass
class Method:
    """A method a tool applied and the reference it cites."""

    tool: str
    method: str
    references: list[str]


@dataclass
class Stage:
    """One stage of a deep analysis with its success criteria."""

    description: str
    status: str
    labels: list[str]
    criteria: list[dict[str, Any]]
    note: str = ""


@dataclass
class Figure:
    """A Plotly figure (JSON) and what was asked for it."""

    title: str
    request: str
    figure: dict[str, Any]


@dataclass
class Report:
    """Everything a report shows, in the order it shows it."""

    title: str
    session_id: str
    created: str
    question: str
    answer: str
    requests: list[str] = field(default_factory=list[str])
    steps: list[Step] = field(default_factory=list[Step])
    stages: list[Stage] = field(default_factory=list[Stage])
    criteria: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    figures: list[Figure] = field(default_factory=list[Figure])
    quantities: list[Quantity] = field(default_factory=list[Quantity])
    results: list[Quantity] = field(default_factory=list[Quantity])
    methods: list[Method] = field(default_factory=list[Method])
    citations: list[dict[str, str]] = field(default_factory=list[dict[str, str]])
    limitations: list[str] = field(default_factory=list[str])
    pipeline: dict[str, Any] | None = None
    script: str = ""


def gallery_folder(session: Session) -> Path:
    """The folder holding every figure the session produced (one JSON record each)."""
    return session.folder / "gallery"


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _column_stats(label: str, name: str, unit: str, values: Any) -> Quantity | None:
    array = np.asarray(values, dtype=float).ravel()
    array = array[np.isfinite(array)]
    if not array.size:
        return None
    return Quantity(
        label,
        name,
        unit,
        minimum=float(array.min()),
        mean=float(array.mean()),
        maximum=float(array.max()),
        points=int(array.size),
    )


def entry_quantities(entry: DataEntry) -> list[Quantity]:
    """Minimum, mean and maximum of each numeric column of an entry, with its unit."""
    data = entry.data
    if isinstance(data, xr.DataArray):
        unit = next(iter(entry.units.values()), "") if entry.units else ""
        stats = _column_stats(entry.label, str(data.name or entry.label), unit, data.values)
        return [stats] if stats else []
    found: list[Quantity] = []
    names = entry.meta.get("labels")
    columns = list(data.columns)
    shown = names if isinstance(names, list) and len(names) == len(columns) else columns  # pyright: ignore[reportUnknownArgumentType]
    for column, name in list(zip(columns, shown, strict=True))[:_MAX_COLUMNS]:
        if not pd.api.types.is_numeric_dtype(data[column]):
            continue
        unit = entry.units.get(str(column), "")
        stats = _column_stats(entry.label, str(name), unit, data[column].to_numpy())
        if stats is not None:
            found.append(stats)
    return found


def _pairs(value: Any, depth: int = 0) -> Iterator[tuple[str, Any, Mapping[str, Any]]]:
    """(key, value, the dict holding it) for every field, two levels deep."""
    if not isinstance(value, Mapping) or depth > 2:
        return
    mapping: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
    for key, item in mapping.items():
        yield str(key), item, mapping
        yield from _pairs(item, depth + 1)


def _unit_of(key: str, holder: Mapping[str, Any]) -> str:
    for name in (f"{key}_units", f"{key}_unit", "units", "unit"):
        unit = holder.get(name)
        if isinstance(unit, Mapping):
            unit = unit.get(key)  # pyright: ignore[reportUnknownMemberType]
        if isinstance(unit, str):
            return unit
    return ""


def result_numbers(op: Operation) -> list[Quantity]:
    """Scalar numbers a computing or analysing call returned, with units where it gave them."""
    if not op.ok or op.phase in ("fetch", "discover", "render", "export", "conversation"):
        return []
    found: list[Quantity] = []
    for key, value, holder in _pairs(op.result):
        if key in _NOT_RESULTS or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        number = _finite(value)
        if number is not None:
            found.append(Quantity(op.tool, key, _unit_of(key, holder), value=number))
    return found


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list | tuple):
        return [t for item in value for t in _texts(item)]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, Mapping):
        return [", ".join(f"{k}: {v}" for k, v in value.items())]  # pyright: ignore[reportUnknownVariableType]
    return []


def result_method(op: Operation) -> Method | None:
    """The method and references a result carries, if it names any."""
    if not op.ok:
        return None
    method = ""
    references: list[str] = []
    for key, value, _ in _pairs(op.result):
        if key in _METHOD_KEYS and not method:
            method = " ".join(_texts(value))
        elif key in _REFERENCE_KEYS:
            references += [r for r in _texts(value) if r not in references]
    if not method and not references:
        return None
    return Method(op.tool, method or op.tool, references)


def _note(op: Operation) -> str:
    if not op.ok:
        return op.error or str(op.result.get("message") or "failed")
    for key in ("summary", "message", "note", "description"):
        value = op.result.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:240]
    said = [f"{name}: {text}" for name, text in op.time_ranges.items()]
    if op.read:
        said.append("from " + ", ".join(op.read))
    return "; ".join(said)


def _figures(session: Session) -> list[Figure]:
    figures: list[Figure] = []
    folder = gallery_folder(session)
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        figure = record.get("figure")
        if isinstance(figure, dict):
            figures.append(Figure(_title(figure), str(record.get("request", "")), figure))  # pyright: ignore[reportUnknownArgumentType]
    current = session.plot.current
    if current is not None:
        figure = json.loads(json.dumps(current.figure, default=str))
        if not figures or figures[-1].figure != figure:
            figures.append(Figure(_title(figure), "", figure))
    return figures


def _title(figure: Mapping[str, Any]) -> str:
    title = (figure.get("layout") or {}).get("title")
    if isinstance(title, Mapping):
        title = title.get("text")  # pyright: ignore[reportUnknownMemberType]
    if title:
        return str(title)
    names = [str(t.get("name") or t.get("data_label") or "") for t in figure.get("data") or []]
    shown = [n for n in dict.fromkeys(names) if n]
    return ", ".join(shown[:6]) if shown else "Figure"


def _citations(session: Session) -> list[dict[str, str]]:
    seen: dict[str, dict[str, str]] = {}
    for entry in session.store:
        for citation in entry.citations:
            key = citation.get("dataset") or citation.get("doi") or json.dumps(citation)
            seen.setdefault(key, dict(citation))
    return list(seen.values())


def _script_citation(citation: Mapping[str, str]) -> Citation:
    return Citation(
        citation.get("dataset", ""),
        citation.get("title", ""),
        citation.get("pi", ""),
        citation.get("doi", ""),
        citation.get("provider", ""),
        citation.get("acknowledgement", ""),
    )


def _stages(plans: Sequence[Mapping[str, Any]]) -> tuple[list[Stage], list[dict[str, Any]]]:
    stages: list[Stage] = []
    criteria: list[dict[str, Any]] = []
    for plan in plans:
        criteria += [dict(c) for c in plan.get("criteria") or []]
        for task in plan.get("tasks") or []:
            stages.append(
                Stage(
                    str(task.get("description", "")),
                    str(task.get("status", "")),
                    list(task.get("new_labels") or []),
                    [dict(c) for c in task.get("criteria_results") or []],
                    str(task.get("error") or task.get("reflection") or ""),
                )
            )
    return stages, criteria


def _limitations(
    steps: Sequence[Step], stages: Sequence[Stage], criteria: Sequence[Mapping[str, Any]]
) -> list[str]:
    notes: list[str] = []
    for step in steps:
        if not step.ok and step.note and not step.note.startswith("Loop guard"):
            line = f"{step.tool} failed: {step.note}"
            if line not in notes:
                notes.append(line)
    notes += [
        f"Stage not completed ({s.status}): {s.description}"
        for s in stages
        if s.status in ("failed", "skipped")
    ]
    notes += [
        f"Success criterion not met: {c.get('criterion')}" for c in criteria if not c.get("met")
    ]
    return notes


def build_report(
    session: Session,
    *,
    question: str | None = None,
    answer: str | None = None,
    title: str | None = None,
) -> Report:
    """Gather a session's report.

    Args:
        session: The session (loaded or live).
        question: The question the report answers (default: the first request).
        answer: The answer (default: the last reply in the chat history).
        title: The report's title (default: from the question).
    """
    history = session.history
    requests = [str(m.get("content", "")) for m in history if m.get("role") == "user"]
    answers = [str(m.get("content", "")) for m in history if m.get("role") == "assistant"]
    asked = question or (requests[0] if requests else "")
    operations = [Operation.of(op) for op in session.operations]
    steps = [
        Step(op.seq, op.tool, op.caller, op.ok, op.phase or "", list(op.produced), _note(op))
        for op in operations
    ]
    stages, criteria = _stages(session.meta.get(DEEP_PLANS_KEY) or [])
    methods = [m for op in operations if (m := result_method(op)) is not None]
    report = Report(
        title=title or (f"Analysis: {asked[:90]}" if asked else f"Session {session.id}"),
        session_id=session.id,
        created=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        question=asked,
        answer=answer if answer is not None else (answers[-1] if answers else ""),
        requests=requests,
        steps=steps,
        stages=stages,
        criteria=criteria,
        figures=_figures(session),
        quantities=[q for entry in session.store for q in entry_quantities(entry)],
        results=[q for op in operations for q in result_numbers(op)],
        methods=methods,
        citations=_citations(session),
        limitations=_limitations(steps, stages, criteria),
    )
    try:
        pipeline = extract_pipeline(
            session.operations, f"rerun {session.id}", source_session=session.id
        )
    except XhelioError as exc:
        report.limitations.append(f"No rerunnable pipeline: {exc.message}")
    else:
        report.pipeline = pipeline.to_dict()
        report.script = export_script(pipeline, [_script_citation(c) for c in report.citations])
    return report
