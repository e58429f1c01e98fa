"""Entry point of the `xhelio` command: assembles the command groups.

`xhelio` without a command starts the chat REPL (`xhelio chat`). Every command turns an
`XhelioError` into one clear line on stderr and exit code 1; no traceback reaches the user.

Commands load lazily: `xhelio catalog search` imports the catalog, not pydantic-ai,
pandas and Plotly, so a quick lookup starts in a fraction of a second. Only `--help`
(which shows every command's summary) imports them all.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperGroup

# command name -> (module under xhelio.cli, the module's sub-app if it is a group)
_COMMANDS: dict[str, tuple[str, bool]] = {
    "fetch": ("fetch_cmd", False),
    "tools": ("tool_cmd", False),
    "tool": ("tool_cmd", False),
    "plot": ("plot_cmd", False),
    "chat": ("chat_cmd", False),
    "ask": ("ask_cmd", False),
    "catalog": ("catalog_cmd", True),
    "cache": ("cache_cmd", True),
    "sessions": ("session_cmd", True),
    "plan": ("plan_cmd", True),
    "doctor": ("doctor_cmd", False),
    "sources": ("sources_cmd", False),
    "serve": ("serve_cmd", False),
    "mcp": ("mcp_cmd", False),
    "pipeline": ("pipeline_cmd", True),
    "events": ("events_cmd", True),
    "memory": ("memory_cmd", True),
    "report": ("report_cmd", False),
    "ephemeris": ("ephemeris_cmd", False),
    "api": ("api_cmd", True),
    "search-papers": ("api_cmd", False),
    "search-web": ("api_cmd", False),
    "sql": ("sql_cmd", False),
}


class _LazyCommands(TyperGroup):
    """A command group that imports a command's module only when it is used."""

    # typer vendors click privately: its Context and Command types are not importable, so
    # these overrides take `Any` where the base class names them.
    def list_commands(self, ctx: Any) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in _COMMANDS:
            return None
        module_name, is_group = _COMMANDS[cmd_name]
        module = importlib.import_module(f"xhelio.cli.{module_name}")
        if is_group:
            command = typer.main.get_group(module.app)
            command.name = cmd_name
            return command
        holder = typer.Typer()
        module.register(holder)
        return typer.main.get_group(holder).get_command(ctx, cmd_name)


app = typer.Typer(
    name="xhelio",
    help="Talk to NASA heliophysics data: find, fetch, compute and plot CDAWeb data.",
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=_LazyCommands,
)


@app.callback(invoke_without_command=True)
def _start_chat_without_command(ctx: typer.Context) -> None:
    """Talk to NASA heliophysics data: find, fetch, compute and plot CDAWeb data."""
    if ctx.invoked_subcommand is None:
        from xhelio.cli import chat_cmd  # the REPL loads the agents layer

        chat_cmd.chat()


def main() -> None:
    """Run the CLI."""
    app()
