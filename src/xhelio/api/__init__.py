"""The typed Python API: `Assistant` and the request/response models it speaks.

Names load on first use, so importing a submodule (e.g. `xhelio.api.direct` from the CLI)
does not pull in the agents layer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_WHERE = {
    "Assistant": "xhelio.api.assistant",
    "SessionBusyError": "xhelio.api.hub",
    "SessionNotFoundError": "xhelio.api.hub",
    **{
        name: "xhelio.api.models"
        for name in (
            "AgentResult",
            "AskRequest",
            "AskResponse",
            "DataItem",
            "ErrorInfo",
            "StreamEvent",
            "Table",
            "TraceEvent",
        )
    },
}

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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'xhelio.api' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
