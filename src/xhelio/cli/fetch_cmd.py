"""`xhelio fetch DATASET PARAM... --time TEXT [--source] [--out FILE]`."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from xhelio.api.direct import ToolCallError
from xhelio.catalog.index import Catalog
from xhelio.cli.errors import handle_errors
from xhelio.config import Settings
from xhelio.data.fetch import DataFetcher, FetchReport, clamp_to_availability
from xhelio.data.meaning import display_units
from xhelio.data.outputs import combined_frame, output_metadata, write_output, write_sidecar
from xhelio.data.store import DataStore
from xhelio.data.streamout import (
    PieceSummary,
    StreamingWriter,
    atomic_output,
    piece_alignment,
    plan_stream,
)
from xhelio.errors import DataUnavailableError, NoDataError, UserError
from xhelio.services import Services
from xhelio.sources.base import DataSource
from xhelio.sources.sizing import estimate_request, plan_pieces
from xhelio.timerange import TimeRange, parse_time_range
from xhelio.tools.data_tools import frame_of
from xhelio.tools.workspace import Workspace, open_workspace

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
    source: Annotated[
        str | None, typer.Option("--source", help="A data source (`xhelio sources`): hapi, cdf...")
    ] = None,
    valid_range: Annotated[
        bool,
        typer.Option(
            "--valid-range", help="Also mask values outside VALIDMIN/VALIDMAX (reports how many)."
        ),
    ] = False,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write .csv, .parquet or .nc.")
    ] = None,
    session: Annotated[
        str | None,
        typer.Option("--session", "-s", help="Fetch into this session (kept, with its log)."),
    ] = None,
) -> None:
    """Fetch parameters of a dataset for a time range, show a summary, optionally save."""
    if out is not None:
        _check_output(out)
    with Services() as services:
        settings = services.settings
        chosen = services.source(source)
        if out is not None and out.suffix.lower() in (".csv", ".parquet"):
            pieces = _stream_pieces(chosen, dataset, parameters, time, settings)
            if len(pieces) > 1:
                # Too big for one piece: fetch, cache and append piece by piece.
                reports = _stream(
                    services.catalog, chosen, dataset, parameters, pieces, out, valid_range
                )
                _print_reports(reports)
                console.print(f"Wrote {out} ({len(pieces)} pieces)", highlight=False)
                if session is not None:
                    _record_stream(services, session, out, reports)
                return
        # Loaded whole (no file, or netCDF): through the session funnel like every caller,
        # so the fetch is in the session's operations log and events.
        workspace = open_workspace(session, ephemeral=session is None, services=services)
        try:
            reports = _fetch_through_funnel(
                workspace, dataset, parameters, time, source, valid_range
            )
            entries = [workspace.session.store.get(r.label) for r in reports]
        finally:
            workspace.close()
    _print_reports(reports)
    if out is not None:
        write_output(entries, out)
        console.print(f"Wrote {out}", highlight=False)


def _print_reports(reports: list[FetchReport]) -> None:
    for r in reports:
        for note in r.notes:
            console.print(f"[yellow]{note}[/]", highlight=False)
    Console().print(_summary(reports))


def _stream_pieces(
    source: DataSource, dataset: str, parameters: list[str], time: str, settings: Settings
) -> list[TimeRange]:
    """The pieces a request to a file is fetched in (one when it is small)."""
    info = source.info(dataset)
    clamped, _ = clamp_to_availability(info, parse_time_range(time))
    columns = sum(max(1, p.components) for n in parameters if (p := info.parameter(n)))
    estimate = estimate_request(info.cadence, clamped, columns)
    return plan_pieces(
        clamped,
        estimate,
        settings.fetch_piece_mb * 2**20,
        piece_alignment(settings.cache_fragment_hours),
    )


def _stream(
    catalog: Catalog,
    source: DataSource,
    dataset: str,
    parameters: list[str],
    pieces: list[TimeRange],
    out: Path,
    valid_range: bool = False,
) -> list[FetchReport]:
    """Fetch `pieces` in order into `out` (atomically); return one report per parameter."""
    summaries: dict[str, PieceSummary] = {}
    first: dict[str, FetchReport] = {}
    notes: list[str] = []

    def fetch_piece(piece: TimeRange) -> pd.DataFrame | None:
        store = DataStore()
        try:
            fetcher = DataFetcher(catalog, source, store)
            reports = fetcher.fetch(dataset, parameters, piece, valid_range=valid_range)
        except DataUnavailableError as exc:
            if type(exc) in (NoDataError, DataUnavailableError):
                return None  # a gap in the data: the other pieces still count
            raise
        entries = [store.get(r.label) for r in reports]
        for report, entry in zip(reports, entries, strict=True):
            first.setdefault(report.label, report)
            summaries.setdefault(report.label, PieceSummary()).add(frame_of(entry))
            notes.extend(n for n in report.notes if n not in notes and "coverage" not in n)
        frame, units = combined_frame(entries)
        if writer.metadata is None:  # units and citation as in a file written whole
            writer.describe(units, output_metadata(entries))
        return frame

    with (
        atomic_output(out) as temp,
        Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} pieces"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as progress,
    ):
        task = progress.add_task(f"Fetching {dataset} into {out.name}", total=len(pieces))
        writer = StreamingWriter(temp, out.suffix.lower())
        try:
            plan_stream(
                pieces,
                fetch_piece,
                writer,
                PieceSummary(),
                on_piece=lambda done, total: progress.update(task, completed=done),
            )
        finally:
            writer.close()
    if out.suffix.lower() == ".csv" and writer.metadata is not None:
        write_sidecar(out, writer.metadata)
    span = TimeRange(pieces[0].start, pieces[-1].end)
    reports: list[FetchReport] = []
    for label, summary in summaries.items():
        report = first[label]
        cadence = summary.cadence_s
        reports.append(
            replace(
                report,
                points=summary.points,
                start=None if summary.start is None else summary.start.strftime(_STAMP),
                stop=None if summary.stop is None else summary.stop.strftime(_STAMP),
                cadence=None if cadence is None else f"{cadence:g} s",
                nan_fraction=summary.nan_fraction,
                all_nan_columns=[],
                requested=str(span),
                notes=list(notes) if not reports else [],
            )
        )
    return reports


_STAMP = "%Y-%m-%dT%H:%M:%SZ"


def _record_stream(services: Services, session: str, out: Path, reports: list[FetchReport]) -> None:
    """Note a fetch streamed to a file in the session's event log (its data stays out)."""
    workspace = open_workspace(session, services=services)
    try:
        for report in reports:
            workspace.session.events.publish(
                "data_written",
                tool="fetch",
                summary=(
                    f"{report.dataset}.{report.parameter} {report.requested}: "
                    f"{report.points} points streamed to {out.resolve()}"
                ),
            )
    finally:
        workspace.close()
    console.print(
        f"Too large to load into session {session}: the data is in {out} only; "
        "the fetch is noted in the session's log.",
        highlight=False,
    )


def _fetch_through_funnel(
    workspace: Workspace,
    dataset: str,
    parameters: list[str],
    time: str,
    source: str | None,
    valid_range: bool,
) -> list[FetchReport]:
    """Fetch each parameter with the `fetch_data` tool; a failure raises with its message."""
    reports: list[FetchReport] = []
    names = {f.name for f in fields(FetchReport)}
    with console.status(f"Fetching {dataset}") as status:
        for parameter in parameters:
            status.update(f"Fetching {dataset}.{parameter}")
            args: dict[str, object] = {
                "dataset_id": dataset,
                "parameter_id": parameter,
                "time_range": time,
            }
            if source is not None:
                args["source"] = source
            if valid_range:
                args["valid_range"] = True
            result = workspace.funnel.call("fetch_data", args, caller="cli")
            if not result.ok:
                raise ToolCallError(result.error_type or "error", result.error or "fetch failed")
            record = result.to_dict()
            reports.append(FetchReport(**{k: v for k, v in record.items() if k in names}))
    return reports


def register(app: typer.Typer) -> None:
    """Add the `fetch` command to the app."""
    app.command("fetch")(fetch)
