"""LoopGuard: stop an agent's tool loop before it runs away.

Layers, checked between and before tool calls:

1. Hard limits: total tool calls and iterations (rounds of model -> tool calls) per mode.
2. Duplicates: a call with the same tool and the same canonical JSON arguments as an earlier
   call is blocked (the earlier result still stands; transient HTTP failures are already
   retried inside the data clients). A call whose earlier outcome was an error may be
   retried. A round in which every call repeats an earlier one stops the loop.
3. Cycles: a round whose set of calls equals one of the last three rounds (A,B,A or
   A,B,C,A patterns) stops the loop; this catches re-running failed rounds in circles.

4. Repeats: near-identical model outputs or tool calls (`repeats.RepeatDetector`,
   `repeat_limit` of them, seed 004's five) end the run; `observe_response` per response.

Plus the all-error guard (stop after two consecutive rounds in which every tool call failed)
and cancellation (a `threading.Event` checked before every call and every round).

Use per round: `start_iteration()`, optionally `record_batch(calls)` with the model's
proposed calls, each call through `GuardedToolset(toolset, guard.check_call).call(...)`, then
`end_iteration(results)`. Results may be the funnel's results (only `status` is read) or its
operation records, whose `tool` and `args` let a failed call be retried. Imports only
`agents.repeats` from xhelio.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from xhelio.agents.repeats import RepeatDetector

__all__ = [
    "GUARD_LIMITS",
    "GuardLimits",
    "GuardMode",
    "LoopGuard",
    "StopKind",
    "call_key",
]

GuardMode = Literal["conversational", "task", "planner_discovery", "orchestrator_task"]
StopKind = Literal[
    "cancelled", "call_limit", "iteration_limit", "duplicate", "cycle", "all_errors", "repeat"
]
CallKey = tuple[str, str]

_GUARD_RESULT_TYPES = frozenset({"LoopGuard", "Cancelled"})


@dataclass(frozen=True)
class GuardLimits:
    """The numbers a LoopGuard enforces."""

    max_calls: int
    max_iterations: int
    max_error_iterations: int = 2
    cycle_window: int = 3
    repeat_limit: int = 5

    @classmethod
    def for_mode(cls, mode: GuardMode) -> GuardLimits:
        """Return the limits of a loop mode."""
        return GUARD_LIMITS[mode]


GUARD_LIMITS: dict[GuardMode, GuardLimits] = {
    "conversational": GuardLimits(max_calls=20, max_iterations=8),
    "task": GuardLimits(max_calls=12, max_iterations=5),
    "planner_discovery": GuardLimits(max_calls=20, max_iterations=8),
    "orchestrator_task": GuardLimits(max_calls=10, max_iterations=5),
}


def call_key(tool: str, args: Mapping[str, Any] | None) -> CallKey:
    """Return the identity of a call: tool name and canonical JSON of its arguments."""
    canonical = json.dumps(
        dict(args or {}), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return tool, canonical


def _result_type(result: Mapping[str, Any]) -> object:
    """Error type of a funnel result, or of the result inside a funnel operation record."""
    inner = result.get("result")
    if isinstance(inner, Mapping) and "type" not in result:
        return inner.get("type")
    return result.get("type")


def _tool_names(keys: Sequence[CallKey] | frozenset[CallKey]) -> str:
    return ", ".join(sorted({tool for tool, _ in keys}))


class LoopGuard:
    """Enforce call and round limits, block duplicates and cycles, honour cancellation."""

    def __init__(self, limits: GuardLimits, cancel: threading.Event | None = None) -> None:
        self.limits = limits
        self.cancel = cancel or threading.Event()
        self._lock = threading.RLock()
        self._stop_reason: str | None = None
        self._stop_kind: StopKind | None = None
        self._total_calls = 0
        self._iterations = 0
        self._successful_calls = 0
        self._error_streak = 0
        self._made: set[CallKey] = set()
        self._failed: set[CallKey] = set()
        self._history: deque[frozenset[CallKey]] = deque(maxlen=limits.cycle_window)
        self._attempted: list[CallKey] = []
        self._blocked = 0
        self._proposed: frozenset[CallKey] | None = None
        self._repeats = RepeatDetector(limits.repeat_limit)

    @property
    def stop_reason(self) -> str | None:
        """The message that stopped the loop, or None while it may continue."""
        return self._stop_reason

    @property
    def stop_kind(self) -> StopKind | None:
        """Which guard stopped the loop, or None."""
        return self._stop_kind

    @property
    def total_calls(self) -> int:
        """Tool calls allowed to run so far."""
        return self._total_calls

    @property
    def iterations(self) -> int:
        """Rounds started so far."""
        return self._iterations

    @property
    def successful_calls(self) -> int:
        """Tool calls reported back as successful by `end_iteration`."""
        return self._successful_calls

    def _stop(self, kind: StopKind, message: str) -> str:
        if self._stop_reason is None:
            self._stop_kind = kind
            self._stop_reason = message
        return self._stop_reason

    def _halted(self) -> str | None:
        if self.cancel.is_set():
            return self._stop("cancelled", "The request was cancelled; no further tools will run.")
        return self._stop_reason

    def start_iteration(self) -> str | None:
        """Begin a round of tool calls; return a message if the loop must stop instead."""
        with self._lock:
            if (halted := self._halted()) is not None:
                return halted
            if self._iterations >= self.limits.max_iterations:
                return self._stop(
                    "iteration_limit",
                    f"Loop guard: the limit of {self.limits.max_iterations} rounds of tool calls "
                    "is reached; stop calling tools and answer with what you have.",
                )
            if self._attempted or self._proposed is not None:
                self._history.append(self._batch_signature())
            self._iterations += 1
            self._attempted = []
            self._blocked = 0
            self._proposed = None
            return None

    def observe_response(
        self, text: str, calls: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> str | None:
        """Record one model response; return a message if it repeats enough to end the run."""
        with self._lock:
            repeated = self._repeats.observe(text, calls)
            return self._stop("repeat", repeated) if repeated is not None else None

    def check_call(self, tool: str, args: Mapping[str, Any]) -> str | None:
        """Return a message blocking this call, or None to let it run (a funnel guard)."""
        key = call_key(tool, args)
        with self._lock:
            if (halted := self._halted()) is not None:
                return halted
            self._attempted.append(key)
            repeated = key in self._made and key not in self._failed
            if repeated or self._attempted.count(key) > 1:
                self._blocked += 1
                return (
                    f"Loop guard: you already called {tool} with these exact arguments; use the "
                    "previous result or try something different."
                )
            if self._total_calls >= self.limits.max_calls:
                return self._stop(
                    "call_limit",
                    f"Loop guard: the limit of {self.limits.max_calls} tool calls for this request "
                    "is reached; stop calling tools and answer with what you have.",
                )
            self._total_calls += 1
            self._made.add(key)
            return None

    def record_batch(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str | None:
        """Check a round's proposed calls before any runs; return a message to stop the loop."""
        keys = [call_key(tool, args) for tool, args in calls]
        with self._lock:
            if (halted := self._halted()) is not None:
                return halted
            if not keys:
                return None
            if self._total_calls + len(keys) > self.limits.max_calls:
                return self._stop(
                    "call_limit",
                    f"Loop guard: these {len(keys)} calls would pass the limit of "
                    f"{self.limits.max_calls} tool calls ({self._total_calls} made); answer with "
                    "what you have.",
                )
            batch = frozenset(keys)
            stopped = self._check_repeats(batch, all_repeated=self._all_repeated(keys))
            if stopped is None:
                self._proposed = batch
            return stopped

    def end_iteration(self, results: Sequence[Mapping[str, Any]]) -> str | None:
        """Close a round with its tool results; return a message if the loop must stop."""
        with self._lock:
            if (halted := self._halted()) is not None:
                return halted
            self._note_outcomes(results)
            stopped = None
            if self._proposed is None and self._attempted:
                # Without a pre-flight `record_batch`, repeats are judged once the round is known.
                all_blocked = self._blocked == len(self._attempted)
                stopped = self._check_repeats(self._batch_signature(), all_repeated=all_blocked)
            if stopped is None:
                stopped = self._check_errors(results)
            if self._attempted or self._proposed is not None:
                self._history.append(self._batch_signature())
            self._attempted = []
            self._blocked = 0
            self._proposed = None
            return stopped

    def _batch_signature(self) -> frozenset[CallKey]:
        return self._proposed if self._proposed is not None else frozenset(self._attempted)

    def _all_repeated(self, keys: Sequence[CallKey]) -> bool:
        return all(key in self._made and key not in self._failed for key in keys)

    def _check_repeats(self, batch: frozenset[CallKey], *, all_repeated: bool) -> str | None:
        if all_repeated:
            return self._stop(
                "duplicate",
                f"Loop guard: every call in this round ({_tool_names(batch)}) repeats an earlier "
                "call with the same arguments; use the earlier results and answer.",
            )
        if batch in self._history:
            return self._stop(
                "cycle",
                f"Loop guard: this round repeats the calls of a recent round "
                f"({_tool_names(batch)}); the loop is going in circles, so stop and report what "
                "failed.",
            )
        return None

    def _note_outcomes(self, results: Sequence[Mapping[str, Any]]) -> None:
        for result in results:
            if _result_type(result) in _GUARD_RESULT_TYPES:
                continue
            failed = result.get("status") == "error"
            if not failed:
                self._successful_calls += 1
            if "tool" in result:
                key = call_key(str(result["tool"]), result.get("args") or {})
                if failed:
                    self._failed.add(key)
                else:
                    self._failed.discard(key)

    def _check_errors(self, results: Sequence[Mapping[str, Any]]) -> str | None:
        real = [r for r in results if _result_type(r) not in _GUARD_RESULT_TYPES]
        if not real:
            return None
        if all(r.get("status") == "error" for r in real):
            self._error_streak += 1
        else:
            self._error_streak = 0
        if self._error_streak >= self.limits.max_error_iterations:
            return self._stop(
                "all_errors",
                f"Loop guard: every tool call failed in {self._error_streak} consecutive rounds; "
                "stop and tell the user what failed and what to try instead.",
            )
        return None
