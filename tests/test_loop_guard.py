"""LoopGuard: limits, duplicates, cycles, the all-error guard and cancellation."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from xhelio.agents.guard import GUARD_LIMITS, GuardLimits, LoopGuard, call_key
from xhelio.session.events import EventBus
from xhelio.tools.funnel import ToolFunnel
from xhelio.tools.registry import ToolRegistry, tool
from xhelio.tools.wrappers import GuardedToolset


def ok(tool_name: str, **args: Any) -> dict[str, Any]:
    return {"status": "ok", "tool": tool_name, "args": args}


def failed(tool_name: str, **args: Any) -> dict[str, Any]:
    return {"status": "error", "type": "ServerError", "tool": tool_name, "args": args}


def test_limits_per_mode_follow_the_seed() -> None:
    assert GuardLimits.for_mode("conversational") == GuardLimits(20, 8)
    assert GuardLimits.for_mode("task") == GuardLimits(12, 5)
    assert GuardLimits.for_mode("planner_discovery") == GuardLimits(20, 8)
    assert GuardLimits.for_mode("orchestrator_task") == GuardLimits(10, 5)
    assert set(GUARD_LIMITS) == {"conversational", "task", "planner_discovery", "orchestrator_task"}


def test_call_key_is_canonical_json() -> None:
    assert call_key("fetch", {"b": 1, "a": [1, 2]}) == call_key("fetch", {"a": [1, 2], "b": 1})
    assert call_key("fetch", {"a": 1}) != call_key("fetch", {"a": 2})
    assert call_key("fetch", {"a": 1}) != call_key("plot", {"a": 1})


def test_total_call_limit_stops_the_loop() -> None:
    guard = LoopGuard(GuardLimits.for_mode("task"))
    assert guard.start_iteration() is None
    for i in range(12):
        assert guard.check_call("fetch_data", {"dataset": f"DS{i}"}) is None
    message = guard.check_call("fetch_data", {"dataset": "DS12"})
    assert message is not None and "12 tool calls" in message
    assert guard.stop_kind == "call_limit"
    assert guard.stop_reason == message
    assert guard.total_calls == 12
    # Once stopped, nothing else runs and no new round starts.
    assert guard.check_call("plot_data", {"labels": ["x"]}) == message
    assert guard.start_iteration() == message


def test_record_batch_refuses_a_batch_that_would_pass_the_call_limit() -> None:
    guard = LoopGuard(GuardLimits(max_calls=3, max_iterations=5))
    guard.start_iteration()
    assert guard.record_batch([("a", {}), ("b", {})]) is None
    assert guard.check_call("a", {}) is None
    assert guard.check_call("b", {}) is None
    guard.end_iteration([ok("a"), ok("b")])
    guard.start_iteration()
    message = guard.record_batch([("c", {}), ("d", {})])
    assert message is not None and "limit of 3 tool calls" in message
    assert guard.stop_kind == "call_limit"


def test_iteration_limit() -> None:
    guard = LoopGuard(GuardLimits.for_mode("orchestrator_task"))
    for i in range(5):
        assert guard.start_iteration() is None
        assert guard.check_call("step", {"i": i}) is None
        assert guard.end_iteration([ok("step", i=i)]) is None
    message = guard.start_iteration()
    assert message is not None and "5 rounds" in message
    assert guard.stop_kind == "iteration_limit"
    assert guard.iterations == 5


def test_exact_duplicate_call_is_blocked_with_a_clear_message() -> None:
    guard = LoopGuard(GuardLimits.for_mode("conversational"))
    guard.start_iteration()
    assert guard.check_call("fetch_data", {"dataset": "AC_H0_MFI", "time": "2024-01"}) is None
    guard.end_iteration([ok("fetch_data", dataset="AC_H0_MFI", time="2024-01")])
    guard.start_iteration()
    blocked = guard.check_call("fetch_data", {"time": "2024-01", "dataset": "AC_H0_MFI"})
    assert blocked == (
        "Loop guard: you already called fetch_data with these exact arguments; use the "
        "previous result or try something different."
    )
    # Blocking one call does not stop the loop: a different call still runs.
    assert guard.stop_reason is None
    assert guard.check_call("fetch_data", {"dataset": "WI_H0_MFI", "time": "2024-01"}) is None
    assert guard.end_iteration([{"status": "error", "type": "LoopGuard"}, ok("x")]) is None
    assert guard.total_calls == 2


def test_duplicate_within_one_round_is_blocked() -> None:
    guard = LoopGuard(GuardLimits.for_mode("conversational"))
    guard.start_iteration()
    assert guard.check_call("preview_data", {"label": "B"}) is None
    assert guard.check_call("preview_data", {"label": "B"}) is not None


def test_round_of_only_repeated_calls_stops_the_loop() -> None:
    guard = LoopGuard(GuardLimits.for_mode("conversational"))
    guard.start_iteration()
    guard.check_call("fetch_data", {"dataset": "A"})
    guard.check_call("plot_data", {"labels": ["A"]})
    assert (
        guard.end_iteration([ok("fetch_data", dataset="A"), ok("plot_data", labels=["A"])]) is None
    )
    guard.start_iteration()
    assert guard.check_call("plot_data", {"labels": ["A"]}) is not None
    message = guard.end_iteration([{"status": "error", "type": "LoopGuard", "message": "..."}])
    assert message is not None and "repeats an earlier call" in message and "plot_data" in message
    assert guard.stop_kind == "duplicate"


def test_record_batch_subset_of_earlier_calls_stops_before_running() -> None:
    guard = LoopGuard(GuardLimits.for_mode("conversational"))
    guard.start_iteration()
    guard.record_batch([("a", {"x": 1}), ("b", {"x": 2})])
    guard.check_call("a", {"x": 1})
    guard.check_call("b", {"x": 2})
    guard.end_iteration([ok("a", x=1), ok("b", x=2)])
    guard.start_iteration()
    message = guard.record_batch([("b", {"x": 2})])
    assert message is not None and guard.stop_kind == "duplicate"


def test_failed_call_may_be_retried_but_a_repeated_round_is_a_cycle() -> None:
    guard = LoopGuard(GuardLimits.for_mode("conversational"))
    # Round A fails, round B succeeds, round A again: allowed call-by-call, but a cycle.
    guard.start_iteration()
    assert guard.check_call("fetch_data", {"dataset": "A"}) is None
    assert guard.end_iteration([failed("fetch_data", dataset="A")]) is None
    guard.start_iteration()
    assert guard.check_call("list_fetched_data", {}) is None
    assert guard.end_iteration([ok("list_fetched_data")]) is None
    guard.start_iteration()
    assert guard.check_call("fetch_data", {"dataset": "A"}) is None
    message = guard.end_iteration([failed("fetch_data", dataset="A")])
    assert message is not None and "going in circles" in message
    assert guard.stop_kind == "cycle"


def test_cycle_detected_before_running_with_record_batch() -> None:
    guard = LoopGuard(GuardLimits.for_mode("conversational"))
    batches: list[list[tuple[str, dict[str, Any]]]] = [
        [("a", {"n": 1})],
        [("b", {"n": 1}), ("c", {"n": 1})],
    ]
    for batch in batches:
        guard.start_iteration()
        assert guard.record_batch(batch) is None
        for name, args in batch:
            assert guard.check_call(name, args) is None
        guard.end_iteration([ok(name, **args) for name, args in batch])
    guard.start_iteration()
    message = guard.record_batch([("c", {"n": 1}), ("b", {"n": 1})])
    # b and c succeeded, so a repeat of their round is answered by the duplicate layer.
    assert message is not None and guard.stop_kind == "duplicate"

    guard2 = LoopGuard(GuardLimits.for_mode("conversational"))
    for batch in batches:
        guard2.start_iteration()
        guard2.record_batch(batch)
        for name, args in batch:
            guard2.check_call(name, args)
        guard2.end_iteration([failed(name, **args) for name, args in batch] + [ok("z")])
    guard2.start_iteration()
    message = guard2.record_batch([("a", {"n": 1})])
    assert message is not None and guard2.stop_kind == "cycle"


def test_a_round_older_than_the_window_is_not_a_cycle() -> None:
    guard = LoopGuard(GuardLimits.for_mode("conversational"))
    rounds = ["a", "b", "c", "d", "a"]
    for name in rounds:
        assert guard.start_iteration() is None
        assert guard.record_batch([(name, {})]) is None
        assert guard.check_call(name, {}) is None
        # A success in each round keeps the all-error guard out of this test.
        assert guard.end_iteration([failed(name), ok("other")]) is None
    assert guard.stop_reason is None


def test_two_consecutive_all_error_rounds_stop_the_loop() -> None:
    guard = LoopGuard(GuardLimits.for_mode("conversational"))
    guard.start_iteration()
    guard.check_call("fetch_data", {"dataset": "A"})
    assert guard.end_iteration([failed("fetch_data", dataset="A")]) is None
    guard.start_iteration()
    guard.check_call("fetch_data", {"dataset": "B"})
    guard.check_call("fetch_data", {"dataset": "C"})
    message = guard.end_iteration([failed("fetch_data", dataset="B"), {"status": "error"}])
    assert message is not None and "2 consecutive rounds" in message
    assert guard.stop_kind == "all_errors"


def test_a_successful_round_resets_the_error_streak() -> None:
    guard = LoopGuard(GuardLimits.for_mode("conversational"))
    outcomes = [
        [{"status": "error"}],
        [{"status": "ok"}, {"status": "error"}],
        [{"status": "error"}],
    ]
    for i, results in enumerate(outcomes):
        guard.start_iteration()
        guard.check_call("t", {"i": i})
        assert guard.end_iteration(results) is None
    assert guard.successful_calls == 1


def test_loop_guard_blocks_are_not_counted_as_tool_errors() -> None:
    guard = LoopGuard(GuardLimits.for_mode("conversational"))
    for i in range(3):
        guard.start_iteration()
        guard.check_call("t", {"i": i})
        guard.check_call("t", {"i": i})
        blocked = {"status": "error", "type": "LoopGuard", "message": "blocked"}
        assert guard.end_iteration([{"status": "ok"}, blocked]) is None


def test_cancellation_is_checked_before_calls_and_rounds() -> None:
    cancel = threading.Event()
    guard = LoopGuard(GuardLimits.for_mode("task"), cancel)
    guard.start_iteration()
    assert guard.check_call("a", {}) is None
    cancel.set()
    message = guard.check_call("b", {})
    assert message is not None and "cancelled" in message
    assert guard.stop_kind == "cancelled"
    assert guard.start_iteration() == message
    assert guard.end_iteration([{"status": "ok"}]) == message


def test_cancellation_before_the_first_round() -> None:
    cancel = threading.Event()
    cancel.set()
    guard = LoopGuard(GuardLimits.for_mode("conversational"), cancel)
    assert guard.start_iteration() is not None
    assert guard.iterations == 0


@pytest.fixture
def counting_funnel() -> tuple[ToolFunnel, list[str]]:
    ran: list[str] = []

    @tool("discovery")
    def lookup(ctx: object, dataset: str) -> dict[str, Any]:
        """Look up a dataset.

        Args:
            ctx: Tool context (unused).
            dataset: Dataset id.
        """
        ran.append(dataset)
        if dataset == "BAD":
            raise ValueError("no such dataset")
        return {"dataset": dataset}

    return ToolFunnel(ToolRegistry([lookup]), context=None, events=EventBus()), ran


def test_guard_plugs_into_the_tool_funnel(counting_funnel: tuple[ToolFunnel, list[str]]) -> None:
    funnel, ran = counting_funnel
    guard = LoopGuard(GuardLimits.for_mode("task"))
    guard.start_iteration()
    guarded = GuardedToolset(funnel, guard.check_call)
    first = guarded.call("lookup", {"dataset": "AC_H0_MFI"}, caller="mission").to_dict()
    again = guarded.call("lookup", {"dataset": "AC_H0_MFI"}, caller="mission").to_dict()
    assert first["status"] == "ok"
    assert again["status"] == "error" and again["type"] == "LoopGuard"
    assert "already called lookup" in again["message"]
    assert ran == ["AC_H0_MFI"]
    assert guard.end_iteration([first, again]) is None


def test_operation_records_let_a_failed_call_be_retried(
    counting_funnel: tuple[ToolFunnel, list[str]],
) -> None:
    funnel, ran = counting_funnel
    guard = LoopGuard(GuardLimits.for_mode("task"))
    guard.start_iteration()
    guarded = GuardedToolset(funnel, guard.check_call)
    guarded.call("lookup", {"dataset": "BAD"}, caller="mission")
    guarded.call("lookup", {"dataset": "X"}, caller="mission")
    assert guard.end_iteration(funnel.operations) is None
    guard.start_iteration()
    mark = len(funnel.operations)
    retry = guarded.call("lookup", {"dataset": "BAD"}, caller="mission")
    repeat = guarded.call("lookup", {"dataset": "X"}, caller="mission")
    assert retry.error_type == "ValueError"  # it ran again: failed calls may be retried
    assert repeat.error_type == "LoopGuard"  # a successful call may not
    assert ran == ["BAD", "X", "BAD"]
    # The round repeats round one exactly, so the loop stops as a cycle.
    message = guard.end_iteration(funnel.operations[mark:])
    assert message is not None and guard.stop_kind == "cycle"
