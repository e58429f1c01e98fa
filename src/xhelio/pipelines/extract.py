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
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from xhelio.errors import BadTimeRangeError, UserError
from xhelio.operations import DATA_PHASES, Operation
from xhelio.pipelines.model import (
    TIME_RANGE_VAR,
    Pipeline,
    PipelineStep,
    PipelineVariable,
    phase_of,
)
from xhelio.timerange import TimeRange, parse_time_range

__all__ = ["extract_pipeline", "new_pipeline_id"]

_STYLE_ACTIONS = frozenset({"zoom", "add_trace", "remove_trace", "export"})
_PRESENTATION_PHASES = frozenset({"render", "export"})


def new_pipeline_id() -> str:
    """A fresh `pl_` id."""
    return "pl_" + uuid.uuid4().hex[:10]


def _moment(op: Operation) -> datetime:
    return datetime.fromtimestamp(op.started, UTC) if op.started else datetime.now(UTC)


def _resolved(op: Operation) -> TimeRange | None:
    """The time range of a fetch, resolved at the moment it was recorded."""
    for text in op.time_ranges.values():
        try:
            return parse_time_range(text, _moment(op))
        except BadTimeRangeError:
            continue
    return None


def _draws(op: Operation) -> bool:
    """A call that draws a new figure (not one acting on the current figure)."""
    return op.phase == "render" and not op.edits_figure


def _keep_presentation(ops: list[Operation]) -> list[Operation]:
    """The last render, figure edits/exports made after it, and every data export."""
    last_render = max((i for i, op in enumerate(ops) if _draws(op)), default=-1)
    kept: list[Operation] = []
    for i, op in enumerate(ops):
        action = op.args.get("action")
        if (
            op.phase == "export"
            or (_draws(op) and i == last_render)
            or (op.edits_figure and i > last_render >= 0 and action in _STYLE_ACTIONS)
        ):
            kept.append(op)
    return kept


def _intent(op: Operation) -> str:
    args, produces = op.args, op.produced
    if op.phase == "fetch":
        units = op.result.get("units")
        unit = f" ({units})" if isinstance(units, str) and units else ""
        if "parameter_id" in args and "dataset_id" in args:
            return f"Fetch {args['parameter_id']}{unit} from dataset {args['dataset_id']}"
        return f"Fetch {', '.join(produces)}{unit}"
    if op.phase == "compute" and op.read:
        what = str(args.get("description") or "").strip() or f"Compute {produces[0]}"
        return f"{what} (from {', '.join(op.read)})"
    if op.edits_figure:
        action = args.get("action") or "edit"
        target = args.get("format") or args.get("filename") or args.get("time_range") or ""
        return f"{str(action).capitalize()} the figure {target}".strip()
    if op.phase == "render":
        return f"Plot {', '.join(op.read) or 'the figure'}"
    if op.phase == "export":
        return f"Save {', '.join(op.read)} as {args.get('format', 'csv')}"
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


def _choose(operations: Sequence[Operation], select: Sequence[int] | None) -> list[Operation]:
    usable = [
        op
        for op in operations
        if op.ok
        and op.in_analysis
        and (op.phase in DATA_PHASES or op.phase in _PRESENTATION_PHASES)
    ]
    if select is not None:
        wanted = set(select)
        chosen = [op for op in usable if op.seq in wanted]
        missing = wanted - {op.seq for op in chosen}
        if missing:
            raise UserError(
                f"Operations {sorted(missing)} are not successful fetch/compute/plot calls "
                "of this session; choose from the operations log."
            )
        return chosen
    presentation = _keep_presentation(usable)
    # Every producer of each label, in order: a label fetched again later (another
    # range, a retry) must not stand in for the one an earlier step used.
    producers: dict[str, list[Operation]] = {}
    for op in usable:
        for label in op.produced:
            producers.setdefault(label, []).append(op)
    if not presentation:
        latest = [ops[-1] for ops in producers.values()]
        needed_ops = list({id(op): op for op in latest}.values())
        return sorted(needed_ops, key=lambda op: op.seq)

    def producer_before(label: str, seq: int) -> Operation | None:
        earlier = [op for op in producers.get(label, []) if op.seq < seq]
        return earlier[-1] if earlier else None

    needed: dict[int, Operation] = {}
    queue = [(label, op.seq) for op in presentation for label in op.read]
    while queue:
        label, seq = queue.pop()
        op = producer_before(label, seq)
        if op is None or id(op) in needed:
            continue
        needed[id(op)] = op
        queue += [(ref, op.seq) for ref in op.read]
    return sorted([*needed.values(), *presentation], key=lambda op: op.seq)


def extract_pipeline(
    operations: Sequence[Operation | dict[str, Any]],
    name: str,
    *,
    description: str = "",
    select: Sequence[int] | None = None,
    intents: dict[int, str] | None = None,
    source_session: str | None = None,
    parameterise: bool = True,
    pipeline_id: str | None = None,
) -> Pipeline:
    """Build a clean pipeline from the operations log.

    What each call means (its phase, the labels it produced and read, its time ranges)
    comes from the operation itself, as the funnel recorded it from the tool's spec.

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
    chosen = _choose([Operation.of(op) for op in operations], select)
    if not any(op.phase in DATA_PHASES for op in chosen):
        raise UserError(
            "There is nothing to save yet: this session has no successful fetch or "
            "computation. Ask for some data or a figure first."
        )
    fetches = [op for op in chosen if op.phase == "fetch"]
    fetch_ranges = [r for op in fetches if (r := _resolved(op))]
    variables: dict[str, PipelineVariable] = {}
    texts: list[str] = []
    main: TimeRange | None = None
    if parameterise and fetch_ranges:
        main = Counter(fetch_ranges).most_common(1)[0][0]
        variables[TIME_RANGE_VAR] = PipelineVariable(
            "time_range", "Time range of every fetch (and of titles naming it)", str(main)
        )
        originals = {
            text for op in fetches if _resolved(op) == main for text in op.time_ranges.values()
        }
        # Titles name the range as people read it ("2024-01-15"): that is the range too.
        texts = sorted({*originals, str(main), main.readable()}, key=len, reverse=True)
    steps: list[PipelineStep] = []
    step_of: dict[str, str] = {}
    last_render: str | None = None
    for number, op in enumerate(chosen, start=1):
        sid = f"s{number:03d}"
        depends = [step_of[label] for label in op.read if label in step_of]
        if op.edits_figure and last_render and last_render not in depends:
            depends.append(last_render)
        args = _parameterise(dict(op.args), texts) if main is not None else dict(op.args)
        steps.append(
            PipelineStep(
                sid,
                op.tool,
                args,
                (intents or {}).get(op.seq) or _intent(op),
                list(op.produced),
                sorted(set(depends)),
                critical=not (op.edits_figure or op.phase == "export"),
                phase=phase_of(op.phase),
                tool_phase=op.phase,
            )
        )
        for label in op.produced:
            step_of[label] = sid
        if _draws(op):
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
    fetched = [label for s in pipeline.steps if s.tool_phase == "fetch" for label in s.produces]
    if fetched:
        parts.append("fetch " + ", ".join(fetched))
    computed = [s.produces[0] for s in pipeline.steps if s.tool_phase == "compute" and s.produces]
    if computed:
        parts.append("compute " + ", ".join(computed))
    if any(s.tool_phase == "render" for s in pipeline.steps):
        parts.append("plot")
    text = "; ".join(parts)
    return text[:1].upper() + text[1:]
