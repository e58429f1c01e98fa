"""`error_type`: the `type` a client sees for an error, the same on every interface.

REST error bodies, server-sent `error` events, MCP tool errors and `AskResponse.error` all
name an `XhelioError` this way: a tool failure by its own type, a session refusal by what it
means to a client (`NotFound`, `SessionBusy`), anything else by its class name.
"""

from __future__ import annotations

from xhelio.api.direct import ToolCallError
from xhelio.api.hub import SessionBusyError, SessionNotFoundError
from xhelio.errors import XhelioError

__all__ = ["error_type"]

_NAMES: dict[type[XhelioError], str] = {
    SessionNotFoundError: "NotFound",
    SessionBusyError: "SessionBusy",
}


def error_type(exc: XhelioError) -> str:
    """The error's type name for clients."""
    if isinstance(exc, ToolCallError):
        return exc.kind
    return _NAMES.get(type(exc), type(exc).__name__)
