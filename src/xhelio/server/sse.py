"""Server-sent events: framing, keep-alive pings and the per-stream event limit.

`sse_response` turns an async iterator of `StreamEvent` into a `text/event-stream` response.
A pump task reads the iterator so that a quiet stream still sends `: ping` comments; when
the client goes away the pump is cancelled, which closes the iterator (the iterator decides
what that means for the turn behind it: `/ask/stream` lets it run on).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

from fastapi.responses import StreamingResponse

from xhelio.api.models import StreamEvent
from xhelio.server.errors import error_kind, error_message

__all__ = ["format_event", "sse_response"]

PING_S = 15.0
_END = object()


def format_event(event: StreamEvent) -> str:
    """One SSE message: `id`, `event` and one `data` line of JSON."""
    lines: list[str] = []
    if event.id is not None:
        lines.append(f"id: {event.id}")
    lines.append(f"event: {event.type}")
    lines.append("data: " + json.dumps(event.data, default=str, allow_nan=False))
    return "\n".join(lines) + "\n\n"


async def _frames(
    events: AsyncIterator[StreamEvent], max_events: int, ping_s: float
) -> AsyncIterator[str]:
    queue: asyncio.Queue[object] = asyncio.Queue(maxsize=1000)

    async def pump() -> None:
        try:
            async for event in events:
                await queue.put(event)
        except Exception as exc:  # the stream reports it; the server stays up
            error = {"type": error_kind(exc), "message": error_message(exc)}
            await queue.put(StreamEvent(type="error", data=error))
        finally:
            await queue.put(_END)

    task = asyncio.create_task(pump())
    sent = 0
    try:
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), timeout=ping_s)
            except TimeoutError:
                yield ": ping\n\n"
                continue
            if item is _END:
                break
            assert isinstance(item, StreamEvent)
            sent += 1
            if sent > max_events:
                limit = StreamEvent(
                    type="error",
                    data={
                        "type": "StreamLimit",
                        "message": f"This stream reached its limit of {max_events} events.",
                    },
                )
                yield format_event(limit)
                break
            yield format_event(item)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()


def sse_response(
    events: AsyncIterator[StreamEvent], max_events: int, ping_s: float = PING_S
) -> StreamingResponse:
    """A streaming `text/event-stream` response of `events`."""
    return StreamingResponse(
        _frames(events, max_events, ping_s),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
