"""`xhelio report --session S --out FILE.html|FILE.md`: a saved session's report as a file.

The report (question, what was done, figures, numbers with units, methods, data citations,
limitations, the script that reruns it) is gathered from the saved session by
`report.build_report`; no model is asked. Imports the services, session and report layers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from xhelio.cli.errors import handle_errors
from xhelio.report import build_report, format_of, write_report
from xhelio.services import Services

__all__ = ["register"]


def report(
    out: Annotated[Path, typer.Option("--out", "-o", help="File to write: NAME.html or NAME.md.")],
    session_id: Annotated[
        str | None,
        typer.Option("--session", "-s", help="Session id (default: the latest session)."),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="The report's title.")] = None,
) -> None:
    """Write the report of a saved session as self-contained HTML or as Markdown."""
    fmt = format_of(out)
    with Services() as services:
        sid = session_id or services.sessions.latest()
        if sid is None:
            raise typer.BadParameter("No saved session yet: run `xhelio ask` or `xhelio chat`.")
        session = services.sessions.load(sid)
        written = write_report(build_report(session, title=title), out, fmt)
    Console().print(f"Report of session {sid} written to {written}")


def register(app: typer.Typer) -> None:
    """Add the `report` command to the app."""
    app.command("report")(handle_errors(report))
