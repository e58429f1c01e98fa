"""`xhelio plot DATASET.PARAM|LABEL ... --time TEXT --out FILE`: a quick plot, no LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import xarray as xr
from rich.console import Console

from xhelio.cli.errors import handle_errors
from xhelio.errors import UserError
from xhelio.tools.workspace import open_workspace

__all__ = ["build_figure", "register"]

console = Console(stderr=True)


def build_figure(
    labels: list[str],
    overlay: bool,
    log_y: bool,
    title: str | None,
    spectrograms: set[str] | None = None,
    heatmap_options: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A figure spec: one panel per label (shared time axis), or all in one panel.

    Labels in `spectrograms` (2-D and higher data) become heatmaps: no line properties,
    and their y scale follows their bins (log when they span a decade).
    `heatmap_options` maps a label to its slice/reduction keys (select, reduce).
    """
    traces: list[dict[str, Any]] = []
    layout: dict[str, Any] = {}
    for i, label in enumerate(labels):
        trace: dict[str, Any] = {"type": "scatter", "mode": "lines", "data_label": label}
        if spectrograms and label in spectrograms:
            trace = {
                "type": "heatmap",
                "data_label": label,
                **(heatmap_options or {}).get(label, {}),
            }
            if not overlay and i:
                trace["yaxis"] = f"y{i + 1}"
            traces.append(trace)
            continue
        if not overlay and i:
            trace["yaxis"] = f"y{i + 1}"
        traces.append(trace)
        if log_y:
            layout["yaxis" if (overlay or not i) else f"yaxis{i + 1}"] = {"type": "log"}
    if title:
        layout["title"] = {"text": title}
    return {"data": traces, "layout": layout}


@handle_errors
def plot(
    items: Annotated[list[str], typer.Argument(help="DATASET.PARAM to fetch, or stored labels.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output .html, .png or .pdf.")],
    time: Annotated[
        str | None, typer.Option("--time", "-t", help="Time range for DATASET.PARAM items.")
    ] = None,
    source: Annotated[str | None, typer.Option("--source", help="hapi or cdf.")] = None,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Use (and keep) this session's data.")
    ] = None,
    overlay: Annotated[bool, typer.Option("--overlay", help="All series in one panel.")] = False,
    log_y: Annotated[bool, typer.Option("--log-y", help="Logarithmic y axes.")] = False,
    title: Annotated[str | None, typer.Option("--title", help="Figure title.")] = None,
    select: Annotated[
        list[str] | None,
        typer.Option("--select", help="For 2-D+ data: DIM=INDEX or DIM=LABEL to take."),
    ] = None,
    reduce: Annotated[
        str | None, typer.Option("--reduce", help="For 2-D+ data: mean, median, sum, max or min.")
    ] = None,
) -> None:
    """Fetch (or reuse) the given series and write a stacked, publication-ready plot."""
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in {"html", "png", "pdf"}:
        raise UserError(f"Cannot write '{out.name}': use a .html, .png or .pdf file name.")
    workspace = open_workspace(session, ephemeral=session is None)
    try:
        labels: list[str] = []
        for item in items:
            if workspace.session.store.has(item):
                labels.append(item)
                continue
            dataset, _, parameter = item.partition(".")
            if not parameter:
                raise UserError(
                    f"'{item}' is neither a stored label nor DATASET.PARAM "
                    "(e.g. AC_H2_MFI.Magnitude)."
                )
            if time is None:
                raise UserError(
                    f"Give --time to fetch {item}, e.g. --time '2024-01-15 to 2024-01-20'."
                )
            fetcher = workspace.context.fetcher(source)
            for report in fetcher.fetch(dataset, [parameter], time):
                labels.append(report.label)
                for note in report.notes:
                    console.print(f"[yellow]{note}[/]", highlight=False)
        store = workspace.session.store
        spectrograms = {
            label
            for label in labels
            if isinstance(store.get(label).data, xr.DataArray) and store.get(label).data.ndim >= 2
        }
        options = _heatmap_options(select, reduce)
        chosen: dict[str, Any] = options.get("select") or {}
        if chosen and not any(
            set(chosen) & set(map(str, store.get(s).data.dims)) for s in spectrograms
        ):
            raise UserError(
                f"--select names {', '.join(chosen)}, a dimension of none of the plotted data."
            )
        # Each spectrogram takes the --select dimensions it has; the others are not its own.
        per_label = {
            s: {
                **options,
                **(
                    {"select": {d: v for d, v in chosen.items() if d in store.get(s).data.dims}}
                    if chosen
                    else {}
                ),
            }
            for s in spectrograms
        }
        figure = build_figure(labels, overlay, log_y, title, spectrograms, per_label)
        result = workspace.session.plot.render(figure)
        written = workspace.session.plot.export(fmt, "plot." + fmt)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(written.read_bytes())
    finally:
        workspace.close()
    for note in result.notes:
        console.print(note, highlight=False)
    console.print(f"Wrote {out} ({len(result.traces)} traces, {result.points_sent} points)")


def _heatmap_options(select: list[str] | None, reduce: str | None) -> dict[str, Any]:
    """Trace keys choosing a slice or reduction of multi-dimensional data."""
    options: dict[str, Any] = {}
    chosen: dict[str, Any] = {}
    for item in select or []:
        dim, sep, value = item.partition("=")
        if not sep or not dim or not value:
            raise UserError(f"--select '{item}': write DIM=INDEX or DIM=LABEL, e.g. Look=0.")
        chosen[dim] = int(value) if value.lstrip("-").isdigit() else value
    if chosen:
        options["select"] = chosen
    if reduce:
        options["reduce"] = reduce
    return options


def register(app: typer.Typer) -> None:
    """Add the `plot` command to the app."""
    app.command("plot")(plot)
