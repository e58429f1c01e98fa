"""The terminal view of a turn: live progress while it runs, then its result.

`TurnProgress` subscribes to a session's `EventBus` for the length of one turn. On a
terminal it shows a spinner line (agent, running tool, elapsed time) that disappears when
the turn ends; on any console it prints one line per finished tool call with its latency,
and errors in red. With `verbose`, it also prints each call's arguments and result.
Events arrive on the worker thread that runs the turn; rich's console is thread-safe.
`print_turn_result` shows a finished turn's `AskResponse`: the answer as markdown, a short
table of the data it touched, the figures it wrote and the error, if any. Used by `xhelio
chat` and `xhelio ask`. Imports only the session events and the response model from xhelio.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

from rich.console import Console, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from xhelio.api.models import AskResponse
from xhelio.sandbox.text import display_text
from xhelio.session.events import Event, EventBus
from xhelio.timerange import readable_iso_span

__all__ = ["TurnProgress", "format_duration", "print_turn_result", "touched_table"]

# Events every turn publishes that carry nothing a progress line should show.
_QUIET_TYPES = frozenset({"user_request", "turn_done"})
_SHOWN_CHARS = 400
_CANCELLED = "Cancelled."  # the error of a turn stopped by its cancel event


def format_duration(seconds: float) -> str:
    """Format a duration for people: '850 ms', '3.2 s', '2 min 05 s'."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + " …"


class TurnProgress:
    """Show one turn's progress from its session events; use as a context manager."""

    def __init__(
        self,
        console: Console,
        events: EventBus,
        *,
        verbose: bool = False,
        operations: Sequence[dict[str, Any]] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self.events = events
        self.verbose = verbose
        self.operations = operations
        self._clock = clock
        self._lock = threading.Lock()
        self._started = clock()
        self._agent = ""
        self._tool = ""
        self._tool_started = 0.0
        self._activity = "thinking"
        self._tool_calls = 0
        self._spinner = Spinner("dots", style="cyan")
        self._live: Live | None = None
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def tool_calls(self) -> int:
        """How many tool calls finished during this turn."""
        return self._tool_calls

    def __enter__(self) -> TurnProgress:
        self._started = self._clock()
        self._unsubscribe = self.events.subscribe(self.handle)
        if self.console.is_terminal:
            self._live = Live(self, console=self.console, transient=True, refresh_per_second=8)
            self._live.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._live is not None:
            self._live.stop()
            self._live = None

    def handle(self, event: Event) -> None:
        """Update the live line from one event and print what finished."""
        if event.type in _QUIET_TYPES:
            return
        with self._lock:
            if event.agent:
                self._agent = event.agent
        if event.type == "tool_call":
            self._on_call(event)
        elif event.type in ("tool_result", "tool_error"):
            self._on_result(event)
        else:
            self._on_other(event)

    def _on_call(self, event: Event) -> None:
        with self._lock:
            self._tool = event.tool
            self._tool_started = self._clock()
            self._activity = f"running {event.tool}"
        if self.verbose:
            args = json.dumps(event.data.get("args", {}), default=str)
            self.console.print(
                f"  [dim]→ {escape(event.agent)} calls {escape(event.tool)}"
                f" {escape(_clip(args))}[/]",
                highlight=False,
            )

    def _on_result(self, event: Event) -> None:
        with self._lock:
            self._tool = ""
            self._activity = "thinking"
            self._tool_calls += 1
        took = format_duration((event.duration_ms or 0.0) / 1000)
        who = f" [dim]({escape(event.agent)})[/]" if event.agent else ""
        if event.type == "tool_error":
            self.console.print(
                f"  [red]✗ {escape(event.tool)}[/]{who} {took}: {escape(_clip(event.summary))}",
                highlight=False,
            )
        else:
            self.console.print(f"  [green]✓[/] {escape(event.tool)}{who} {took}", highlight=False)
        if self.verbose:
            result = self._result_of(event)
            if result is not None:
                shown = _clip(json.dumps(result, default=str))
                self.console.print(f"    [dim]← {escape(shown)}[/]", highlight=False)

    def _on_other(self, event: Event) -> None:
        # Agents publish their own events (delegation, plan steps, thinking); the spinner
        # line shows the latest, verbose mode keeps them all.
        text = event.summary or event.type.replace("_", " ")
        with self._lock:
            self._activity = text.splitlines()[0][:80] if text.strip() else event.type
        if self.verbose or event.status == "error":
            style = "red" if event.status == "error" else "dim"
            who = f"{escape(event.agent)}: " if event.agent else ""
            self.console.print(f"  [{style}]{who}{escape(_clip(text))}[/]", highlight=False)

    def _result_of(self, event: Event) -> dict[str, Any] | None:
        # The funnel appends the operation record just before it publishes the result event,
        # so the newest record of this tool by this caller is the one that finished.
        for record in reversed(self.operations):
            if record.get("tool") == event.tool and record.get("caller") == event.agent:
                result = record.get("result")
                return result if isinstance(result, dict) else None  # type: ignore[return-value]
        return None

    def status_line(self) -> str:
        """The text of the live line: agent, activity and timings."""
        now = self._clock()
        with self._lock:
            agent, tool, activity = self._agent, self._tool, self._activity
            tool_started = self._tool_started
        parts = [agent or "assistant"]
        if tool:
            parts.append(f"{tool} {format_duration(now - tool_started)}")
        else:
            parts.append(activity)
        total = format_duration(now - self._started)
        return " > ".join(parts) + f"  [{total} total, Ctrl-C cancels]"

    def __rich__(self) -> RenderableType:
        grid = Table.grid(padding=(0, 1))
        grid.add_row(self._spinner, Text(self.status_line(), style="cyan"))
        return grid


def touched_table(response: AskResponse) -> Table:
    """A short table of the data a turn created or updated."""
    table = Table(title="Data", title_justify="left", show_edge=False)
    for column in ("label", "dataset", "parameter", "points", "span"):
        table.add_column(column, justify="right" if column == "points" else "left")
    for touched in response.data:
        span = readable_iso_span(touched.start, touched.stop) if touched.start else ""
        table.add_row(
            escape(touched.label),
            escape(touched.dataset or "derived"),
            escape(touched.parameter or ""),
            f"{touched.points:,}",
            span,
        )
    return table


def print_turn_result(console: Console, response: AskResponse) -> None:
    """Print a finished turn: answer, data touched, figures written and any error.

    Text that may quote sandboxed code (answer, error) is printed without terminal control.
    """
    error = response.error
    # A failure without a reply is worded as an answer quoting the error: print it once.
    answer_repeats_error = error is not None and error.message in response.answer
    for detail in response.details:  # the composer's operational detail, as activity
        console.print(Text(f"  · {display_text(detail)}", style="dim"))
    if response.answer.strip() and not answer_repeats_error:
        console.print(Markdown(display_text(response.answer)))
    if response.data:
        console.print(touched_table(response))
    for path in response.figure_files:
        console.print(f"Figure saved: {escape(path)}", highlight=False)
    if error is not None and error.message == _CANCELLED:
        console.print("[yellow]Request cancelled; the session is intact.[/]")
    elif error is not None:
        console.print(f"[bold red]Error:[/] {escape(display_text(error.message))}", highlight=False)
