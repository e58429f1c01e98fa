"""Read and write event lists in every supported format, chosen by name or by content.

Formats: `csv`, `amda` (AMDA ASCII time table), `hapi` (HAPI CSV with its JSON header)
and `votable`. `read_event_file` guesses the format from the content when not told.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from xhelio.errors import UserError
from xhelio.events.model import EventList
from xhelio.events.text_formats import (
    read_amda,
    read_csv,
    read_hapi_csv,
    write_amda,
    write_csv,
    write_hapi_csv,
)
from xhelio.events.votable import read_votable, write_votable

__all__ = ["FORMATS", "EventFormat", "format_of", "read_event_file", "read_events", "write_events"]

EventFormat = Literal["csv", "amda", "hapi", "votable"]
FORMATS: tuple[EventFormat, ...] = ("csv", "amda", "hapi", "votable")
_MAX_BYTES = 50 * 2**20

_READERS: dict[EventFormat, Callable[[str, str, str], EventList]] = {
    "csv": read_csv,
    "amda": read_amda,
    "hapi": read_hapi_csv,
    "votable": read_votable,
}
_WRITERS: dict[EventFormat, Callable[[EventList], str]] = {
    "csv": write_csv,
    "amda": write_amda,
    "hapi": write_hapi_csv,
    "votable": write_votable,
}


def format_of(text: str) -> EventFormat:
    """The format `text` is written in, from its first non-blank characters."""
    head = text.lstrip()[:2000]
    if head.startswith("<"):
        return "votable"
    if head.startswith("#"):
        return "hapi" if head.lstrip("#").lstrip().startswith("{") else "amda"
    return "csv"


def read_events(text: str, name: str, origin: str, fmt: EventFormat | None = None) -> EventList:
    """Parse `text` (in `fmt`, or the format its content shows) into a list called `name`."""
    if not text.strip():
        raise UserError(f"{origin} is empty.")
    return _READERS[fmt or format_of(text)](text, name, origin)


def read_event_file(
    path: Path, name: str | None = None, fmt: EventFormat | None = None
) -> EventList:
    """Read an event file; the list is called `name` (default: the file's stem).

    Raises:
        UserError: no such file, too large, not text, or not an event table.
    """
    if not path.is_file():
        raise UserError(f"No event file at {path}.")
    if path.stat().st_size > _MAX_BYTES:
        raise UserError(f"{path} is over {_MAX_BYTES // 2**20} MB; split it.")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text; event lists are text files.") from None
    return read_events(text, name or path.stem, str(path), fmt)


def write_events(events: EventList, fmt: EventFormat) -> str:
    """The list written in `fmt`."""
    return _WRITERS[fmt](events)
