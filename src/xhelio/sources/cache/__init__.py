"""Disk cache of fetched data in time fragments, and `CachedSource` in front of a source.

One module per concern:

- `fragments`: how time is cut into fragments (fixed, epoch-aligned, cadence-adaptive).
- `encoding`: one fragment as an Arrow table carrying its metadata, and back.
- `store`: `FragmentCache`, the parquet files and their SQLite index (checksums, LRU).
- `inflight`: identical concurrent fetches merged into one.
- `source`: `CachedSource`, the `DataSource` wrapper that fetches only what is missing.
"""

from xhelio.sources.cache.fragments import adaptive_fragment_hours, fragment_span, fragment_start
from xhelio.sources.cache.source import CachedSource
from xhelio.sources.cache.store import (
    CacheError,
    CacheInfo,
    FragmentCache,
    SeriesKey,
    StoredFragment,
)

__all__ = [
    "CacheError",
    "CacheInfo",
    "CachedSource",
    "FragmentCache",
    "SeriesKey",
    "StoredFragment",
    "adaptive_fragment_hours",
    "fragment_span",
    "fragment_start",
]
