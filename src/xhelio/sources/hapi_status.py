"""HAPI answers to typed errors: status codes, HTTP failures and cut streams.

`hapi.py` calls these on every answer. A HAPI status other than 1200 becomes the matching
`xhelio.errors` type carrying the server's own message; truncated streams become
`TruncatedResponseError` naming the dataset and time range. Imports only `errors` and
`timerange` from xhelio.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NoReturn

import httpx

from xhelio.errors import (
    BadTimeRangeError,
    NoDataError,
    RequestTooLargeError,
    ServerError,
    TruncatedResponseError,
    UnknownDatasetError,
    UnknownParameterError,
    XhelioError,
)
from xhelio.timerange import TimeRange

__all__ = [
    "SETTING_HINT",
    "HapiRequest",
    "check_header_status",
    "check_last_line",
    "is_json",
    "json_object",
    "raise_for_answer",
    "raise_for_status",
    "truncated",
]

SETTING_HINT = "XHELIO_HAPI_URL"


@dataclass(frozen=True)
class HapiRequest:
    """What one HTTP request is about, for error messages and error mapping."""

    url: str
    dataset_id: str | None = None
    parameters: tuple[str, ...] = ()
    time_range: TimeRange | None = None
    available: tuple[str, ...] = ()

    @property
    def what(self) -> str:
        """The dataset and range in words, for messages."""
        text = f"dataset '{self.dataset_id}'" if self.dataset_id else self.url
        if self.time_range is not None:
            text += f" from {self.time_range}"
        return text


def is_json(response: httpx.Response) -> bool:
    """Whether the answer declares a JSON body (a HAPI status instead of data)."""
    return "json" in response.headers.get("Content-Type", "")


def json_object(body: bytes) -> dict[str, Any] | None:
    """The body as a JSON object, or None when it is not one."""
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return payload if isinstance(payload, dict) else None  # pyright: ignore[reportUnknownVariableType]


def check_header_status(body: bytes, request: HapiRequest) -> None:
    """Honour the status in a '#'-prefixed HAPI header (include=header answers)."""
    lines: list[str] = []
    for line in body.split(b"\n"):
        if not line.startswith(b"#"):
            break
        lines.append(line[1:].decode("utf-8", "replace"))
    payload = json_object("\n".join(lines).encode())
    if payload is not None:
        raise_for_status(payload, 200, request)


def check_last_line(body: bytes, fields: int, request: HapiRequest) -> None:
    """A CSV answer must end with a newline or a complete last row."""
    if not body or body.endswith(b"\n") or body.isspace():
        return
    last = body[body.rfind(b"\n") + 1 :]
    if last.count(b",") + 1 != fields:
        raise TruncatedResponseError(
            f"The CSV answer for {request.what} from {request.url} ends with a partial "
            f"row ({last[:60]!r}): the stream was cut. Retry; if it persists, ask for a "
            "shorter time range."
        )


def truncated(
    request: HapiRequest, received: int, response: httpx.Response, exc: Exception | None
) -> TruncatedResponseError:
    """The error for an answer whose body ended before it was complete."""
    promised = response.headers.get("Content-Length")
    amount = f"{received} of {promised} bytes" if promised else f"{received} bytes"
    reason = f" ({exc})" if exc is not None else ""
    return TruncatedResponseError(
        f"The answer for {request.what} from {request.url} ended early after {amount}"
        f"{reason}: the connection was cut. Retry; if it persists, ask for a shorter range."
    )


def raise_for_answer(http_status: int, body: bytes, request: HapiRequest) -> NoReturn:
    """Raise the typed error for a non-200 or JSON answer to a request."""
    payload = json_object(body)
    if payload is not None:
        raise_for_status(payload, http_status, request)
    snippet = body[:200].decode("utf-8", "replace").strip()
    if http_status >= 500:
        raise ServerError(
            f"Server {request.url} failed with HTTP {http_status} for {request.what}: "
            f"{snippet or 'no details'}. Retry later.",
            status_code=http_status,
        )
    if http_status == 200:
        raise ServerError(
            f"Server {request.url} answered {request.what} with JSON but no HAPI status: "
            f"{snippet}. Report this to the server's operators.",
            status_code=http_status,
        )
    raise ServerError(
        f"Server {request.url} refused {request.what} with HTTP {http_status}: "
        f"{snippet or 'no details'}. Check that {SETTING_HINT} points at a HAPI server.",
        status_code=http_status,
    )


def raise_for_status(payload: dict[str, Any], http_status: int, request: HapiRequest) -> None:
    """Raise the typed error for a HAPI status other than 1200 OK."""
    status = payload.get("status")
    if not isinstance(status, dict):
        if http_status != 200:
            raise ServerError(
                f"Server {request.url} failed with HTTP {http_status} for {request.what}.",
                status_code=http_status,
            )
        return
    code = int(status.get("code", 1200))  # pyright: ignore[reportUnknownArgumentType]
    message = str(status.get("message", ""))  # pyright: ignore[reportUnknownArgumentType]
    if code == 1200:
        return
    said = f" The server said: '{message}' (HAPI {code})."
    if code == 1201:
        raise NoDataError(f"No data for {request.what} on {request.url}.{said} Try another range.")
    if code == 1406:
        raise _with_detail(UnknownDatasetError(request.dataset_id or "?"), said)
    if code == 1407:
        missing = ", ".join(request.parameters) or "?"
        error = UnknownParameterError(request.dataset_id or "?", missing, list(request.available))
        raise _with_detail(error, said)
    if code == 1408:
        raise RequestTooLargeError(
            f"Server {request.url} refused {request.what} as too large.{said} "
            "Ask for a shorter time range or fewer parameters."
        )
    if 1402 <= code <= 1405:
        raise BadTimeRangeError(
            f"Server {request.url} rejected the time range of {request.what}.{said} "
            "Check the range against the dataset's coverage (`xhelio catalog show`)."
        )
    raise ServerError(
        f"Server {request.url} could not answer {request.what}.{said} "
        + ("Retry later." if code >= 1500 else "This looks like a client/server mismatch."),
        status_code=http_status if http_status != 200 else (500 if code >= 1500 else 400),
    )


def _with_detail(error: XhelioError, detail: str) -> XhelioError:
    """Append the server's own words to a typed error's message."""
    error.message = f"{error.message}{detail}"
    error.args = (error.message,)
    return error
