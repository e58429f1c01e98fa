"""Long-term memory in offline mode: "remember ..." requests, and saved preferences applied.

* "remember that I prefer log scales for particle data" (also "remember: ...", "please
  remember ...", "from now on ...") stores a user-explicit memory (a preference when it
  states a liking or a rule, else a lesson) and says so (`remember_reply`);
* a data request that leaves open what an enabled saved preference settles is answered as
  if the preference had been said, and the answer names the memory (`with_preferences`).
  Offline mode can apply three kinds: a logarithmic axis for a quantity (e.g. particle
  flux), a panel layout (separate or overlaid) when several series are asked for, and a
  favourite dataset (an id such as OMNI_HRO_1MIN) for a quantity. What the request says
  itself wins.

Offline mode's planning assistant calls both before it decides whether to plan, so
planned requests get them too; the skill (entry ``memory`` of ``xhelio.offline_skills``)
stores "remember" requests that reach the offline assistant directly.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xhelio.agents.turn import AssistantReply
from xhelio.errors import XhelioError
from xhelio.language.quantities import QUANTITIES, Quantity
from xhelio.language.wishes import find_layout, wants_log
from xhelio.long_term_memory.model import Memory
from xhelio.long_term_memory.store import MemoryStore
from xhelio.tools.workspace import Workspace

if TYPE_CHECKING:
    from xhelio.agents.offline.skills import SkillHost

__all__ = ["Applied", "answer", "applicable", "remember_reply", "remembered", "with_preferences"]

_REMEMBER = re.compile(
    r"^\s*(?:please\s+)?(?:remember|keep in mind|note for later)(?:\s+that)?\s*[:,-]?\s+"
    r"(?P<what>.+)$"
    r"|^\s*from now on\s*[:,-]?\s+(?P<rule>.+)$",
    re.I | re.S,
)
_LIKING = re.compile(
    r"^(?:i\s+(?:prefer|like|want|always|never|usually)|always|never|use|show|plot|put|"
    r"please|don'?t|do not|my favou?rite)\b",
    re.I,
)
_PLOTTING = re.compile(r"\b(?:plot|scale|log|axis|axes|panel|overlay|figure|colou?r)", re.I)
_LINEAR = re.compile(r"\blinear\b", re.I)
_SEVERAL = re.compile(r"\band\b|\bcompare\b|\bvs\.?\b|\bversus\b|,", re.I)
_DATASET = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")


@dataclass(frozen=True)
class Applied:
    """One preference applied to a request: the words added and what to tell the user."""

    memory: Memory
    words: str
    says: str


def remembered(request: str) -> tuple[str, str] | None:
    """(text, type) when `request` asks to remember something, else None."""
    match = _REMEMBER.match(request.strip())
    if match is None:
        return None
    what = (match.group("what") or match.group("rule") or "").strip().rstrip(".").strip()
    if len(what) < 3:
        return None
    kind = "preference" if match.group("rule") or _LIKING.match(what) else "pitfall"
    return what[0].upper() + what[1:], kind


def _quantities(text: str) -> set[str]:
    return {q.key for q in QUANTITIES if q.phrases.search(text)}


def _about(quantity: Quantity, memory: Memory) -> bool:
    return quantity.phrases.search(memory.content) is not None


def applicable(preferences: Sequence[Memory], request: str) -> list[Applied]:
    """The enabled preferences that settle what `request` leaves open, one per kind."""
    asked = _quantities(request)
    if not asked:
        return []
    said_scale = wants_log(request) or _LINEAR.search(request) is not None
    several = len(asked) > 1 or _SEVERAL.search(request) is not None
    found: list[Applied] = []
    kinds: set[str] = set()
    for memory in preferences:
        if memory.type != "preference" or not memory.enabled or memory.archived:
            continue
        text = memory.content
        shared = [q for q in QUANTITIES if q.key in asked and _about(q, memory)]
        if "log" not in kinds and wants_log(text) and shared and not said_scale:
            kinds.add("log")
            found.append(Applied(memory, "on a log scale", f"a log scale for {shared[0].label}"))
        layout = find_layout(text)
        if (
            "layout" not in kinds
            and layout != "auto"
            and several
            and find_layout(request) == "auto"
        ):
            kinds.add("layout")
            words = "in separate panels" if layout == "separate" else "overlaid in one panel"
            found.append(Applied(memory, words, f"panel layout {words}"))
        dataset = _DATASET.search(text)
        if "dataset" not in kinds and dataset and shared and not _DATASET.search(request):
            kinds.add("dataset")
            name = dataset.group(0)
            found.append(Applied(memory, f"from {name}", f"{name} for {shared[0].label}"))
    return found


def _store(workspace: Workspace) -> MemoryStore | None:
    try:
        return MemoryStore.open(workspace.context.settings)
    except (sqlite3.Error, OSError, XhelioError):
        return None


def remember_reply(workspace: Workspace, request: str) -> AssistantReply | None:
    """Store what a "remember ..." request states, and say so; None for other requests."""
    asked = remembered(request)
    store = _store(workspace) if asked is not None else None
    if asked is None or store is None:
        return None
    text, kind = asked
    memory = store.add(text, kind, source="user_explicit", session_id=workspace.session.id)
    label = "preference" if kind == "preference" else "lesson"
    off = ""
    if not workspace.context.settings.memory_enabled:
        off = " Long-term memory is switched off (memory_enabled): it is kept, not used yet."
    return AssistantReply(
        f"I'll remember this {label} (memory {memory.id}): “{memory.content}”. It applies "
        f"to later sessions too; `xhelio memory list` shows it.{off}"
    )


def with_preferences(workspace: Workspace, request: str) -> tuple[str, str]:
    """`request` with what saved preferences settle added, and a note saying so ("": none).

    The use is counted and recorded as a ``memory_injected`` event of agent ``offline``.
    """
    if not workspace.context.settings.memory_enabled or remembered(request) is not None:
        return request, ""
    store = _store(workspace)
    if store is None:
        return request, ""
    applied = applicable(store.list(types=["preference"], include_disabled=False), request)
    if not applied:
        return request, ""
    ids = [a.memory.id for a in applied]
    store.touch(ids)
    workspace.session.events.publish(
        "memory_injected",
        agent="offline",
        summary=f"{len(applied)} saved preferences applied offline",
        data={"ids": ids, "scope": "offline"},
    )
    said = "; ".join(f"{a.says} (memory {a.memory.id})" for a in applied)
    rewritten = f"{request.rstrip(' .')} {' '.join(a.words for a in applied)}"
    return rewritten, f"Applied your saved preferences: {said}."


def answer(assistant: SkillHost, request: str) -> AssistantReply | None:
    """The ``memory`` offline skill: store a "remember ..." request."""
    return remember_reply(assistant.workspace, request)
