"""`xhelio fetch` command."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the `fetch` command to the app."""
