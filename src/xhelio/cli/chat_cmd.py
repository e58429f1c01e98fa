"""`xhelio chat` (and bare `xhelio`): the conversational REPL.

`ChatRepl` reads lines from any `read_line(prompt) -> str` function (prompt_toolkit on a
terminal, plain `input` on a pipe, a scripted list in tests; EOFError ends the session)
and prints to any rich `Console`. A line that is one of the commands (quit, reset, status,
retry, cancel, errors, sessions, open, capabilities, help) runs it; anything else is a
request, run with `api.turns.run_request` (the turn path of every interface) in a worker
thread. While it runs, Ctrl-C (SIGINT) only sets the turn's cancel event: the turn finishes
its current step and returns, and the session goes on. Every turn is saved;
`--continue` and `--session` resume saved sessions.
"""

from __future__ import annotations

import signal
import sys
import threading
import webbrowser
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xhelio.agents.models import ModelConfig
from xhelio.agents.planning.assistant import PlanningAssistant
from xhelio.agents.turn import Assistant, AssistantReply
from xhelio.agents.usage import UsageTracker
from xhelio.api import turns
from xhelio.api.models import AskRequest, AskResponse, ErrorInfo
from xhelio.cli.errors import handle_errors
from xhelio.cli.plan_cmd import plan_table
from xhelio.cli.progress import TurnProgress, format_duration, print_turn_result
from xhelio.cli.session_cmd import data_table, sessions_table
from xhelio.config import Settings, load_settings
from xhelio.errors import UserError
from xhelio.sandbox.text import display_text
from xhelio.session.persist import SessionStore
from xhelio.tools.workspace import Workspace, open_workspace

__all__ = ["ChatOptions", "ChatRepl", "ReadLine", "chat", "prompt_reader", "register"]

ReadLine = Callable[[str], str]
"""Return the next input line; raise EOFError at the end, KeyboardInterrupt on Ctrl-C."""
Opener = Callable[[str], bool]

PROMPT = "xhelio> "
_WAIT_POLL_S = 0.2  # how soon a Ctrl-C press is acknowledged on screen
_RECENT_ERRORS = 10

_COMMANDS: tuple[tuple[str, str], ...] = (
    ("quit / exit", "Save the session, print token usage and leave (Ctrl-D works too)."),
    ("reset", "Start a new, empty session (the current one stays saved)."),
    ("status", "Current plan, token usage and the data in memory."),
    ("retry", "Run the last failed or cancelled request again."),
    ("cancel", "Cancel the unfinished plan's remaining tasks, or drop a failed request."),
    ("resume", "Continue a plan that was left unfinished."),
    ("errors", "Recent errors of this session."),
    ("sessions", "The 10 most recent saved sessions."),
    ("open", "Open the latest figure in a web browser."),
    ("capabilities / caps", "What xhelio can do, and its tools."),
    ("help", "This help."),
)

_CAPABILITIES = """\
xhelio finds, fetches, computes and plots NASA heliophysics data (CDAWeb) from plain requests:
- discover: search missions, datasets and parameters; check data availability
- fetch: pull time series through HAPI or CDAWeb CDF files, cached on disk
- compute: derived quantities (magnitudes, smoothing, resampling, spectra) in a sandbox
- plot: interactive Plotly figures, saved as HTML in the session folder
Try: "show ACE magnetic field magnitude for 2024-01-15 to 2024-01-17"."""


@dataclass(frozen=True)
class ChatOptions:
    """How a chat starts: model, which session, and display choices."""

    model: str | None = None
    session_id: str | None = None
    resume_latest: bool = False
    verbose: bool = False
    open_figures: bool = False


class ChatRepl:
    """The chat loop: commands, requests in a cancellable worker thread, session handling."""

    def __init__(
        self,
        console: Console,
        options: ChatOptions | None = None,
        *,
        settings: Settings | None = None,
        opener: Opener = webbrowser.open,
    ) -> None:
        self.console = console
        self.options = options or ChatOptions()
        self.settings = settings or load_settings()
        self.opener = opener
        self.usage = UsageTracker()
        self.last_failed: str | None = None
        self.last_result: AskResponse | None = None
        self.figures: list[str] = []
        self._workspace: Workspace | None = None
        self._assistant: Assistant | None = None
        self._config: ModelConfig | None = None
        self._handlers: dict[str, Callable[[], bool]] = {
            "quit": self._quit,
            "exit": self._quit,
            "reset": self._reset,
            "status": self._status,
            "retry": self._retry,
            "cancel": self._cancel,
            "resume": self._resume,
            "errors": self._errors,
            "sessions": self._sessions,
            "open": self._open_figure,
            "capabilities": self._capabilities,
            "caps": self._capabilities,
            "help": self._help,
        }

    @property
    def workspace(self) -> Workspace:
        """The session the chat works in (after `start`)."""
        if self._workspace is None:
            raise RuntimeError("ChatRepl.start() was not called")
        return self._workspace

    def start(self) -> None:
        """Open (or resume) the session, build the assistant and greet."""
        store = SessionStore(self.settings)
        session_id = self.options.session_id
        if session_id and not store.exists(session_id):
            self.console.print(f"No saved session '{escape(session_id)}': starting it as new.")
        if self.options.resume_latest and store.latest() is None:
            self.console.print("No saved session to continue: starting a new one.")
        self._open(session_id, self.options.resume_latest)
        self.console.print(
            "[bold]xhelio[/]: talk to NASA heliophysics data. "
            "Type [bold]help[/] for commands, [bold]quit[/] or Ctrl-D to leave."
        )
        assert self._config is not None
        if self._config.offline:
            # Said once per chat, not per reset: the mode does not change within a chat.
            self.console.print(f"[yellow]Note:[/] {escape(self._config.reason)}.")
        else:
            self.console.print(f"[dim]Model: {escape(self._config.orchestrator or '')}[/]")
        self._greet_session()
        self._offer_unfinished_plan()

    def _planning(self) -> PlanningAssistant | None:
        return self._assistant if isinstance(self._assistant, PlanningAssistant) else None

    def _offer_unfinished_plan(self) -> None:
        planning = self._planning()
        plan = planning.incomplete_plan() if planning else None
        if plan is None:
            return
        left = sum(1 for t in plan.tasks if t.status.value in ("pending", "in_progress"))
        self.console.print(
            f"Unfinished plan {plan.id} ({left} task(s) left) for: "
            f"{escape(plan.request[:120])!r}. Type [bold]resume[/] to continue it or "
            "[bold]cancel[/] to drop it.",
            highlight=False,
        )

    def _open(self, session_id: str | None, resume_latest: bool) -> None:
        workspace = open_workspace(session_id, self.settings, resume_latest=resume_latest)
        try:
            assistant, config = turns.make_assistant(workspace, self.options.model, self.usage)
        except BaseException:
            workspace.close()
            raise
        self._workspace, self._assistant, self._config = workspace, assistant, config

    def _greet_session(self) -> None:
        session = self.workspace.session
        turns = sum(1 for m in session.history if m.get("role") == "user")
        if not turns:
            self.console.print(f"New session {session.id}.")
            return
        last = next(m for m in reversed(session.history) if m.get("role") == "user")
        self.console.print(
            f"Resumed session {session.id}: {turns} turn(s), {len(session.store)} data "
            f"entr{'y' if len(session.store) == 1 else 'ies'} in memory; last request: "
            f"{escape(str(last.get('content', ''))[:120])!r}",
            highlight=False,
        )

    def run(self, read_line: ReadLine) -> None:
        """Read and handle lines until quit, exit or end of input."""
        while True:
            try:
                line = read_line(PROMPT)
            except EOFError:
                self._quit()
                return
            except KeyboardInterrupt:
                self.console.print("[dim](Ctrl-C at the prompt does nothing; quit or Ctrl-D)[/]")
                continue
            if not self.handle(line):
                return

    def handle(self, line: str) -> bool:
        """Handle one input line; False when the chat should end."""
        text = line.strip()
        if not text:
            return True
        handler = self._handlers.get(text.lower().lstrip("/"))
        if handler is not None:
            return handler()
        self.request(text)
        return True

    def request(self, text: str, assistant: Assistant | None = None) -> AskResponse:
        """Run one request in a worker thread; Ctrl-C cancels it; print its result."""
        workspace, assistant = self.workspace, assistant or self._assistant
        assert assistant is not None and self._config is not None
        try:
            asked = AskRequest(question=text)
        except ValidationError:
            result = _refused(workspace, "The request is too long: say it in fewer words.")
            print_turn_result(self.console, result)
            return result
        offline = self._config.offline
        cancel, done = threading.Event(), threading.Event()
        box: list[AskResponse] = []

        def work() -> None:
            try:
                box.append(turns.run_request(workspace, assistant, asked, cancel, offline=offline))
            finally:
                done.set()

        worker = threading.Thread(target=work, name="xhelio-turn", daemon=True)
        progress = TurnProgress(
            self.console,
            workspace.session.events,
            verbose=self.options.verbose,
            operations=workspace.session.operations,
        )
        with progress, _interrupt_cancels(cancel) as presses:
            worker.start()
            told = 0
            while not done.wait(_WAIT_POLL_S):
                told = self._tell_cancelling(presses, told)
            self._tell_cancelling(presses, told)
        result = box[0] if box else _refused(workspace, _lost(text))
        self._after_turn(text, result, progress.tool_calls)
        return result

    def _tell_cancelling(self, presses: list[int], told: int) -> int:
        """Say once per Ctrl-C press what it does; returns how many presses were told."""
        for press in range(told, presses[0]):
            if press == 0:
                self.console.print("[yellow]Cancelling: waiting for the current step to end…[/]")
            else:
                self.console.print("[yellow]Still stopping: the running tool call ends first.[/]")
        return presses[0]

    def _after_turn(self, text: str, result: AskResponse, tool_calls: int) -> None:
        self.last_result = result
        self.last_failed = text if result.error else None
        print_turn_result(self.console, result)
        self.figures.extend(result.figure_files)
        if result.error and result.error.message != "Cancelled.":
            self.console.print("[dim]Type retry to run the request again, errors for details.[/]")
        if result.figure_files and self.options.open_figures:
            self._open_path(result.figure_files[-1])
        elif result.figure_files:
            self.console.print("[dim]Type open to view the figure in a browser.[/]")
        self.console.print(
            f"[dim]{format_duration(result.elapsed_s)}, {tool_calls} tool call(s)[/]"
        )

    # commands ------------------------------------------------------------------------

    def _quit(self) -> bool:
        self.close()
        return False

    def close(self) -> None:
        """Save and close the session, then print the token usage of the whole chat."""
        if self._workspace is None:
            return
        session_id = self._workspace.session.id
        try:
            self._workspace.close()
        finally:
            self._workspace = None
        self.console.print(self.usage.render_table())
        self.console.print(
            f"Session {session_id} saved; resume it with `xhelio chat --session {session_id}`."
        )

    def _reset(self) -> bool:
        old = self.workspace
        old.close()
        self._workspace = None
        self._open(None, False)
        self.last_failed, self.last_result, self.figures = None, None, []
        self.console.print(
            f"New session {self.workspace.session.id} (session {old.session.id} is saved)."
        )
        return True

    def _status(self) -> bool:
        planning = self._planning()
        plan = planning.latest_plan() if planning else None
        if plan is not None:
            self.console.print(plan_table(plan))
        else:
            self.console.print("No plan: no multi-step request in this session yet.")
        self.console.print(self.usage.render_table())
        store = self.workspace.session.store
        if len(store):
            self.console.print(data_table(store))
        else:
            self.console.print("No data in memory.")
        if self.figures:
            self.console.print(f"Latest figure: {escape(self.figures[-1])}", highlight=False)
        return True

    def _retry(self) -> bool:
        planning = self._planning()
        plan = planning.latest_plan() if planning else None
        if planning is not None and plan is not None and plan.failed():
            task = plan.failed()[0]
            self.console.print(f"Retrying failed task: {escape(task.description)}", highlight=False)
            action = _PlanAction(planning.name, planning.retry_failed)
            self.request(f"retry: {task.description}", action)
            return True
        if self.last_failed is None:
            self.console.print("Nothing to retry: the last request did not fail.")
            return True
        self.console.print(f"Retrying: {escape(self.last_failed)}", highlight=False)
        self.request(self.last_failed)
        return True

    def _cancel(self) -> bool:
        planning = self._planning()
        cancelled = planning.cancel_plan() if planning else None
        if cancelled is not None:
            skipped = sum(1 for t in cancelled.tasks if t.error == "cancelled by the user")
            self.console.print(f"Plan {cancelled.id} cancelled: {skipped} task(s) skipped.")
            return True
        if self.last_failed is None:
            self.console.print(
                "Nothing to cancel: no request is running (press Ctrl-C while one runs)."
            )
        else:
            self.console.print("Dropped the failed request; retry has nothing to run now.")
            self.last_failed = None
        return True

    def _resume(self) -> bool:
        planning = self._planning()
        plan = planning.incomplete_plan() if planning else None
        if planning is None or plan is None:
            self.console.print("Nothing to resume: no unfinished plan in this session.")
            return True
        action = _PlanAction(planning.name, lambda cancel: planning.resume(plan, cancel))
        self.request(f"resume: {plan.request}", action)
        return True

    def _errors(self) -> bool:
        errors = _session_errors(self.workspace)[-_RECENT_ERRORS:]
        if not errors:
            self.console.print("No errors in this session.")
            return True
        table = Table(title=f"Recent errors ({len(errors)})")
        for column in ("id", "type", "agent", "tool", "message"):
            table.add_column(column)
        for event in errors:
            table.add_row(
                str(event.get("id", "")),
                escape(str(event.get("type", ""))),
                escape(str(event.get("agent", ""))),
                escape(str(event.get("tool", ""))),
                escape(display_text(str(event.get("summary", "")))[:300]),
            )
        self.console.print(table)
        return True

    def _sessions(self) -> bool:
        summaries = self.workspace.sessions.list(10)
        current = self.workspace.session.id
        self.console.print(sessions_table(summaries, title=f"Recent sessions (now: {current})"))
        return True

    def _open_figure(self) -> bool:
        if self.figures:
            self._open_path(self.figures[-1])
        elif self.workspace.session.plot.current is not None:
            # A resumed session has its figure back but no HTML written by this chat yet.
            path = self.workspace.session.plot.export("html", "figure-resumed.html")
            self.figures.append(str(path))
            self._open_path(str(path))
        else:
            self.console.print("No figure yet: ask for a plot first.")
        return True

    def _open_path(self, path: str) -> None:
        uri = Path(path).resolve().as_uri()
        if self.opener(uri):
            self.console.print(f"Opened {escape(path)} in the browser.", highlight=False)
        else:
            self.console.print(f"Could not start a browser; open {escape(path)} yourself.")

    def _capabilities(self) -> bool:
        self.console.print(_CAPABILITIES, highlight=False)
        table = Table(title="Tools")
        table.add_column("category")
        table.add_column("tool")
        table.add_column("what it does")
        for tool in self.workspace.funnel.registry:
            table.add_row(tool.category, tool.name, tool.description.splitlines()[0])
        self.console.print(table)
        return True

    def _help(self) -> bool:
        table = Table(title="Commands (anything else is a request)", show_header=False)
        table.add_column("command", style="bold")
        table.add_column("what it does")
        for name, what in _COMMANDS:
            table.add_row(name, what)
        self.console.print(table)
        return True


class _PlanAction:
    """A plan command (retry, resume) run as a turn, with progress, cancel and saving."""

    def __init__(self, name: str, action: Callable[[threading.Event], AssistantReply | None]):
        self.name = name
        self.action = action

    def respond(self, request: str, cancel: threading.Event) -> AssistantReply:
        reply = self.action(cancel)
        return reply or AssistantReply("Nothing to do: the plan has no failed task.")


@contextmanager
def _interrupt_cancels(cancel: threading.Event) -> Generator[list[int]]:
    """While the block runs, Ctrl-C (SIGINT) sets `cancel` instead of raising.

    Yields a one-item list counting the presses. Relying on Python's KeyboardInterrupt
    failed in two ways: a process started in the background inherits SIGINT ignored (the
    press did nothing and the turn ran on), and the exception can land anywhere in the main
    thread (inside a finalizer it is swallowed). A handler of our own that only sets the
    event always cancels. Off the main thread (no Ctrl-C reaches it) the handler cannot be
    set and nothing changes.
    """
    presses = [0]
    if threading.current_thread() is not threading.main_thread():
        yield presses
        return

    def on_interrupt(signum: int, frame: object) -> None:
        presses[0] += 1
        cancel.set()

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield presses
    finally:
        signal.signal(signal.SIGINT, previous or signal.default_int_handler)


def _lost(request: str) -> str:
    return f"The request {request[:80]!r} stopped without a result; see errors."


def _refused(workspace: Workspace, message: str) -> AskResponse:
    error = ErrorInfo(type="UserError", message=message)
    return AskResponse(answer="", session_id=workspace.session.id, error=error)


def _session_errors(workspace: Workspace) -> list[dict[str, Any]]:
    """Error events of the session, saved ones (from earlier runs) and live ones, by id."""
    events: dict[int, dict[str, Any]] = {}
    for record in workspace.sessions.events(workspace.session.id):
        events[int(record.get("id", 0))] = record
    for event in workspace.session.events.events():
        events[event.id] = event.to_dict()
    return [
        events[key]
        for key in sorted(events)
        if events[key].get("status") == "error" or str(events[key].get("type")).endswith("error")
    ]


def prompt_reader(
    history_file: Path, *, input: Input | None = None, output: Output | None = None
) -> ReadLine:
    """A prompt_toolkit line reader with persistent history in `history_file`."""
    history_file.parent.mkdir(parents=True, exist_ok=True)
    session: PromptSession[str] = PromptSession(
        history=FileHistory(str(history_file)), input=input, output=output
    )

    def read_line(prompt: str) -> str:
        return session.prompt(prompt)

    return read_line


def _plain_reader(prompt: str) -> str:
    return input(prompt)


@handle_errors
def chat(
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model for every tier, provider:model.")
    ] = None,
    resume_latest: Annotated[
        bool, typer.Option("--continue", "-c", help="Resume the most recent session.")
    ] = False,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Resume (or start) this session id.")
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show every tool call's arguments and result.")
    ] = False,
    open_figures: Annotated[
        bool, typer.Option("--open", help="Open each new figure in a web browser.")
    ] = False,
) -> None:
    """Chat with xhelio: ask for data, computations and plots in plain language."""
    if session and resume_latest:
        raise UserError("Use either --continue or --session ID, not both.")
    settings = load_settings()
    options = ChatOptions(model, session, resume_latest, verbose, open_figures)
    on_terminal = sys.stdin.isatty() and sys.stdout.isatty()
    read_line = prompt_reader(settings.home / "chat_history") if on_terminal else _plain_reader
    repl = ChatRepl(Console(), options, settings=settings)
    repl.start()
    try:
        repl.run(read_line)
    finally:
        repl.close()


def register(app: typer.Typer) -> None:
    """Add `chat` to the app."""
    app.command("chat")(chat)
