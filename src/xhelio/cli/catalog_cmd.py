"""`xhelio catalog` commands: search, show, missions, browse and refresh.

Tables are drawn with rich on stdout; `--json` prints plain JSON for scripts instead.
Every command goes through `handle_errors`, so a user mistake prints one line and exits 1.
Imports the catalog layer, config, the CLI error funnel and the sources registry (`search`
ranks every registered source's catalog, without loading their fetch machinery).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from xhelio.catalog.index import open_catalog
from xhelio.catalog.model import DatasetInfo, Mission, ParameterInfo
from xhelio.catalog.refresh import refresh_catalog
from xhelio.cli.errors import handle_errors
from xhelio.config import load_settings
from xhelio.errors import UserError
from xhelio.sources.base import DatasetHit, DataSource
from xhelio.sources.known_servers import refresh_server, resolve_server
from xhelio.sources.registry import make_source, source_names
from xhelio.sources.search import search_registered

app = typer.Typer(
    help="Find missions, datasets and parameters in the CDAWeb catalog.", no_args_is_help=True
)
console = Console()

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else "?"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _print_json(payload: Any) -> None:
    typer.echo(json.dumps(payload, indent=2))


def _parameter_dict(p: ParameterInfo) -> dict[str, Any]:
    return {
        "name": p.name,
        "type": p.type,
        "units": p.units,
        "size": list(p.size) if p.size else None,
        "fill": p.fill,
        "description": p.description,
    }


def _dataset_dict(info: DatasetInfo, with_parameters: bool = True) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": info.id,
        "title": info.title,
        "mission_id": info.mission_id,
        "instrument": info.instrument,
        "start": _iso(info.start),
        "stop": _iso(info.stop),
        "cadence": info.cadence,
        "max_request_duration": info.max_request_duration,
        "pi_name": info.pi_name,
        "doi": info.doi,
    }
    if with_parameters:
        payload["parameters"] = [_parameter_dict(p) for p in info.data_parameters]
    return payload


def _hit_dict(hit: DatasetHit) -> dict[str, Any]:
    return {
        "dataset_id": hit.dataset_id,
        "title": hit.title,
        "mission_id": hit.mission_id,
        "score": hit.score,
        "matched_parameters": list(hit.parameters),
        "source": hit.source,
        "also_from": list(hit.also_from),
    }


def _mission_dict(mission: Mission) -> dict[str, Any]:
    return {
        "id": mission.id,
        "name": mission.name,
        "aliases": list(mission.aliases),
        "datasets": len(mission.dataset_ids),
    }


@app.command()
@handle_errors
def search(
    query: Annotated[
        list[str], typer.Argument(help="Words to search for, e.g. ACE magnetic field")
    ],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many results.")] = 20,
    mission: Annotated[
        str | None, typer.Option("--mission", "-m", help="Only datasets of this mission.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Rank the datasets of every data source by how well they match the words."""
    text = " ".join(query)
    settings = load_settings()
    opened: list[DataSource] = []

    def open_source(name: str) -> DataSource:
        opened.append(make_source(name, settings, cached=False, catalog=lambda: catalog))
        return opened[-1]

    with open_catalog(settings) as catalog:
        try:
            names = source_names(settings)
            first = settings.default_source
            found = search_registered(names, open_source, text, limit, mission, first)
        finally:
            for source in opened:
                source.close()
    hits = found.hits
    for note in found.notes:
        Console(stderr=True).print(note, style="yellow", highlight=False)
    if as_json:
        _print_json([_hit_dict(h) for h in hits])
        return
    if not hits:
        raise UserError(
            f"No dataset matches '{text}'. Try fewer or more general words, or "
            "`xhelio catalog missions` to see what is available."
        )
    table = Table(title=f"Datasets matching '{text}'", title_justify="left")
    table.add_column("#", justify="right", style="dim")
    table.add_column("dataset", style="bold cyan", no_wrap=True)
    table.add_column("mission")
    table.add_column("title")
    table.add_column("matching parameters", style="green")
    table.add_column("source")
    for rank, hit in enumerate(hits, start=1):
        shown = ", ".join(hit.parameters[:4])
        if len(hit.parameters) > 4:
            shown += ", ..."
        sources = ", ".join((hit.source, *hit.also_from))
        table.add_row(str(rank), hit.dataset_id, hit.mission_id or "", hit.title, shown, sources)
    console.print(table)


@app.command()
@handle_errors
def show(
    dataset: Annotated[str, typer.Argument(help="Dataset id, e.g. AC_H0_MFI (any case).")],
    as_json: JsonOption = False,
) -> None:
    """Describe a dataset: title, mission, coverage, cadence and every parameter."""
    with open_catalog() as catalog:
        info = catalog.dataset(dataset)
        mission_name = catalog.mission(info.mission_id).name if info.mission_id else "?"
    if as_json:
        _print_json(_dataset_dict(info))
        return
    console.print(f"[bold cyan]{info.id}[/]  {info.title}", highlight=False, soft_wrap=True)
    console.print(
        f"mission:    {mission_name} ({info.mission_id})", highlight=False, soft_wrap=True
    )
    if info.instrument:
        console.print(f"instrument: {info.instrument}", highlight=False, soft_wrap=True)
    console.print(
        f"coverage:   {_when(info.start)} to {_when(info.stop)} UTC",
        highlight=False,
        soft_wrap=True,
    )
    console.print(f"cadence:    {info.cadence or 'unknown'}", highlight=False, soft_wrap=True)
    if info.max_request_duration:
        console.print(f"max request: {info.max_request_duration}", highlight=False, soft_wrap=True)
    if info.pi_name or info.doi:
        console.print(
            f"PI: {info.pi_name or '?'}   DOI: {info.doi or '-'}", highlight=False, soft_wrap=True
        )
    table = Table(title=f"{len(info.data_parameters)} parameters", title_justify="left")
    for column in ("name", "type", "units", "size", "fill", "description"):
        table.add_column(column, style="bold" if column == "name" else None)
    for p in info.data_parameters:
        size = "x".join(str(s) for s in p.size) if p.size else ""
        table.add_row(p.name, p.type, p.units, size, p.fill or "", p.description)
    console.print(table)


@app.command()
@handle_errors
def missions(as_json: JsonOption = False) -> None:
    """List every mission with its aliases and number of datasets."""
    with open_catalog() as catalog:
        known = catalog.missions()
    if as_json:
        _print_json([_mission_dict(m) for m in known])
        return
    table = Table(title=f"{len(known)} missions", title_justify="left")
    table.add_column("id", style="bold cyan", no_wrap=True)
    table.add_column("name")
    table.add_column("also called")
    table.add_column("datasets", justify="right")
    for m in known:
        table.add_row(m.id, m.name, ", ".join(m.aliases[:6]), str(len(m.dataset_ids)))
    console.print(table)


@app.command()
@handle_errors
def browse(
    mission: Annotated[str, typer.Argument(help="Mission id, name or alias, e.g. PSP.")],
    include_all: Annotated[
        bool, typer.Option("--all", help="Include orbit, attitude, housekeeping data too.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """List a mission's science datasets (support data only with --all)."""
    with open_catalog() as catalog:
        found = catalog.mission(mission)
        datasets = catalog.browse(found.id, include_auxiliary=include_all)
    if as_json:
        _print_json([_dataset_dict(d, with_parameters=False) for d in datasets])
        return
    kind = "datasets" if include_all else "science datasets"
    table = Table(title=f"{found.name}: {len(datasets)} {kind}", title_justify="left")
    table.add_column("dataset", style="bold cyan", no_wrap=True)
    table.add_column("cadence")
    table.add_column("coverage", no_wrap=True)
    table.add_column("title")
    for d in datasets:
        coverage = f"{_when(d.start)[:10]} to {_when(d.stop)[:10]}"
        table.add_row(d.id, d.cadence or "", coverage, d.title)
    console.print(table)


@app.command()
@handle_errors
def refresh(
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            help="A known HAPI server's name (amda, csa, sscweb, intermagnet, lisird...) or "
            "address: its catalog joins the search as a source. Any other HAPI URL "
            "refreshes the CDAWeb catalog from it (default: the configured hapi_url).",
        ),
    ] = None,
) -> None:
    """Update a catalog: a known server's (--server NAME), else CDAWeb's from a HAPI server."""
    settings = load_settings()
    named = server is not None and "://" not in server
    if server is not None and (named or resolve_server(settings, server) is not None):
        done = refresh_server(settings, server)
        console.print(
            f"Kept the catalog of {done.provider or done.url} ({done.datasets} datasets) as "
            f"source '{done.name}': `xhelio catalog search` finds them; fetch with "
            f"--source {done.name}.",
            highlight=False,
            soft_wrap=True,
        )
        return
    with Progress(
        TextColumn("[bold]refreshing catalog"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", style="dim"),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("", total=None)

        def advance(done: int, total: int, dataset_id: str) -> None:
            bar.update(task, completed=done, total=total, description=dataset_id)

        report = refresh_catalog(settings, server_url=server, progress=advance)
    version = f" (HAPI {report.hapi_version})" if report.hapi_version else ""
    console.print(
        f"Refreshed from {report.server_url}{version}: {report.total} listed, "
        f"{len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.failed)} failed in {report.seconds:.1f} s.",
        highlight=False,
        soft_wrap=True,
    )
    for dataset_id, reason in list(report.failed.items())[:10]:
        console.print(f"  [red]failed[/] {dataset_id}: {reason}", highlight=False, soft_wrap=True)
    if len(report.failed) > 10:
        console.print(f"  ... and {len(report.failed) - 10} more.")
