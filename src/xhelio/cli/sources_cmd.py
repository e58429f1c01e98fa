"""`xhelio sources`: every registered data source, what it serves and whether it works.

Each row is a source registered through the ``xhelio.sources`` entry points (the built-in
ones, configured HAPI servers, plugins): its provider, address, catalog size, and a state:
``reachable``, ``offline`` (the service did not answer) or ``broken`` (a plugin that
failed to load or to start, with the reason). A broken plugin is a row, never a crash.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xhelio.cli.errors import handle_errors
from xhelio.services import Services
from xhelio.sources.registry import registrations

__all__ = ["SourceRow", "register", "source_rows"]


@dataclass(frozen=True)
class SourceRow:
    """One line of `xhelio sources`."""

    name: str
    state: str
    """"reachable", "offline", "local" (nothing remote to ask) or "broken"."""
    provider: str = ""
    url: str = ""
    datasets: int | None = None
    detail: str = ""
    origin: str = ""


def source_rows(services: Services) -> list[SourceRow]:
    """The state of every registered source (each asked once, briefly)."""
    rows: list[SourceRow] = []
    for reg in registrations(services.settings):
        if not reg.usable:
            rows.append(SourceRow(reg.name, "broken", detail=reg.problem, origin=reg.origin))
            continue
        try:
            status = services.source(reg.name).status()
        except Exception as exc:  # a plugin may fail in any way; the listing goes on
            detail = f"{type(exc).__name__}: {exc}"
            rows.append(SourceRow(reg.name, "broken", detail=detail, origin=reg.origin))
            continue
        state = {True: "reachable", False: "offline", None: "local"}[status.reachable]
        rows.append(
            SourceRow(
                reg.name,
                state,
                status.provider,
                status.url,
                status.datasets,
                status.detail,
                reg.origin,
            )
        )
    return rows


def sources(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List the registered data sources: provider, address, catalog size and state."""
    with Services() as services:
        rows = source_rows(services)
        default = services.settings.default_source
    if as_json:
        typer.echo(json.dumps([asdict(r) for r in rows], indent=2))
        return
    table = Table(title=f"{len(rows)} data sources (default: {default})", title_justify="left")
    for column in ("name", "provider", "address", "datasets", "state"):
        table.add_column(column, style="bold cyan" if column == "name" else None)
    colours = {"reachable": "green", "local": "green", "offline": "yellow", "broken": "red"}
    for r in rows:
        # Details are text, never markup: "pip install 'xhelio[planetary]'" must show whole.
        state = f"[{colours[r.state]}]{r.state}[/]" + (f": {escape(r.detail)}" if r.detail else "")
        size = "" if r.datasets is None else str(r.datasets)
        table.add_row(escape(r.name), escape(r.provider), escape(r.url), size, state)
    Console().print(table)


def register(app: typer.Typer) -> None:
    """Add the `sources` command to the app."""
    app.command("sources")(handle_errors(sources))
