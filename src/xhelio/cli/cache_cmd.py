"""`xhelio cache` commands."""

from __future__ import annotations

import typer

app = typer.Typer(help="cache commands.", no_args_is_help=True)
