"""One guarded GET of a JSON answer from a described web API or a search provider.

Every hop (the first request and each redirect) is checked against the `HostPolicy`
before it is sent, and the address actually connected to after; redirects are followed
here, at most `MAX_REDIRECTS`, so none can leave the allowlist. Header credentials are
dropped when a redirect changes host. The answer is read in pieces up to
``Settings.api_max_mb`` and within ``Settings.api_timeout_s`` (the whole request,
`sources.netguard`); HTTP 429/503 with Retry-After, 5xx and timeouts are retried by
`sources.http.call_with_retries`. An HTML page, a body that is not JSON, an oversized
body and a 4xx answer become a `ServerError` that says which address answered what;
credentials never appear in a message (`redact`). Imports `config`, `errors`,
`sources.http` and `webapis.guard`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import httpx

from xhelio.config import Settings
from xhelio.errors import RequestDeadlineError, ServerError, ServerUnreachableError
from xhelio.sources.http import RetryPolicy, call_with_retries, check_rate_limit, make_client
from xhelio.webapis.guard import HostPolicy, host_key

__all__ = ["MAX_REDIRECTS", "JsonAnswer", "WebClient", "redact"]

MAX_REDIRECTS = 5
_HIDDEN = ("api_key", "apikey", "key", "token", "access_token")


@dataclass(frozen=True)
class JsonAnswer:
    """A decoded JSON answer and the address that gave it (credentials removed)."""

    value: Any
    url: str


def redact(url: str) -> str:
    """`url` with credential-looking query values replaced by ``***``."""
    parts = urlsplit(url)
    query = [
        (k, "***" if k.lower() in _HIDDEN else v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit(parts._replace(query=urlencode(query, safe="*:,")))


def _peer(response: httpx.Response) -> str | None:
    stream: Any = response.extensions.get("network_stream")
    if stream is None:
        return None
    try:
        address: Any = stream.get_extra_info("server_addr")
    except (AttributeError, OSError):
        return None
    return str(address[0]) if isinstance(address, tuple) and address else None


class WebClient:
    """Guarded JSON GETs for one session's web API and search calls."""

    def __init__(
        self, settings: Settings, policy: HostPolicy, retry: RetryPolicy | None = None
    ) -> None:
        self.settings = settings
        self.policy = policy
        base = retry or RetryPolicy.from_settings(settings)
        # One attempt, whole answer included, lasts at most api_timeout_s.
        self.retry = dataclasses.replace(
            base, deadline_s=min(base.deadline_s, settings.api_timeout_s)
        )

    def get_json(
        self,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        what: str,
        empty: Any = None,
    ) -> JsonAnswer:
        """GET `url` and decode its JSON answer.

        Args:
            url: The address (its host must be allowed).
            params: Query parameters.
            headers: Extra headers (credentials).
            what: What is fetched, for messages ("DONKI CME").
            empty: What an empty body means; None makes an empty body an error.

        Raises:
            BlockedAddressError: The address, a redirect or the connected address is not
                allowed.
            ServerError: An HTTP error, an HTML page, a body that is not JSON or too big.
            ServerUnreachableError: No answer in time, or no connection.
        """
        first = str(httpx.URL(url, params=dict(params or {})))
        self.policy.check(first)
        shown = redact(first)

        def attempt() -> JsonAnswer:
            with make_client(self.settings, self.settings.api_timeout_s) as client:
                client.follow_redirects = False
                return self._follow(client, first, dict(headers or {}), what, empty)

        try:
            return call_with_retries(
                attempt,
                url=shown,
                policy=self.retry,
                setting_hint="the API's address in the config file",
                timeout_s=self.settings.api_timeout_s,
            )
        except RequestDeadlineError as exc:
            raise ServerUnreachableError(
                f"{what}: {shown} did not answer in full within "
                f"{self.settings.api_timeout_s:g} s (XHELIO_API_TIMEOUT_S). Retry later or ask "
                "for less at a time."
            ) from exc

    def _follow(
        self, client: httpx.Client, url: str, headers: dict[str, str], what: str, empty: Any
    ) -> JsonAnswer:
        for _ in range(MAX_REDIRECTS + 1):
            with client.stream("GET", url, headers=headers) as response:
                self.policy.check_peer(url, _peer(response))
                if not response.is_redirect:
                    return JsonAnswer(self._read(response, what, empty), redact(url))
                location = response.headers.get("location", "")
            target = urljoin(url, location)
            self.policy.check(target)
            if host_key(target) != host_key(url):
                headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
            url = target
        raise ServerError(
            f"{what}: {redact(url)} redirected more than {MAX_REDIRECTS} times; the service "
            "is misconfigured. Retry later."
        )

    def _read(self, response: httpx.Response, what: str, empty: Any) -> Any:
        shown = redact(str(response.url))
        check_rate_limit(response, what)
        limit = self.settings.api_max_mb * 1024 * 1024
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise _too_big(what, shown, limit)
        body = bytearray()
        for piece in response.iter_bytes():
            body.extend(piece)
            if len(body) > limit:
                raise _too_big(what, shown, limit)
        kind = response.headers.get("content-type", "").lower()
        text = bytes(body).decode("utf-8", errors="replace").strip()
        looks_html = "html" in kind or text[:15].lower().startswith(("<!doctype", "<html"))
        if response.status_code >= 400:
            detail = "an HTML error page" if looks_html else repr(text[:200])
            raise ServerError(
                f"{what}: {shown} answered HTTP {response.status_code} ({detail}). "
                + _advice(response.status_code),
                status_code=response.status_code,
            )
        if looks_html:
            raise ServerError(
                f"{what}: {shown} answered an HTML page instead of JSON (HTTP "
                f"{response.status_code}); the service may be down for maintenance or moved. "
                "Retry later."
            )
        if not text:
            if empty is not None:
                return empty
            raise ServerError(f"{what}: {shown} answered an empty body instead of JSON.")
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ServerError(
                f"{what}: {shown} answered something that is not JSON ({exc}); the service may "
                "have changed its format."
            ) from exc


def _too_big(what: str, url: str, limit: int) -> ServerError:
    return ServerError(
        f"{what}: the answer of {url} is larger than {limit // (1024 * 1024)} MB "
        "(XHELIO_API_MAX_MB); ask for a shorter time range or raise the limit."
    )


def _advice(status: int) -> str:
    if status in (401, 403):
        return "The key or token was refused: check it in your settings."
    if status == 404:
        return "The endpoint does not exist there (any more): check the API's address."
    if status >= 500:
        return "The service is failing; retry later."
    return "Check the parameters against describe_api."
