"""`EventList`: a named table of events with where it came from and how it was made.

Every event has a UTC `start` and `end` (equal for an instant such as a shock) and any
attributes (e.g. the Dst minimum). In a session a list is also a DataStore entry labelled
`events.NAME`, so figures, exports and SQL see it like any other data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np
import pandas as pd

from xhelio.data.entry import DataEntry
from xhelio.errors import UserError

__all__ = [
    "LABEL_PREFIX",
    "EventList",
    "column",
    "entry_label",
    "event_list_from_entry",
    "make_event_list",
]

LABEL_PREFIX = "events."
_META_KEY = "event_list"


def column(frame: pd.DataFrame, name: str) -> pd.Series:
    """One column of `frame`, typed as the Series it is."""
    return cast(pd.Series, frame[name])


@dataclass(frozen=True)
class EventList:
    """A named list of events.

    Attributes:
        name: How the user calls it, e.g. 'storms-2015'.
        frame: One row per event: `start`, `end` (UTC timestamps), then attributes.
        description: What the events are.
        origin: Where it came from: a file, a detector with its data, a shipped list.
        citation: The reference to cite for the events or for the method.
        method: For detected lists: the definition and every threshold used.
    """

    name: str
    frame: pd.DataFrame
    description: str = ""
    origin: str = ""
    citation: str = ""
    method: Mapping[str, Any] = field(default_factory=dict[str, Any])

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def attributes(self) -> list[str]:
        """The columns beyond start and end."""
        return [str(c) for c in self.frame.columns if c not in ("start", "end")]

    def renamed(self, name: str) -> EventList:
        """The same events under another name."""
        return replace(self, name=_checked_name(name))

    def within_years(self, years: set[int]) -> EventList:
        """The events that start in one of `years` (all of them when `years` is empty)."""
        if not years:
            return self
        keep = column(self.frame, "start").dt.year.isin(sorted(years)).to_numpy()
        return replace(self, frame=self.frame.loc[keep].reset_index(drop=True))

    def records(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The events as JSON-able rows (times in ISO 8601), at most `limit` of them."""
        shown = self.frame if limit is None else self.frame.head(limit)
        rows: list[dict[str, Any]] = []
        for row in shown.to_dict("records"):
            rows.append({str(k): _jsonable(v) for k, v in row.items()})
        return rows

    def summary(self, limit: int = 20) -> dict[str, Any]:
        """Name, count, span, origin, method and the first `limit` events, as JSON."""
        frame = self.frame
        return {
            "name": self.name,
            "label": entry_label(self.name),
            "count": len(frame),
            "first_start": _jsonable(frame["start"].min()) if len(frame) else None,
            "last_end": _jsonable(frame["end"].max()) if len(frame) else None,
            "attributes": self.attributes,
            "description": self.description,
            "origin": self.origin,
            "citation": self.citation,
            "method": dict(self.method),
            "events": self.records(limit),
            "events_shown": min(limit, len(frame)),
        }

    def to_entry(self) -> DataEntry:
        """The list as a DataStore entry `events.NAME` (columns start, end, attributes)."""
        meta: dict[str, Any] = {
            _META_KEY: {
                "name": self.name,
                "description": self.description,
                "origin": self.origin,
                "citation": self.citation,
                "method": dict(self.method),
            },
            "description": self.description or f"event list {self.name}",
        }
        return DataEntry(
            entry_label(self.name),
            self.frame.copy(),
            {},
            self.description or f"event list {self.name} ({len(self)} events)",
            is_timeseries=False,
            meta=meta,
        )


def _jsonable(value: Any) -> Any:
    if isinstance(value, pd.Timestamp):
        return value.isoformat().replace("+00:00", "Z")
    if value is None or (isinstance(value, float) and value != value):
        return None
    if hasattr(value, "item"):
        return cast(Any, value).item()
    return value


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\- ]{0,79}$")


def _checked_name(name: str) -> str:
    cleaned = " ".join(name.split())
    if not _NAME.match(cleaned):
        raise UserError(
            f"'{name}' is not a usable event-list name: use 1-80 letters, digits, spaces, "
            "'-', '_' or '.', starting with a letter or digit (e.g. 'storms-2015')."
        )
    return cleaned


def entry_label(name: str) -> str:
    """The DataStore label of the list called `name` (spaces become '_')."""
    return LABEL_PREFIX + name.replace(" ", "_")


def _utc_times(values: pd.Series, column: str, required: bool = True) -> pd.Series:
    """`values` as UTC timestamps; a clear error naming the first unreadable rows.

    Unless `required`, empty cells stay empty (NaT).
    """
    parsed = pd.to_datetime(values, utc=True, errors="coerce", format="ISO8601")
    if parsed.isna().any():
        retry = pd.to_datetime(values, utc=True, errors="coerce", format="mixed")
        parsed = parsed.fillna(retry)  # pyright: ignore[reportUnknownMemberType]
    failed = parsed.isna().to_numpy().copy()
    if not required:
        failed &= values.notna().to_numpy() & (values.astype(str).str.strip() != "").to_numpy()
    bad = [int(i) + 1 for i in np.flatnonzero(failed)[:5]]
    if bad:
        shown = ", ".join(f"row {i}: {values.iloc[i - 1]!r}" for i in bad)
        raise UserError(f"Unreadable {column} times ({shown}); write times as ISO 8601.")
    return parsed.astype("datetime64[ns, UTC]")


def make_event_list(
    name: str,
    frame: pd.DataFrame,
    *,
    description: str = "",
    origin: str = "",
    citation: str = "",
    method: Mapping[str, Any] | None = None,
) -> EventList:
    """Check and normalise a table of events into an `EventList`.

    `frame` needs a `start` column; `end` defaults to `start` (instant events). Times
    (start, end and attributes named `*_time`) are parsed as UTC; rows are sorted by start.

    Raises:
        UserError: no start column, unreadable times, or an end before its start.
    """
    if "start" not in frame.columns:
        raise UserError(
            f"An event list needs a 'start' column; the table has {list(frame.columns)}."
        )
    table = frame.reset_index(drop=True)
    table.columns = [str(c) for c in table.columns]
    table["start"] = _utc_times(column(table, "start"), "start").to_numpy()
    if "end" in table.columns:
        table["end"] = _utc_times(column(table, "end"), "end").to_numpy()
    else:
        table["end"] = table["start"]
    for timed in [c for c in table.columns if c.lower().endswith("_time")]:
        table[timed] = _utc_times(column(table, timed), timed, required=False).to_numpy()
    backwards = table.index[(column(table, "end") < column(table, "start")).to_numpy()]
    if len(backwards):
        rows = ", ".join(str(int(i) + 1) for i in list(backwards)[:5])
        raise UserError(f"Events end before they start (rows {rows}); check the end column.")
    ordered = ["start", "end", *[c for c in table.columns if c not in ("start", "end")]]
    table = table.loc[:, ordered].sort_values(by="start", kind="stable").reset_index(drop=True)
    return EventList(_checked_name(name), table, description, origin, citation, dict(method or {}))


def event_list_from_entry(entry: DataEntry) -> EventList:
    """The `EventList` a DataStore entry holds (an `events.` entry or any start/end table).

    Raises:
        UserError: the entry is not a table with a start column.
    """
    if not isinstance(entry.data, pd.DataFrame):
        raise UserError(f"'{entry.label}' is not a table of events.")
    info = entry.meta.get(_META_KEY)
    known: dict[str, Any] = info if isinstance(info, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    name = str(known.get("name") or entry.label.removeprefix(LABEL_PREFIX))
    return make_event_list(
        name,
        entry.data,
        description=str(known.get("description", entry.description)),
        origin=str(known.get("origin", entry.label)),
        citation=str(known.get("citation", "")),
        method=known.get("method") if isinstance(known.get("method"), dict) else None,
    )
