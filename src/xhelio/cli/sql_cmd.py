"""`xhelio sql "SELECT ..." --session S [--out FILE]`: query a session's data in SQL.

Runs the `query_data` tool through the session's funnel (so the result is a new entry of
the session, traced and replayable), prints the SQL that ran and the result as a table,
and with `--out` writes the whole result to a CSV, parquet or netCDF file (by its suffix;
units in the header, like every data file xhelio writes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xhelio.cli.errors import handle_errors
from xhelio.errors import UserError
from xhelio.services import Services
from xhelio.tools.data_tools import write_entry
from xhelio.tools.workspace import open_workspace

__all__ = ["register"]

_FORMATS = {".csv": "csv", ".parquet": "parquet", ".nc": "netcdf"}


def _format_of(out: Path) -> str:
    fmt = _FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise UserError(f"Cannot write '{out.name}': end the name with .csv, .parquet or .nc.")
    return fmt


def _show(payload: dict[str, Any], console: Console) -> None:
    console.print(payload["sql"], style="dim", highlight=False, markup=False)
    units = payload.get("units") or {}
    columns = [str(c) for c in (payload["preview"][0] if payload["preview"] else {})]
    table = Table(*(escape(f"{c} ({units[c]})" if units.get(c) else c) for c in columns))
    for row in payload["preview"]:
        table.add_row(*(escape(str(row[c])) for c in columns))
    console.print(table)
    stored = f"{payload['points']} rows stored as '{payload['label']}'."
    console.print(stored, highlight=False, markup=False)
    for note in payload.get("notes") or []:
        console.print(note, style="dim", highlight=False, markup=False)


@handle_errors
def run_sql(
    sql: Annotated[str, typer.Argument(help="One SELECT over the session's data.")],
    session: Annotated[
        str | None,
        typer.Option("--session", "-s", help="Session id (default: the latest session)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the result to .csv/.parquet/.nc.")
    ] = None,
    label: Annotated[str | None, typer.Option("--label", help="Label of the result entry.")] = None,
) -> None:
    """Query the data of a session in SQL; each entry is a table named by its label."""
    fmt = _format_of(out) if out is not None else None
    args: dict[str, Any] = {"sql": sql}
    if label:
        args["output_label"] = label
    with Services() as services:
        workspace = open_workspace(session, services=services, resume_latest=session is None)
        try:
            result = workspace.funnel.call("query_data", args, caller="cli")
            if not result.ok:
                raise UserError(result.error or "The query failed.")
            workspace.save()
            entry = workspace.session.store.get(str(result.payload["label"]))
            written = None
            if out is not None and fmt is not None:
                folder = out.resolve().parent
                written = write_entry(entry, folder, fmt, out.name)
        finally:
            workspace.context.close()
    console = Console()
    _show(result.payload, console)
    if written is not None:
        console.print(f"Wrote {written}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add `sql` to the app."""
    app.command("sql")(run_sql)
