"""Offline skills: answers a capability adds to offline mode, registered by entry point.

A skill is a function ``answer(assistant, request) -> AssistantReply | None`` named in the
``xhelio.offline_skills`` entry-point group (xhelio's own pyproject.toml or a plugin's)::

    [project.entry-points."xhelio.offline_skills"]
    analysis = "xhelio.agents.offline.analysis_skill:answer"

`OfflineAssistant.respond` tries the skills in the order of their names, after saved
pipeline requests and before its ordinary reading of a request; the first reply wins. A
skill returns None unless the request is clearly its own. A skill that fails to load, or
raises, is logged and skipped: offline mode keeps answering.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import Any, Protocol

from xhelio.agents.turn import AssistantReply
from xhelio.operations import ToolResult
from xhelio.tools.workspace import Workspace

__all__ = [
    "SKILL_GROUP",
    "FetchedSeries",
    "OfflineSkill",
    "SkillHost",
    "offline_skills",
    "skill_reply",
]

SKILL_GROUP = "xhelio.offline_skills"
_log = logging.getLogger(__name__)


@dataclass
class FetchedSeries:
    """What `OfflineAssistant.fetch_for` fetched for a piece of request text.

    Attributes:
        labels: The stored labels, in the order the request named the series.
        lines: What was said about each fetch (dataset, points, notes).
        problems: What could not be fetched, and why.
        time_range: The time range the text was read to mean ("" when it had none).
    """

    labels: list[str] = field(default_factory=list[str])
    lines: list[str] = field(default_factory=list[str])
    problems: list[str] = field(default_factory=list[str])
    time_range: str = ""


class SkillHost(Protocol):
    """What a skill may use of the offline assistant (`OfflineAssistant` is one)."""

    @property
    def workspace(self) -> Workspace:
        """The session's workspace: its data, figure and funnel."""
        ...

    def call_tool(self, tool: str, args: dict[str, Any]) -> ToolResult:
        """Run a tool through the session's funnel as offline mode (traced, logged)."""
        ...

    def fetch_for(self, text: str) -> FetchedSeries:
        """Fetch the series `text` names, as offline mode reads it (no plot)."""
        ...


OfflineSkill = Callable[[SkillHost, str], AssistantReply | None]
"""What a skill is: the assistant and the request in, a reply or None out."""


@cache
def offline_skills() -> tuple[tuple[str, OfflineSkill], ...]:
    """The registered skills by name, in name order (loaded once per process)."""
    skills: list[tuple[str, OfflineSkill]] = []
    for point in sorted(entry_points(group=SKILL_GROUP), key=lambda p: p.name):
        try:
            loaded: object = point.load()
        except Exception as exc:  # a broken plugin never stops offline mode
            _log.warning("Offline skill %r could not be loaded: %s", point.name, exc)
            continue
        if callable(loaded):
            skills.append((point.name, loaded))  # pyright: ignore[reportArgumentType]
        else:
            _log.warning("Offline skill %r is not callable: %s", point.name, point.value)
    return tuple(skills)


def skill_reply(assistant: SkillHost, request: str) -> AssistantReply | None:
    """The first skill's reply to `request`, or None when no skill takes it."""
    for name, skill in offline_skills():
        try:
            reply = skill(assistant, request)
        except Exception:  # a skill's bug must not end the turn: the ordinary reading runs
            _log.exception("Offline skill %r failed on %r", name, request)
            continue
        if reply is not None:
            return reply
    return None
