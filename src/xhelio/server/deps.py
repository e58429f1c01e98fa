"""The per-process server state routes reach through `request.app.state`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from fastapi import Request

from xhelio.api.assistant import Assistant
from xhelio.catalog.index import Catalog
from xhelio.server.config import ServerConfig

__all__ = ["ServerState", "server_state"]


@dataclass
class ServerState:
    """One per process: the config, the assistant (sessions, thread pool) and the catalog."""

    config: ServerConfig
    assistant: Assistant
    started: float = field(default_factory=time.time)

    @property
    def catalog(self) -> Catalog:
        """The dataset catalog, opened once for the whole process (by `Services`)."""
        return self.assistant.services.catalog


def server_state(request: Request) -> ServerState:
    """FastAPI dependency: the server state of the app serving `request`."""
    state = request.app.state.xhelio
    assert isinstance(state, ServerState)
    return state
