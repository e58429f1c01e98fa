"""Entry point of the `xhelio` command: assembles the command groups.

Every command turns an `XhelioError` into one clear line on stderr and exit code 1;
no traceback reaches the user.
"""

from __future__ import annotations

import typer

from xhelio.cli import cache_cmd, catalog_cmd, fetch_cmd, plot_cmd, tool_cmd

app = typer.Typer(
    name="xhelio",
    help="Talk to NASA heliophysics data: find, fetch, compute and plot CDAWeb data.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(catalog_cmd.app, name="catalog")
app.add_typer(cache_cmd.app, name="cache")
fetch_cmd.register(app)
tool_cmd.register(app)
plot_cmd.register(app)


def main() -> None:
    """Run the CLI."""
    app()
