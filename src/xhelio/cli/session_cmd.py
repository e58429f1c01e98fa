"""`xhelio sessions` (list saved sessions) and `xhelio sessions show ID` (one session's record).

Sessions are saved after every turn by `run_turn`; `xhelio chat --continue` and
`--session ID` resume them. The tables here are shared with the REPL's `sessions` command.
Imports the session and tools layers only, never the agents.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xhelio.cli.errors import handle_errors
from xhelio.data.store import DataStore
from xhelio.services import Services
from xhelio.session.persist import SessionSummary
from xhelio.tools.data_tools import entry_summary

__all__ = ["app", "data_table", "sessions_table", "turns_of"]

app = typer.Typer(help="List and inspect saved chat sessions.", add_completion=False)

_PREVIEW_CHARS = 300


def turns_of(summary: SessionSummary) -> int:
    """Number of turns of a listed session."""
    # The history holds a user message and an assistant message per turn.
    return (summary.turns + 1) // 2


def sessions_table(summaries: Iterable[SessionSummary], title: str = "Saved sessions") -> Table:
    """A table of sessions: id, last update, title and number of turns."""
    table = Table(title=title)
    table.add_column("id", no_wrap=True)
    table.add_column("updated", no_wrap=True)
    table.add_column("title")
    table.add_column("turns", justify="right")
    for summary in summaries:
        updated = summary.updated[:19].replace("T", " ")
        table.add_row(summary.id, updated, escape(summary.title), str(turns_of(summary)))
    return table


def data_table(store: DataStore, title: str = "Data in memory") -> Table:
    """A table of every DataStore entry: label, source, points and time span."""
    table = Table(title=title)
    for column in ("label", "dataset", "parameter", "points", "start", "stop"):
        table.add_column(column, justify="right" if column == "points" else "left")
    for entry in store:
        summary = entry_summary(entry)
        table.add_row(
            escape(entry.label),
            escape(entry.source_dataset or "derived"),
            escape(entry.source_parameter or ""),
            f"{entry.points:,}",
            str(summary.get("start") or ""),
            str(summary.get("stop") or ""),
        )
    return table


@app.callback(invoke_without_command=True)
@handle_errors
def list_sessions(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many sessions to list.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
) -> None:
    """List saved sessions, most recently updated first."""
    if ctx.invoked_subcommand is not None:
        return
    with Services() as services:
        summaries = services.sessions.list(max(1, limit))
    if as_json:
        rows = [{**asdict(s), "turns": turns_of(s)} for s in summaries]
        typer.echo(json.dumps(rows, indent=2))
        return
    console = Console()
    if not summaries:
        console.print("No saved sessions yet: start one with `xhelio chat` or `xhelio ask`.")
        return
    console.print(sessions_table(summaries))
    console.print("Resume one with `xhelio chat --session ID` (or `--continue` for the latest).")


def _history_lines(history: list[dict[str, Any]], full: bool) -> list[str]:
    lines: list[str] = []
    for message in history:
        text = str(message.get("content", ""))
        if not full and len(text) > _PREVIEW_CHARS:
            text = text[:_PREVIEW_CHARS] + " …"
        role = str(message.get("role", "?"))
        style = "bold cyan" if role == "user" else ("red" if message.get("error") else "")
        prefix = f"[{style}]{role}:[/]" if style else f"{role}:"
        lines.append(f"{prefix} {escape(text)}")
    return lines


@app.command("show")
@handle_errors
def show_session(
    session_id: Annotated[str, typer.Argument(help="Session id (see `xhelio sessions`).")],
    full: Annotated[bool, typer.Option("--full", help="Do not shorten long messages.")] = False,
) -> None:
    """Show one saved session: its conversation and the data it holds."""
    with Services() as services:
        session = services.sessions.load(session_id)
    console = Console()
    console.print(f"[bold]Session {session.id}[/] (created {session.created[:19]})")
    for line in _history_lines(session.history, full):
        console.print(line, highlight=False)
    if not session.history:
        console.print("No messages yet.")
    if len(session.store):
        console.print(data_table(session.store))
    if session.plot.current is not None:
        console.print(f"Figure: {session.folder / 'figure.json'}")
