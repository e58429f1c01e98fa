"""`DataStore`: label -> `DataEntry`, the in-memory data of one session.

Thread-safe; imports only `data.entry` and `errors`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from xhelio.data.entry import DataEntry
from xhelio.errors import UserError

__all__ = ["DataStore", "UnknownLabelError"]


class UnknownLabelError(UserError):
    """No entry has this label."""

    def __init__(self, label: str, available: list[str]) -> None:
        shown = ", ".join(available) if available else "nothing yet (fetch data first)"
        super().__init__(f"No data labelled '{label}'. In memory: {shown}.")
        self.label = label


class DataStore:
    """The labelled data of one session."""

    def __init__(self) -> None:
        self._entries: dict[str, DataEntry] = {}
        self._lock = threading.RLock()

    def put(self, entry: DataEntry) -> None:
        """Store `entry`, replacing any entry with the same label."""
        with self._lock:
            self._entries[entry.label] = entry

    def get(self, label: str) -> DataEntry:
        """Return the entry for `label`; raise `UnknownLabelError` naming what exists."""
        with self._lock:
            try:
                return self._entries[label]
            except KeyError:
                raise UnknownLabelError(label, sorted(self._entries)) from None

    def has(self, label: str) -> bool:
        """Whether `label` is stored."""
        with self._lock:
            return label in self._entries

    def remove(self, label: str) -> None:
        """Drop `label` if present."""
        with self._lock:
            self._entries.pop(label, None)

    def labels(self) -> list[str]:
        """All labels, in insertion order."""
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        """Remove every entry."""
        with self._lock:
            self._entries.clear()

    def __iter__(self) -> Iterator[DataEntry]:
        with self._lock:
            return iter(list(self._entries.values()))

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
