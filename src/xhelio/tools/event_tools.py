"""Event-list tools: import (files, text, figure selections), save, find, load, export.

An event list in a session is the DataStore entry `events.NAME` (columns start, end and
attributes), so plots, exports and SQL see it. Lists are saved per user in
`<home>/events.sqlite`; xhelio ships a few cited lists. Detection and superposed-epoch
tools are in `event_analysis_tools`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from xhelio.errors import UserError
from xhelio.events.formats import EventFormat, read_event_file, read_events, write_events
from xhelio.events.model import (
    EventList,
    entry_label,
    event_list_from_entry,
    make_event_list,
)
from xhelio.events.shipped import shipped_catalog, shipped_list
from xhelio.events.store import EventStore
from xhelio.tools.context import ToolContext
from xhelio.tools.extraction_tools import user_named_path
from xhelio.tools.registry import Produces, tool

__all__ = ["EVENT_TOOLS", "event_store", "keep_event_list", "resolve_event_list"]

_LABEL = Produces(result_field="label")
_SHOWN = 20


def event_store(ctx: ToolContext) -> EventStore:
    """The saved event lists of the context's user."""
    return EventStore.at_home(ctx.settings.home, ctx.library_user)


def resolve_event_list(ctx: ToolContext, ref: str) -> EventList:
    """The list `ref` names: a session entry, a saved list (or phrase), or a shipped list.

    Raises:
        UserError: nothing of that name (the message says where it looked).
    """
    wanted = ref.strip()
    for label in (wanted, entry_label(wanted)):
        if ctx.store.has(label):
            return event_list_from_entry(ctx.store.get(label))
    if wanted.lower() in shipped_catalog():
        return shipped_list(wanted)
    try:
        return event_store(ctx).resolve(wanted)
    except UserError as exc:
        shipped = ", ".join(shipped_catalog())
        raise UserError(f"{exc} Shipped lists: {shipped}.") from None


def keep_event_list(ctx: ToolContext, events: EventList, save: bool = False) -> dict[str, Any]:
    """Store `events` as events.NAME (and save it for the user); its summary as JSON."""
    ctx.store.put(events.to_entry())
    result = events.summary(_SHOWN)
    if save:
        event_store(ctx).save(events, replace=True)
        result["saved"] = True
    ctx.session.events.publish(
        "data_computed", tool="events", summary=f"{result['label']} ({len(events)} events)"
    )
    return result


@tool("data_ops_fetch", phase="fetch", produces=_LABEL, file_args=("path",), public=True)
def import_events(
    ctx: ToolContext,
    path: str | None = None,
    content: str | None = None,
    name: str | None = None,
    format: EventFormat | None = None,
    save: bool = False,
) -> dict[str, Any]:
    """Import an event list from a file or text: CSV, AMDA time table, HAPI CSV or VOTable.

    The list becomes the entry events.NAME (columns start, end and attributes). The
    format is read from the content unless given: CSV with a header naming start/end
    columns; AMDA ASCII time table ('# Name: ...;' lines then 'START STOP' rows); HAPI
    CSV with its '#' JSON header; VOTable (TABLEDATA).

    Args:
        path: A file the user named, e.g. 'events.csv'.
        content: The file's text instead of a path (for API clients).
        name: The list's name (default: the file's name, or the table's own).
        format: csv, amda, hapi or votable (default: from the content).
        save: Also save it to the user's event lists.
    """
    if (path is None) == (content is None):
        raise UserError("import_events needs exactly one of path or content.")
    if path is not None:
        events = read_event_file(user_named_path(ctx, path, "import_events"), name, format)
    else:
        events = read_events(content or "", name or "imported", "the given text", format)
    return keep_event_list(ctx, events.renamed(name) if name else events, save)


@tool("data_ops_compute", produces=_LABEL, public=True)
def events_from_selection(
    ctx: ToolContext, name: str, spans: list[list[str]], description: str = "", save: bool = False
) -> dict[str, Any]:
    """Make an event list from time spans chosen in a figure (start/end pairs).

    Args:
        name: The list's name, e.g. 'my-crossings'.
        spans: [[start, end], ...] as ISO 8601 times,
            e.g. [["2015-03-17T04:00", "2015-03-17T06:00"]].
        description: What the events are.
        save: Also save it to the user's event lists.
    """
    if not spans or any(len(span) != 2 for span in spans):
        raise UserError("Give spans as [[start, end], ...]: one start and one end per event.")
    frame = pd.DataFrame(spans, columns=["start", "end"])
    events = make_event_list(
        name, frame, description=description or "selected in a figure", origin="figure selection"
    )
    return keep_event_list(ctx, events, save)


@tool("data_ops_compute", phase="export", public=True)
def save_event_list(ctx: ToolContext, name: str, replace: bool = False) -> dict[str, Any]:
    """Save a session's event list (events.NAME) to the user's saved lists, reusable later.

    Args:
        name: The list's name or its label events.NAME.
        replace: Replace a saved list of the same name.
    """
    events = resolve_event_list(ctx, name)
    return {"saved": dict(event_store(ctx).save(events, replace))}


@tool("data_ops_compute", phase="discover", public=True)
def find_event_lists(ctx: ToolContext, query: str = "") -> dict[str, Any]:
    """Search the user's saved event lists and xhelio's shipped (cited) lists by words.

    Args:
        query: Words of the name or description, e.g. 'storms 2015' (empty: all).
    """
    words = [w for w in query.lower().split() if w]
    shipped = [
        {
            "name": n,
            "description": i["description"],
            "citation": i["citation"],
            "licence": i["licence"],
        }
        for n, i in shipped_catalog().items()
        if not words or any(w in f"{n} {i['description']}".lower() for w in words)
    ]
    return {"saved": [dict(s) for s in event_store(ctx).search(query)], "shipped": shipped}


@tool("data_ops_fetch", phase="fetch", produces=_LABEL, public=True)
def load_event_list(ctx: ToolContext, name: str, as_name: str | None = None) -> dict[str, Any]:
    """Bring a saved or shipped event list into the session as events.NAME.

    A phrase works too: 'the 2015 storms in my list' loads the saved list best matching
    'storms' with its events of 2015.

    Args:
        name: A list's name, or a phrase naming it (with years to select).
        as_name: The name in this session (default: the list's own).
    """
    events = resolve_event_list(ctx, name)
    return keep_event_list(ctx, events.renamed(as_name) if as_name else events)


@tool("data_ops_compute", phase="export", public=True)
def export_event_list(
    ctx: ToolContext, name: str, format: EventFormat = "csv", filename: str | None = None
) -> dict[str, Any]:
    """Write an event list as CSV, AMDA time table, HAPI CSV or VOTable to the export folder.

    Args:
        name: The list's name or label.
        format: csv, amda, hapi or votable.
        filename: A plain file name (default: NAME with the format's suffix).
    """
    events = resolve_event_list(ctx, name)
    suffix = {"csv": ".csv", "amda": ".txt", "hapi": ".csv", "votable": ".xml"}[format]
    chosen = filename or events.name.replace(" ", "_") + suffix
    if "/" in chosen or "\\" in chosen or chosen.startswith("."):
        raise UserError(f"'{chosen}' is not a plain file name.")
    target = ctx.export_dir / chosen
    target.write_text(write_events(events, format), encoding="utf-8")
    return {"path": str(target), "format": format, "count": len(events)}


EVENT_TOOLS = [
    import_events,
    events_from_selection,
    save_event_list,
    find_event_lists,
    load_event_list,
    export_event_list,
]
