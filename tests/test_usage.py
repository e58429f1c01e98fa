"""UsageTracker: token usage per agent from real pydantic-ai agent runs."""

from __future__ import annotations

import asyncio
import json
import threading

import pydantic_ai.models
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RequestUsage, RunUsage
from rich.console import Console

from xhelio.agents.usage import AgentUsage, UsageTracker, thinking_tokens_of


@pytest.fixture(autouse=True)
def no_model_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", False)


def thinking_model() -> FunctionModel:
    """A model that calls one tool, then answers; each request reports fixed usage."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(input_tokens=100, output_tokens=40, output_reasoning_tokens=15)
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("count", {"n": 3})], usage=usage)
        return ModelResponse(parts=[TextPart("three")], usage=usage)

    return FunctionModel(respond)


def mission_agent() -> Agent[None, str]:
    agent = Agent(thinking_model(), name="mission")

    @agent.tool_plain
    def count(n: int) -> int:
        """Count to n."""
        return n

    return agent


def test_usage_accumulates_per_agent_across_runs() -> None:
    tracker = UsageTracker()
    mission = mission_agent()
    viz = Agent(TestModel(custom_output_text="plotted"), name="viz")

    async def session() -> list[RunUsage]:
        runs = [await mission.run("count"), await mission.run("again"), await viz.run("plot it")]
        for name, run in zip(["mission", "mission", "viz"], runs, strict=True):
            tracker.add(name, run.usage)
        return [run.usage for run in runs]

    usages = asyncio.run(session())
    per_agent = tracker.per_agent()
    assert list(per_agent) == ["mission", "viz"]
    # Two runs of two requests each, every request scripted at 100 in / 40 out / 15 thinking.
    assert per_agent["mission"] == AgentUsage(
        requests=4, input_tokens=400, output_tokens=160, thinking_tokens=60, tool_calls=2
    )
    viz_usage = usages[2]
    assert per_agent["viz"].input_tokens == viz_usage.input_tokens > 0
    assert per_agent["viz"].output_tokens == viz_usage.output_tokens > 0
    assert per_agent["viz"].thinking_tokens == 0
    total = tracker.total()
    assert total.requests == 5
    assert total.input_tokens == 400 + viz_usage.input_tokens
    assert total.total_tokens == total.input_tokens + total.output_tokens


def test_thinking_tokens_from_provider_details() -> None:
    assert thinking_tokens_of(RequestUsage(output_tokens=9, details={"thoughts_tokens": 7})) == 7
    assert thinking_tokens_of(RunUsage(output_tokens=9, details={"reasoning_tokens": 5})) == 5
    assert thinking_tokens_of(RequestUsage(output_tokens=9, output_reasoning_tokens=4)) == 4
    assert thinking_tokens_of(RequestUsage(output_tokens=9)) == 0


def test_single_request_usage_counts_one_request() -> None:
    tracker = UsageTracker()
    tracker.add("inline", RequestUsage(input_tokens=10, output_tokens=2))
    tracker.add("inline", RequestUsage(input_tokens=5, output_tokens=1))
    assert tracker.per_agent()["inline"] == AgentUsage(
        requests=2, input_tokens=15, output_tokens=3, thinking_tokens=0, tool_calls=0
    )


def test_per_agent_returns_copies() -> None:
    tracker = UsageTracker()
    tracker.add("a", RequestUsage(input_tokens=1))
    tracker.per_agent()["a"].input_tokens = 999
    assert tracker.per_agent()["a"].input_tokens == 1


def test_to_dict_is_json_ready() -> None:
    tracker = UsageTracker()
    tracker.add(
        "orchestrator", RunUsage(requests=2, input_tokens=50, output_tokens=20, tool_calls=1)
    )
    tracker.add("planner", RunUsage(requests=1, input_tokens=30, output_tokens=10))
    data = json.loads(json.dumps(tracker.to_dict()))
    assert data["agents"]["orchestrator"]["tool_calls"] == 1
    assert data["total"] == {
        "requests": 3,
        "input_tokens": 80,
        "output_tokens": 30,
        "thinking_tokens": 0,
        "tool_calls": 1,
    }


def test_render_table_shows_each_agent_and_the_total() -> None:
    tracker = UsageTracker()
    tracker.add("orchestrator", RunUsage(requests=3, input_tokens=12345, output_tokens=678))
    tracker.add("mission", RunUsage(requests=1, input_tokens=1000, output_tokens=2, tool_calls=4))
    console = Console(record=True, width=120)
    console.print(tracker.render_table())
    text = console.export_text()
    assert "Token usage" in text
    lines = {line.split()[1]: line for line in text.splitlines() if line.startswith("│")}
    assert "12,345" in lines["orchestrator"] and "678" in lines["orchestrator"]
    assert "4" in lines["mission"].split()
    assert "13,345" in lines["total"] and "680" in lines["total"]


def test_concurrent_adds_are_not_lost() -> None:
    tracker = UsageTracker()

    def worker(name: str) -> None:
        for _ in range(500):
            tracker.add(name, RequestUsage(input_tokens=2, output_tokens=1))

    threads = [threading.Thread(target=worker, args=(f"agent{i % 3}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tracker.total() == AgentUsage(requests=3000, input_tokens=6000, output_tokens=3000)
