"""Every failure as JSON: `{"status": "error", "type", "message"}`, never a stack trace.

`xhelio.errors` types keep their class name and map to a status code by family; the
server's own refusals (not found, busy, too large, invalid body) get theirs. An unexpected
exception is logged on the server and answered with its class name only.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from xhelio import errors as xerrors
from xhelio.api.direct import ToolCallError
from xhelio.api.error_types import error_type
from xhelio.api.hub import SessionBusyError, SessionNotFoundError
from xhelio.errors import (
    DataUnavailableError,
    ServerError,
    UnknownDatasetError,
    UnknownParameterError,
    UserError,
    XhelioError,
)

__all__ = [
    "ApiError",
    "error_response",
    "install_error_handlers",
    "status_for",
    "status_for_kind",
]


class ApiError(Exception):
    """A refusal of the server itself, with its HTTP status and error type."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message


def error_response(status: int, kind: str, message: str) -> JSONResponse:
    """The JSON error response."""
    return JSONResponse({"status": "error", "type": kind, "message": message}, status_code=status)


def status_for(exc: XhelioError) -> int:
    """HTTP status of an `xhelio.errors` error, by family."""
    if isinstance(exc, ToolCallError):
        return status_for_kind(exc.kind)
    if isinstance(exc, SessionNotFoundError):
        return 404
    if isinstance(exc, SessionBusyError):
        return 409
    if isinstance(exc, UnknownDatasetError | UnknownParameterError | DataUnavailableError):
        return 404
    if isinstance(exc, UserError):
        return 400
    if isinstance(exc, ServerError):
        return 502
    return 500


_KIND_STATUS = {
    "ValidationError": 422,
    "SandboxUnavailable": 503,
    "SandboxError": 400,
    "Cancelled": 409,
    "LoopGuard": 429,
    "UnknownTool": 404,
    "NoUsableData": 404,
    "NoDataError": 404,
}


def status_for_kind(kind: str) -> int:
    """HTTP status of a tool failure by its type name (an `xhelio.errors` class or other)."""
    if kind in _KIND_STATUS:
        return _KIND_STATUS[kind]
    cls = getattr(xerrors, kind, None)
    if isinstance(cls, type) and issubclass(cls, XhelioError):
        if issubclass(cls, UnknownDatasetError | UnknownParameterError | DataUnavailableError):
            return 404
        if issubclass(cls, ServerError):
            return 502
    return 400


def _validation_message(exc: RequestValidationError) -> str:
    problems: list[str] = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        problems.append(f"{where}: {err.get('msg', 'invalid')}")
    return "Invalid request: " + "; ".join(problems[:10])


def install_error_handlers(app: FastAPI) -> None:
    """Register the JSON error handlers on `app`."""

    async def xhelio_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, XhelioError)
        return error_response(status_for(exc), error_type(exc), exc.message)

    async def api_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return error_response(exc.status, exc.kind, exc.message)

    async def invalid(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_response(422, "ValidationError", _validation_message(exc))

    async def http_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        kinds = {404: "NotFound", 405: "MethodNotAllowed", 401: "Unauthorized"}
        return error_response(
            exc.status_code, kinds.get(exc.status_code, "HTTPError"), str(exc.detail)
        )

    app.add_exception_handler(XhelioError, xhelio_error)
    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http_error)
