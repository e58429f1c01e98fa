"""`SourceBehindCache`: the fragment cache in front of any registered source.

`CachedSource` serves `info` and `fetch` from the fragment cache; a registered source
also searches, cites, reports its status and closes, which go straight to it. Fragments
grow with the cadence `info` gives unless the source sets `cadence_sizes_fragments =
False` (a cadence that may be a guess must not make a one-day request fetch a month).
Imports `sources.base`, `sources.cache`.
"""

from __future__ import annotations

from xhelio.sources.base import Citation, DatasetHit, DataSource, SourceStatus
from xhelio.sources.cache import CachedSource, FragmentCache

__all__ = ["SourceBehindCache"]


class SourceBehindCache(CachedSource):
    """A registered source with the fragment cache in front of `info` and `fetch`."""

    def __init__(self, source: DataSource, cache: FragmentCache) -> None:
        adaptive = bool(getattr(source, "cadence_sizes_fragments", True))
        super().__init__(source, cache, adaptive_fragments=adaptive)
        self.fetches_unlisted_variables = bool(getattr(source, "fetches_unlisted_variables", False))

    def search(self, query: str, limit: int = 10, mission: str | None = None) -> list[DatasetHit]:
        """The source's own search."""
        return self.inner.search(query, limit, mission)

    def cite(self, dataset_id: str) -> Citation:
        """The source's own citation."""
        return self.inner.cite(dataset_id)

    def status(self) -> SourceStatus:
        """The source's own status."""
        return self.inner.status()

    def close(self) -> None:
        """Close the source (the shared cache stays open)."""
        self.inner.close()
