"""Long-term memory across sessions: store, search, injection, consolidation rules.

(Not the data a session holds in memory: that is `xhelio.data.store`.) See
docs/memory.md. The memory agent that fills it is `xhelio.agents.memory_agent`.
"""

from xhelio.long_term_memory.model import Memory, MemoryRequestError
from xhelio.long_term_memory.store import MemoryStore

__all__ = ["Memory", "MemoryRequestError", "MemoryStore"]
