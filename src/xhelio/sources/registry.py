"""Choose a data source by name and wrap it in the fragment cache."""

from __future__ import annotations

from typing import Literal

from xhelio.config import Settings
from xhelio.errors import UserError
from xhelio.sources.base import DataSource
from xhelio.sources.cache import CachedSource, FragmentCache
from xhelio.sources.cdaweb import CdawebSource
from xhelio.sources.hapi import HapiSource

__all__ = ["SOURCE_NAMES", "SourceName", "make_source"]

SourceName = Literal["hapi", "cdf"]
SOURCE_NAMES: tuple[SourceName, ...] = ("hapi", "cdf")


def make_source(
    name: str, settings: Settings, cached: bool = True, cache: FragmentCache | None = None
) -> DataSource:
    """Return the source called `name` ('hapi' or 'cdf'), behind the disk cache by default.

    `cache` shares one open cache (index and size limit) between sources; by default each
    source opens the cache folder of `settings` itself.
    """
    inner: DataSource
    if name == "hapi":
        inner = HapiSource(settings)
    elif name == "cdf":
        inner = CdawebSource(settings, cache=cache)
    else:
        raise UserError(f"Unknown data source '{name}'. Use one of: {', '.join(SOURCE_NAMES)}.")
    if not cached:
        return inner
    return CachedSource(inner, cache or FragmentCache(settings))
