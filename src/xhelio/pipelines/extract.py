"""Extraction: a session's raw operations log -> a clean, parameterised `Pipeline`.

Deterministic by default (offline mode and whenever no model chooses): failed calls and
exploratory tools (listing, previews, catalog search) are dropped; of several renders only
the last counts, with the figure edits and exports made after it; a fetch or computation
is kept only when the figure or a kept data export needs its label (transitively), or
when nothing was plotted at all. A label produced twice keeps its last producer.
`depends_on` comes from the labels each step's arguments name; the session's main time
range (the one most fetches used, resolved at the moment it was recorded, so "last week"
means that week) becomes `$TIME_RANGE` everywhere it appears, titles included; a fetch of
another window (a comparison with last year, say) keeps its literal range.

A model may choose the steps itself (`select`, operation sequence numbers) and write the
intents (`intents`); the same dependency and time-range logic then applies.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from xhelio.errors import BadTimeRangeError, UserError
from xhelio.pipelines.model import (
    APPROPRIATION_TOOLS,
    PRESENTATION_TOOLS,
    TIME_RANGE_VAR,
    Pipeline,
    PipelineStep,
    PipelineVariable,
    phase_of,
)
from xhelio.timerange import TimeRange, parse_time_range

__all__ = ["extract_pipeline", "label_references", "new_pipeline_id", "produced_labels"]

_STYLE_ACTIONS = frozenset({"zoom", "add_trace", "remove_trace", "export"})
# Argument keys whose text is never a label an operation reads (`output_label` is what
# it writes: a label recomputed under its old name does not depend on its old self).
_NOT_LABELS = frozenset(
    {"code", "description", "units", "time_range", "filename", "format", "output_label"}
)


def new_pipeline_id() -> str:
    """A fresh `pl_` id."""
    return "pl_" + uuid.uuid4().hex[:10]


def produced_labels(op: dict[str, Any]) -> list[str]:
    """The DataStore labels a successful operation created."""
    tool, args = op.get("tool"), op.get("args") or {}
    result = op.get("result") or {}
    if tool == "fetch_data":
        label = result.get("label") or f"{args.get('dataset_id')}.{args.get('parameter_id')}"
        return [str(label)]
    if tool == "custom_operation":
        return [str(args.get("output_label"))]
    if tool == "store_dataframe":
        label = result.get("label") or args.get("label") or args.get("output_label")
        return [str(label)] if label else []
    return []


def _strings(value: Any, key: str = "") -> Iterable[str]:
    if key in _NOT_LABELS:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:  # pyright: ignore[reportUnknownVariableType]
            yield from _strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():  # pyright: ignore[reportUnknownVariableType]
            yield from _strings(v, str(k))  # pyright: ignore[reportUnknownArgumentType]


def label_references(args: dict[str, Any], known: Iterable[str]) -> list[str]:
    """Labels of `known` that `args` names, whole or as `label.column` (longest wins)."""
    ordered = sorted(set(known), key=len, reverse=True)
    found: list[str] = []
    for text in _strings(args):
        for label in ordered:
            if text == label or text.startswith(label + "."):
                if label not in found:
                    found.append(label)
                break
    return found


def _moment(op: dict[str, Any]) -> datetime:
    started = op.get("started")
    if isinstance(started, int | float):
        return datetime.fromtimestamp(started, UTC)
    return datetime.now(UTC)


def _resolved(op: dict[str, Any]) -> TimeRange | None:
    text = (op.get("args") or {}).get("time_range")
    if not isinstance(text, str):
        return None
    try:
        return parse_time_range(text, _moment(op))
    except BadTimeRangeError:
        return None


def _keep_presentation(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last render, figure edits/exports made after it, and every data export."""
    last_render = max(
        (i for i, op in enumerate(ops) if op["tool"] == "render_plotly_json"), default=-1
    )
    kept: list[dict[str, Any]] = []
    for i, op in enumerate(ops):
        if (
            op["tool"] == "save_data"
            or (op["tool"] == "render_plotly_json" and i == last_render)
            or (
                op["tool"] == "manage_plot"
                and i > last_render >= 0
                and (op.get("args") or {}).get("action") in _STYLE_ACTIONS
            )
        ):
            kept.append(op)
    return kept


def _intent(op: dict[str, Any], produces: list[str]) -> str:
    tool, args = op["tool"], op.get("args") or {}
    if tool == "fetch_data":
        units = (op.get("result") or {}).get("units")
        unit = f" ({units})" if isinstance(units, str) and units else ""
        return f"Fetch {args.get('parameter_id')}{unit} from dataset {args.get('dataset_id')}"
    if tool == "custom_operation":
        what = str(args.get("description") or "").strip() or f"Compute {produces[0]}"
        return f"{what} (from {', '.join(args.get('source_labels') or [])})"
    if tool == "render_plotly_json":
        figure = args.get("figure") or {}
        traces = figure.get("data") or [] if isinstance(figure, dict) else []
        labels = [str(t.get("data_label")) for t in traces if isinstance(t, dict)]  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        return f"Plot {', '.join(labels) or 'the figure'}"
    if tool == "manage_plot":
        action = args.get("action")
        target = args.get("format") or args.get("filename") or args.get("time_range") or ""
        return f"{str(action).capitalize()} the figure {target}".strip()
    if tool == "save_data":
        return f"Save {args.get('label')} as {args.get('format', 'csv')}"
    return f"Store {', '.join(produces)}"


def _parameterise(value: Any, texts: Sequence[str], key: str = "") -> Any:
    """Put `$TIME_RANGE` wherever one of `texts` appears (never inside code)."""
    if key == "code":
        return value
    if isinstance(value, str):
        for text in texts:
            if text and text in value:
                value = value.replace(text, TIME_RANGE_VAR)
        return value
    if isinstance(value, list):
        return [_parameterise(v, texts) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return {k: _parameterise(v, texts, str(k)) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return value


def _choose(
    operations: Sequence[dict[str, Any]], select: Sequence[int] | None
) -> list[dict[str, Any]]:
    usable = [
        op
        for op in operations
        if op.get("status") == "ok" and op.get("tool") in APPROPRIATION_TOOLS | PRESENTATION_TOOLS
    ]
    if select is not None:
        wanted = set(select)
        chosen = [op for op in usable if op.get("seq") in wanted]
        missing = wanted - {int(op["seq"]) for op in chosen}
        if missing:
            raise UserError(
                f"Operations {sorted(missing)} are not successful fetch/compute/plot calls "
                "of this session; choose from the operations log."
            )
        return chosen
    presentation = _keep_presentation(usable)
    # Every producer of each label, in order: a label fetched again later (another
    # range, a retry) must not stand in for the one an earlier step used.
    producers: dict[str, list[dict[str, Any]]] = {}
    for op in usable:
        for label in produced_labels(op):
            producers.setdefault(label, []).append(op)
    if not presentation:
        latest = [ops[-1] for ops in producers.values()]
        needed_ops = list({id(op): op for op in latest}.values())
        return sorted(needed_ops, key=lambda op: int(op["seq"]))

    def producer_before(label: str, seq: int) -> dict[str, Any] | None:
        earlier = [op for op in producers[label] if int(op["seq"]) < seq]
        return earlier[-1] if earlier else None

    needed: dict[int, dict[str, Any]] = {}
    queue = [
        (label, int(op["seq"]))
        for op in presentation
        for label in label_references(op["args"], producers)
    ]
    while queue:
        label, seq = queue.pop()
        op = producer_before(label, seq)
        if op is None or id(op) in needed:
            continue
        needed[id(op)] = op
        queue += [
            (ref, int(op["seq"])) for ref in label_references(op.get("args") or {}, producers)
        ]
    return sorted([*needed.values(), *presentation], key=lambda op: int(op["seq"]))


def extract_pipeline(
    operations: Sequence[dict[str, Any]],
    name: str,
    *,
    description: str = "",
    select: Sequence[int] | None = None,
    intents: dict[int, str] | None = None,
    source_session: str | None = None,
    parameterise: bool = True,
    pipeline_id: str | None = None,
) -> Pipeline:
    """Build a clean pipeline from operation records (`ToolFunnel.operations` dicts).

    Args:
        operations: The operations log (or the part of it to consider).
        name: The pipeline's name.
        description: What it does; generated from the steps when empty.
        select: Sequence numbers of the operations to keep (a model's choice); default
            is the deterministic selection described in the module docstring.
        intents: Intent text per operation sequence number, overriding the generated one.
        source_session: The session the operations came from.
        parameterise: Turn the main time range into `$TIME_RANGE` (the live DAG does not).
        pipeline_id: Id to use; a new `pl_` id by default.

    Raises:
        UserError: nothing in the operations can be replayed, or `select` is invalid.
    """
    chosen = _choose(operations, select)
    if not any(op["tool"] in APPROPRIATION_TOOLS for op in chosen):
        raise UserError(
            "There is nothing to save yet: this session has no successful fetch or "
            "computation. Ask for some data or a figure first."
        )
    fetch_ranges = [r for op in chosen if op["tool"] == "fetch_data" if (r := _resolved(op))]
    variables: dict[str, PipelineVariable] = {}
    texts: list[str] = []
    main: TimeRange | None = None
    if parameterise and fetch_ranges:
        main = Counter(fetch_ranges).most_common(1)[0][0]
        variables[TIME_RANGE_VAR] = PipelineVariable(
            "time_range", "Time range of every fetch (and of titles naming it)", str(main)
        )
        originals = {
            str(op["args"]["time_range"])
            for op in chosen
            if op["tool"] == "fetch_data"
            if _resolved(op) == main
        }
        texts = sorted({*originals, str(main)}, key=len, reverse=True)
    steps: list[PipelineStep] = []
    step_of: dict[str, str] = {}
    last_render: str | None = None
    for number, op in enumerate(chosen, start=1):
        sid = f"s{number:03d}"
        tool = str(op["tool"])
        args = dict(op.get("args") or {})
        refs = label_references(args, step_of)
        depends = [step_of[label] for label in refs]
        if tool == "manage_plot" and last_render and last_render not in depends:
            depends.append(last_render)
        produces = produced_labels(op)
        if main is not None:
            args = _parameterise(args, texts)
        intent = (intents or {}).get(int(op.get("seq", 0))) or _intent(op, produces)
        critical = tool not in {"manage_plot", "save_data"}
        steps.append(
            PipelineStep(
                sid, tool, args, intent, produces, sorted(set(depends)), critical, phase_of(tool)
            )
        )
        for label in produces:
            step_of[label] = sid
        if tool == "render_plotly_json":
            last_render = sid
    pipeline = Pipeline(
        id=pipeline_id or new_pipeline_id(),
        name=name.strip() or "pipeline",
        steps=steps,
        description=description.strip(),
        variables=variables,
        source_session=source_session,
    )
    if not pipeline.description:
        pipeline.description = _summary(pipeline)
    return pipeline


def _summary(pipeline: Pipeline) -> str:
    parts: list[str] = []
    fetched = [
        f"{s.args.get('dataset_id')}.{s.args.get('parameter_id')}"
        for s in pipeline.steps
        if s.tool == "fetch_data"
    ]
    if fetched:
        parts.append("fetch " + ", ".join(fetched))
    computed = [
        s.produces[0] for s in pipeline.steps if s.tool == "custom_operation" and s.produces
    ]
    if computed:
        parts.append("compute " + ", ".join(computed))
    if any(s.tool == "render_plotly_json" for s in pipeline.steps):
        parts.append("plot")
    text = "; ".join(parts)
    return text[:1].upper() + text[1:]
