"""Shared HTTP plumbing of the remote sources: one client factory and retry with backoff.

`make_client` builds the httpx client every source uses (timeouts from `Settings`, a
user agent, redirects followed). `call_with_retries` runs one request-and-read operation,
retrying only what a retry can fix: HTTP 5xx (raised by the operation as `ServerError`
with a 5xx `status_code`), connection errors (including a dropped kept-alive connection)
and timeouts, with exponential backoff. It
never retries 4xx answers or HAPI 14xx statuses. Connection failures that persist become
`ServerUnreachableError` naming the URL and the setting that points elsewhere.

Imports only `config` and `errors` from xhelio; never `catalog`, `data` or higher layers.
"""

from __future__ import annotations

import functools
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import certifi
import httpx

from xhelio import __version__
from xhelio.config import Settings
from xhelio.errors import ServerError, ServerUnreachableError

__all__ = ["RetryPolicy", "call_with_retries", "is_retryable", "make_client"]

T = TypeVar("T")

_USER_AGENT = f"xhelio/{__version__} (python-httpx)"


def make_client(settings: Settings, timeout_s: float | None = None) -> httpx.Client:
    """Return an httpx client using the settings' timeout (or `timeout_s`)."""
    seconds = settings.http_timeout_s if timeout_s is None else timeout_s
    # Connecting should be quick even when a big answer legitimately takes long to stream.
    timeout = httpx.Timeout(seconds, connect=min(seconds, 10.0))
    return httpx.Client(
        timeout=timeout,
        follow_redirects=True,
        headers={"User-Agent": _USER_AGENT},
        verify=_tls_context(),
    )


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verified TLS context per process: loading the CA bundle costs ~50 ms each time."""
    return ssl.create_default_context(cafile=certifi.where())


@dataclass(frozen=True)
class RetryPolicy:
    """How many times to retry and how long to wait: base * 2**attempt, capped."""

    retries: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings, backoff_base_s: float = 0.5) -> RetryPolicy:
        """Policy with `settings.http_retries` retries."""
        return cls(retries=max(0, settings.http_retries), backoff_base_s=backoff_base_s)

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt` (0-based)."""
        return min(self.backoff_max_s, self.backoff_base_s * (2**attempt))


def is_retryable(exc: BaseException) -> bool:
    """Whether a retry can fix `exc`: 5xx, connection failures and timeouts only."""
    if isinstance(exc, ServerError):
        return exc.status_code is not None and 500 <= exc.status_code < 600
    # RemoteProtocolError reaching here happened before any answer arrived: typically a
    # kept-alive connection the server had already closed. (Cuts mid-body are handled by
    # the caller as truncation, which is not retried.)
    return isinstance(exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError)


def call_with_retries(
    operation: Callable[[], T],
    *,
    url: str,
    policy: RetryPolicy,
    setting_hint: str = "XHELIO_HAPI_URL / XHELIO_CDAS_URL",
    timeout_s: float | None = None,
) -> T:
    """Run `operation`, retrying on 5xx, connection errors and timeouts with backoff.

    Args:
        operation: Does one full request and read; raises `ServerError` for bad answers.
        url: What is being fetched, for messages.
        policy: Retry count and backoff.
        setting_hint: The setting(s) a user changes to use another server.
        timeout_s: The timeout in force, for messages.

    Raises:
        ServerUnreachableError: The server could not be reached or did not answer in time.
        ServerError: The server kept failing (5xx), or failed in a way retries cannot fix.
    """
    attempt = 0
    while True:
        try:
            return operation()
        except (ServerError, httpx.TransportError) as exc:
            if not is_retryable(exc):
                raise
            if attempt >= policy.retries:
                raise _final_error(exc, url, attempt + 1, setting_hint, timeout_s) from exc
            policy.sleep(policy.delay(attempt))
            attempt += 1


def _final_error(
    exc: Exception, url: str, tries: int, setting_hint: str, timeout_s: float | None
) -> ServerError:
    """The error to raise once retries are exhausted."""
    plural = "attempt" if tries == 1 else "attempts"
    if isinstance(exc, ServerError):
        exc.message = f"{exc.message} (gave up after {tries} {plural})"
        exc.args = (exc.message,)
        return exc
    if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
        limit = f" within {timeout_s:g} s" if timeout_s is not None else ""
        return ServerUnreachableError(
            f"No answer from {url}{limit} ({tries} {plural}). The server is slow or "
            "overloaded: retry later, ask for a shorter time range, raise "
            f"XHELIO_HTTP_TIMEOUT_S, or set {setting_hint} to another server."
        )
    return ServerUnreachableError(
        f"Could not connect to {url} ({tries} {plural}): {exc or type(exc).__name__}. "
        f"Check your network and the address, or set {setting_hint} to a reachable server."
    )
