"""Offline plans for a request, and what they fetch: shared by the planner tests."""

from __future__ import annotations

from xhelio.agents.offline.plan import OfflinePlan, build_plan
from xhelio.language.parse import Vocabulary, parse_request


def plan_of(vocab: Vocabulary, text: str) -> OfflinePlan:
    return build_plan(vocab, parse_request(text, vocab))


def fetched(plan: OfflinePlan) -> list[tuple[str, str]]:
    """The first (dataset, parameter) of each fetch step."""
    return [
        (str(s.calls[0].args["dataset_id"]), str(s.calls[0].args["parameter_id"]))
        for s in plan.steps
        if s.kind == "fetch" and s.calls
    ]
