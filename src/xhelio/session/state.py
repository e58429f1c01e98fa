"""`Session`: one conversation's state — data, figure, operations log and events."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from xhelio.data.store import DataStore
from xhelio.render.plot_state import PlotState
from xhelio.session.events import EventBus

__all__ = ["Session", "new_session_id"]


def new_session_id() -> str:
    """A sortable, unique session id: UTC timestamp plus random suffix."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


@dataclass
class Session:
    """Everything one session holds in memory."""

    id: str
    folder: Path
    store: DataStore = field(default_factory=DataStore)
    events: EventBus = field(default_factory=EventBus)
    operations: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    history: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    meta: dict[str, Any] = field(default_factory=dict[str, Any])
    """JSON-able state other layers keep with the session (e.g. model message history)."""
    plot: PlotState = field(init=False)
    saved_state: object = field(default=None, init=False, repr=False, compare=False)
    """What of this object the `SessionStore` already saved (kept by the store only)."""

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.plot = PlotState(self.store, self.folder / "exports")
