"""`xhelio ask REQUEST`: one request through `run_turn`, then exit (scripts and pipelines).

With `--json`, stdout carries exactly one JSON object: the `AskResponse` of the Python API
and the REST server (`answer`, `session_id`, `data`, `table`, `figure`, `figure_files`,
`plan`, `agent_results`, `trace`, `usage`, `suggestions`, `error` as `{type, message}`,
`elapsed_s`); even a failure before the turn (a bad `--model`, an invalid session id) is
reported in that object. The exit code is 1 whenever `error` is not null. Without `--json`,
the answer prints as markdown with a short data table, figure paths and live progress.
Imports the agents layer only through `run_turn` and the factory.
"""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console

from xhelio.agents import factory
from xhelio.agents.planning.assistant import PlanningAssistant
from xhelio.agents.planning.routing import AgentPreferences
from xhelio.agents.turn import DataTouched, TurnResult, run_turn
from xhelio.agents.usage import UsageTracker
from xhelio.api.models import AskRequest, AskResponse, ErrorInfo
from xhelio.api.turns import build_response
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
        )
    except ValidationError:
        asked = None
    try:
        preferences = AgentPreferences.of(prefer, disable)
        if asked is None:
            raise UserError("Invalid request: check --session, --prefer and --disable.")
        workspace = open_workspace(session_id)
        usage = UsageTracker()
        assistant, config = factory.make_assistant(workspace, model, usage)
        if isinstance(assistant, PlanningAssistant):
            assistant.set_preferences(preferences)
        if config.offline and console is not None:
            console.print(f"[yellow]Note:[/] {config.reason}.", highlight=False)
        cancel = threading.Event()
        bus = workspace.session.events
        last_id = max((e.id for e in bus.events()), default=0)
        first_op = len(workspace.session.operations)
        if console is None:
            result = run_turn(workspace, assistant, request, cancel)
        else:
            operations = workspace.session.operations
            with TurnProgress(console, bus, verbose=verbose, operations=operations):
                result = run_turn(workspace, assistant, request, cancel)
        if not result.usage and usage.per_agent():
            result.usage = usage.to_dict()
        events = bus.events(since_id=last_id)
        return build_response(asked, workspace, result, events, first_op, assistant.name)
    except XhelioError as exc:
        sid = workspace.session.id if workspace is not None else None
        error = ErrorInfo(type=type(exc).__name__, message=exc.message)
        return AskResponse(answer="", session_id=sid, error=error)
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
    )
    if as_json:
        typer.echo(_json_line(result))
    else:
        console = Console()
        print_turn_result(console, _as_turn_result(result))
        if result.session_id:
            Console(stderr=True).print(f"session: {result.session_id}", highlight=False)
    if open_figures and result.figure_files:
        webbrowser.open(Path(result.figure_files[-1]).resolve().as_uri())
    if result.error is not None:
        raise typer.Exit(1)


def _as_turn_result(response: AskResponse) -> TurnResult:
    """The response in the form the markdown printer takes."""
    return TurnResult(
        answer=response.answer,
        session_id=response.session_id or "",
        data=[DataTouched(**d.model_dump()) for d in response.data],
        figures=response.figure_files,
        plan=response.plan,
        usage=response.usage,
        error=response.error.message if response.error else None,
        elapsed_s=response.elapsed_s,
    )


def register(app: typer.Typer) -> None:
    """Add `ask` to the app."""
    app.command("ask")(ask)
