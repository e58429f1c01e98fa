"""`xhelio plot DATASET.PARAM|LABEL ... --time TEXT --out FILE`: a quick plot, no LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import xarray as xr
from rich.console import Console

from xhelio.api.direct import build_figure, checked_call
from xhelio.cli.errors import handle_errors
from xhelio.data.persist import atomic_write_bytes
from xhelio.data.store import DataStore
from xhelio.errors import UserError
from xhelio.tools.workspace import open_workspace

__all__ = ["build_figure", "register"]  # build_figure lives in xhelio.api.direct

console = Console(stderr=True)


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
        # Every step is a tool call through the session funnel (operations log + events).
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
            args = {"dataset_id": dataset, "parameter_id": parameter, "time_range": time}
            if source is not None:
                args["source"] = source
            report = checked_call(workspace, "fetch_data", args, caller="cli")
            labels.extend(report.labels)
            for note in report.payload.get("notes") or []:
                console.print(f"[yellow]{note}[/]", highlight=False)
        spec = build_figure(labels, overlay, log_y, title)
        _apply_options(spec, _heatmap_options(select, reduce), workspace.session.store)
        checked_call(workspace, "render_plotly_json", {"figure": spec}, caller="cli")
        result = workspace.session.plot.current
        assert result is not None
        args = {"action": "export", "format": fmt, "filename": "plot." + fmt}
        exported = checked_call(workspace, "manage_plot", args, caller="cli")
        written = Path(str(exported.payload["path"]))
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(out, written.read_bytes())
    finally:
        workspace.close()
    for note in result.notes:
        console.print(note, highlight=False)
    console.print(f"Wrote {out} ({len(result.traces)} traces, {result.points_sent} points)")


def _apply_options(spec: dict[str, Any], options: dict[str, Any], store: DataStore) -> None:
    """Give each trace --reduce, and only the --select dimensions its own data has.

    Which traces become heatmaps is the renderer's call; a line ignores `reduce`.
    """
    chosen: dict[str, Any] = options.get("select") or {}
    matched = False
    for trace in spec["data"]:
        if "reduce" in options:
            trace["reduce"] = options["reduce"]
        data = store.get(str(trace["data_label"])).data
        dims = {str(d) for d in data.dims} if isinstance(data, xr.DataArray) else set[str]()
        if mine := {d: v for d, v in chosen.items() if d in dims}:
            trace["select"] = mine
            matched = True
    if chosen and not matched:
        raise UserError(
            f"--select names {', '.join(chosen)}, a dimension of none of the plotted data."
        )


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
