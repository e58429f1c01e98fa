"""`xhelio tools` and `xhelio tool NAME JSON`: run any tool through the funnel."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from xhelio.cli.errors import handle_errors
from xhelio.errors import UserError
from xhelio.services import Services
from xhelio.tools.toolset import default_registry, tool_group_problems
from xhelio.tools.workspace import open_workspace

__all__ = ["register"]


def list_tools(
    as_json: Annotated[bool, typer.Option("--json", help="Print schemas as JSON.")] = False,
) -> None:
    """List every tool with its category and purpose."""
    registry = default_registry()
    if as_json:
        typer.echo(json.dumps([t.describe() for t in registry], indent=2))
        return
    table = Table("tool", "category", "what it does", title=f"{len(registry)} tools")
    for t in registry:
        table.add_row(t.name, t.category, t.description.splitlines()[0])
    console = Console()
    console.print(table)
    for group, why in tool_group_problems().items():
        console.print(f"[yellow]Tool group {group!r} left out: {why}[/yellow]")


@handle_errors
def run_tool(
    name: Annotated[str, typer.Argument(help="Tool name (see `xhelio tools`).")],
    args: Annotated[str, typer.Argument(help="Arguments as a JSON object.")] = "{}",
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Session id; state persists per id.")
    ] = None,
) -> None:
    """Run one tool in a session and print only its JSON result (exit 1 on error)."""
    try:
        parsed: Any = json.loads(args)
    except json.JSONDecodeError as exc:
        raise UserError(f"ARGS is not valid JSON ({exc.msg} at column {exc.colno}).") from exc
    if not isinstance(parsed, dict):
        raise UserError('ARGS must be a JSON object, e.g. \'{"label": "AC_H2_MFI.Magnitude"}\'.')
    with Services() as services:
        workspace = open_workspace(session, services=services)
        try:
            result = workspace.funnel.call(name, parsed, caller="cli").to_dict()
            workspace.save()
        finally:
            workspace.context.close()
    typer.echo(json.dumps(result, indent=2, default=str))
    if session is None:
        Console(stderr=True).print(f"session: {workspace.session.id}", highlight=False)
    if result.get("status") == "error":
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add `tools` and `tool` to the app."""
    app.command("tools")(list_tools)
    app.command("tool")(run_tool)
