"""The one place where errors become CLI output and exit codes."""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import contextmanager
from functools import wraps
from typing import ParamSpec, TypeVar

import typer
from rich.console import Console

from xhelio.errors import XhelioError

__all__ = ["cli_errors", "handle_errors"]

err_console = Console(stderr=True)
P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def cli_errors() -> Generator[None, None, None]:
    """Print an XhelioError or a file-system error as one red line and exit 1; Ctrl-C 130."""
    try:
        yield
    except XhelioError as exc:
        err_console.print(f"[bold red]Error:[/] {exc.message}", highlight=False)
        raise typer.Exit(1) from None
    except OSError as exc:
        # A file or folder the user named (or XHELIO_HOME) cannot be used: say which.
        where = f" {exc.filename}" if exc.filename else ""
        err_console.print(
            f"[bold red]Error:[/] Cannot use{where}: {exc.strerror or exc}. Check the path "
            "and its permissions.",
            highlight=False,
        )
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        err_console.print("Interrupted.")
        raise typer.Exit(130) from None


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorate a command so xhelio errors print cleanly instead of a traceback."""

    @wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with cli_errors():
            return fn(*args, **kwargs)

    return wrapper
