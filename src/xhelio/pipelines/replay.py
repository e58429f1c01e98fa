"""Deterministic replay: walk a pipeline's steps through the ONE tool funnel, no model.

Variables are substituted into every argument string; `$TIME_RANGE` is checked first so a
bad range is one clear error before anything runs. A whole argument that is `$TIME_RANGE`
(a fetch's `time_range`) gets the exact end-exclusive range; inside other text (a figure
title) it reads as people write it, inclusive ("2000-07-14 to 2000-07-17"). Steps run in
order (extraction orders them so every dependency comes first). A failed critical step
skips every step that depends on it, directly or not; a failed non-critical step
(styling, export) is logged and the run goes on. The result says honestly how much
completed: `completed`, `partial` (something failed or was skipped) or `failed` (no
appropriation step worked).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from xhelio.errors import BadTimeRangeError, UserError
from xhelio.operations import ToolCaller
from xhelio.pipelines.model import TIME_RANGE_VAR, Pipeline, substitute
from xhelio.timerange import parse_time_range, readable_text

__all__ = ["ReplayResult", "StepOutcome", "replay_pipeline"]

CALLER = "pipeline"


@dataclass
class StepOutcome:
    """What happened to one step: ok, error (with the message) or skipped (and why)."""

    step_id: str
    tool: str
    status: str
    message: str = ""
    critical: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The outcome as JSON."""
        return {
            "step_id": self.step_id,
            "tool": self.tool,
            "status": self.status,
            "message": self.message,
            "critical": self.critical,
        }


@dataclass
class ReplayResult:
    """A replay's outcome: per-step status, the labels made, the figure, and the timing."""

    pipeline_id: str
    variables: dict[str, str]
    steps: list[StepOutcome] = field(default_factory=list[StepOutcome])
    labels: list[str] = field(default_factory=list[str])
    figure_rendered: bool = False
    exports: list[str] = field(default_factory=list[str])
    elapsed_s: float = 0.0

    @property
    def status(self) -> str:
        """completed, partial or failed."""
        if all(s.status == "ok" for s in self.steps):
            return "completed"
        if not self.labels:
            return "failed"
        return "partial"

    def summary(self) -> str:
        """One paragraph for people: what ran, what failed and why."""
        done = sum(1 for s in self.steps if s.status == "ok")
        text = f"Pipeline {self.pipeline_id}: {done} of {len(self.steps)} steps completed"
        text += f" for {readable_text(self.variables.get(TIME_RANGE_VAR) or 'its saved range')}."
        for s in self.steps:
            if s.status == "error":
                kind = "critical" if s.critical else "non-critical, run continued"
                text += f"\n- {s.step_id} {s.tool} failed ({kind}): {s.message}"
            elif s.status == "skipped":
                text += f"\n- {s.step_id} {s.tool} skipped: {s.message}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON."""
        return {
            "status": self.status,
            "pipeline_id": self.pipeline_id,
            "variables": self.variables,
            "steps": [s.to_dict() for s in self.steps],
            "labels": self.labels,
            "figure_rendered": self.figure_rendered,
            "exports": self.exports,
            "elapsed_s": round(self.elapsed_s, 3),
            "summary": self.summary(),
        }


def _in_text(value: Any, values: dict[str, str], readable: dict[str, str]) -> Any:
    """`substitute`, with variables inside longer text (titles) in their readable form."""
    if isinstance(value, str):
        return substitute(value, values if value.strip() in values else readable)
    if isinstance(value, list):
        return [_in_text(v, values, readable) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return {k: _in_text(v, values, readable) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    return value


def _checked_values(pipeline: Pipeline, overrides: dict[str, str] | None) -> dict[str, str]:
    values = pipeline.values(overrides)
    text = values.get(TIME_RANGE_VAR)
    if text is not None:
        try:
            # Resolve relative phrases once, so every fetch of the run gets the same window.
            values[TIME_RANGE_VAR] = str(parse_time_range(text))
        except BadTimeRangeError as exc:
            raise UserError(f"Cannot run pipeline {pipeline.id}: {exc.message}") from exc
    return values


def replay_pipeline(
    pipeline: Pipeline,
    funnel: ToolCaller,
    overrides: dict[str, str] | None = None,
    caller: str = CALLER,
) -> ReplayResult:
    """Run every step of `pipeline` through `funnel` with variables substituted.

    Args:
        pipeline: The pipeline to run.
        funnel: The session's tool funnel (validation, recording and events apply).
        overrides: Variable values, e.g. {"$TIME_RANGE": "March 2001"}.
        caller: Caller name recorded with each call.

    Raises:
        UserError: an override names an unknown variable or is not a valid time range.
    """
    started = time.perf_counter()
    values = _checked_values(pipeline, overrides)
    readable = {k: readable_text(v) for k, v in values.items() if k == TIME_RANGE_VAR}
    readable = {**values, **readable}
    result = ReplayResult(pipeline.id, values)
    blocked: dict[str, str] = {}
    for step in pipeline.steps:
        cause = next((blocked[d] for d in step.depends_on if d in blocked), None)
        if cause is not None:
            result.steps.append(
                StepOutcome(step.step_id, step.tool, "skipped", cause, step.critical)
            )
            blocked[step.step_id] = cause
            continue
        args = _in_text(step.args, values, readable)
        outcome = funnel.call(step.tool, args, caller=caller)
        if not outcome.ok:
            message = f"{outcome.error_type}: {outcome.error}"
            result.steps.append(
                StepOutcome(step.step_id, step.tool, "error", message, step.critical)
            )
            if step.critical:
                blocked[step.step_id] = f"{step.step_id} ({step.tool}) failed"
            continue
        result.steps.append(StepOutcome(step.step_id, step.tool, "ok", "", step.critical))
        for label in step.produces:
            if label not in result.labels:
                result.labels.append(label)
        if step.tool_phase == "render":
            result.figure_rendered = True
        path = outcome.payload.get("path")
        if isinstance(path, str):
            result.exports.append(path)
    result.elapsed_s = time.perf_counter() - started
    return result
