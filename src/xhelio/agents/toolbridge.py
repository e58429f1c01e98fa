"""Registry tools for pydantic-ai agents, and the guarded loop that runs an agent.

`FunnelToolset` is how agents call tools: a pydantic-ai `AbstractToolset` whose async
`call_tool` runs the registry tool through the workspace's toolset directly on the agent's
own event loop (no thread and loop hop per call; delegations alone run in a worker thread
so the sub-agent shares the loop), with the run's caller name, wrapped in a
`GuardedToolset` for the run's `LoopGuard`; schemas are the tools' own (titles stripped).
`run_guarded` also caps the turn with pydantic-ai `UsageLimits` (requests and tokens),
beside the LoopGuard: every agent run of a turn (orchestrator, sub-agents, planner
discovery) shares the turn's `RunUsage` (the `TurnUsage` of the `TurnToolset` wrapping
the workspace's toolset during the turn), so the caps count all of them together; a
request's `max_turns` lowers the request cap (`turn_limits`). Each run still reports only
its own usage.

The result goes back to the model as compact JSON (an image a tool names as `attachment`
is sent along, for vision models). Calls run one at a time, so cancellation and the guard
act between calls. The funnel call itself is synchronous: it blocks only the agent's own
private loop (turns run on worker threads), never a server's event loop.

`run_guarded` drives an agent node by node: each round of tool calls opens and closes a
LoopGuard iteration, cancellation is checked before every model request and tool round,
and when the guard (or a tool, via `ToolCallState.stop_request`) stops the loop the model
gets one last request to answer with what it has; if it still calls tools, the run ends.

Imports pydantic-ai and, from xhelio, only `agents.guard` and `tools`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from copy import copy
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import AgentRunError, FallbackExceptionGroup, ModelAPIError
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturn,
    UserContent,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_ai.usage import RunUsage, UsageLimits
from pydantic_core import SchemaValidator, core_schema

from xhelio.agents.guard import LoopGuard
from xhelio.operations import ToolResult
from xhelio.tools.registry import Tool
from xhelio.tools.result import no_usable_result
from xhelio.tools.results import FetchReport
from xhelio.tools.wrappers import GuardedToolset, Toolset, TurnUsage

__all__ = [
    "DEFAULT_REQUEST_LIMIT",
    "DEFAULT_TOKEN_LIMIT",
    "FunnelToolset",
    "GuardedRun",
    "ToolCallState",
    "TurnUsage",
    "lean_schema",
    "run_coroutine",
    "run_guarded",
    "settle_history",
    "turn_limits",
]

T = TypeVar("T")

# Blocked or cancelled calls say nothing about whether the agent's own work succeeded.
_GUARD_TYPES = frozenset({"LoopGuard", "Cancelled"})


@dataclass
class ToolCallState:
    """One agent run's tool plumbing and what its calls produced."""

    funnel: Toolset
    caller: str
    guard: LoopGuard
    force_first_tool: bool = False
    calls: list[str] = field(default_factory=list[str])
    errors: list[str] = field(default_factory=list[str])
    successes: int = 0
    new_labels: list[str] = field(default_factory=list[str])
    round_results: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    last_round_failed: bool = False
    clarification: str | None = None
    stop_request: str | None = None
    final_only: bool = False

    @property
    def cancel(self) -> threading.Event:
        """The request's cancellation event."""
        return self.guard.cancel

    @property
    def halt_reason(self) -> str | None:
        """Why the loop must stop calling tools, or None."""
        return self.guard.stop_reason or self.stop_request

    def call(
        self, name: str, args: Mapping[str, Any], funnel: Toolset | None = None
    ) -> dict[str, Any]:
        """Run one tool through the toolset under the guard and record the outcome."""
        arguments = dict(args)
        guarded = GuardedToolset(funnel or self.funnel, self.guard.check_call)
        typed = _judge(guarded.call(name, arguments, self.caller))
        result = typed.to_dict()
        self.calls.append(name)
        self.round_results.append(
            {"tool": name, "args": arguments, "status": typed.status, "result": result}
        )
        if not typed.ok:
            if typed.error_type not in _GUARD_TYPES:
                self.errors.append(f"{name}: {typed.error or 'failed'}")
        else:
            self.successes += 1
            self.new_labels.extend(lb for lb in typed.labels if lb not in self.new_labels)
        return result

    def open_round(self, calls: Sequence[ToolCallPart]) -> None:
        """Start a LoopGuard iteration for the model's proposed calls."""
        self.round_results = []
        if self.guard.start_iteration() is None:
            self.guard.record_batch([(c.tool_name, c.args_as_dict()) for c in calls])

    def close_round(self) -> None:
        """End the LoopGuard iteration with this round's results."""
        real = [r for r in self.round_results if r["result"].get("type") not in _GUARD_TYPES]
        if real:
            self.last_round_failed = all(r["status"] == "error" for r in real)
        self.guard.end_iteration(self.round_results)


def _judge(result: ToolResult) -> ToolResult:
    """Turn a fetch that stored nothing usable into an error the model and caller can act on."""
    report = result.output
    if no_usable_result(result) is None or not isinstance(report, FetchReport):
        return result
    why = "has no samples" if not report.points else "is all NaN (fill values)"
    return ToolResult.failure(
        result.tool,
        "NoUsableData",
        f"{report.label} {why} in {report.requested}; skip it and try another "
        "parameter, dataset or time range.",
        label=report.label,
    )


def lean_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Drop pydantic's auto-generated titles: they repeat the names and cost tokens."""

    def strip(node: Any, in_properties: bool = False) -> Any:
        if isinstance(node, Mapping):
            out: dict[str, Any] = {}
            for key, value in node.items():  # type: ignore[misc]
                if key == "title" and not in_properties and isinstance(value, str):
                    continue
                out[str(key)] = strip(value, in_properties=key in ("properties", "$defs"))
            return out
        if isinstance(node, list):
            return [strip(item) for item in node]  # type: ignore[misc]
        return node

    return strip(schema)


def to_json(result: Mapping[str, Any]) -> str:
    """Compact JSON for the model (no spaces, non-ASCII kept)."""
    return json.dumps(result, separators=(",", ":"), ensure_ascii=False, default=str)


def _for_model(result: dict[str, Any]) -> str | ToolReturn:
    """JSON for the model; a result naming an image `attachment` also sends the image."""
    attachment = result.get("attachment")
    if not isinstance(attachment, Mapping):
        return to_json(result)
    shown = {key: value for key, value in result.items() if key != "attachment"}
    path = Path(str(attachment.get("path")))
    image = BinaryContent(path.read_bytes(), media_type=str(attachment.get("media_type")))
    return ToolReturn(to_json(shown), content=[f"The image {path.name}:", image])


_ANY_ARGS = SchemaValidator(schema=core_schema.any_schema())
"""The funnel validates arguments itself (and answers the model with what is wrong)."""

DEFAULT_REQUEST_LIMIT = 200
"""Model requests one turn may make, all agents together (LoopGuards stop each far earlier)."""
DEFAULT_TOKEN_LIMIT = 3_000_000
"""Tokens one turn may spend, all agents together, input and output."""


def turn_limits(toolset: Toolset) -> UsageLimits:
    """The usage limits of the turn running through `toolset`."""
    turn = toolset.turn
    cap = turn.max_requests if turn is not None else None
    requests = min(cap, DEFAULT_REQUEST_LIMIT) if cap else DEFAULT_REQUEST_LIMIT
    return UsageLimits(request_limit=requests, total_tokens_limit=DEFAULT_TOKEN_LIMIT)


class FunnelToolset(AbstractToolset[ToolCallState]):
    """Registry tools as a pydantic-ai toolset; every call goes through the funnel."""

    def __init__(
        self,
        tools: Sequence[Tool],
        funnel: Toolset | None = None,
        id: str | None = None,
        offload: bool = False,
    ) -> None:
        """Offer `tools`; calls go through `funnel` (default: the run's own funnel).

        Args:
            tools: The registry tools to offer.
            funnel: The funnel calls go through (default: the run's own).
            id: The toolset's id among the agent's toolsets.
            offload: Run each call in a worker thread, leaving the agent's loop free. Only
                for tools that run other agents (delegation): those must run on the same
                loop, whose HTTP clients are bound to it. Data tools run inline.
        """
        self._tools = {t.name: t for t in tools}
        self._funnel = funnel
        self._id = id
        self._offload = offload

    @property
    def id(self) -> str | None:
        """The toolset's id among the agent's toolsets."""
        return self._id

    async def get_tools(
        self, ctx: RunContext[ToolCallState]
    ) -> dict[str, ToolsetTool[ToolCallState]]:
        """The tools with their own schemas; calls run one at a time (guard, cancel)."""
        return {
            name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=name,
                    description=t.description,
                    parameters_json_schema=lean_schema(t.schema),
                    sequential=True,
                ),
                max_retries=1,
                args_validator=_ANY_ARGS,
            )
            for name, t in self._tools.items()
        }

    async def call_tool(
        self,
        name: str,
        tool_args: dict[str, Any],
        ctx: RunContext[ToolCallState],
        tool: ToolsetTool[ToolCallState],
    ) -> Any:
        """Run the tool through the funnel under the run's guard; JSON (and images) back."""
        if self._offload:
            result = await asyncio.to_thread(ctx.deps.call, name, tool_args, self._funnel)
        else:
            result = ctx.deps.call(name, tool_args, self._funnel)
        return _for_model(result)


@dataclass
class GuardedRun:
    """How one agent run ended."""

    text: str
    messages: list[ModelMessage]
    usage: RunUsage
    stop_reason: str | None = None
    cancelled: bool = False
    error: BaseException | None = None


SettingsSource = Callable[[], ModelSettings]


def _settings_for(state: ToolCallState, base: SettingsSource) -> Callable[..., ModelSettings]:
    def settings(ctx: RunContext[ToolCallState]) -> ModelSettings:
        merged = ModelSettings(**base())
        if state.final_only:
            merged["tool_choice"] = "none"
        elif state.force_first_tool and ctx.run_step <= 1:
            merged["tool_choice"] = "required"
        return merged

    return settings


async def run_guarded(
    agent: Agent[ToolCallState, str],
    prompt: str | Sequence[UserContent],
    state: ToolCallState,
    *,
    settings: SettingsSource = ModelSettings,
    message_history: Sequence[ModelMessage] | None = None,
    model: Model | None = None,
) -> GuardedRun:
    """Run `agent` on `prompt` round by round under the state's LoopGuard."""
    last_text = ""
    messages: list[ModelMessage] = list(message_history or [])
    usage = RunUsage()
    cancelled = False
    turn = state.funnel.turn or TurnUsage()
    before, attributed_before = copy(turn.usage), copy(turn.attributed)
    try:
        async with agent.iter(
            prompt,
            deps=state,
            model=model,
            message_history=message_history,
            model_settings=_settings_for(state, settings),
            usage_limits=turn_limits(state.funnel),
            usage=turn.usage,
        ) as run:
            node = run.next_node
            try:
                while not Agent.is_end_node(node):
                    if state.cancel.is_set():
                        cancelled = True
                        break
                    if Agent.is_call_tools_node(node):
                        response = node.model_response
                        last_text = response.text or last_text
                        calls = response.tool_calls
                        said = [(c.tool_name, c.args_as_dict()) for c in calls]
                        if loop := state.guard.observe_response(response.text or "", said):
                            last_text = loop  # a repeating model ends the run, said plainly
                            break
                        if calls and state.final_only:
                            break  # told to answer without tools and did not
                        if calls:
                            state.open_round(calls)
                            node = await run.next(node)
                            state.close_round()
                            if state.clarification is not None or state.cancel.is_set():
                                cancelled = state.cancel.is_set()
                                break
                            state.final_only = state.halt_reason is not None
                            continue
                    node = await run.next(node)
            finally:
                usage = turn.own_part(before, attributed_before)
                messages = run.all_messages()
                if Agent.is_model_request_node(node) and node.request not in messages:
                    messages.append(node.request)  # tool results not yet sent to the model
            if Agent.is_end_node(node):
                last_text = node.data.output
    except (ModelAPIError, FallbackExceptionGroup, AgentRunError) as exc:
        return GuardedRun(last_text, messages, usage, state.halt_reason, cancelled, exc)
    return GuardedRun(
        last_text, messages, usage, state.halt_reason, cancelled or state.cancel.is_set()
    )


def settle_history(messages: Sequence[ModelMessage], closing_text: str) -> list[ModelMessage]:
    """Make a history safe to continue: no unanswered tool calls, ends with a text reply.

    Stored requests drop their instructions: the next run sends the current ones.
    """
    settled = list(messages)
    if settled and isinstance(settled[-1], ModelResponse) and settled[-1].tool_calls:
        settled.pop()  # calls that never ran
    if not settled or isinstance(settled[-1], ModelRequest):
        settled.append(ModelResponse(parts=[TextPart(closing_text or "(no answer)")]))
    return [
        replace(m, instructions=None) if isinstance(m, ModelRequest) and m.instructions else m
        for m in settled
    ]


def run_coroutine(make: Callable[[], Coroutine[Any, Any, T] | Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, even under a running event loop."""

    async def main() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    # Called from async code (a server handler): run on a private loop in a worker thread.
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            box["value"] = asyncio.run(main())
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=worker, name="xhelio-agent-run")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
