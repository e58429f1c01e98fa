"""Finding memories: FTS5 BM25 over content and tags, plus embeddings when a model is present.

Identifiers such as ``BGSEc`` or ``WI_H0_MFI`` need the lexical side; paraphrases
("log axis" for "logarithmic scale") need a semantic one. xhelio ships no embedding
model, so by default search is lexical only (`describe_search` says so). An `Embedder`
is plugged in by naming an entry point of the group ``xhelio.memory_embedders`` in the
setting ``memory_embedder``; its rankings are then fused with BM25's by reciprocal rank
(each list adds 1 / (60 + rank)). Imports the standard library, `xhelio.config` and this
package.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Protocol

from xhelio.config import Settings
from xhelio.long_term_memory.model import Memory
from xhelio.long_term_memory.store import MemoryStore

__all__ = [
    "EMBEDDER_GROUP",
    "Embedder",
    "describe_search",
    "fts_query",
    "load_embedder",
    "reciprocal_rank",
    "search_memories",
]

logger = logging.getLogger(__name__)

EMBEDDER_GROUP = "xhelio.memory_embedders"
_RRF_K = 60
_MIN_COSINE = 0.5


class Embedder(Protocol):
    """A local text embedding model: same-length vectors for texts."""

    name: str
    """Names the model (embeddings of different models are never compared)."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text."""
        ...


def load_embedder(settings: Settings) -> Embedder | None:
    """The embedder the setting ``memory_embedder`` names, or None (the default: none).

    A named entry point that is missing or fails to load is logged and ignored, so search
    stays lexical rather than failing.
    """
    name = settings.memory_embedder.strip()
    if not name:
        return None
    for point in entry_points(group=EMBEDDER_GROUP):
        if point.name == name:
            try:
                made = point.load()()
            except Exception as exc:  # a broken plug-in must not break memory
                logger.warning("Memory embedder %r could not be loaded: %s", name, exc)
                return None
            return made  # type: ignore[no-any-return]
    logger.warning("No memory embedder %r is installed (group %s).", name, EMBEDDER_GROUP)
    return None


def describe_search(embedder: Embedder | None) -> str:
    """One sentence saying how memories are searched."""
    if embedder is None:
        return (
            "Lexical search only (SQLite FTS5, BM25 over content and tags): no embedding "
            "model is configured, so paraphrases with no shared words are not found. Set "
            f"memory_embedder to an installed {EMBEDDER_GROUP} entry point to add one."
        )
    return f"FTS5 BM25 and embeddings from {embedder.name!r}, fused by reciprocal rank."


def fts_query(text: str) -> str:
    """An FTS5 query matching any word of `text` (each quoted: no operator can be injected)."""
    words = re.findall(r"[A-Za-z0-9_]+", text)
    unique = list(dict.fromkeys(w.lower() for w in words if len(w) > 1))
    return " OR ".join(f'"{w}"' for w in unique[:32])


def reciprocal_rank(rankings: Sequence[Sequence[str]], k: int = _RRF_K) -> list[str]:
    """Ids ordered by the sum over rankings of 1 / (k + rank), rank from 1."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda i: -scores[i])


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _semantic(
    store: MemoryStore, embedder: Embedder, query: str, active: list[Memory]
) -> list[str]:
    known = store.vectors(embedder.name)
    missing = [m for m in active if m.id not in known]
    if missing:
        made = embedder.embed([f"{m.content} {' '.join(m.tags)}" for m in missing])
        fresh = {m.id: v for m, v in zip(missing, made, strict=True)}
        store.save_vectors(embedder.name, fresh)
        known.update(fresh)
    (wanted,) = embedder.embed([query])
    scored = [(i, _cosine(wanted, v)) for i, v in known.items()]
    return [i for i, s in sorted(scored, key=lambda p: -p[1]) if s >= _MIN_COSINE]


def search_memories(
    store: MemoryStore,
    query: str,
    *,
    embedder: Embedder | None = None,
    limit: int = 10,
    scope: str | None = None,
    include_disabled: bool = True,
) -> list[Memory]:
    """Active memories relevant to `query`, best first (fused ranking with an embedder)."""
    active = {m.id: m for m in store.list(scope=scope, include_disabled=include_disabled)}
    match = fts_query(query)
    rankings = [[i for i, _ in store.lexical(match, limit * 4) if i in active]] if match else []
    if embedder is not None and active:
        try:
            rankings.append(
                [i for i in _semantic(store, embedder, query, list(active.values())) if i in active]
            )
        except Exception as exc:  # a failing model leaves the lexical ranking
            logger.warning("Memory embedder %r failed; lexical search only: %s", embedder.name, exc)
    return [active[i] for i in reciprocal_rank(rankings)[:limit]]
