"""The saved-pipeline document: steps, variables, phases, family fingerprint, LLM context.

A `Pipeline` is a clean DAG of tool calls extracted from a session's operations log. Each
`PipelineStep` names its tool and arguments, what it `produces` (DataStore labels), the
steps it `depends_on`, whether it is `critical`, its `phase`: appropriation (fetch,
compute, store: the data logic) or presentation (render, style, export), and its tool's
own phase (`tool_phase`, from the tool's spec). Variables such as `$TIME_RANGE` appear
inside argument strings and are substituted at replay.

Documents carry `schema_version`; `Pipeline.from_dict` migrates older ones, including the
seed-002 layout (`step_id` integers, `tool_name`/`tool_args`), and infers the tool phase
of steps saved before it was recorded. Imports the standard library, `xhelio.errors` and
`xhelio.operations` only.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from xhelio.errors import UserError
from xhelio.operations import DATA_PHASES
from xhelio.operations import Phase as ToolPhase

__all__ = [
    "SCHEMA_VERSION",
    "TIME_RANGE_VAR",
    "Phase",
    "Pipeline",
    "PipelineStep",
    "PipelineVariable",
    "substitute",
]

SCHEMA_VERSION = 1
TIME_RANGE_VAR = "$TIME_RANGE"
Phase = Literal["appropriation", "presentation"]
_VARIABLE = re.compile(r"\$[A-Z][A-Z0-9_]*")


def substitute(value: Any, values: dict[str, str]) -> Any:
    """Replace `$NAME` variables inside every string of `value` (nested lists/dicts too)."""
    if isinstance(value, str):
        return _VARIABLE.sub(lambda m: values.get(m.group(0), m.group(0)), value)
    if isinstance(value, list):
        return [substitute(v, values) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return {k: substitute(v, values) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    return value


@dataclass
class PipelineStep:
    """One tool call of a pipeline and how it relates to the others."""

    step_id: str
    tool: str
    args: dict[str, Any]
    intent: str = ""
    produces: list[str] = field(default_factory=list[str])
    depends_on: list[str] = field(default_factory=list[str])
    critical: bool = True
    phase: Phase = "appropriation"
    tool_phase: ToolPhase | None = None
    """What the tool does (its spec's phase): fetch, compute, render, export, ...; a step
    made without it (an older document) gets it from what the step does."""

    def __post_init__(self) -> None:
        if self.tool_phase is None:
            self.tool_phase = _saved_tool_phase({"args": self.args, "produces": self.produces})

    def to_dict(self) -> dict[str, Any]:
        """The step as JSON."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PipelineStep:
        """Read a step written by `to_dict` (unknown keys are ignored)."""
        tool_phase = data.get("tool_phase") or _saved_tool_phase(data)
        return cls(
            step_id=str(data["step_id"]),
            tool=str(data["tool"]),
            args=dict(data.get("args") or {}),
            intent=str(data.get("intent", "")),
            produces=[str(p) for p in data.get("produces") or []],
            depends_on=[str(d) for d in data.get("depends_on") or []],
            critical=bool(data.get("critical", True)),
            phase=data.get("phase") or phase_of(tool_phase),
            tool_phase=tool_phase,
        )


def phase_of(tool_phase: ToolPhase | None) -> Phase:
    """A step's pipeline phase: data logic (appropriation) or presentation."""
    return "appropriation" if tool_phase in DATA_PHASES else "presentation"


def _saved_tool_phase(step: dict[str, Any]) -> ToolPhase | None:
    """The tool phase of a step saved before steps recorded it, from what the step does.

    A step that made labels fetched them (it names a dataset) or computed them; one that
    made none drew a figure, acted on it, or wrote a file.
    """
    args = step.get("args") or step.get("tool_args") or {}
    if step.get("produces"):
        return "fetch" if "dataset_id" in args else "compute"
    if "figure" in args or "action" in args:
        return "render"
    return "export" if "format" in args else None


@dataclass
class PipelineVariable:
    """A template variable: its type, what it means and its default value."""

    type: str
    description: str = ""
    default: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The variable as JSON."""
        return asdict(self)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class Pipeline:
    """A replayable analysis: named, parameterised steps plus provenance."""

    id: str
    name: str
    steps: list[PipelineStep]
    description: str = ""
    variables: dict[str, PipelineVariable] = field(default_factory=dict[str, PipelineVariable])
    created_at: str = field(default_factory=_now)
    source_session: str | None = None
    parent_id: str | None = None
    """The pipeline this one is a variant of (LLM-mediated replay saved as a variant)."""
    schema_version: int = SCHEMA_VERSION

    # -- structure ---------------------------------------------------------------------

    def step(self, step_id: str) -> PipelineStep:
        """The step with `step_id`.

        Raises:
            UserError: there is no such step.
        """
        for s in self.steps:
            if s.step_id == step_id:
                return s
        known = ", ".join(s.step_id for s in self.steps)
        raise UserError(f"Pipeline {self.id} has no step {step_id!r}; its steps are {known}.")

    def phase(self, phase: Phase) -> list[PipelineStep]:
        """The steps of one phase, in order."""
        return [s for s in self.steps if s.phase == phase]

    @property
    def datasets(self) -> list[str]:
        """Dataset ids the pipeline fetches, in order, without repeats."""
        seen: list[str] = []
        for s in self.steps:
            ds = s.args.get("dataset_id") if s.tool_phase == "fetch" else None
            if isinstance(ds, str) and ds not in seen:
                seen.append(ds)
        return seen

    @property
    def missions(self) -> list[str]:
        """Mission prefixes of the fetched datasets (AC for AC_H2_MFI, WI for WI_H0_MFI)."""
        found: list[str] = []
        for ds in self.datasets:
            prefix = ds.split("_", 1)[0].upper()
            if prefix not in found:
                found.append(prefix)
        return found

    def is_vanilla(self) -> bool:
        """Trivial fetch-and-plot: fewer than 3 fetches and no transform (seed 001)."""
        fetches = sum(1 for s in self.steps if s.tool_phase == "fetch")
        transforms = sum(1 for s in self.steps if s.tool_phase == "compute")
        return fetches < 3 and transforms == 0

    def appropriation_fingerprint(self) -> str:
        """SHA-256 of the data logic with canonical, position-based step ids.

        Two pipelines that fetch and compute the same things (whatever their step ids,
        names or figures) share a fingerprint, so they form one family.
        """
        steps = self.phase("appropriation")
        canonical = {s.step_id: f"a{i}" for i, s in enumerate(steps)}
        payload = [
            {
                "id": canonical[s.step_id],
                "tool": s.tool,
                "args": s.args,
                "depends_on": sorted(canonical[d] for d in s.depends_on if d in canonical),
            }
            for s in steps
        ]
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def values(self, overrides: dict[str, str] | None = None) -> dict[str, str]:
        """Variable values for a run: defaults, then `overrides` (keys with or without `$`)."""
        values = {name: var.default for name, var in self.variables.items()}
        for key, value in (overrides or {}).items():
            name = key if key.startswith("$") else "$" + key.upper()
            if name not in self.variables:
                known = ", ".join(self.variables) or "none"
                raise UserError(f"Pipeline {self.id} has no variable {name}; it has {known}.")
            values[name] = value
        return values

    # -- text for people and models -----------------------------------------------------

    def to_llm_context(self) -> str:
        """A readable account of the pipeline that a model can modify step by step."""
        lines = [f"Pipeline {self.id}: {self.name}"]
        if self.description:
            lines.append(self.description)
        for name, var in self.variables.items():
            lines.append(f"Variable {name} ({var.type}): default {var.default!r}")
        for phase in ("appropriation", "presentation"):
            steps = self.phase(phase)
            if not steps:
                continue
            lines.append(f"\n{phase.title()} phase:")
            for s in steps:
                deps = f" after {', '.join(s.depends_on)}" if s.depends_on else ""
                made = f" -> {', '.join(s.produces)}" if s.produces else ""
                flag = "" if s.critical else " (non-critical)"
                lines.append(f"- {s.step_id} {s.tool}{deps}{made}{flag}: {s.intent}")
                lines.append(f"  args: {json.dumps(s.args, default=str)[:1500]}")
        return "\n".join(lines)

    # -- JSON ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The pipeline as its JSON document."""
        return {
            "schema_version": self.schema_version,
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "created_at": self.created_at,
            "source_session": self.source_session,
            "parent_id": self.parent_id,
            "variables": {k: v.to_dict() for k, v in self.variables.items()},
            "steps": [s.to_dict() for s in self.steps],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pipeline:
        """Read a pipeline document, migrating older schema versions.

        Raises:
            UserError: the document is from a newer xhelio or is not a pipeline.
        """
        version = int(data.get("schema_version", 0))
        if version > SCHEMA_VERSION:
            raise UserError(
                f"Pipeline {data.get('id')} was saved by a newer xhelio (schema {version}); "
                "upgrade xhelio to read it."
            )
        if version == 0:
            data = _migrate_v0(data)
        try:
            variables = {
                str(k): PipelineVariable(
                    str(v.get("type", "string")),
                    str(v.get("description", "")),
                    str(v.get("default", "")),
                )
                for k, v in (data.get("variables") or {}).items()
            }
            return cls(
                id=str(data["id"]),
                name=str(data.get("name") or data["id"]),
                steps=[PipelineStep.from_dict(s) for s in data.get("steps") or []],
                description=str(data.get("description", "")),
                variables=variables,
                created_at=str(data.get("created_at") or _now()),
                source_session=data.get("source_session"),
                parent_id=data.get("parent_id"),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise UserError(f"Not a valid pipeline document: missing or bad {exc}.") from exc


def _migrate_v0(data: dict[str, Any]) -> dict[str, Any]:
    """Seed 002's layout: integer `step_id`s, `tool_name`/`tool_args`, int `depends_on`."""

    def sid(value: Any) -> str:
        return f"s{int(value):03d}" if isinstance(value, int) else str(value)

    steps: list[dict[str, Any]] = []
    for raw in data.get("steps") or []:
        tool_phase = _saved_tool_phase(raw)
        steps.append(
            {
                "step_id": sid(raw.get("step_id")),
                "tool": str(raw.get("tool_name") or raw.get("tool")),
                "args": raw.get("tool_args") or raw.get("args") or {},
                "intent": raw.get("intent", ""),
                "produces": raw.get("produces") or [],
                "depends_on": [sid(d) for d in raw.get("depends_on") or []],
                "critical": raw.get("critical", True),
                "phase": phase_of(tool_phase),
                "tool_phase": tool_phase,
            }
        )
    return {**data, "steps": steps, "schema_version": SCHEMA_VERSION}
