"""Token usage per agent across a session, for `status`, the exit summary and the API.

Every agent run adds its pydantic-ai usage under the agent's name; the tracker keeps input,
output and thinking tokens, model requests and tool calls. Thinking tokens come from the
usage's `output_reasoning_tokens` or, for providers that only report them in `details`, from
keys such as `reasoning_tokens` or `thoughts_tokens`. Thread-safe, because sub-agents may run
in worker threads. Imports nothing from xhelio.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass

from pydantic_ai.usage import RequestUsage, RunUsage
from rich.table import Table

__all__ = ["AgentUsage", "UsageTracker", "thinking_tokens_of"]

_THINKING_DETAIL_KEYS = ("reasoning_tokens", "thoughts_tokens", "thinking_tokens")


def thinking_tokens_of(usage: RunUsage | RequestUsage) -> int:
    """Return the thinking (reasoning) tokens a usage reports, wherever the provider put them."""
    if usage.output_reasoning_tokens:
        return usage.output_reasoning_tokens
    for key in _THINKING_DETAIL_KEYS:
        if usage.details.get(key):
            return usage.details[key]
    return 0


@dataclass
class AgentUsage:
    """Accumulated usage of one agent (or of all of them)."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0
    tool_calls: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens (thinking is part of output)."""
        return self.input_tokens + self.output_tokens

    def add(self, other: AgentUsage) -> None:
        """Add another usage to this one in place."""
        self.requests += other.requests
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.thinking_tokens += other.thinking_tokens
        self.tool_calls += other.tool_calls

    @classmethod
    def from_pydantic_ai(cls, usage: RunUsage | RequestUsage) -> AgentUsage:
        """Convert a pydantic-ai run or request usage."""
        return cls(
            requests=usage.requests,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            thinking_tokens=thinking_tokens_of(usage),
            tool_calls=usage.tool_calls if isinstance(usage, RunUsage) else 0,
        )


class UsageTracker:
    """Token usage per agent name, summed over a session."""

    def __init__(self) -> None:
        self._agents: dict[str, AgentUsage] = {}
        self._lock = threading.Lock()

    def add(self, agent_name: str, usage: RunUsage | RequestUsage) -> None:
        """Add one run's (or one request's) usage to `agent_name`."""
        increment = AgentUsage.from_pydantic_ai(usage)
        with self._lock:
            self._agents.setdefault(agent_name, AgentUsage()).add(increment)

    def per_agent(self) -> dict[str, AgentUsage]:
        """Return a copy of the usage of each agent, in the order agents first reported."""
        with self._lock:
            return {name: AgentUsage(**asdict(usage)) for name, usage in self._agents.items()}

    def total(self) -> AgentUsage:
        """Return the usage of all agents together."""
        total = AgentUsage()
        for usage in self.per_agent().values():
            total.add(usage)
        return total

    def to_dict(self) -> dict[str, dict[str, int] | dict[str, dict[str, int]]]:
        """Return `{"agents": {name: counts}, "total": counts}` for JSON clients."""
        return {
            "agents": {name: asdict(usage) for name, usage in self.per_agent().items()},
            "total": asdict(self.total()),
        }

    def render_table(self, title: str = "Token usage") -> Table:
        """Return a rich table with one row per agent and a total row."""
        table = Table(title=title, show_footer=False)
        table.add_column("Agent")
        for heading in ("Requests", "Input", "Output", "Thinking", "Tool calls"):
            table.add_column(heading, justify="right")
        rows = list(self.per_agent().items())
        for name, usage in rows:
            table.add_row(name, *_cells(usage))
        table.add_section()
        table.add_row("total", *_cells(self.total()), style="bold")
        return table


def _cells(usage: AgentUsage) -> tuple[str, ...]:
    return tuple(
        f"{value:,}"
        for value in (
            usage.requests,
            usage.input_tokens,
            usage.output_tokens,
            usage.thinking_tokens,
            usage.tool_calls,
        )
    )
