"""Loop detection beyond the LoopGuard: near-identical outputs or calls end the turn."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agent_script import Script, scripted_config
from xhelio.agents.guard import GuardLimits, LoopGuard
from xhelio.agents.orchestrator import AgentAssistant
from xhelio.agents.repeats import RepeatDetector
from xhelio.agents.turn import run_turn
from xhelio.config import load_settings
from xhelio.tools.workspace import Workspace, open_workspace

ANSWER = "I could not find the dataset you asked for; let me search the catalog again for it"


def test_five_near_identical_answers_are_a_loop() -> None:
    detector = RepeatDetector()
    verdicts = [detector.observe(f"{ANSWER} (attempt {n})") for n in range(5)]
    assert verdicts[:4] == [None] * 4
    assert verdicts[4] is not None and "5 times" in verdicts[4]


def test_varied_answers_and_short_repeats_are_not_a_loop() -> None:
    detector = RepeatDetector(limit=3)
    texts = [
        "Fetched ACE magnetic field for January 2024 at 16-second resolution.",
        "Computed the magnitude |B| and stored it as ACE_Bmag.",
        "Plotted both panels; the shock arrives at 10:15 UTC.",
        "OK.",
        "OK.",
    ]
    assert [detector.observe(t) for t in texts] == [None] * 5


def test_near_identical_tool_calls_are_a_loop_though_no_two_are_equal() -> None:
    detector = RepeatDetector(limit=4)
    asks = [
        "Fetch the ACE magnetic field vector for 2024-01-01 please",
        "Fetch the ACE magnetic field vector for 2024-01-01, please",
        "fetch the ACE magnetic-field vector for 2024-01-01 please",
        "Fetch the ACE magnetic field vector for 2024-01-01 now please",
    ]
    verdicts = [
        detector.observe("", [("delegate_to_mission", {"mission_id": "ACE", "request": a})])
        for a in asks
    ]
    assert verdicts[:3] == [None] * 3
    assert verdicts[3] is not None and "delegate_to_mission" in verdicts[3]


def test_different_identifiers_or_a_fan_out_are_work_not_a_loop() -> None:
    detector = RepeatDetector(limit=3)
    one_by_one = [("list_parameters", {"dataset_id": f"AC_H{i}_MFI"}) for i in range(5)]
    assert [detector.observe("", [call]) for call in one_by_one] == [None] * 5
    fan_out = [
        ("fetch_data", {"dataset_id": "WI_H2_MFI", "time_range": f"2024-01-0{d}"})
        for d in range(1, 8)
    ]
    assert detector.observe("", fan_out) is None


def test_the_guard_stops_with_kind_repeat() -> None:
    guard = LoopGuard(GuardLimits(max_calls=50, max_iterations=50, repeat_limit=2))
    assert guard.observe_response(ANSWER, []) is None
    assert guard.observe_response(ANSWER + ".", []) is not None
    assert guard.stop_kind == "repeat"


@pytest.fixture
def workspace(monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("XHELIO_LOOP_REPEAT_LIMIT", "4")
    ws = open_workspace(settings=load_settings())
    yield ws
    ws.close()


def _searches(n: int) -> list[Any]:
    return [
        [("search_datasets", {"query": f"ACE magnetic field vector data, try {i}"})]
        for i in range(n)
    ]


def test_a_model_repeating_near_identical_calls_ends_the_turn_with_a_clear_message(
    workspace: Workspace,
) -> None:
    script = Script({"orchestrator": [*_searches(8), "never reached"]})
    assistant = AgentAssistant(workspace, scripted_config(), build_model=script.build)
    result = run_turn(workspace, assistant, "Find ACE magnetic field")
    assert result.answer.startswith("Loop detected: the model called search_datasets")
    ran = [op["tool"] for op in workspace.session.operations]
    assert ran == ["search_datasets"] * 3  # the 4th near-identical call never ran
    assert script.left() == {"orchestrator": 5}
