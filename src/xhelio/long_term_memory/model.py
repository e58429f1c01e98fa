"""What one long-term memory is: its type, scopes, source, versions and latest review.

Kept apart from the store so every layer (tools, agents, CLI, web) can read a `Memory`
without opening SQLite. Imports the standard library and `xhelio.errors` only.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from xhelio.errors import UserError

__all__ = [
    "MEMORY_SOURCES",
    "MEMORY_TYPES",
    "Memory",
    "MemoryRequestError",
    "MemorySource",
    "MemoryType",
    "Review",
    "check_scopes",
    "check_source",
    "check_type",
    "make_tags",
]

MemoryType = Literal["preference", "summary", "pitfall", "reflection"]
MemorySource = Literal["extracted", "reflected", "user_explicit", "consolidated"]
MEMORY_TYPES: tuple[str, ...] = get_args(MemoryType)
MEMORY_SOURCES: tuple[str, ...] = get_args(MemorySource)
_PLAIN_SCOPES = ("generic", "data_ops", "visualization")
_MISSION_SCOPE = re.compile(r"^mission:[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
MAX_CONTENT = 2000
"""Longest memory text accepted (a memory is a short note, not a document)."""

_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "with",
        "when",
        "what",
        "which",
        "use",
        "used",
        "using",
        "prefer",
        "prefers",
        "always",
        "never",
        "please",
        "should",
        "would",
        "could",
        "not",
        "no",
        "do",
        "does",
        "did",
        "than",
        "then",
        "them",
        "they",
        "their",
        "there",
        "these",
        "those",
        "you",
        "your",
        "will",
        "can",
        "also",
        "into",
        "over",
        "under",
        "about",
        "after",
        "before",
    ]
)


class MemoryRequestError(UserError):
    """A memory request that cannot be done: unknown id, bad type, scope or text."""


@dataclass(frozen=True)
class Review:
    """An agent's (or the user's) rating of a memory: 5 prevented a mistake, 1 misled."""

    stars: int
    comment: str
    agent: str
    session_id: str | None
    created: str


@dataclass(frozen=True)
class Memory:
    """One remembered note with its bookkeeping.

    Attributes:
        id: Short stable identifier (shown to agents and users).
        type: preference, summary (of a session), pitfall (operational lesson) or
            reflection (procedural lesson learned from an error).
        content: The note itself.
        scopes: Where it applies: ``generic``, ``mission:<ID>``, ``data_ops``,
            ``visualization`` (several at once).
        tags: Keywords searched with the content.
        source: extracted, reflected, user_explicit or consolidated.
        version: 1 for a new memory; an edit makes version + 1 that `supersedes` the old one,
            which is archived.
        archived: Superseded or consolidated away (kept for history, never injected).
        enabled: The user may switch a memory off without deleting it.
    """

    id: str
    type: str
    content: str
    scopes: tuple[str, ...]
    tags: tuple[str, ...]
    source: str
    confidence: float = 0.8
    created: str = ""
    updated: str = ""
    session_id: str | None = None
    access_count: int = 0
    last_accessed: str | None = None
    version: int = 1
    supersedes: str | None = None
    archived: bool = False
    enabled: bool = True
    review: Review | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form (scopes and tags as lists)."""
        out = asdict(self)
        out["scopes"] = list(self.scopes)
        out["tags"] = list(self.tags)
        return out


def check_type(value: str) -> str:
    """`value` when it is a memory type, else a `MemoryRequestError` listing the valid ones."""
    if value not in MEMORY_TYPES:
        raise MemoryRequestError(
            f"Unknown memory type {value!r}; use one of {', '.join(MEMORY_TYPES)}."
        )
    return value


def check_source(value: str) -> str:
    """`value` when it is a memory source (a dash is read as an underscore)."""
    value = value.replace("-", "_")
    if value not in MEMORY_SOURCES:
        raise MemoryRequestError(
            f"Unknown memory source {value!r}; use one of {', '.join(MEMORY_SOURCES)}."
        )
    return value


def check_scopes(values: object) -> tuple[str, ...]:
    """Scopes in order without repeats (``generic`` when none).

    Raises:
        MemoryRequestError: an unknown scope.
    """
    items: list[str] = (
        [values] if isinstance(values, str) else [str(v) for v in values or ()]  # type: ignore[union-attr]
    )
    scopes: list[str] = []
    for raw in items:
        for scope in (s.strip() for s in raw.split(",")):
            if not scope:
                continue
            if scope.lower().startswith("mission:"):
                scope = "mission:" + scope.split(":", 1)[1].strip().upper()
            if scope not in _PLAIN_SCOPES and not _MISSION_SCOPE.match(scope):
                raise MemoryRequestError(
                    f"Unknown memory scope {scope!r}; use generic, data_ops, visualization "
                    "or mission:<ID> (e.g. mission:PSP)."
                )
            if scope not in scopes:
                scopes.append(scope)
    return tuple(scopes) or ("generic",)


def make_tags(content: str, scopes: tuple[str, ...] = (), limit: int = 12) -> tuple[str, ...]:
    """Keywords of `content` (identifiers such as BGSEc kept as written) plus its missions."""
    tags: list[str] = []
    for word in re.findall(r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]|[A-Za-z]", content):
        word = word.strip(".-")
        key = word if any(c.isdigit() or c.isupper() for c in word[1:]) else word.lower()
        if len(key) < 3 or key.lower() in _STOP:
            continue
        tags.append(key)
    tags.extend(s.split(":", 1)[1] for s in scopes if s.startswith("mission:"))
    unique: dict[str, str] = {}
    for tag in tags:
        unique.setdefault(tag.casefold(), tag)
    return tuple(unique.values())[:limit]
