"""Consolidation rules: what to archive without a model, and which merges are safe.

Phase A (`prefilter`) needs no model. For each type over its budget it retires, in order:
exact duplicates, near-duplicates (same type and scopes, tags overlapping at least 80 %
and the same identifiers), memories with confidence under 0.3, extracted memories never
used in 30 days, and (summaries only) the oldest beyond the budget. User-stated memories
are never retired by a rule. Phase B asks a model to merge within groups of one type and
one scope set (`merge_groups`); `safe_merge` then refuses any merge that would lose
distinct knowledge: the merged text must keep every identifier (dataset ids, frames such
as BGSEc, mission names, numbers with units) of every memory it replaces, and the
memories merged must share a topic (tag overlap). Imports the standard library and this
package.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from xhelio.long_term_memory.model import Memory

__all__ = ["Retirement", "identifiers", "merge_groups", "over_budget", "prefilter", "safe_merge"]

_LOW_CONFIDENCE = 0.3
_STALE = timedelta(days=30)
_NEAR_DUPLICATE = 0.8
_SAME_TOPIC = 0.2
_IDENTIFIER = re.compile(r"\b(?=\w*(?:\d|[A-Z]\w*[A-Z]|_|[a-z][A-Z]))[A-Za-z0-9_.:-]{2,}\b")


@dataclass(frozen=True)
class Retirement:
    """One memory a rule archives, and why."""

    memory_id: str
    reason: str


def identifiers(text: str) -> set[str]:
    """Tokens that carry specific knowledge: ids with digits, capitals inside or underscores."""
    return {m.group(0).strip(".:-") for m in _IDENTIFIER.finditer(text)}


def _jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    left, right = {t.lower() for t in a}, {t.lower() for t in b}
    return len(left & right) / len(left | right) if left | right else 0.0


def over_budget(memories: Sequence[Memory], per_type: int) -> dict[str, int]:
    """How many active memories each type has beyond `per_type` (only types over it)."""
    counts: dict[str, int] = {}
    for memory in memories:
        if not memory.archived:
            counts[memory.type] = counts.get(memory.type, 0) + 1
    return {t: n - per_type for t, n in counts.items() if n > per_type}


def _stamp(text: str | None) -> datetime:
    try:
        parsed = datetime.fromisoformat(text or "")
    except ValueError:
        return datetime.now(UTC)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def prefilter(
    memories: Sequence[Memory], per_type: int, now: datetime | None = None
) -> list[Retirement]:
    """Phase A: memories to archive by rule, for the types over `per_type`."""
    now = now or datetime.now(UTC)
    out: list[Retirement] = []
    for kind, extra in over_budget(memories, per_type).items():
        group = sorted(
            (m for m in memories if m.type == kind and not m.archived),
            key=lambda m: m.updated,
            reverse=True,
        )
        retired: set[str] = set()
        for memory, reason in _reasons(group, now, retired):
            duplicate = reason.startswith(("same text", "near-duplicate"))
            if len(retired) >= extra and not duplicate:
                break
            if memory.id not in retired and memory.source != "user_explicit":
                retired.add(memory.id)
                out.append(Retirement(memory.id, reason))
    return out


def _reasons(group: list[Memory], now: datetime, retired: set[str]) -> Iterator[tuple[Memory, str]]:
    """Why each memory of `group` (newest first) could go, most certain reasons first."""
    for i, older in enumerate(group):
        for newer in group[:i]:
            if newer.id in retired or set(newer.scopes) != set(older.scopes):
                continue
            if newer.content.casefold() == older.content.casefold():
                yield older, f"same text as {newer.id}"
            elif _jaccard(newer.tags, older.tags) >= _NEAR_DUPLICATE and identifiers(
                newer.content
            ) == identifiers(older.content):
                yield older, f"near-duplicate of {newer.id}"
    for memory in group:
        if memory.confidence < _LOW_CONFIDENCE:
            yield memory, f"low confidence ({memory.confidence:.2f})"
    for memory in reversed(group):  # oldest first
        unused = memory.access_count == 0 and now - _stamp(memory.created) > _STALE
        if unused and memory.source == "extracted":
            yield memory, "never used in 30 days"
    if group and group[0].type == "summary":
        for memory in reversed(group):
            yield memory, "oldest session summary beyond the budget"


def merge_groups(memories: Sequence[Memory], per_type: int) -> list[list[Memory]]:
    """Phase B input: groups (one type, one scope set, 2+ members) of the types over budget."""
    excess = over_budget(memories, per_type)
    groups: dict[tuple[str, frozenset[str]], list[Memory]] = {}
    for memory in memories:
        if memory.type in excess and not memory.archived:
            groups.setdefault((memory.type, frozenset(memory.scopes)), []).append(memory)
    return [g for g in groups.values() if len(g) > 1]


def safe_merge(group: Sequence[Memory], ids: Sequence[str], content: str) -> str | None:
    """None when merging `ids` of `group` into `content` is safe, else why it is refused."""
    by_id = {m.id: m for m in group}
    chosen = [by_id[i] for i in dict.fromkeys(ids) if i in by_id]
    if len(chosen) < 2 or len(chosen) != len(set(ids)):
        return "a merge needs two or more memories of the same group"
    if not content.strip():
        return "the merged text is empty"
    kept = {i.casefold() for i in identifiers(content)}
    for memory in chosen:
        lost = sorted(i for i in identifiers(memory.content) if i.casefold() not in kept)
        if lost:
            return f"the merged text drops {', '.join(lost)} of {memory.id} (distinct knowledge)"
    first = chosen[0]
    if any(_jaccard(first.tags, other.tags) < _SAME_TOPIC for other in chosen[1:]):
        return "the memories are about different things"
    return None
