"""Shared HTTP plumbing of the remote sources: one client factory and retry with backoff.

`make_client` builds the httpx client every source uses (timeouts from `Settings`, a
user agent, at most 10 redirects, reads guarded by `netguard` so every attempt has a
whole-request deadline and stops within a fraction of a second of a cancel).
`call_with_retries` runs one request-and-read operation, retrying only what a retry can
fix: HTTP 5xx (raised by the operation as `ServerError` with a 5xx `status_code`), HTTP
429 (`check_rate_limit`: waits what Retry-After asks, up to
``Settings.http_retry_after_max_s``; a longer ask fails at once), timeouts and a
connection dropped mid-request (a stale kept-alive connection), with exponential backoff.
Redirect loops and undecodable bodies become `ServerError` naming the URL. It never
retries other 4xx answers, HAPI 14xx statuses, or a failure to connect at all (refused,
unknown host): nobody is listening, so waiting only delays the one clear message.
Connection failures become `ServerUnreachableError` naming the URL and the setting that
points elsewhere; an address that is not http(s) becomes a `ConfigError`. `probe` asks a
server once, briefly, whether it answers at all (for `xhelio sources`).

Imports only `config` and `errors` from xhelio; never `catalog`, `data` or higher layers.
"""

from __future__ import annotations

import email.utils
import functools
import math
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import TypeVar

import certifi
import httpx

from xhelio.config import Settings
from xhelio.errors import (
    CancelledError,
    ConfigError,
    RateLimitedError,
    ServerError,
    ServerUnreachableError,
    XhelioError,
)
from xhelio.sources.netguard import current_cancel, guard_client, request_guard

__all__ = [
    "RetryPolicy",
    "call_with_retries",
    "check_file_response",
    "check_rate_limit",
    "is_retryable",
    "make_client",
    "probe",
    "retry_after_seconds",
]

T = TypeVar("T")


def _version() -> str:
    """The installed xhelio version (read from its metadata, not the package's `__init__`)."""
    try:
        return version("xhelio")
    except PackageNotFoundError:
        return "unknown"


_USER_AGENT = f"xhelio/{_version()} (python-httpx)"


def make_client(settings: Settings, timeout_s: float | None = None) -> httpx.Client:
    """Return an httpx client using the settings' timeout (or `timeout_s`)."""
    seconds = settings.http_timeout_s if timeout_s is None else timeout_s
    # Connecting should be quick even when a big answer legitimately takes long to stream.
    timeout = httpx.Timeout(seconds, connect=min(seconds, 10.0))
    client = httpx.Client(
        timeout=timeout,
        follow_redirects=True,
        max_redirects=10,
        headers={"User-Agent": _USER_AGENT},
        verify=_tls_context(),
    )
    # Reads poll the request deadline and the cancel signal (see `netguard`).
    return guard_client(client)


def probe(url: str, settings: Settings, timeout_s: float = 5.0) -> str:
    """Ask `url` once; return "" when the server answers (any status below 500), else why not."""
    try:
        with make_client(settings, timeout_s) as client, request_guard(url, timeout_s):
            status = client.get(url).status_code
    except (httpx.HTTPError, XhelioError) as exc:
        return f"no answer from {url} ({type(exc).__name__}: {exc})"
    return "" if status < 500 else f"{url} answered HTTP {status}"


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
    sleep: Callable[[float], None] | None = field(default=None, compare=False, repr=False)
    """Waits between attempts; by default a wait the cancel signal interrupts."""
    deadline_s: float = 1800.0
    """Longest one attempt (request and whole body) may take."""
    retry_after_max_s: float = 60.0
    """Longest wait a server's Retry-After may impose; longer asks fail at once."""

    @classmethod
    def from_settings(cls, settings: Settings, backoff_base_s: float = 0.5) -> RetryPolicy:
        """Policy with the settings' retries, request deadline and Retry-After bound."""
        return cls(
            retries=max(0, settings.http_retries),
            backoff_base_s=backoff_base_s,
            deadline_s=settings.http_deadline_s,
            retry_after_max_s=settings.http_retry_after_max_s,
        )

    def wait(self, seconds: float) -> None:
        """Wait `seconds` before a retry; a cancel request ends the wait at once."""
        if self.sleep is not None:
            self.sleep(seconds)
            return
        cancel = current_cancel()
        if cancel is None:
            time.sleep(seconds)
        elif cancel.wait(seconds):
            raise CancelledError("Cancelled while waiting to retry a request.")

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt` (0-based)."""
        return min(self.backoff_max_s, self.backoff_base_s * (2**attempt))


def is_retryable(exc: BaseException) -> bool:
    """Whether a retry can fix `exc`: 5xx, 429, timeouts and dropped connections only."""
    if isinstance(exc, RateLimitedError):
        return True
    if isinstance(exc, ServerError):
        return exc.status_code is not None and 500 <= exc.status_code < 600
    if isinstance(exc, httpx.ConnectError | httpx.UnsupportedProtocol):
        return False  # connection refused, unknown host, not an http(s) address
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
    """Run `operation`, retrying on 5xx, timeouts and dropped connections with backoff.

    Args:
        operation: Does one full request and read; raises `ServerError` for bad answers.
        url: What is being fetched, for messages.
        policy: Retry count and backoff.
        setting_hint: The setting(s) a user changes to use another server.
        timeout_s: The timeout in force, for messages.

    Raises:
        ServerUnreachableError: The server could not be reached or did not answer in time.
        ServerError: The server kept failing (5xx), or failed in a way retries cannot fix.
        ConfigError: The address is not an http(s) URL.
    """
    attempt = 0
    while True:
        try:
            with request_guard(url, policy.deadline_s):
                return operation()
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ConfigError(
                f"Cannot request {url!r}: {exc}. Set {setting_hint} to an http:// or "
                "https:// address."
            ) from exc
        except httpx.TooManyRedirects as exc:
            raise ServerError(
                f"{url} redirects in a loop (more than 10 redirects): the server is "
                f"misconfigured. Set {setting_hint} to the final address, or retry later."
            ) from exc
        except httpx.DecodingError as exc:
            raise ServerError(
                f"The answer from {url} could not be decoded ({exc}): the server sent a "
                "damaged or wrongly labelled compressed body. Retry later or use another source."
            ) from exc
        except (ServerError, httpx.TransportError) as exc:
            retryable = is_retryable(exc)
            if retryable and attempt < policy.retries:
                delay = policy.delay(attempt)
                if isinstance(exc, RateLimitedError) and exc.retry_after is not None:
                    if exc.retry_after > policy.retry_after_max_s:
                        raise _final_error(exc, url, attempt + 1, setting_hint, timeout_s) from exc
                    delay = exc.retry_after
                policy.wait(delay)
                attempt += 1
                continue
            if isinstance(exc, ServerError) and not retryable:
                raise
            raise _final_error(exc, url, attempt + 1, setting_hint, timeout_s) from exc


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Parse a Retry-After header (seconds, or an HTTP date) into seconds from now."""
    if not value:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        seconds = moment.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def check_rate_limit(response: httpx.Response, what: str) -> None:
    """Raise `RateLimitedError` for HTTP 429 (or 503 with Retry-After); else do nothing."""
    status = response.status_code
    retry_after = retry_after_seconds(response.headers.get("Retry-After"))
    if status != 429 and not (status == 503 and retry_after is not None):
        return
    host = response.url.host or "the server"
    wait = f" It asked to wait {retry_after:g} s." if retry_after is not None else ""
    raise RateLimitedError(
        f"{host} is limiting how fast xhelio may ask (HTTP {status}) while fetching {what}."
        f"{wait} xhelio retries on its own; if this persists, wait a few minutes, ask for "
        "less at a time, or use another source.",
        status_code=status,
        retry_after=retry_after,
    )


def check_file_response(
    response: httpx.Response, name: str, provider: str, advice: str = "Try again later."
) -> None:
    """Raise `ServerError` when a file download answered an error or a web page.

    A maintenance or login page served with HTTP 200 is not the file. `provider` names
    the archive ("CDAWeb"), `advice` ends each message.
    """
    if response.status_code >= 400:
        raise ServerError(
            f"{provider} failed to send {name} (HTTP {response.status_code}). {advice}",
            status_code=response.status_code,
        )
    if "html" in response.headers.get("Content-Type", "").lower():
        raise ServerError(
            f"{provider} answered a web page instead of {name} (HTTP 200, text/html): the "
            f"archive may be under maintenance. {advice}"
        )


def _final_error(
    exc: Exception, url: str, tries: int, setting_hint: str, timeout_s: float | None
) -> ServerError:
    """The error to raise once retries are exhausted."""
    attempts = f" ({tries} attempts)" if tries > 1 else ""
    if isinstance(exc, RateLimitedError) and exc.retry_after is not None and tries <= 1:
        exc.message = (
            f"{exc.message} (not retried: the wait asked exceeds XHELIO_HTTP_RETRY_AFTER_MAX_S)"
        )
        exc.args = (exc.message,)
        return exc
    if isinstance(exc, ServerError):
        exc.message = f"{exc.message} (gave up after {tries} attempt{'s' * (tries > 1)})"
        exc.args = (exc.message,)
        return exc
    if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
        limit = f" within {timeout_s:g} s" if timeout_s is not None else ""
        return ServerUnreachableError(
            f"No answer from {url}{limit}{attempts}. The server is slow or "
            "overloaded: retry later, ask for a shorter time range, raise "
            f"XHELIO_HTTP_TIMEOUT_S, or set {setting_hint} to another server."
        )
    return ServerUnreachableError(
        f"Could not connect to {url}{attempts}: {exc or type(exc).__name__}. "
        f"Check your network and the address, or set {setting_hint} to a reachable server."
    )
