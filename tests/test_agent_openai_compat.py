"""The real OpenAI-compatible HTTP path: XHELIO_MODEL=openai-chat:NAME at a loopback server.

No FunctionModel here: `make_assistant` resolves the model from the environment and the
pydantic-ai OpenAI chat model talks HTTP to a scripted chat-completions server on
127.0.0.1, while the agents fetch from the loopback HAPI server. This is the only test
that lets pydantic-ai make model requests (to loopback).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pydantic_ai import models

from agent_script import ACE_REQUEST, Script, ace_steps, ace_week, http_agent_key
from servers.hapi_server import HapiTestServer
from servers.openai_chat_server import OpenAIChatServer, prompt_tokens
from xhelio.agents.factory import make_assistant
from xhelio.agents.turn import run_turn
from xhelio.agents.usage import UsageTracker
from xhelio.config import load_settings
from xhelio.tools.workspace import open_workspace


@pytest.fixture
def hapi(monkeypatch: pytest.MonkeyPatch) -> Iterator[HapiTestServer]:
    info, frame = ace_week()
    with HapiTestServer() as server:
        server.add_dataset("AC_H2_MFI", info, frame)
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        yield server


def test_ace_flow_over_the_openai_chat_completions_api(
    hapi: HapiTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = Script(ace_steps())
    with OpenAIChatServer(script.http_reply) as chat:
        monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)
        monkeypatch.setenv("OPENAI_BASE_URL", chat.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("XHELIO_MODEL", "openai-chat:scripted-llm")
        workspace = open_workspace(settings=load_settings())
        try:
            usage = UsageTracker()
            assistant, config = make_assistant(workspace, usage=usage)
            assert config.orchestrator == "openai-chat:scripted-llm"
            result = run_turn(workspace, assistant, ACE_REQUEST)
        finally:
            workspace.close()

    assert result.error is None, result.error
    assert result.answer == "Here is ACE's magnetic field (GSE) for last week."
    assert script.left() == {}
    assert workspace.session.store.labels() == ["AC_H2_MFI.BGSEc"]
    bodies = chat.requests
    assert [http_agent_key(b) for b in bodies] == [
        "orchestrator",
        "mission:ACE",
        "mission:ACE",
        "mission:ACE",
        "orchestrator",
        "visualization",
        "visualization",
        "orchestrator",
    ]
    assert {b["model"] for b in bodies} == {"scripted-llm"}
    first = bodies[0]
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][-1] == {"role": "user", "content": ACE_REQUEST}
    offered = {t["function"]["name"] for t in first["tools"]}
    assert "delegate_to_mission" in offered and "fetch_data" not in offered
    # The mission agent's tool result went back as an OpenAI tool message.
    tool_messages = [m for m in bodies[3]["messages"] if m["role"] == "tool"]
    fetched = json.loads(tool_messages[-1]["content"])
    assert fetched["label"] == "AC_H2_MFI.BGSEc" and fetched["status"] == "ok"
    # Usage is what the server reported, per agent.
    per_agent = usage.per_agent()
    assert per_agent["orchestrator"].requests == 3
    orchestrator_bodies = [b for b in bodies if http_agent_key(b) == "orchestrator"]
    assert per_agent["orchestrator"].input_tokens == sum(map(prompt_tokens, orchestrator_bodies))
