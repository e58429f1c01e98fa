"""`xhelio catalog` commands."""

from __future__ import annotations

import typer

app = typer.Typer(help="catalog commands.", no_args_is_help=True)
