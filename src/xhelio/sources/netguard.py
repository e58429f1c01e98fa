"""Deadlines and cancellation for blocking HTTP reads: a guarded network backend.

httpx's timeouts bound each single read, not a whole request: a server trickling one
byte a second keeps a request alive forever, and a thread blocked in a read cannot see
a cancel request until the read timeout fires. This module fixes both below httpx:
`guard_client` swaps the client's network backend for one whose streams read in slices
of at most `POLL_S` seconds, and between slices check the guard active in the calling
thread (a `contextvars` value set by `request_guard`):

* the request's deadline (``Settings.http_deadline_s``) has passed ->
  `RequestDeadlineError`;
* the cancel event of the enclosing `cancel_scope` is set -> `CancelledError`.

So a stalled or trickling read is interrupted within `POLL_S` of a cancel, and no request
outlives its deadline, whether its connection is new or reused. Outside any
`request_guard` a stream behaves exactly like httpcore's. Worker threads do not inherit
context variables: run them through `contextvars.copy_context().run` to pass the scope.

Imports only `errors`; relies on httpcore's public `NetworkBackend`/`NetworkStream` API
and on httpx's transport keeping its pool as `_pool` (checked at install time).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

from xhelio.errors import CancelledError, RequestDeadlineError

__all__ = [
    "POLL_S",
    "RequestGuard",
    "cancel_scope",
    "current_cancel",
    "guard_client",
    "request_guard",
]

POLL_S = 0.25
"""Longest slice of a blocking read between two checks of the deadline and cancel event."""

_CANCEL: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "xhelio_cancel", default=None
)
_GUARD: contextvars.ContextVar[RequestGuard | None] = contextvars.ContextVar(
    "xhelio_request_guard", default=None
)


@contextmanager
def cancel_scope(event: threading.Event) -> Generator[threading.Event, None, None]:
    """Make `event` the cancel signal of every request started inside the block."""
    token = _CANCEL.set(event)
    try:
        yield event
    finally:
        _CANCEL.reset(token)


def current_cancel() -> threading.Event | None:
    """The cancel event of the enclosing `cancel_scope`, if any."""
    return _CANCEL.get()


@dataclass
class RequestGuard:
    """The deadline and cancel signal of one request (one attempt)."""

    what: str
    deadline_s: float
    started: float
    cancel: threading.Event | None

    def check(self) -> None:
        """Raise when the request was cancelled or ran past its deadline."""
        if self.cancel is not None and self.cancel.is_set():
            raise CancelledError(f"Cancelled while fetching {self.what}.")
        if time.monotonic() - self.started > self.deadline_s:
            raise RequestDeadlineError(
                f"{self.what} did not finish within {self.deadline_s:g} s (XHELIO_HTTP_DEADLINE_S):"
                " the server sends too slowly. Ask for a shorter time range, retry later, or "
                "raise XHELIO_HTTP_DEADLINE_S."
            )

    def remaining(self) -> float:
        """Seconds left before the deadline (never negative)."""
        return max(0.0, self.deadline_s - (time.monotonic() - self.started))


@contextmanager
def request_guard(what: str, deadline_s: float) -> Generator[RequestGuard, None, None]:
    """Guard every network read of the calling thread inside the block."""
    guard = RequestGuard(what, deadline_s, time.monotonic(), current_cancel())
    guard.check()
    token = _GUARD.set(guard)
    try:
        yield guard
    finally:
        _GUARD.reset(token)


class _GuardedStream(httpcore.NetworkStream):
    """A network stream whose reads and writes honour the active `RequestGuard`."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        guard = _GUARD.get()
        if guard is None:
            return self._inner.read(max_bytes, timeout)
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            guard.check()
            piece = min(POLL_S, guard.remaining() + 0.01)
            if end is not None:
                left = end - time.monotonic()
                if left <= 0:
                    raise httpcore.ReadTimeout("timed out")
                piece = min(piece, left)
            try:
                return self._inner.read(max_bytes, piece)
            except httpcore.ReadTimeout:
                # Nothing arrived in this slice; a socket read that timed out consumed nothing.
                if end is not None and time.monotonic() >= end:
                    raise
                continue

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        guard = _GUARD.get()
        if guard is not None:
            guard.check()
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _GuardedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _GuardedBackend(httpcore.NetworkBackend):
    """httpcore's sync backend, handing out guarded streams."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        guard = _GUARD.get()
        if guard is not None:
            guard.check()
            timeout = guard.remaining() if timeout is None else min(timeout, guard.remaining())
        stream = self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return _GuardedStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        return _GuardedStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def guard_client(client: httpx.Client) -> httpx.Client:
    """Make every connection of `client`'s default transport honour request guards."""
    transport: Any = getattr(client, "_transport", None)
    pool: Any = getattr(transport, "_pool", None)
    backend: Any = getattr(pool, "_network_backend", None)
    if backend is not None and not isinstance(backend, _GuardedBackend):
        pool._network_backend = _GuardedBackend(backend)
    return client
