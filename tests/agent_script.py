"""Scripted LLMs for agent tests and benchmarks: FunctionModels that follow a per-agent script.

`Script({"orchestrator": [...], "mission:ACE": [...]})` holds, per agent, the replies its
model gives in order. A step is a text (final answer), a list of `(tool, args)` calls, an
exception to raise (e.g. a 429), or a callable `(messages, info) -> step`. The agent is
recognised from what it is offered (tools, instructions), never from call order, and every
request is recorded in `seen` (agent, model name, messages, info) for assertions.
`script.build` is the `build_model` seam of `AgentAssistant`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from servers.hapi_server import make_info, synthetic_frame
from xhelio.agents.models import ModelConfig

Calls = list[tuple[str, dict[str, Any]]]
Step = str | Calls | BaseException | Callable[[list[ModelMessage], AgentInfo], Any]

ACE_REQUEST = "Show me ACE magnetic field data for last week"
FETCH = {"dataset_id": "AC_H2_MFI", "parameter_id": "BGSEc", "time_range": "last week"}
PLOT = {"figure": {"data": [{"type": "scatter", "data_label": "AC_H2_MFI.BGSEc"}]}}


def ace_steps() -> dict[str, list[Any]]:
    """The seed's simple flow: mission fetch, then visualization, then an answer."""
    return {
        "orchestrator": [
            [
                (
                    "delegate_to_mission",
                    {"mission_id": "ACE", "request": "magnetic field, last week"},
                )
            ],
            [("delegate_to_visualization", {"request": "Plot AC_H2_MFI.BGSEc"})],
            "Here is ACE's magnetic field (GSE) for last week.",
        ],
        "mission:ACE": [
            [("list_parameters", {"dataset_id": "AC_H2_MFI"})],
            [("fetch_data", FETCH)],
            "Fetched AC_H2_MFI.BGSEc.",
        ],
        "visualization": [[("render_plotly_json", PLOT)], "One panel with Bx, By, Bz."],
    }


PRIMARY = "openai-chat:primary"
BACKUP = "openai-chat:backup"


def scripted_config(fallback: str = BACKUP) -> ModelConfig:
    """An online model config whose tiers all use PRIMARY, with `fallback`."""
    return ModelConfig(
        orchestrator=PRIMARY,
        sub_agent=PRIMARY,
        planner=PRIMARY,
        insight=PRIMARY,
        inline=PRIMARY,
        fallback=fallback,
        offline=False,
        reason="scripted",
    )


def agent_key(info: AgentInfo) -> str:
    """Which agent a FunctionModel request comes from."""
    return key_of({t.name for t in info.function_tools}, info.instructions or "")


def http_agent_key(body: dict[str, Any]) -> str:
    """Which agent a chat-completions request body comes from."""
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    system = [m["content"] for m in body.get("messages", []) if m.get("role") == "system"]
    return key_of(tools, str(system[0]) if system else "")


def key_of(tools: set[str], instructions: str) -> str:
    """Which agent offers `tools` with `instructions`."""
    if instructions.startswith("You prepare a plan"):
        return "planner.discovery"
    if instructions.startswith("You plan multi-step"):
        return "planner"
    if instructions.startswith("You review a task plan"):
        return "reviewer"
    if instructions.startswith("You compress the older part"):
        return "context"
    if instructions.startswith("You check one stage"):
        return "reflector"
    if "delegate_to_mission" in tools:
        return "orchestrator"
    if "fetch_data" in tools:
        match = re.search(r"You fetch (.+?) data", instructions)
        return f"mission:{match.group(1) if match else '?'}"
    if "custom_operation" in tools:
        return "data_ops"
    if "get_function_docs" in tools:
        return "data_ops.think"
    if "store_dataframe" in tools:
        return "data_extraction"
    if "render_plotly_json" in tools:
        return "visualization"
    if "call_api" in tools:
        return "web_api"
    if "query_data" in tools:
        return "sql"
    return "insight"


@dataclass
class Seen:
    """One model request as the model saw it."""

    agent: str
    model: str
    messages: list[ModelMessage]
    info: AgentInfo


class Script:
    """Per-agent scripted replies behind FunctionModels."""

    def __init__(self, steps: dict[str, list[Step]]) -> None:
        self.steps = {key: list(value) for key, value in steps.items()}
        self.seen: list[Seen] = []
        self._lock = threading.Lock()

    def build(self, model_name: str) -> FunctionModel:
        """The `build_model` seam: a FunctionModel named `model_name` following the script."""

        def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return self.reply(model_name, messages, info)

        return FunctionModel(reply, model_name=model_name.split(":", 1)[1])

    def reply(self, model: str, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """Record the request and answer with the agent's next step."""
        key = agent_key(info)
        with self._lock:
            self.seen.append(Seen(key, model, list(messages), info))
            queue = self.steps.get(key)
            if not queue:
                raise AssertionError(f"no scripted step left for {key} (model {model})")
            step: Any = queue.pop(0)
        if callable(step) and not isinstance(step, BaseException):
            step = step(messages, info)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        return ModelResponse(parts=[ToolCallPart(name, args) for name, args in step])

    def http_reply(self, body: dict[str, Any]) -> str | Calls:
        """The `reply` of `OpenAIChatServer`: the next text or tool calls of the body's agent."""
        key = http_agent_key(body)
        with self._lock:
            queue = self.steps.get(key)
            if not queue:
                raise AssertionError(f"no scripted step left for {key}")
            step = queue.pop(0)
        if isinstance(step, str | list):
            return step
        raise AssertionError(f"step {step!r} of {key} cannot be sent over HTTP")

    def requests_of(self, agent: str) -> list[Seen]:
        """The requests one agent made, in order."""
        return [s for s in self.seen if s.agent == agent]

    def left(self) -> dict[str, int]:
        """Steps not consumed, per agent (a finished script leaves none)."""
        return {key: len(queue) for key, queue in self.steps.items() if queue}


def tool_returns(messages: list[ModelMessage], tool: str) -> list[str]:
    """The contents returned to the model for `tool` calls, in order."""
    return [
        str(part.content)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == tool
    ]


def user_prompts(messages: list[ModelMessage]) -> list[str]:
    """Every user prompt text in `messages`."""
    return [
        part.content if isinstance(part.content, str) else str(part.content)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]


def ace_week() -> tuple[dict[str, Any], Any]:
    """HAPI info and 5-minute frame for AC_H2_MFI covering the last three weeks."""
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    start = (today - timedelta(days=21)).strftime("%Y-%m-%dT%H:%M:%SZ")
    stop = (today + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    info = make_info(start, stop, [("Magnitude", "nT", None), ("BGSEc", "nT", 3)], cadence="PT5M")
    frame = synthetic_frame(start, stop, "PT5M", ["Magnitude", "Bx", "By", "Bz"])
    return info, frame
