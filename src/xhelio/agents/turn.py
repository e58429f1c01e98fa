"""One user turn, whatever answers it: the `Assistant` protocol and `run_turn`.

Both the offline interpreter and the LLM orchestrator implement `Assistant`. `run_turn`
wraps a turn for every interface (its one caller is `api.turns.run_request`):
it records the request in the chat history, runs the assistant, works out which
DataStore labels the turn touched (from the funnel's operations log), writes a fresh
figure as HTML into the session folder, saves the session, and never lets an exception
escape: a failure becomes `TurnResult.error` and the session keeps working.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from xhelio.errors import XhelioError
from xhelio.operations import Operation
from xhelio.tools.workspace import Workspace
from xhelio.tools.wrappers import TurnToolset, TurnUsage

__all__ = ["Assistant", "AssistantReply", "DataTouched", "TurnResult", "run_turn"]


@dataclass
class AssistantReply:
    """What an assistant says back: text, plus an optional plan record and usage.

    `error` says why a request failed (nothing it asked for could be done); the text
    still explains it. A clarification question is not an error.
    """

    text: str
    plan: dict[str, Any] | None = None
    usage: dict[str, Any] = field(default_factory=dict[str, Any])
    clarification: bool = False
    error: str | None = None
    follow_up: bool = False
    """The request built on earlier turns (its missions or times came from the session)."""


class Assistant(Protocol):
    """Anything that can answer a request by driving tools through the workspace funnel."""

    name: str

    def respond(self, request: str, cancel: threading.Event) -> AssistantReply:
        """Answer `request`; check `cancel` between steps."""
        ...


@dataclass(frozen=True)
class DataTouched:
    """One DataStore label a turn created or updated."""

    label: str
    dataset: str | None
    parameter: str | None
    points: int
    start: str | None
    stop: str | None


@dataclass
class TurnResult:
    """Everything a turn produced, as `xhelio ask --json` prints it."""

    answer: str
    session_id: str
    data: list[DataTouched] = field(default_factory=list[DataTouched])
    figures: list[str] = field(default_factory=list[str])
    plan: dict[str, Any] | None = None
    usage: dict[str, Any] = field(default_factory=dict[str, Any])
    error: str | None = None
    elapsed_s: float = 0.0
    error_type: str | None = None
    """The `xhelio.errors` class name when the assistant raised one (else None)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of `xhelio ask --json`."""
        return {
            "answer": self.answer,
            "session_id": self.session_id,
            "data": [asdict(d) for d in self.data],
            "figures": self.figures,
            "plan": self.plan,
            "usage": self.usage,
            "error": self.error,
        }


def _touched_labels(operations: list[Operation]) -> list[str]:
    """The labels the turn's successful calls created, in order, without repeats."""
    return list(dict.fromkeys(label for op in operations if op.ok for label in op.produced))


def _describe(workspace: Workspace, label: str) -> DataTouched | None:
    store = workspace.session.store
    if not store.has(label):
        return None
    entry = store.get(label)
    start = stop = None
    data = entry.data
    index = data.index if isinstance(data, pd.DataFrame) else None
    if isinstance(index, pd.DatetimeIndex) and len(index):
        ends = index[[0, -1]].to_series()
        start, stop = ends.iloc[0].isoformat(), ends.iloc[1].isoformat()
    elif not isinstance(data, pd.DataFrame) and "time" in data.dims and data.sizes["time"]:
        times = pd.DatetimeIndex(data["time"].values[[0, -1]]).tz_localize("UTC").to_series()
        start, stop = times.iloc[0].isoformat(), times.iloc[1].isoformat()
    return DataTouched(
        label, entry.source_dataset, entry.source_parameter, entry.points, start, stop
    )


def _figure_written(workspace: Workspace, operations: list[Operation]) -> list[str]:
    """Figure files the turn's calls exported, then the fresh figure as HTML."""
    drawn = [op for op in operations if op.ok and op.phase == "render"]
    written = [str(op.result["path"]) for op in drawn if isinstance(op.result.get("path"), str)]
    rendered = bool(drawn)
    if rendered and workspace.session.plot.current is not None:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-%f")
        path = workspace.session.plot.export("html", f"figure-{stamp}.html")
        written.append(str(Path(path)))
    return written


def _plan_failure(plan: dict[str, Any] | None) -> str | None:
    """A planner's record that ended FAILED (no task completed) makes the turn an error."""
    if not plan or plan.get("status") != "failed":
        return None
    tasks = plan.get("tasks") or []
    failed = [t for t in tasks if t.get("status") == "failed"]
    first = f"; first failure: {failed[0].get('description')}" if failed else ""
    return f"The plan failed: none of its {len(tasks)} tasks completed{first}."


def _checked(
    workspace: Workspace,
    request: str,
    operations: list[dict[str, Any]],
    reply: AssistantReply | None,
    answer: str,
) -> tuple[str, dict[str, Any] | None]:
    """The request-vs-data check of both modes: differences are said, never hidden."""
    from xhelio.agents.check import HEADING, check_turn  # the check imports the parser

    plan = reply.plan if reply else None
    try:
        notes = check_turn(
            request,
            operations,
            workspace.context.catalog,
            follow_up=bool(reply and reply.follow_up),
        )
    except XhelioError:
        return answer, plan  # the catalog cannot be read: nothing to compare against
    notes = [n for n in notes if n not in answer]  # the answer said it already
    if not notes:
        return answer, plan
    if plan and plan.get("status") == "completed":
        plan = {**plan, "status": "completed_with_warnings", "differences": notes}
    return f"{answer}\n{HEADING} " + " ".join(notes), plan


def run_turn(
    workspace: Workspace,
    assistant: Assistant,
    request: str,
    cancel: threading.Event | None = None,
    max_requests: int | None = None,
) -> TurnResult:
    """Run one request end to end and persist the session; never raises.

    Every agent run of the turn counts against one usage (the `TurnToolset` wrapping the
    workspace's toolset while the turn runs), so UsageLimits cap the turn as a whole;
    `max_requests` lowers the cap on model requests.
    """
    cancel = cancel or threading.Event()
    workspace.funnel.cancel = cancel
    usage = TurnUsage(max_requests=max_requests)
    with workspace.wrapped(lambda inner: TurnToolset(inner, usage)):
        return _run(workspace, assistant, request, cancel)


def _run(
    workspace: Workspace, assistant: Assistant, request: str, cancel: threading.Event
) -> TurnResult:
    started = time.time()
    first_op = len(workspace.session.operations)
    workspace.session.history.append({"role": "user", "content": request, "ts": started})
    workspace.session.events.publish("user_request", agent=assistant.name, summary=request[:500])
    reply: AssistantReply | None = None
    error: str | None = None
    error_type: str | None = None
    try:
        reply = assistant.respond(request, cancel)
    except XhelioError as exc:
        error, error_type = exc.message, type(exc).__name__
    except KeyboardInterrupt:
        cancel.set()
        error = "Cancelled."
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    if cancel.is_set() and error is None:
        error = "Cancelled."
    if error is None and reply is not None:
        error = reply.error or _plan_failure(reply.plan)
    records = workspace.session.operations[first_op:]
    operations = [Operation.of(op) for op in records]
    answer = reply.text if reply else (f"Sorry, that failed: {error}" if error else "")
    figures: list[str] = []
    try:
        figures = _figure_written(workspace, operations)
    except XhelioError as exc:
        error = error or f"The figure could not be saved: {exc.message}"
    touched = [d for d in (_describe(workspace, lb) for lb in _touched_labels(operations)) if d]
    answer, plan = _checked(workspace, request, records, reply, answer)
    workspace.session.history.append(
        {"role": "assistant", "content": answer, "ts": time.time(), "error": error}
    )
    workspace.session.events.publish(
        "turn_done", agent=assistant.name, status="error" if error else "ok", summary=answer[:500]
    )
    result = TurnResult(
        answer=answer,
        session_id=workspace.session.id,
        data=touched,
        figures=figures,
        plan=plan,
        usage=reply.usage if reply else {},
        error=error,
        elapsed_s=time.time() - started,
        error_type=error_type,
    )
    try:
        workspace.save(title=request[:80])
    except (OSError, XhelioError) as exc:
        result.error = result.error or f"The session could not be saved: {exc}"
    return result
