"""The records a plan is made of, and the state one plan is built in.

A step names its role (a mission id, "__data_ops__", "__visualization__" or
"__discovery__"), says in words what it does, and lists its tool calls. A fetch step
lists one `fetch_data` call per candidate, tried in order until one gives usable data.
Labels not known before running (the fetched `DATASET.PARAM`) appear in arguments as
`{ref}` placeholders that the executor fills in; computed labels are fixed here.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal

from xhelio.catalog.model import DatasetInfo
from xhelio.language.binding import MissionBinding
from xhelio.language.intent import (
    RequestIntent,
)
from xhelio.language.parse import Vocabulary
from xhelio.language.resolve import (
    Candidate,
)
from xhelio.timerange import TimeRange

NAMED = "__named__"  # a parameter the user named in a dataset they named
StepKind = Literal["fetch", "compute", "plot", "export", "save", "discover"]


@dataclass(frozen=True)
class ToolCall:
    """One call through the funnel; string arguments may hold `{ref}` placeholders."""

    tool: str
    args: dict[str, Any]


@dataclass(frozen=True)
class PlanStep:
    """One step: what it does, who does it, the calls it makes, and what it produces."""

    kind: StepKind
    description: str
    role: str
    calls: tuple[ToolCall, ...]
    output: str | None = None
    inputs: tuple[str, ...] = ()
    only_if_vector: bool = False
    series: str = ""
    candidates: tuple[Candidate, ...] = ()


@dataclass(frozen=True)
class OfflinePlan:
    """The steps for one request, notes worth telling, and what is missing if anything."""

    intent: RequestIntent
    steps: tuple[PlanStep, ...] = ()
    notes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    time_range: TimeRange | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able record of the plan (for `AssistantReply.plan`)."""
        return {
            "mode": "offline",
            "understood": self.intent.understood(),
            "time_range": str(self.time_range) if self.time_range else None,
            "notes": list(self.notes),
            "missing": list(self.missing),
            "steps": [
                {
                    "kind": s.kind,
                    "description": s.description,
                    "role": s.role,
                    "output": s.output,
                    "inputs": list(s.inputs),
                    "only_if_vector": s.only_if_vector,
                    "calls": [asdict(c) for c in s.calls],
                }
                for s in self.steps
            ],
        }


@dataclass
class Source:
    """Where a series comes from: a mission (maybe one spacecraft) or named datasets."""

    role: str
    tag: str
    name: str
    datasets: list[DatasetInfo]
    probe: str | None = None
    text: str = ""  # the request's words about this source (its instrument, product words)


@dataclass
class Builder:
    """The state one plan is built in: its steps, notes, questions and labels."""

    vocab: Vocabulary
    intent: RequestIntent
    now: datetime
    steps: list[PlanStep] = field(default_factory=list[PlanStep])
    notes: list[str] = field(default_factory=list[str])
    missing: list[str] = field(default_factory=list[str])
    labels: set[str] = field(default_factory=set[str])
    units: dict[str, str] = field(default_factory=dict[str, str])
    # the (dataset, parameter)s shown before, whose products a probe switch keeps
    earlier: list[tuple[str, str]] | None = None
    shown: list[tuple[str, str]] | None = None  # the (dataset, parameter)s a follow-up keeps
    binding: MissionBinding | None = None  # each spacecraft's own words, read once per plan

    def unique(self, label: str) -> str:
        """`label`, or `label_2`, `label_3`... when taken."""
        base, n = label, 2
        while label in self.labels:
            label, n = f"{base}_{n}", n + 1
        self.labels.add(label)
        return label


def label_tag(text: str) -> str:
    """An upper-case identifier from free text, for labels."""
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper() or "DATA"
