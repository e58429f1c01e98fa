"""`xhelio pipeline list|search|show|run|export|delete`: saved pipelines from the shell.

`run` replays a pipeline in a new saved session (resumable with `xhelio chat --session`)
through the tool funnel with no model, then writes the figure as HTML and PNG (PNG when
a browser is available) into that session's export folder. Every command takes `--json`
and then prints exactly one JSON object on stdout (`{"error": ...}` on failure, exit 1).
Imports the pipelines and tools layers, never the agents.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xhelio.cli.errors import cli_errors
from xhelio.config import load_settings
from xhelio.errors import XhelioError
from xhelio.pipelines.export import export_file_name, write_export
from xhelio.pipelines.model import TIME_RANGE_VAR
from xhelio.pipelines.replay import replay_pipeline
from xhelio.pipelines.store import PipelineRow, PipelineStore
from xhelio.timerange import readable_text
from xhelio.tools.workspace import open_workspace

__all__ = ["app"]

app = typer.Typer(
    help="Saved pipelines: list, search, show, run, export, delete.", add_completion=False
)

JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def _emit(
    as_json: bool, work: Callable[[], dict[str, Any]], show: Callable[[dict[str, Any]], None]
) -> None:
    """Run `work`; print JSON or call `show`; errors become JSON or one red line, exit 1."""
    if not as_json:
        with cli_errors():
            payload = work()
        show(payload)
        if payload.get("status") == "failed":
            raise typer.Exit(1)
        return
    try:
        payload = work()
    except XhelioError as exc:
        typer.echo(json.dumps({"error": exc.message, "type": type(exc).__name__}))
        raise typer.Exit(1) from None
    typer.echo(json.dumps(payload, default=str))
    if payload.get("status") == "failed":
        raise typer.Exit(1)


def _rows_table(rows: list[PipelineRow], title: str) -> Table:
    table = Table(title=title)
    for column in ("id", "name", "datasets", "steps", "family", "indexed"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            r.id,
            escape(r.name),
            " ".join(r.datasets),
            str(r.steps),
            r.family_id[:10],
            "no (vanilla)" if r.vanilla else "yes",
        )
    return table


@app.command("list")
def list_cmd(as_json: JsonOption = False) -> None:
    """List saved pipelines, newest first."""

    def work() -> dict[str, Any]:
        return {"pipelines": [r.to_dict() for r in PipelineStore(load_settings()).list()]}

    def show(payload: dict[str, Any]) -> None:
        rows = PipelineStore(load_settings()).list()
        Console().print(_rows_table(rows, "Saved pipelines") if rows else "No saved pipelines yet.")

    _emit(as_json, work, show)


@app.command("search")
def search_cmd(
    text: Annotated[str, typer.Argument(help="Words to look for.")] = "",
    mission: Annotated[str | None, typer.Option("--mission", help="Mission, e.g. ACE.")] = None,
    dataset: Annotated[str | None, typer.Option("--dataset", help="Dataset id.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Search indexed pipelines; variants of one analysis are grouped as one family."""

    def work() -> dict[str, Any]:
        hits = PipelineStore(load_settings()).search(text, mission, dataset)
        return {"families": [h.to_dict() for h in hits]}

    def show(payload: dict[str, Any]) -> None:
        console = Console()
        if not payload["families"]:
            console.print("No matching pipelines.")
        for fam in payload["families"]:
            console.print(
                f"[bold]{escape(fam['name'])}[/] family {fam['family_id'][:10]} "
                f"({len(fam['variant_ids'])} variant(s))",
                highlight=False,
            )
            for v in fam["variants"]:
                console.print(
                    f"  {v['id']}  {escape(v['name'])}  {escape(v['description'])}", highlight=False
                )

    _emit(as_json, work, show)


@app.command("show")
def show_cmd(
    pipeline: Annotated[str, typer.Argument(help="Id or name.")], as_json: JsonOption = False
) -> None:
    """Show a pipeline's variables and steps."""

    def work() -> dict[str, Any]:
        store = PipelineStore(load_settings())
        saved = store.load(pipeline)
        row = store.row(saved.id)
        return {
            **saved.to_dict(),
            "family_id": row.family_id,
            "variant_ids": [r.id for r in store.family(row.family_id)],
            "indexed": not row.vanilla,
        }

    def show(payload: dict[str, Any]) -> None:
        console = Console()
        console.print(f"[bold]{escape(payload['name'])}[/] ({payload['id']})", highlight=False)
        console.print(escape(payload["description"]), highlight=False)
        for name, var in payload["variables"].items():
            console.print(f"{name} = {escape(var['default'])}", highlight=False)
        for s in payload["steps"]:
            deps = f" after {', '.join(s['depends_on'])}" if s["depends_on"] else ""
            console.print(
                f"  {s['step_id']} {s['tool']}{deps}: {escape(s['intent'])}", highlight=False
            )
        console.print(
            f"Family {payload['family_id'][:10]}: {', '.join(payload['variant_ids'])}",
            highlight=False,
        )
        if payload.get("parent_id"):
            console.print(f"Variant of {payload['parent_id']}", highlight=False)

    _emit(as_json, work, show)


@app.command("run")
def run_cmd(
    pipeline: Annotated[str, typer.Argument(help="Id or name.")],
    time: Annotated[
        str | None, typer.Option("--time", "-t", help="Time range, e.g. 'March 2001'.")
    ] = None,
    png: Annotated[
        bool, typer.Option("--png/--no-png", help="Also write the figure as PNG.")
    ] = True,
    as_json: JsonOption = False,
) -> None:
    """Replay a pipeline for a time range (no model), save the figure; exit 1 if it failed."""

    def work() -> dict[str, Any]:
        saved = PipelineStore(load_settings()).load(pipeline)
        overrides = {TIME_RANGE_VAR: time} if time else {}
        workspace = open_workspace()
        try:
            result = replay_pipeline(saved, workspace.funnel, overrides)
            figures: list[str] = []
            plot = workspace.session.plot
            if plot.current is not None:
                stem = f"{saved.id}-{workspace.session.id}"
                figures.append(str(plot.export("html", f"{stem}.html")))
                if png:
                    try:
                        figures.append(str(plot.export("png", f"{stem}.png")))
                    except XhelioError as exc:
                        figures.append(f"(PNG not written: {exc.message})")
            when = readable_text(result.variables.get(TIME_RANGE_VAR, ""))
            workspace.save(title=f"pipeline {saved.name}: {when}")
        finally:
            workspace.close()
        return {
            **result.to_dict(),
            "name": saved.name,
            "session_id": workspace.session.id,
            "figures": figures,
        }

    def show(payload: dict[str, Any]) -> None:
        console = Console()
        console.print(escape(payload["summary"]), highlight=False)
        for f in payload["figures"]:
            console.print(f"figure: {escape(f)}", highlight=False)
        for f in payload.get("exports") or []:  # files the pipeline's own export steps wrote
            console.print(f"file: {escape(str(f))}", highlight=False)
        console.print(f"session: {payload['session_id']}", highlight=False)

    _emit(as_json, work, show)


@app.command("export")
def export_cmd(
    pipeline: Annotated[str, typer.Argument(help="Id or name.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="py or ipynb.")] = "py",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="File to write.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Write a standalone script or notebook that reproduces the data and the figure."""

    def work() -> dict[str, Any]:
        settings = load_settings()
        saved = PipelineStore(settings).load(pipeline)
        target = out or Path(export_file_name(saved, "py" if fmt == "py" else "ipynb"))
        path, citations = write_export(saved, fmt, target, settings)
        return {
            "status": "ok",
            "id": saved.id,
            "path": str(path),
            "format": fmt,
            "citations": [c.line() for c in citations],
        }

    def show(payload: dict[str, Any]) -> None:
        Console().print(f"Wrote {escape(payload['path'])}", highlight=False)

    _emit(as_json, work, show)


@app.command("delete")
def delete_cmd(
    pipeline: Annotated[str, typer.Argument(help="Id or name.")], as_json: JsonOption = False
) -> None:
    """Delete a saved pipeline."""

    def work() -> dict[str, Any]:
        row = PipelineStore(load_settings()).delete(pipeline)
        return {"status": "ok", "deleted": row.id, "name": row.name}

    def show(payload: dict[str, Any]) -> None:
        Console().print(
            f"Deleted {payload['deleted']} ({escape(payload['name'])}).", highlight=False
        )

    _emit(as_json, work, show)
