"""LLM-mediated replay: run a pipeline, then let a model apply only the requested change.

The pipeline is first replayed deterministically (data and figure ready). A pydantic-ai
agent then gets `Pipeline.to_llm_context()` with the seed's instruction to change only
what the modification needs, and the data/plot tools, every call through the same
funnel. "Run my ACE pipeline for Wind instead" works by reading the step intents: the
model fetches Wind's equivalent and re-plots. The operations of the replay plus the
modification are extracted into a variant pipeline (`parent_id` = the original), which
can be saved; if the data steps did not change it lands in the same family.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage, UsageLimits

from xhelio.errors import UserError
from xhelio.pipelines.extract import extract_pipeline
from xhelio.pipelines.model import TIME_RANGE_VAR, Pipeline
from xhelio.pipelines.replay import ReplayResult, replay_pipeline
from xhelio.pipelines.store import PipelineStore
from xhelio.tools.wrappers import Toolset

__all__ = ["MODIFY_PROMPT", "MODIFY_TOOLS", "ModifiedReplay", "replay_with_modifications"]

MODIFY_PROMPT = (
    "You modify a saved heliophysics analysis pipeline. The pipeline has been executed. The "
    "data and plot are ready. Apply ONLY the user's requested modifications — do not "
    "re-fetch data or re-plot unless the modification requires it. Each step's intent says "
    "what it is for: to use another spacecraft, fetch that spacecraft's equivalent dataset "
    "and parameter for the same time range, redo the computations on it and re-plot with "
    "the new labels. Answer with one short sentence saying what you changed."
)
MODIFY_TOOLS = (
    "list_fetched_data",
    "search_datasets",
    "list_parameters",
    "fetch_data",
    "custom_operation",
    "render_plotly_json",
    "manage_plot",
)
CALLER = "pipeline_modify"


@dataclass
class ModifiedReplay:
    """The deterministic replay, what the model said and did, and the variant pipeline."""

    replay: ReplayResult
    answer: str
    calls: list[str]
    usage: RunUsage
    variant: Pipeline | None
    saved: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The outcome as JSON."""
        return {
            "replay": self.replay.to_dict(),
            "answer": self.answer,
            "calls": self.calls,
            "model_requests": self.usage.requests,
            "tokens": self.usage.input_tokens + self.usage.output_tokens,
            "variant": self.variant.to_dict() if self.variant else None,
            "saved": self.saved,
        }


def _tools(funnel: Toolset, names: Sequence[str], calls: list[str]) -> list[Tool[Any]]:
    tools: list[Tool[Any]] = []
    for name in names:
        found = funnel.registry.get(name)
        if found is None:
            continue

        def run(_name: str = name, **args: Any) -> str:
            calls.append(_name)
            result = funnel.call(_name, args, caller=CALLER)
            return json.dumps(result.to_dict(), separators=(",", ":"), default=str)[:6000]

        schema = found.schema
        schema.pop("title", None)
        tools.append(Tool.from_schema(run, name, found.description, schema))
    return tools


def replay_with_modifications(
    pipeline: Pipeline,
    funnel: Toolset,
    modifications: str,
    model: Model,
    overrides: dict[str, str] | None = None,
    *,
    save_as: str | None = None,
    store: PipelineStore | None = None,
    request_limit: int = 12,
) -> ModifiedReplay:
    """Replay `pipeline`, then have `model` apply `modifications`; optionally save a variant.

    Args:
        pipeline: The saved pipeline.
        funnel: The session's funnel; the model's tool calls go through it too.
        modifications: The user's change, e.g. "use Wind instead of ACE".
        model: The pydantic-ai model (a FunctionModel in tests).
        overrides: Variable values, e.g. {"$TIME_RANGE": "March 2001"}.
        save_as: Name to save the resulting variant under (needs `store`).
        store: Where to save the variant.
        request_limit: Most model requests allowed.

    Raises:
        UserError: `modifications` is empty or a variant name was given without a store.
    """
    if not modifications.strip():
        raise UserError("Say what to change, e.g. 'use Wind instead of ACE'.")
    if save_as and store is None:
        raise UserError("Saving the variant needs the pipeline store.")
    first = len(funnel.operations)
    replay = replay_pipeline(pipeline, funnel, overrides)
    calls: list[str] = []
    agent = Agent(
        model,
        output_type=str,
        instructions=MODIFY_PROMPT,
        tools=_tools(funnel, MODIFY_TOOLS, calls),
    )
    prompt = (
        f"{pipeline.to_llm_context()}\n\nReplay outcome: {replay.summary()}\n"
        # The summary says the range as people read it; tool calls get it exactly.
        f"Exact time_range for tool calls: {replay.variables.get(TIME_RANGE_VAR, 'as saved')}\n\n"
        f"Requested modification: {modifications.strip()}"
    )
    run = agent.run_sync(prompt, usage_limits=UsageLimits(request_limit=request_limit))
    try:
        variant = extract_pipeline(
            funnel.operations[first:],
            save_as or f"{pipeline.name} (modified)",
            description=f"{pipeline.description} — modified: {modifications.strip()}",
            source_session=pipeline.source_session,
        )
    except UserError:
        variant = None  # nothing replayable came out (every step failed)
    saved = False
    if variant is not None:
        variant.parent_id = pipeline.id
        if save_as and store is not None:
            store.save(variant)
            saved = True
    return ModifiedReplay(replay, str(run.output), calls, run.usage, variant, saved)
