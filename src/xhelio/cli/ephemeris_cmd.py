"""`xhelio ephemeris TARGET --time RANGE [--frame F] [--observer O] [--kernel PATH ...]`.

Runs the `get_ephemeris` tool in a session (so the result is an entry like any fetch:
plot it, compute on it, replay it), prints a summary table and, with ``--out``, writes the
table (.csv, .parquet or .nc) with its units.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from xhelio.cli.errors import handle_errors
from xhelio.data.outputs import write_output
from xhelio.errors import UserError
from xhelio.services import Services
from xhelio.tools.workspace import open_workspace

__all__ = ["register"]

console = Console(stderr=True)


def _summary(entry_rows: Any, label: str) -> Table:
    table = Table(title=label)
    for name in ("time", "x km", "y km", "z km", "distance AU", "lon deg", "lat deg"):
        table.add_column(name)
    rows = entry_rows if len(entry_rows) <= 8 else entry_rows.iloc[:: max(1, len(entry_rows) // 8)]
    for stamp, row in rows.iterrows():
        table.add_row(
            str(stamp),
            f"{row['x']:.4g}",
            f"{row['y']:.4g}",
            f"{row['z']:.4g}",
            f"{row['distance_au']:.4f}",
            f"{row['longitude']:.2f}",
            f"{row['latitude']:.2f}",
        )
    return table


@handle_errors
def ephemeris(
    target: Annotated[
        str, typer.Argument(help="Spacecraft or body, e.g. PSP, MMS1, THEMIS-A, Earth, Mars.")
    ],
    time: Annotated[str, typer.Option("--time", "-t", help="Time range, e.g. '2021-04-29'.")],
    frame: Annotated[
        str | None,
        typer.Option(
            help="J2000, HCI, HEE, HAE, HEEQ, GSE, GSM, RTN or IAU_<BODY> "
            "(default HCI; GSE for Earth orbiters)."
        ),
    ] = None,
    observer: Annotated[
        str | None, typer.Option(help="Seen from this body (default Sun; Earth for GSE/GSM).")
    ] = None,
    step: Annotated[str | None, typer.Option(help="Sample step, e.g. 10min, 1h, 1D.")] = None,
    kernel: Annotated[
        list[Path] | None, typer.Option("--kernel", help="Your own SPICE kernel (repeatable).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write the table: .csv, .parquet, .nc.")] = None,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Session to store the entry in.")
    ] = None,
) -> None:
    """Where a spacecraft or body was: position, velocity, distance, light time."""
    if out is not None and out.suffix.lower() not in (".csv", ".parquet", ".nc"):
        raise UserError(f"Cannot write '{out.name}': use a .csv, .parquet or .nc file name.")
    args: dict[str, Any] = {"target": target, "time_range": time}
    optional = {"frame": frame, "observer": observer, "step": step}
    args.update({k: v for k, v in optional.items() if v is not None})
    if kernel:
        args["kernels"] = [str(p.expanduser().resolve()) for p in kernel]
    with Services() as services:
        workspace = open_workspace(session, services=services)
        try:
            result = workspace.funnel.call("get_ephemeris", args, caller="cli")
            if result.status == "error":
                raise UserError(result.error or "The ephemeris could not be computed.")
            entry = workspace.context.store.get(result.labels[0])
            workspace.save()
        finally:
            workspace.context.close()
    console.print(_summary(entry.data, entry.label))
    for line in [*result.payload.get("sources", []), *result.payload.get("notes", [])]:
        console.print(f"- {line}", highlight=False)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_output([entry], out)
        console.print(f"wrote {out}", highlight=False)
    console.print(f"session: {workspace.session.id}  label: {entry.label}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add `ephemeris` to the app."""
    app.command("ephemeris")(ephemeris)
