"""The memory agent's reading of a session: its events as one chronological timeline.

User requests, answers, tool calls with their arguments, tool errors and the memories that
were injected, one short line each, newest last; the oldest lines are dropped first when
the text would exceed its limit. Imports the standard library and the event type only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from xhelio.session.events import Event

__all__ = ["timeline"]

_LINE = 400


def _line(event: Event) -> str | None:
    who = event.agent or "?"
    if event.type == "user_request":
        return f"USER: {event.summary}"
    if event.type == "turn_done":
        return f"ASSISTANT ({event.status}): {event.summary}"
    if event.type == "tool_call":
        args = json.dumps(event.data.get("args", {}), ensure_ascii=False, default=str)
        return f"{who} called {event.tool} {args}"
    if event.type == "tool_error":
        return f"ERROR in {event.tool} ({who}): {event.summary}"
    if event.type == "memory_injected":
        return f"{who} was shown memories {', '.join(event.data.get('ids', []))}"
    if event.type in ("delegation", "model_fallback", "plan"):
        return f"{event.type} {who}: {event.summary}"
    return None


def timeline(events: Sequence[Event], max_chars: int = 12_000) -> str:
    """The events worth remembering from, one line each, within `max_chars`."""
    lines = [line[:_LINE] for line in (_line(e) for e in events) if line]
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        size += len(line) + 1
        if size > max_chars:
            break
        kept.append(line)
    return "\n".join(reversed(kept))
