"""Context within budget: old tool results cleared, older turns summarised, labels kept.

A scripted model (FunctionModel) drives a real pydantic-ai agent with the compactor as its
history capability, for 200 turns; a second FunctionModel is the summariser behind the
session's `ModelRouter`. The orchestrator test runs the real `AgentAssistant`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic_ai import Agent
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

from agent_script import Script, scripted_config
from xhelio.agents.context import (
    SUMMARY_MARKER,
    Compaction,
    ContextBudget,
    ContextCompactor,
    clear_old_results,
    count_tokens,
    cut_point,
    estimate_tokens,
    history_capability,
    llm_summarizer,
)
from xhelio.agents.models import ModelRouter
from xhelio.agents.orchestrator import AgentAssistant
from xhelio.agents.turn import run_turn
from xhelio.config import load_settings
from xhelio.tools.workspace import Workspace, open_workspace

BUDGET = ContextBudget(max_tokens=4000, max_messages=40, keep_messages=20)


def _label(turn: int) -> str:
    return f"WI_H2_MFI.B_{turn:03d}"


def _fetch_result(label: str) -> str:
    """A large tool result, as a fetch returns it (label, stats, a preview of rows)."""
    rows = [{"time": f"2024-01-01T00:{m:02d}:00Z", "Bx": 1.5 + m, "By": -2.0} for m in range(30)]
    return json.dumps({"status": "ok", "label": label, "points": 1440, "preview": rows})


def _all_text(messages: list[ModelMessage]) -> str:
    out: list[str] = []
    for message in messages:
        for part in message.parts:
            content = getattr(part, "content", None)
            if isinstance(part, ToolCallPart):
                out.append(part.args_as_json_str())
            elif content is not None:
                out.append(content if isinstance(content, str) else json.dumps(content))
    return "\n".join(out)


def _pair(turn: int, *, tool_call_id: str | None = None) -> list[ModelMessage]:
    call_id = tool_call_id or f"call_{turn}"
    return [
        ModelRequest(parts=[UserPromptPart(f"fetch turn {turn}")]),
        ModelResponse(parts=[ToolCallPart("fetch", {"label": _label(turn)}, call_id)]),
        ModelRequest(parts=[ToolReturnPart("fetch", _fetch_result(_label(turn)), call_id)]),
        ModelResponse(parts=[TextPart(f"Fetched {_label(turn)}.")]),
    ]


def test_old_tool_results_become_stubs_naming_their_labels() -> None:
    history = [m for turn in range(6) for m in _pair(turn)]
    cleared, count = clear_old_results(history, keep=8, known=[])
    assert count == 4  # the 4 older turns' results; the last 8 messages stay whole
    stubs = [p.content for m in cleared[:16] for p in m.parts if isinstance(p, ToolReturnPart)]
    assert all(str(s).startswith("[cleared to save context] fetch result") for s in stubs)
    assert [_label(t) in str(s) for t, s in enumerate(stubs)] == [True] * 4
    assert cleared[16:] == history[16:]
    assert estimate_tokens(cleared) < estimate_tokens(history) / 2


def test_a_known_label_mentioned_in_a_result_survives_in_its_stub() -> None:
    text = "x" * 300 + " derived from ACE_Bmag and more " + "y" * 300
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("describe")]),
        ModelResponse(parts=[ToolCallPart("describe_data", {}, "c1")]),
        ModelRequest(parts=[ToolReturnPart("describe_data", text, "c1")]),
        ModelResponse(parts=[TextPart("done")]),
    ]
    cleared, count = clear_old_results(history, keep=1, known=["ACE_Bmag", "OMNI_V"])
    assert count == 1
    assert "data labels: ACE_Bmag" in str(cleared[2].parts[0].content)


def test_the_cut_never_separates_a_tool_call_from_its_return() -> None:
    history = [m for turn in range(10) for m in _pair(turn)]
    for keep in range(2, 30):
        cut = cut_point(history, keep)
        if cut == 0:
            continue
        assert isinstance(history[cut], ModelRequest)
        assert not any(isinstance(p, ToolReturnPart) for p in history[cut].parts)
        assert len(history) - cut >= keep
        recent_calls = {
            p.tool_call_id for m in history[cut:] for p in m.parts if isinstance(p, ToolCallPart)
        }
        recent_returns = {
            p.tool_call_id for m in history[cut:] for p in m.parts if isinstance(p, ToolReturnPart)
        }
        assert recent_calls == recent_returns


def test_tokens_come_from_the_provider_when_it_reports_them() -> None:
    history = _pair(0)
    assert count_tokens(history) == estimate_tokens(history)  # no usage reported: estimate
    reported = ModelResponse(parts=[TextPart("ok")])
    reported.usage.input_tokens, reported.usage.output_tokens = 5000, 10
    assert count_tokens([*history, reported]) == 5010


class _Conversation:
    """A scripted agent that fetches one new label per turn, and a scripted summariser."""

    def __init__(self) -> None:
        self.seen_tokens: list[int] = []
        self.summaries = 0
        self.compactions: list[Compaction] = []

    def model(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen_tokens.append(estimate_tokens(messages))
        last = messages[-1]
        prompt = next((p for p in last.parts if isinstance(p, UserPromptPart)), None)
        if prompt is not None:
            turn = int(str(prompt.content).rsplit(" ", 1)[1])
            return ModelResponse(parts=[ToolCallPart("fetch", {"label": _label(turn)})])
        return ModelResponse(parts=[TextPart("Fetched it.")])

    def summarizer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert (info.instructions or "").startswith("You compress the older part")
        self.summaries += 1
        asked = str(messages[-1].parts[-1].content).count("User: ")
        return ModelResponse(parts=[TextPart(f"The user asked for {asked} fetches of Wind B.")])


def test_two_hundred_turns_stay_under_budget_and_keep_every_label() -> None:
    convo = _Conversation()
    router = ModelRouter(scripted_config(), build=lambda name: FunctionModel(convo.summarizer))
    compactor = ContextCompactor(
        BUDGET,
        "orchestrator",
        summarize=llm_summarizer(router),
        publish=convo.compactions.append,
    )
    agent: Agent[None, str] = Agent(
        FunctionModel(convo.model), capabilities=[history_capability(compactor)]
    )

    @agent.tool_plain
    def fetch(label: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Fetch data under `label`."""
        return _fetch_result(label)

    history: list[ModelMessage] = []
    for turn in range(200):
        result = agent.run_sync(f"fetch turn {turn}", message_history=history)
        history = result.all_messages()

    assert max(convo.seen_tokens) <= BUDGET.max_tokens
    assert len(history) <= BUDGET.max_messages + 4
    text = _all_text(history)
    missing = [_label(t) for t in range(200) if _label(t) not in text]
    assert missing == []
    assert text.count(SUMMARY_MARKER) == 1
    assert convo.summaries >= 1 and convo.compactions
    assert any(c.summary_source == "llm" for c in convo.compactions)
    assert all(c.tokens_after < c.tokens_before for c in convo.compactions)


def test_a_failing_summariser_never_breaks_the_turn() -> None:
    async def broken(text: str) -> str:
        raise RuntimeError("provider down")

    done: list[Compaction] = []
    compactor = ContextCompactor(
        ContextBudget(1000, 12, 4), "data_ops", summarize=broken, publish=done.append
    )
    history = [m for turn in range(8) for m in _pair(turn)]
    out = asyncio.run(compactor.process(history))
    assert estimate_tokens(out) <= 1000
    assert done[0].summary_source == "plain"
    text = _all_text(out)
    assert all(_label(t) in text for t in range(8))
    assert "fetch turn 0" in text  # the plain account lists the earlier requests


def test_within_budget_the_history_is_left_alone() -> None:
    compactor = ContextCompactor(BUDGET, "x")
    history = _pair(0)
    assert asyncio.run(compactor.process(history)) is history


@pytest.fixture
def small_budget_workspace(monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("XHELIO_CONTEXT_BUDGET_TOKENS", "3000")
    monkeypatch.setenv("XHELIO_CONTEXT_MAX_MESSAGES", "8")
    monkeypatch.setenv("XHELIO_CONTEXT_KEEP_MESSAGES", "4")
    ws = open_workspace(settings=load_settings())
    yield ws
    ws.close()


def test_the_orchestrator_compacts_its_stored_conversation_and_the_trace_shows_it(
    small_budget_workspace: Workspace,
) -> None:
    ws = small_budget_workspace
    turns = 6
    steps: dict[str, list[Any]] = {
        "orchestrator": [
            step for t in range(turns) for step in ([("list_missions", {})], f"Answer {t}.")
        ],
        "context": [f"Summary {n}." for n in range(turns * 2)],
    }
    script = Script(steps)
    assistant = AgentAssistant(ws, scripted_config(), build_model=script.build)
    for t in range(turns):
        result = run_turn(ws, assistant, f"Which missions are there? ({t})")
        assert result.error is None, result.error
    events = [e for e in ws.session.events.events() if e.type == "context_compacted"]
    assert events, "no compaction in the trace"
    assert events[0].agent == "orchestrator"
    assert events[0].data["tokens_after"] < events[0].data["tokens_before"]
    assert "context compacted for orchestrator" in events[0].summary
    last = script.requests_of("orchestrator")[-1].messages
    assert estimate_tokens(last) <= 3000
