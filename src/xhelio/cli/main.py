"""Entry point of the `xhelio` command: assembles the command groups.

`xhelio` without a command starts the chat REPL (`xhelio chat`). Every command turns an
`XhelioError` into one clear line on stderr and exit code 1; no traceback reaches the user.
"""

from __future__ import annotations

import typer

from xhelio.cli import (
    ask_cmd,
    cache_cmd,
    catalog_cmd,
    chat_cmd,
    fetch_cmd,
    plan_cmd,
    plot_cmd,
    session_cmd,
    tool_cmd,
)

app = typer.Typer(
    name="xhelio",
    help="Talk to NASA heliophysics data: find, fetch, compute and plot CDAWeb data.",
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(catalog_cmd.app, name="catalog")
app.add_typer(cache_cmd.app, name="cache")
fetch_cmd.register(app)
tool_cmd.register(app)
plot_cmd.register(app)
chat_cmd.register(app)
ask_cmd.register(app)
app.add_typer(session_cmd.app, name="sessions")
app.add_typer(plan_cmd.app, name="plan")


@app.callback(invoke_without_command=True)
def _start_chat_without_command(ctx: typer.Context) -> None:
    """Talk to NASA heliophysics data: find, fetch, compute and plot CDAWeb data."""
    if ctx.invoked_subcommand is None:
        chat_cmd.chat()


def main() -> None:
    """Run the CLI."""
    app()
