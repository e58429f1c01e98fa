"""`xhelio cache info` and `xhelio cache clear`."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from xhelio.cli.errors import handle_errors
from xhelio.services import Services

__all__ = ["app"]

_MB = 2**20
app = typer.Typer(help="Inspect or clear the on-disk data cache.", no_args_is_help=True)


@app.command("info")
@handle_errors
def info(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show where the cache is, how big it is, and what it holds per dataset."""
    with Services() as services:
        cache_info = services.cache.info()
    if as_json:
        typer.echo(json.dumps(asdict(cache_info), indent=2, default=str))
        return
    console = Console()
    # MB as in XHELIO_CACHE_MAX_MB (2**20 bytes), so the limit reads as configured.
    console.print(
        f"Cache at {cache_info.location}: {cache_info.entries} fragments, "
        f"{cache_info.total_bytes / _MB:.1f} MB of {cache_info.max_bytes / _MB:.0f} MB "
        "(XHELIO_CACHE_MAX_MB)",
        highlight=False,
    )
    if cache_info.datasets:
        table = Table("dataset", "fragments", "MB")
        for name, (count, size) in sorted(cache_info.datasets.items()):
            table.add_row(name, str(count), f"{size / _MB:.2f}")
        console.print(table)


@app.command("clear")
@handle_errors
def clear(
    dataset: Annotated[str | None, typer.Option("--dataset", help="Only this dataset.")] = None,
) -> None:
    """Delete cached data (all of it, or one dataset's)."""
    with Services() as services:
        removed = services.cache.clear(dataset)
    Console().print(f"Removed {removed} cached fragments.")
