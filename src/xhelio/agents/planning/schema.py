"""The planner's structured output and the reviewer's decision, as pydantic models.

`PlannerOutput` is the seed's planner schema (`status`, `reasoning`, `tasks` with
`description`, `instruction`, `mission`, `candidate_datasets`, `summary`) plus seed 004's
success criteria: stated with the first batch, judged with evidence when the plan is
done. The LLM planner gets these as its output type; the offline planner builds them in
code, so both feed the same loop. Imports nothing from xhelio.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

__all__ = ["CriterionCheck", "PlannedTask", "PlannerOutput", "ReviewDecision", "StageReflection"]

_NO_MISSION = {"", "null", "none", "orchestrator"}


class PlannedTask(BaseModel):
    """One task as the planner writes it: physics intent, not parameter names."""

    description: str = Field(description="Short human-readable summary of the task.")
    instruction: str = Field(
        description="What the executing agent must do, as physics intent (quantities, "
        "time range, labels to use), not dataset parameter names."
    )
    mission: str | None = Field(
        default=None,
        description="Mission id (e.g. 'ACE'), '__data_ops__', '__sql__', '__visualization__', "
        "'__data_extraction__', '__web_api__', or null for the orchestrator.",
    )
    candidate_datasets: list[str] = Field(
        default_factory=list[str], description="Verified dataset ids to inspect, best first."
    )
    criteria: list[str] = Field(
        default_factory=list[str],
        description="Deep analysis: 1-3 checkable conditions this stage's result must meet.",
    )

    @field_validator("mission", mode="before")
    @classmethod
    def _null_mission(cls, value: object) -> object:
        """Models write 'null' or 'none' as strings; both mean the orchestrator."""
        if isinstance(value, str) and value.strip().lower() in _NO_MISSION:
            return None
        return value


class CriterionCheck(BaseModel):
    """Whether a success criterion was met, and the evidence (labels, points, figure)."""

    criterion: str
    met: bool
    evidence: str = Field(description="Concrete evidence: labels, point counts, traces.")


class PlannerOutput(BaseModel):
    """One planning step: the next task batch, or 'done' with a summary."""

    status: Literal["continue", "done"] = Field(
        description="'continue' when the tasks below must run; 'done' when the request "
        "is fully handled."
    )
    reasoning: str = Field(description="Why these tasks are needed, briefly.")
    tasks: list[PlannedTask] = Field(default_factory=list[PlannedTask])
    summary: str = Field(default="", description="Final summary when status is 'done'.")
    success_criteria: list[str] = Field(
        default_factory=list[str],
        description="Checkable conditions the finished result must meet (first plan only).",
    )
    criteria_results: list[CriterionCheck] = Field(
        default_factory=list[CriterionCheck],
        description="When done: each success criterion, met or not, with evidence.",
    )


class ReviewDecision(BaseModel):
    """A reviewer's structured exit decision on a plan."""

    exit: bool = Field(description="True when the plan is good enough to execute.")
    reason: str = Field(description="Why; what must change when exit is false.")


class StageReflection(BaseModel):
    """After a deep-analysis stage: its criteria judged, and the remaining stages revised."""

    criteria_results: list[CriterionCheck] = Field(
        default_factory=list[CriterionCheck],
        description="Each criterion of the stage just run, met or not, with evidence.",
    )
    remaining: list[PlannedTask] | None = Field(
        default=None,
        description="The stages still to run, in order, when they must change (add, change "
        "or drop stages); null keeps them as planned.",
    )
    note: str = Field(default="", description="What was learned and why the stages changed.")
