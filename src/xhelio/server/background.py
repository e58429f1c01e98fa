"""Turns the web app starts and then follows on the events stream (replays, plan retries).

`start_turn` checks a session out, lets the route decide what to run in it, and runs
that as one recorded turn (`api.turns.run_request`, the turn path of every interface) on a
thread, returning as soon as the turn has started (or
could not start). The reply names the last event id before the turn, so the browser
follows exactly the turn's events.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from fastapi.responses import JSONResponse

from xhelio.agents.turn import Assistant
from xhelio.api.hub import SessionBusyError, SessionHub, SessionNotFoundError
from xhelio.api.models import AskRequest
from xhelio.api.turns import run_request
from xhelio.errors import XhelioError
from xhelio.server.errors import error_for
from xhelio.tools.workspace import Workspace

__all__ = ["Started", "start_turn"]

_START_WAIT_S = 30.0

# What to run in the checked-out session: (responder, question), or why there is nothing.
Prepare = Callable[[Workspace], "tuple[Assistant, str] | str"]


@dataclass
class Started:
    """How starting a background turn went."""

    after_event_id: int = 0
    message: str = ""  # set when there was nothing to run
    error: XhelioError | None = None

    @property
    def running(self) -> bool:
        """Whether the turn is under way (not refused, not empty)."""
        return self.error is None and not self.message

    def error_response(self) -> JSONResponse | None:
        """The HTTP error for a turn that could not start, or None."""
        return error_for(self.error) if self.error is not None else None


def start_turn(hub: SessionHub, session_id: str, prepare: Prepare, name: str) -> Started:
    """Run one turn in `session_id` on a thread; return once it started or could not."""
    started = threading.Event()
    outcome = Started()

    def work() -> None:
        try:
            with hub.checkout(session_id, wait=False) as entry:
                workspace = entry.workspace
                assert workspace is not None
                prepared = prepare(workspace)
                if isinstance(prepared, str):
                    outcome.message = prepared
                    started.set()
                    return
                responder, question = prepared
                events = workspace.session.events.events()
                outcome.after_event_id = max((e.id for e in events), default=0)
                started.set()
                run_request(workspace, responder, AskRequest(question=question), entry.cancel)
        except (SessionBusyError, SessionNotFoundError, XhelioError) as exc:
            outcome.error = exc
        finally:
            started.set()

    threading.Thread(target=work, name=f"xhelio-{name}-{session_id[:8]}", daemon=True).start()
    started.wait(_START_WAIT_S)
    return outcome
