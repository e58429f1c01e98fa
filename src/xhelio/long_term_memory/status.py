"""`memory_status`: what the CLI, REST, MCP and the web page say about long-term memory.

Imports `xhelio.config` and this package.
"""

from __future__ import annotations

from typing import Any

from xhelio.config import Settings
from xhelio.long_term_memory.search import describe_search, load_embedder
from xhelio.long_term_memory.store import MemoryStore

__all__ = ["memory_status"]


def memory_status(settings: Settings) -> dict[str, Any]:
    """The switch, the settings, the search method and the counts."""
    store = MemoryStore.open(settings)
    embedder = load_embedder(settings)
    return {
        "enabled": settings.memory_enabled,
        "database": str(store.path),
        "every_turns": settings.memory_every_turns,
        "injection_tokens": settings.memory_injection_tokens,
        "per_type": settings.memory_per_type,
        "embedder": embedder.name if embedder is not None else None,
        "search": describe_search(embedder),
        **store.counts(),
    }
