"""The event bus: a typed, ordered trace of everything a session does.

Subscribers (the CLI's live progress, the web UI's SSE stream, the trace store) receive
each `Event` as it is published. Imports the standard library only.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Event", "EventBus"]


@dataclass(frozen=True)
class Event:
    """One thing that happened: a tool call, its result, a delegation, an error."""

    id: int
    type: str
    ts: float
    agent: str = ""
    tool: str = ""
    status: str = ""
    duration_ms: float | None = None
    summary: str = ""
    data: dict[str, Any] = field(default_factory=dict[str, Any])

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-able form."""
        return asdict(self)


Subscriber = Callable[[Event], None]


class EventBus:
    """Publish events in order; keep them for later reading; fan out to subscribers."""

    def __init__(self, first_id: int = 1) -> None:
        self._events: list[Event] = []
        self._subscribers: list[Subscriber] = []
        self._ids = itertools.count(first_id)
        self._next_id = first_id
        self._lock = threading.Lock()

    @property
    def next_id(self) -> int:
        """The id the next published event will get."""
        with self._lock:
            return self._next_id

    def publish(self, type: str, **fields: Any) -> Event:
        """Create, store and deliver an event of `type`."""
        with self._lock:
            event = Event(id=next(self._ids), type=type, ts=time.time(), **fields)
            self._next_id = event.id + 1
            self._events.append(event)
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber(event)
            except Exception:
                continue
        return event

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Deliver future events to `subscriber`; returns a function that unsubscribes."""
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

        return unsubscribe

    def events(self, since_id: int = 0, types: set[str] | None = None) -> list[Event]:
        """Events with id greater than `since_id`, optionally of the given types."""
        with self._lock:
            return [
                e for e in self._events if e.id > since_id and (types is None or e.type in types)
            ]
