"""Every failure as JSON: `{"status": "error", "type", "message"}`, never a stack trace.

The one error model of the REST server (routes, background turns, event streams):
`error_kind`, `error_status` and `error_message` say what a client sees for any exception.
`xhelio.errors` types keep their class name and map to a status code by family (an unknown
dataset, parameter or data label is 404); the server's own refusals have their names
(`NotFound`, `SessionBusy`, `PayloadTooLarge`, `ValidationError`, ...). An unexpected
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
from xhelio.data.store import UnknownLabelError
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
    "error_for",
    "error_kind",
    "error_message",
    "error_response",
    "error_status",
    "install_error_handlers",
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


_UNKNOWN_NAMED = (
    UnknownDatasetError,
    UnknownParameterError,
    UnknownLabelError,
    DataUnavailableError,
)
"""Errors about a named thing that does not exist: 404, like an unknown route."""


def error_status(exc: BaseException) -> int:
    """HTTP status of any exception, by family."""
    if isinstance(exc, ApiError):
        return exc.status
    if isinstance(exc, ToolCallError):
        return status_for_kind(exc.kind)
    if isinstance(exc, SessionNotFoundError):
        return 404
    if isinstance(exc, SessionBusyError):
        return 409
    if isinstance(exc, _UNKNOWN_NAMED):
        return 404
    if isinstance(exc, UserError):
        return 400
    if isinstance(exc, ServerError):
        return 502
    return 500


def error_kind(exc: BaseException) -> str:
    """The `type` a client sees: the server's own name, or `error_type` of an xhelio error."""
    if isinstance(exc, ApiError):
        return exc.kind
    return error_type(exc) if isinstance(exc, XhelioError) else "InternalError"


def error_message(exc: BaseException) -> str:
    """The message a client sees (never the text of an unexpected exception)."""
    if isinstance(exc, ApiError | XhelioError):
        return exc.message
    return f"The server failed ({type(exc).__name__}); see its log."


def error_for(exc: BaseException) -> JSONResponse:
    """The JSON error response for `exc`."""
    return error_response(error_status(exc), error_kind(exc), error_message(exc))


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
    if kind in {cls.__name__ for cls in _UNKNOWN_NAMED}:
        return 404
    cls = getattr(xerrors, kind, None)
    if isinstance(cls, type) and issubclass(cls, ServerError):
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

    async def known_error(_: Request, exc: Exception) -> JSONResponse:
        return error_for(exc)

    async def invalid(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_response(422, "ValidationError", _validation_message(exc))

    async def http_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        kinds = {404: "NotFound", 405: "MethodNotAllowed", 401: "Unauthorized"}
        return error_response(
            exc.status_code, kinds.get(exc.status_code, "HTTPError"), str(exc.detail)
        )

    app.add_exception_handler(XhelioError, known_error)
    app.add_exception_handler(ApiError, known_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http_error)
