"""Data-extraction tools: read a document the user named, store a table as data.

`read_document` reads only files whose path appears in one of the user's own messages of
this session, or a file of the session's working folder (its uploads) named plainly, so a
model cannot wander the disk: PDFs come back as text (pypdf), images
come back as an `attachment` the agent layer sends to a vision model. `store_dataframe`
turns records or columns into a DataFrame (a time column becomes a UTC DatetimeIndex)
and stores it under a label. Imports xhelio's data and tools layers only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from xhelio.data.entry import DataEntry
from xhelio.errors import UserError
from xhelio.session.state import Session
from xhelio.tools.context import ToolContext
from xhelio.tools.data_tools import entry_summary
from xhelio.tools.registry import Produces, tool
from xhelio.tools.results import EntrySummary

__all__ = ["EXTRACTION_TOOLS", "frame_from_table", "user_named_path", "work_folder"]

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
MAX_IMAGE_BYTES = 10 * 1024 * 1024
_TIME_NAMES = ("time", "Time", "epoch", "Epoch", "datetime", "date", "start", "Start")


def work_folder(session: Session) -> Path:
    """The session's working folder (its uploads), created when missing."""
    folder = session.folder / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def user_named_path(ctx: ToolContext, path: str, tool: str = "read_document") -> Path:
    """Resolve `path` if the user wrote it (or its file name) in a message of this session.

    `tool` is the tool asking, named in the refusals.
    """
    wanted = path.strip().strip("'\"")
    if not wanted:
        raise UserError(f"{tool} needs the path of a file.")
    resolved = Path(wanted).expanduser().resolve()
    uploaded = work_folder(ctx.session) / resolved.name
    if Path(wanted).name == wanted and uploaded.is_file():
        return uploaded  # a file of the session's working folder, named plainly
    said = [str(m.get("content", "")) for m in ctx.session.history if m.get("role") == "user"]
    named = any(
        wanted in text or str(resolved) in text or _mentions_name(text, resolved.name)
        for text in said
    )
    if not named:
        raise UserError(
            f"{tool} only opens files the user named in the conversation; {wanted!r} "
            "was not. Ask the user for the file's path."
        )
    if not resolved.is_file():
        raise UserError(f"No file at {resolved}; check the path (and ~ or relative folders).")
    return resolved


def _mentions_name(text: str, name: str) -> bool:
    """True when `name` occurs as a whole path component of `text` (not 'a.pdf' in 'data.pdf')."""
    return bool(name) and re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", text) is not None


def _pdf_text(path: Path, first_page: int, max_pages: int, max_chars: int) -> dict[str, Any]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(path)
        total = len(reader.pages)
        start = max(1, first_page)
        stop = min(total, start + max(1, max_pages) - 1)
        pages = [
            f"--- page {n} ---\n{(reader.pages[n - 1].extract_text() or '').strip()}"
            for n in range(start, stop + 1)
        ]
    except (PdfReadError, OSError, ValueError) as exc:
        raise UserError(f"{path.name} could not be read as a PDF: {exc}.") from exc
    text = "\n".join(pages)
    result: dict[str, Any] = {"kind": "pdf", "path": str(path), "pages": total}
    result["pages_read"] = [start, stop] if total else []
    if not text.replace("-", "").replace("page", "").strip(" \n0123456789"):
        result["note"] = "No extractable text: the PDF may be scanned images."
    result["truncated"] = len(text) > max_chars
    result["text"] = text[:max_chars]
    return result


@tool("data_extraction", phase="discover", file_args=("path",))
def read_document(
    ctx: ToolContext, path: str, first_page: int = 1, max_pages: int = 20, max_chars: int = 20000
) -> dict[str, Any]:
    """Read a PDF (text, page by page) or an image file the user named in the conversation.

    Images are passed to you to look at; read tables and values from them.

    Args:
        path: The file path exactly as the user gave it.
        first_page: For PDFs: first page to read (1-based).
        max_pages: For PDFs: how many pages to read.
        max_chars: Cut the text after this many characters.
    """
    resolved = user_named_path(ctx, path)
    suffix = resolved.suffix.lower()
    if suffix == ".pdf":
        return _pdf_text(resolved, first_page, max_pages, max(500, min(max_chars, 100_000)))
    media_type = IMAGE_TYPES.get(suffix)
    if media_type is None:
        raise UserError(
            f"{resolved.name} is neither a PDF nor an image ({', '.join(IMAGE_TYPES)}); "
            "for text files, ask the user to paste the content."
        )
    size = resolved.stat().st_size
    if size > MAX_IMAGE_BYTES:
        raise UserError(f"{resolved.name} is {size / 1e6:.1f} MB; images up to 10 MB are read.")
    return {
        "kind": "image",
        "path": str(resolved),
        "bytes": size,
        "attachment": {"path": str(resolved), "media_type": media_type},
    }


def frame_from_table(
    records: list[dict[str, Any]] | None,
    columns: dict[str, list[Any]] | None,
    time_column: str | None,
) -> pd.DataFrame:
    """Build a DataFrame from records or columns; a time column becomes a UTC DatetimeIndex."""
    if (records is None) == (columns is None):
        raise UserError("store_dataframe needs exactly one of 'records' or 'columns'.")
    try:
        frame = pd.DataFrame(records) if records is not None else pd.DataFrame(columns)
    except ValueError as exc:
        raise UserError(f"The table is not rectangular: {exc}.") from exc
    if frame.empty:
        raise UserError("store_dataframe got no rows.")
    name = time_column or next((c for c in _TIME_NAMES if c in frame.columns), None)
    if name is None:
        return frame
    if name not in frame.columns:
        raise UserError(
            f"No column {name!r}; the columns are {', '.join(map(str, frame.columns))}."
        )
    try:
        index = pd.DatetimeIndex(pd.to_datetime(frame[name], utc=True), name="time")
    except (ValueError, TypeError) as exc:
        raise UserError(f"Column {name!r} holds values that are not times: {exc}.") from exc
    return frame.drop(columns=[name]).set_axis(index, axis=0).sort_index()


@tool("data_extraction", produces=Produces(result_field="label"), result=EntrySummary)
def store_dataframe(
    ctx: ToolContext,
    label: str,
    records: list[dict[str, Any]] | None = None,
    columns: dict[str, list[Any]] | None = None,
    time_column: str | None = None,
    units: dict[str, str] | None = None,
    description: str = "",
) -> dict[str, Any]:
    """Store a table you built (event list, catalog, values read from a document) as data.

    Give either records (one object per row) or columns (name -> list of values).

    Args:
        label: Label for the new entry, e.g. 'flare_list'.
        records: Rows, e.g. [{"time": "2024-05-10T17:00Z", "class": "X5.8"}].
        columns: Columns, e.g. {"time": [...], "speed": [...]}.
        time_column: Column of ISO times to index by (default: a column named time/date/epoch).
        units: Column -> unit, e.g. {"speed": "km/s"}.
        description: What the table is and where it came from.
    """
    if not label.strip():
        raise UserError("store_dataframe needs a non-empty label.")
    frame = frame_from_table(records, columns, time_column).rename(columns=str)
    known = units or {}
    entry = DataEntry(
        label.strip(),
        frame,
        {str(c): known.get(str(c), "") for c in frame.columns},
        description,
        None,
        None,
        isinstance(frame.index, pd.DatetimeIndex),
    )
    ctx.store.put(entry)
    ctx.session.events.publish(
        "data_stored", tool="store_dataframe", summary=f"{entry.label} ({entry.points} rows)"
    )
    return entry_summary(entry)


EXTRACTION_TOOLS = [store_dataframe, read_document]
