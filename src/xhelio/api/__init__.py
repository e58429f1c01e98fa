"""The typed Python API: `Assistant` and the request/response models it speaks."""

from xhelio.api.assistant import Assistant
from xhelio.api.hub import SessionBusyError, SessionNotFoundError
from xhelio.api.models import (
    AgentResult,
    AskRequest,
    AskResponse,
    DataItem,
    ErrorInfo,
    StreamEvent,
    Table,
    TraceEvent,
)

__all__ = [
    "AgentResult",
    "AskRequest",
    "AskResponse",
    "Assistant",
    "DataItem",
    "ErrorInfo",
    "SessionBusyError",
    "SessionNotFoundError",
    "StreamEvent",
    "Table",
    "TraceEvent",
]
