"""What every analysis result carries: method, reference, assumptions and checks."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AnalysisResult", "Check"]


class Check(BaseModel):
    """One precondition and whether the data met it."""

    name: str
    ok: bool
    detail: str


class AnalysisResult(BaseModel):
    """The common part of every method's result (extra fields kept for tool results).

    Attributes:
        method: The method's name.
        reference: Where the method (and its error estimate) is published.
        assumptions: What the result takes for granted.
        checks: The preconditions checked (cadence, gaps, units, frame) and their outcome.
        answer: The result in one short paragraph: numbers, uncertainty, meaning.
    """

    model_config = ConfigDict(extra="allow")

    method: str
    reference: str
    assumptions: list[str] = Field(default_factory=list[str])
    checks: list[Check] = Field(default_factory=list[Check])
    answer: str = ""

    @property
    def warnings(self) -> list[str]:
        """The details of the checks that failed."""
        return [c.detail for c in self.checks if not c.ok]
