"""`xhelio.Assistant`: run / arun / astream with typed models, sessions and errors.

Offline mode answers against a loopback HAPI server; the LLM path is scripted with
pydantic-ai FunctionModels (no provider is reached).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from agent_script import Script
from servers.catalog_hapi import CatalogHapiServer
from xhelio import AskRequest, AskResponse, Assistant
from xhelio.api import SessionNotFoundError, StreamEvent
from xhelio.config import load_settings

ACE = "Show me ACE magnetic field for 2024-01-01 to 2024-01-02"


@pytest.fixture
def xh(monkeypatch: pytest.MonkeyPatch) -> Iterator[Assistant]:
    with CatalogHapiServer() as server:
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        with Assistant(load_settings()) as assistant:
            yield assistant


def test_run_returns_the_typed_response(xh: Assistant) -> None:
    r = xh.run(ACE, trace=True)
    assert isinstance(r, AskResponse) and r.error is None
    assert r.data and r.data[0].dataset and r.data[0].dataset.startswith("AC_H")
    assert r.figure is not None and r.figure_files
    assert [a.agent for a in r.agent_results] == ["offline"]
    assert r.agent_results[0].status == "succeeded" and r.agent_results[0].tool_calls >= 2
    kinds = [e.type for e in r.trace]
    assert kinds[0] == "user_request" and "turn_done" in kinds
    # After the turn: the detail the composer took out of the answer, nothing else.
    assert set(kinds[kinds.index("turn_done") + 1 :]) == {"detail"}
    assert [e.message for e in r.trace if e.type == "detail"] == r.details
    assert not any(d in r.answer for d in r.details)
    assert all(e.timestamp.tzinfo is not None for e in r.trace)
    assert [e.id for e in r.trace] == sorted(e.id for e in r.trace)
    # JSON round trip: what `ask --json` and the REST server send.
    assert AskResponse.model_validate_json(r.model_dump_json()) == r


def test_include_data_false_and_continuing_a_session(xh: Assistant) -> None:
    first = xh.run(AskRequest(question=ACE, include_data=False))
    assert first.table is None and first.trace == []
    second = xh.run("OMNI solar wind speed for 2024-01-01", session_id=first.session_id)
    assert second.session_id == first.session_id
    workspace = xh.hub.view(second.session_id or "")
    assert {e.label for e in workspace.session.store} >= {d.label for d in first.data + second.data}


def test_unknown_session_raises_and_a_bad_model_is_an_error(xh: Assistant) -> None:
    with pytest.raises(SessionNotFoundError):
        xh.run("list missions", session_id="snope")
    bad = xh.run("list missions", model="nonsense")
    assert bad.error is not None and bad.error.type == "ConfigError"
    hook = xh.run("delete every pipeline", model="test")
    assert hook.error is not None and hook.error.type == "ConfigError"
    assert xh.hub.view(hook.session_id or "").session.operations == []


def test_arun_runs_sessions_in_parallel(xh: Assistant) -> None:
    async def main() -> tuple[AskResponse, AskResponse]:
        return await asyncio.gather(
            xh.arun("ACE magnetic field for 2024-01-03"),
            xh.arun("Wind magnetic field for 2024-01-04"),
        )

    ace, wind = asyncio.run(main())
    assert ace.session_id != wind.session_id
    assert ace.data[0].label.startswith("AC_") and wind.data[0].label.startswith("WI_")


def test_astream_order_and_final_response(xh: Assistant) -> None:
    async def main() -> list[StreamEvent]:
        return [event async for event in xh.astream(ACE)]

    events = asyncio.run(main())
    types = [e.type for e in events]
    assert types[0] == "session" and types[-1] == "done"
    assert {"tool_call", "tool_result", "data", "figure", "answer", "usage"} <= set(types)
    assert types.index("data") < types.index("figure") < types.index("answer")
    final = AskResponse.model_validate(events[-1].data["response"])
    assert final.session_id == events[0].data["session_id"]


def test_leaving_astream_early_cancels_and_the_session_goes_on(xh: Assistant) -> None:
    async def first_two() -> str:
        sid = ""
        async for event in xh.astream(ACE):
            if event.type == "session":
                sid = event.data["session_id"]
            if event.type == "tool_call":
                break
        return sid

    sid = asyncio.run(first_two())
    # The cancelled turn ends and releases the session; the next request waits for it.
    after = xh.run("OMNI solar wind speed for 2024-01-05", session_id=sid)
    assert after.error is None
    history = xh.hub.view(sid).session.history
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
    assert history[1]["error"] == "Cancelled."


def test_requests_in_one_session_take_turns(xh: Assistant) -> None:
    sid = xh.new_session("turns")
    results: list[AskResponse] = []

    def ask(text: str) -> None:
        results.append(xh.run(text, session_id=sid))

    threads = [
        threading.Thread(target=ask, args=(q,))
        for q in ("ACE magnetic field for 2024-01-06", "Wind magnetic field for 2024-01-07")
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.error is None for r in results)
    roles = [m["role"] for m in xh.hub.view(sid).session.history]
    assert roles == ["user", "assistant", "user", "assistant"]


def test_a_scripted_model_answers_with_usage_per_agent() -> None:
    script = Script({"orchestrator": ["The Sun is a star; ask me for data."]})
    with Assistant(load_settings(), build_model=script.build) as xh:
        r = xh.run("what is the sun?", model="openai-chat:primary")
    assert r.error is None and r.answer == "The Sun is a star; ask me for data."
    assert [a.agent for a in r.agent_results] == ["orchestrator"]
    agents = r.usage.get("agents") or r.usage
    assert agents["orchestrator"]["requests"] == 1


def test_max_turns_caps_model_requests_with_usage_limits() -> None:
    searches = [[("search_datasets", {"query": f"solar wind {i}"})] for i in range(6)]
    script = Script({"orchestrator": [*searches, "done"]})
    with Assistant(load_settings(), build_model=script.build) as xh:
        capped = xh.run("find everything", model="openai-chat:primary", max_turns=2)
    assert len(script.requests_of("orchestrator")) == 2
    assert capped.error is not None


def _delegating_script(mission_steps: int) -> Script:
    looks = [[("list_parameters", {"dataset_id": "AC_H2_MFI"})] for _ in range(mission_steps)]
    return Script(
        {
            "orchestrator": [
                [("delegate_to_mission", {"mission_id": "ACE", "request": "B field, last week"})],
                "Done.",
            ],
            "mission:ACE": [*looks, "Looked."],
        }
    )


def test_usage_limits_count_every_agent_of_the_turn_and_usage_stays_per_agent() -> None:
    script = _delegating_script(2)
    with Assistant(load_settings(), build_model=script.build) as xh:
        r = xh.run("ACE field last week", model="openai-chat:primary")
        assert r.error is None, r.error
        agents = r.usage.get("agents") or r.usage
        # Each agent reports its own requests, not the turn's running total.
        assert agents["orchestrator"]["requests"] == 2
        assert agents["mission:ace"]["requests"] == 3

        capped_script = _delegating_script(6)
        xh.build_model = capped_script.build
        capped = xh.run("ACE field last week", model="openai-chat:primary", max_turns=3)
    seen = len(capped_script.requests_of("orchestrator")) + len(
        capped_script.requests_of("mission:ACE")
    )
    assert seen == 3  # 1 orchestrator + 2 mission: the cap is the turn's, not each run's
    assert capped.error is not None and capped.error.type == "UserError"
    assert "max_turns" in capped.error.message


def test_a_failed_turn_names_its_range_readably(monkeypatch: pytest.MonkeyPatch) -> None:
    with CatalogHapiServer() as server:
        server.empty_datasets.update({"AC_H0_SWE", "AC_H1_SWE", "AC_H2_SWE", "AC_K0_SWE"})
        server.empty_datasets.update({"AC_K1_SWE", "AC_H6_SWI", "AC_H3_SWI", "AC_H2_SWI"})
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        with Assistant(load_settings()) as assistant:
            r = assistant.run("ACE proton density 2021-02-03")
    assert r.error is not None, r.answer
    assert "T00:00:00Z" not in r.error.message, r.error.message
    assert "2021-02-03" in r.error.message or "2021-02-03" in r.answer
