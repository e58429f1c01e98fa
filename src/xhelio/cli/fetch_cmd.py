"""`xhelio fetch DATASET PARAM... --time TEXT [--source] [--out FILE]`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
import xarray as xr
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from xhelio.catalog.index import open_catalog
from xhelio.cli.errors import handle_errors
from xhelio.config import load_settings
from xhelio.data.entry import DataEntry
from xhelio.data.fetch import DataFetcher, FetchReport
from xhelio.data.outputs import write_output
from xhelio.data.store import DataStore
from xhelio.errors import UserError
from xhelio.sources.registry import make_source
from xhelio.tools.data_tools import frame_of

__all__ = ["register"]

console = Console(stderr=True)


def _combined_frame(entries: list[DataEntry]) -> pd.DataFrame:
    """One table of all parameters, outer-joined on time, columns named unambiguously."""
    frames: list[pd.DataFrame] = []
    for entry in entries:
        frame = frame_of(entry)
        param = entry.source_parameter or entry.label
        # Vector components already carry their parameter's name (`BGSEc_0`); others
        # (a spectrogram's bins) get it as a prefix so columns never collide.
        if len(entries) > 1 and not all(str(c).startswith(param) for c in frame.columns):
            frame = frame.add_prefix(f"{param}.")
        frames.append(frame)
    combined = frames[0] if len(frames) == 1 else pd.concat(frames, axis=1, join="outer")
    combined.index.name = "time"
    return combined.sort_index()


_OUTPUT_SUFFIXES = (".csv", ".parquet", ".nc")


def _check_output(out: Path) -> None:
    """Reject an unusable output file before any data is fetched."""
    if out.suffix.lower() not in _OUTPUT_SUFFIXES:
        raise UserError(f"Cannot write '{out.name}': use a .csv, .parquet or .nc file name.")
    if out.is_dir():
        raise UserError(f"Cannot write '{out}': it is a folder; give a file name.")
    out.parent.mkdir(parents=True, exist_ok=True)  # an unusable folder fails here, early


def _write_output(entries: list[DataEntry], out: Path) -> None:
    suffix = out.suffix.lower()
    if suffix == ".csv":
        _combined_frame(entries).to_csv(out, date_format="%Y-%m-%dT%H:%M:%S.%fZ")
    elif suffix == ".parquet":
        _combined_frame(entries).to_parquet(out)
    elif suffix == ".nc":
        dataset = xr.Dataset()
        for entry in entries:
            name = entry.source_parameter or entry.label
            if isinstance(entry.data, xr.DataArray):
                dataset[name] = entry.data
                continue
            frame = entry.data
            times = pd.DatetimeIndex(frame.index).tz_convert("UTC").tz_localize(None)
            if frame.shape[1] == 1:
                dataset[name] = xr.DataArray(
                    frame.iloc[:, 0].to_numpy(), coords={"time": times}, dims="time"
                )
            else:
                dataset[name] = xr.DataArray(
                    frame.to_numpy(),
                    coords={"time": times, f"{name}_component": [str(c) for c in frame.columns]},
                    dims=("time", f"{name}_component"),
                )
            dataset[name].attrs.update(
                units=next(iter(entry.units.values()), ""), description=entry.description
            )
        dataset.to_netcdf(out)
    else:
        raise UserError(f"Cannot write '{out.name}': use a .csv, .parquet or .nc file name.")


def _summary(reports: list[FetchReport]) -> Table:
    table = Table(title="Fetched")
    for name in ("label", "points", "start", "stop", "cadence", "NaN %", "units"):
        table.add_column(name, overflow="fold")
    for r in reports:
        nan = f"{100 * r.nan_fraction:.1f}" + (
            " (all-NaN: " + ", ".join(r.all_nan_columns) + ")" if r.all_nan_columns else ""
        )
        table.add_row(
            r.label, str(r.points), r.start or "-", r.stop or "-", r.cadence or "-", nan, r.units
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
