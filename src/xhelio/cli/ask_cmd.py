"""`xhelio ask REQUEST`: one request through `api.turns`, then exit (scripts and pipelines).

With `--json`, stdout carries exactly one JSON object: the `AskResponse` of the Python API
and the REST server (`answer`, `session_id`, `data`, `table`, `figure`, `figure_files`,
`plan`, `agent_results`, `trace`, `usage`, `suggestions`, `error` as `{type, message}`,
`elapsed_s`); even a failure before the turn (a bad `--model`, an invalid session id) is
reported in that object. The exit code is 1 whenever `error` is not null. Without `--json`,
the answer prints as markdown with a short data table, figure paths and live progress.
Runs its turn with `api.turns.run_request`, the turn path of every interface.
"""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console

from xhelio.agents.planning.routing import AgentPreferences
from xhelio.agents.usage import UsageTracker
from xhelio.api import turns
from xhelio.api.models import AskRequest, AskResponse
from xhelio.cli.errors import handle_errors
from xhelio.cli.progress import TurnProgress, print_turn_result
from xhelio.errors import UserError, XhelioError
from xhelio.tools.workspace import Workspace, open_workspace

__all__ = ["ask", "ask_once", "register"]


def ask_once(
    request: str,
    *,
    session_id: str | None = None,
    model: str | None = None,
    console: Console | None = None,
    verbose: bool = False,
    prefer: Sequence[str] = (),
    disable: Sequence[str] = (),
    trace: bool = False,
    deep: bool = False,
) -> AskResponse:
    """Run one request in a (new or resumed) session and return its response; never raises.

    `prefer` and `disable` name agents (mission, data_ops, data_extraction, visualization,
    insight) the request's plan should prefer or must not use.
    """
    workspace: Workspace | None = None
    try:
        asked = AskRequest(
            question=request,
            session_id=session_id,
            model=model,
            prefer_agents=list(prefer),  # type: ignore[arg-type]  # validated below
            disable_agents=list(disable),  # type: ignore[arg-type]
            trace=trace,
            deep=deep,
        )
    except ValidationError:
        asked = None
    try:
        preferences = AgentPreferences.of(prefer, disable)
        if asked is None:
            raise UserError("Invalid request: check --session, --prefer and --disable.")
        workspace = open_workspace(session_id)
        usage = UsageTracker()
        assistant, config = turns.make_assistant(workspace, model, usage, preferences)
        if config.offline and console is not None:
            console.print(f"[yellow]Note:[/] {config.reason}.", highlight=False)
        cancel = threading.Event()
        progress = (
            TurnProgress(
                console,
                workspace.session.events,
                verbose=verbose,
                operations=workspace.session.operations,
            )
            if console is not None
            else nullcontext()
        )
        with progress:
            return turns.run_request(
                workspace, assistant, asked, cancel, offline=config.offline, usage=usage
            )
    except XhelioError as exc:
        return turns.failed_before_turn(exc, workspace.session.id if workspace else None)
    finally:
        if workspace is not None:
            workspace.close()


def _json_line(response: AskResponse) -> str:
    return response.model_dump_json()


@handle_errors
def ask(
    request: Annotated[str, typer.Argument(help="What you want, in plain language.")],
    session: Annotated[
        str | None,
        typer.Option("--session", "-s", help="Run in this session (resumed, or created)."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model for every tier, provider:model.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print exactly one JSON object with the result.")
    ] = False,
    trace: Annotated[
        bool, typer.Option("--trace", help="With --json: include the turn's trace events.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show every tool call's arguments and result.")
    ] = False,
    open_figures: Annotated[
        bool, typer.Option("--open", help="Open the figure it makes in a web browser.")
    ] = False,
    prefer: Annotated[
        list[str] | None,
        typer.Option("--prefer", help="Agent to prefer in a plan (repeatable), e.g. data_ops."),
    ] = None,
    disable: Annotated[
        list[str] | None,
        typer.Option("--disable", help="Agent the request must not use (repeatable)."),
    ] = None,
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="Deep analysis: reviewed stages with success criteria, checked after each "
            "stage, ending in an HTML and Markdown report.",
        ),
    ] = False,
) -> None:
    """Answer one request, print the result and exit (1 if it failed)."""
    if not request.strip():
        raise UserError('REQUEST is empty: say what you want, e.g. xhelio ask "list missions".')
    progress_console = None if as_json else Console(stderr=True)
    result = ask_once(
        request,
        session_id=session,
        model=model,
        console=progress_console,
        verbose=verbose,
        prefer=prefer or (),
        disable=disable or (),
        trace=trace,
        deep=deep,
    )
    if as_json:
        typer.echo(_json_line(result))
    else:
        console = Console()
        print_turn_result(console, result)
        if result.session_id:
            Console(stderr=True).print(f"session: {result.session_id}", highlight=False)
    if open_figures and result.figure_files:
        webbrowser.open(Path(result.figure_files[-1]).resolve().as_uri())
    if result.error is not None:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add `ask` to the app."""
    app.command("ask")(ask)
