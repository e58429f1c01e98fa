"""Behaviour around the funnel, composed by wrapping it (as pydantic-ai's wrapper toolsets).

A `Toolset` is what callers run tools through: the `ToolFunnel` itself, or a wrapper
around another toolset that adds one concern and passes everything else inward:

* `PolicyToolset`: what a server lets tools do (refusals come back as errors);
* `GuardedToolset`: an agent run's loop guard (blocked calls come back as `LoopGuard`);
* `TurnToolset`: one turn's shared model usage and request cap, read by the agents.

Refusals travel inward as the funnel's one pre-run `Check` (the wrapper nearest the
funnel asks first, so a server's policy refuses before a loop guard counts the call); a
refused call does not run but is recorded in the operations log like any other.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic_ai.usage import RunUsage

from xhelio.operations import ToolResult
from xhelio.session.events import EventBus
from xhelio.tools.funnel import Check, ToolFunnel
from xhelio.tools.registry import Tool, ToolRegistry

__all__ = [
    "GuardedToolset",
    "Policy",
    "PolicyToolset",
    "Toolset",
    "TurnToolset",
    "TurnUsage",
    "WrapperToolset",
    "combine",
]

Policy = Check
"""A server's rule: given the tool's spec and the arguments, a refusal or None."""

Guard = Callable[[str, dict[str, Any]], str | None]
"""A loop guard's check: returning a message blocks the call with that message."""


@dataclass
class TurnUsage:
    """The model usage of one turn, shared by every agent run in it.

    `usage` is what pydantic-ai counts (and `UsageLimits` check); `attributed` is what
    finished runs already reported as their own, so a run that delegated reports only its
    own requests, not its sub-agents'.
    """

    usage: RunUsage = field(default_factory=RunUsage)
    attributed: RunUsage = field(default_factory=RunUsage)
    max_requests: int | None = None
    """A caller's cap on model requests in this turn (None: the default)."""

    def own_part(self, before: RunUsage, attributed_before: RunUsage) -> RunUsage:
        """Close a run that started at (`before`, `attributed_before`): its own usage."""
        own = (self.usage - before) - (self.attributed - attributed_before)
        self.attributed = self.attributed + own
        return own


class Toolset(Protocol):
    """Runs registry tools by name: the funnel, or a wrapper around a toolset."""

    @property
    def cancel(self) -> threading.Event:
        """The cancellation event of the request in progress."""
        ...

    @cancel.setter
    def cancel(self, event: threading.Event) -> None: ...

    @property
    def funnel(self) -> ToolFunnel:
        """The funnel at the centre (registry, context, events, operations log)."""
        ...

    @property
    def registry(self) -> ToolRegistry:
        """The tools."""
        ...

    @property
    def context(self) -> Any:
        """What the tools act on."""
        ...

    @property
    def events(self) -> EventBus:
        """The session's event bus."""
        ...

    @property
    def operations(self) -> list[dict[str, Any]]:
        """The session's operations log."""
        ...

    @property
    def turn(self) -> TurnUsage | None:
        """The usage of the turn in progress (None outside a turn)."""
        ...

    def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        caller: str = "user",
        check: Check | None = None,
    ) -> ToolResult:
        """Run tool `name`; `check` may refuse it first."""
        ...


def combine(first: Check | None, second: Check | None) -> Check | None:
    """One check that asks `first`, then `second`."""
    if first is None or second is None:
        return first or second

    def both(tool: Tool, args: dict[str, Any]) -> ToolResult | None:
        return first(tool, args) or second(tool, args)

    return both


class WrapperToolset:
    """A toolset that passes every call to `inner`; subclasses add one concern."""

    def __init__(self, inner: Toolset | ToolFunnel) -> None:
        self.inner = inner

    @property
    def funnel(self) -> ToolFunnel:
        """The funnel at the centre."""
        return self.inner.funnel

    @property
    def turn(self) -> TurnUsage | None:
        """The turn in progress, as the inner toolset knows it."""
        return getattr(self.inner, "turn", None)

    @property
    def registry(self) -> ToolRegistry:
        """The tools."""
        return self.funnel.registry

    @property
    def context(self) -> Any:
        """What the tools act on."""
        return self.funnel.context

    @property
    def events(self) -> EventBus:
        """The session's event bus."""
        return self.funnel.events

    @property
    def operations(self) -> list[dict[str, Any]]:
        """The session's operations log."""
        return self.funnel.operations

    @property
    def cancel(self) -> threading.Event:
        """The cancellation event of the request in progress."""
        return self.funnel.cancel

    @cancel.setter
    def cancel(self, event: threading.Event) -> None:
        self.funnel.cancel = event

    def check(self, tool: Tool, args: dict[str, Any]) -> ToolResult | None:
        """This wrapper's refusal of a call, or None (default: none)."""
        return None

    def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        caller: str = "user",
        check: Check | None = None,
    ) -> ToolResult:
        """Run tool `name` through the inner toolset; the innermost wrapper checks first."""
        return self.inner.call(name, args, caller, combine(self.check, check))


class PolicyToolset(WrapperToolset):
    """Refuse what `policy` refuses, whoever the caller."""

    def __init__(self, inner: Toolset | ToolFunnel, policy: Policy) -> None:
        super().__init__(inner)
        self.policy = policy

    def check(self, tool: Tool, args: dict[str, Any]) -> ToolResult | None:
        """The policy's refusal, or None."""
        return self.policy(tool, args)


class GuardedToolset(WrapperToolset):
    """Block the calls an agent run's loop guard blocks."""

    def __init__(self, inner: Toolset | ToolFunnel, guard: Guard) -> None:
        super().__init__(inner)
        self.guard = guard

    def check(self, tool: Tool, args: dict[str, Any]) -> ToolResult | None:
        """A `LoopGuard` error when the guard blocks the call."""
        blocked = self.guard(tool.name, args)
        return ToolResult.failure(tool.name, "LoopGuard", blocked) if blocked else None


class TurnToolset(WrapperToolset):
    """The toolset of one turn: every agent run in it shares `usage` and its caps."""

    def __init__(self, inner: Toolset | ToolFunnel, usage: TurnUsage) -> None:
        super().__init__(inner)
        self.usage = usage

    @property
    def turn(self) -> TurnUsage | None:
        """This turn's usage."""
        return self.usage
