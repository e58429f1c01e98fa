"""`xhelio fetch DATASET PARAM... --time TEXT [--source] [--out FILE]`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from xhelio.catalog.index import open_catalog
from xhelio.cli.errors import handle_errors
from xhelio.config import load_settings
from xhelio.data.fetch import DataFetcher, FetchReport
from xhelio.data.meaning import display_units
from xhelio.data.outputs import write_output
from xhelio.data.store import DataStore
from xhelio.errors import UserError
from xhelio.sources.registry import make_source

__all__ = ["register"]

console = Console(stderr=True)


_OUTPUT_SUFFIXES = (".csv", ".parquet", ".nc")


def _check_output(out: Path) -> None:
    """Reject an unusable output file before any data is fetched."""
    if out.suffix.lower() not in _OUTPUT_SUFFIXES:
        raise UserError(f"Cannot write '{out.name}': use a .csv, .parquet or .nc file name.")
    if out.is_dir():
        raise UserError(f"Cannot write '{out}': it is a folder; give a file name.")
    out.parent.mkdir(parents=True, exist_ok=True)  # an unusable folder fails here, early


def _summary(reports: list[FetchReport]) -> Table:
    table = Table(title="Fetched")
    for name in ("label", "points", "start", "stop", "cadence", "NaN %", "units"):
        table.add_column(name, overflow="fold")
    for r in reports:
        nan = f"{100 * r.nan_fraction:.1f}" + (
            " (all-NaN: " + ", ".join(r.all_nan_columns) + ")" if r.all_nan_columns else ""
        )
        # Display units (IDL codes such as cm!E-2!N read as cm^-2); the raw ones stay in
        # the entry's metadata and the written files.
        label = r.label + (
            " [" + " x ".join(f"{d} {n}" for d, n in r.dims.items()) + "]" if r.dims else ""
        )
        units = display_units(r.units)
        table.add_row(
            label, str(r.points), r.start or "-", r.stop or "-", r.cadence or "-", nan, units
        )
    return table


@handle_errors
def fetch(
    dataset: Annotated[str, typer.Argument(help="CDAWeb dataset id, e.g. AC_H2_MFI.")],
    parameters: Annotated[list[str], typer.Argument(help="One or more parameter names.")],
    time: Annotated[
        str, typer.Option("--time", "-t", help="Time range, e.g. '2024-01-15 to 2024-01-20'.")
    ],
    source: Annotated[str | None, typer.Option("--source", help="hapi or cdf.")] = None,
    valid_range: Annotated[
        bool,
        typer.Option(
            "--valid-range", help="Also mask values outside VALIDMIN/VALIDMAX (reports how many)."
        ),
    ] = False,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write .csv, .parquet or .nc.")
    ] = None,
) -> None:
    """Fetch parameters of a dataset for a time range, show a summary, optionally save."""
    if out is not None:
        _check_output(out)
    settings = load_settings()
    store = DataStore()
    fetcher = DataFetcher(
        open_catalog(settings), make_source(source or settings.default_source, settings), store
    )
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task(f"Fetching {dataset}", total=None)

        def report_progress(done: int, total: int | None, what: str) -> None:
            progress.update(
                task, completed=done, total=total, description=what or f"Fetching {dataset}"
            )

        reports = fetcher.fetch(
            dataset, parameters, time, progress=report_progress, valid_range=valid_range
        )
    for r in reports:
        for note in r.notes:
            console.print(f"[yellow]{note}[/]", highlight=False)
    Console().print(_summary(reports))
    if out is not None:
        write_output([store.get(r.label) for r in reports], out)
        console.print(f"Wrote {out}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the `fetch` command to the app."""
    app.command("fetch")(fetch)
