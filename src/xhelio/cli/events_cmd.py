"""`xhelio events`: your saved event lists and the shipped ones, from the shell.

`list [WORDS]`, `show NAME`, `import FILE [--name N]` (saved to your lists), `export NAME
--format F [--out FILE]` and `delete NAME`. Detection and superposed epoch run in a
session: `xhelio tool detect_storms '{...}'` or `xhelio ask`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from xhelio.cli.errors import handle_errors
from xhelio.config import load_settings
from xhelio.errors import UserError
from xhelio.events.formats import EventFormat, read_event_file, write_events
from xhelio.events.model import EventList
from xhelio.events.shipped import shipped_catalog, shipped_list
from xhelio.events.store import EventStore

__all__ = ["app"]

app = typer.Typer(help="Event lists: saved, shipped, import and export.", no_args_is_help=True)


def _store() -> EventStore:
    return EventStore.at_home(load_settings().home)


def _named(name: str) -> EventList:
    if name.strip().lower() in shipped_catalog():
        return shipped_list(name)
    return _store().resolve(name)


@app.command("list")
@handle_errors
def list_lists(
    words: Annotated[str, typer.Argument(help="Words of the name or description.")] = "",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Your saved event lists and the shipped ones matching WORDS."""
    saved = [dict(s) for s in _store().search(words)]
    shipped = [
        {"name": n, "description": i["description"], "citation": i["citation"]}
        for n, i in shipped_catalog().items()
        if not words or any(w in f"{n} {i['description']}".lower() for w in words.lower().split())
    ]
    if as_json:
        typer.echo(json.dumps({"saved": saved, "shipped": shipped}, indent=2))
        return
    table = Table("name", "events", "from", "to", "description")
    for item in saved:
        table.add_row(
            str(item["name"]),
            str(item["count"]),
            str(item["first_start"] or "")[:10],
            str(item["last_end"] or "")[:10],
            str(item["description"]),
        )
    for item in shipped:
        table.add_row(item["name"], "", "", "", f"(shipped) {item['description']}")
    Console().print(table)


@app.command("show")
@handle_errors
def show(name: Annotated[str, typer.Argument(help="A list's name or a phrase.")]) -> None:
    """Print a list's events, origin, method and citation as JSON."""
    events = _named(name)
    typer.echo(json.dumps(events.summary(limit=len(events)), indent=2, default=str))


@app.command("import")
@handle_errors
def import_list(
    path: Annotated[Path, typer.Argument(help="CSV, AMDA time table, HAPI CSV or VOTable.")],
    name: Annotated[str | None, typer.Option("--name", help="The list's name.")] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace a list of that name.")
    ] = False,
) -> None:
    """Read an event file and save it to your lists."""
    events = read_event_file(path, name)
    saved = _store().save(events, replace=replace)
    Console().print(f"Saved {saved['count']} events as '{saved['name']}'.", highlight=False)


@app.command("export")
@handle_errors
def export(
    name: Annotated[str, typer.Argument(help="A list's name or a phrase.")],
    fmt: Annotated[str, typer.Option("--format", help="csv, amda, hapi or votable.")] = "csv",
    out: Annotated[
        Path | None, typer.Option("--out", help="File to write (default: stdout).")
    ] = None,
) -> None:
    """Write a list as CSV, AMDA time table, HAPI CSV or VOTable."""
    if fmt not in ("csv", "amda", "hapi", "votable"):
        raise UserError(f"Unknown format '{fmt}'; use csv, amda, hapi or votable.")
    chosen: EventFormat = fmt  # pyright: ignore[reportAssignmentType]
    text = write_events(_named(name), chosen)
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")


@app.command("delete")
@handle_errors
def delete(name: Annotated[str, typer.Argument(help="The saved list's name.")]) -> None:
    """Delete one of your saved lists."""
    if not _store().delete(name):
        raise UserError(f"No saved event list called '{name}'.")
    Console().print(f"Deleted '{name}'.", highlight=False)
