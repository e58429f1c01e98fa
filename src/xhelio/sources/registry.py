"""The registry of data sources: every source comes in through the ``xhelio.sources`` entry points.

An entry point's name is the source's name and its object a `SourceFactory`, usually the
source class itself, called with a `SourceSetup`. An entry point may instead load a
`SourceFamily`: several sources whose names come from the settings (the HAPI servers a
user configures). The built-in sources register through the same door, in xhelio's own
pyproject.toml::

    [project.entry-points."xhelio.sources"]
    hapi = "xhelio.sources.cdaweb_sources:CdawebHapiSource"
    cdf = "xhelio.sources.cdaweb_sources:CdawebCdfSource"
    hapi-servers = "xhelio.sources.servers:CONFIGURED_SERVERS"

A plugin that fails to load is listed with the reason (`Registration.problem`) and never
stops the others. `make_source` builds a source by name, behind the fragment cache by
default; an unknown name is a `UserError` listing the registered ones. `SourceName` is the
type of a tool's source argument: its JSON schema lists the registered names.

Imports config, errors and `sources.base`; the fragment cache (`sources.cache_front`)
only when a cached source is made, so searching catalogs never loads pandas.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from xhelio.config import Settings, load_settings
from xhelio.errors import ConfigError, UserError
from xhelio.sources.base import DataSource

if TYPE_CHECKING:  # the cache (pandas, pyarrow) loads only when a source is cached
    from xhelio.catalog.index import Catalog
    from xhelio.sources.cache import FragmentCache

__all__ = [
    "ENTRY_POINT_GROUP",
    "Registration",
    "SourceFactory",
    "SourceFamily",
    "SourceName",
    "SourceSetup",
    "make_source",
    "registrations",
    "source_names",
]

ENTRY_POINT_GROUP = "xhelio.sources"
_OWN_DISTRIBUTION = "xhelio"
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


@dataclass(frozen=True)
class SourceSetup:
    """What a source's constructor receives: its name, the settings, shared resources."""

    name: str
    """The name the source is registered under."""
    settings: Settings
    cache: FragmentCache | None = None
    """The process's disk cache, for sources that keep whole files (None: open your own)."""
    catalog: Callable[[], Catalog] | None = None
    """Opens the shared catalog index (CDAWeb's datasets) on first call; sources with a
    catalog of their own ignore it."""


SourceFactory = Callable[[SourceSetup], DataSource]
"""What an entry point loads: anything that builds a source from a `SourceSetup`."""


@dataclass(frozen=True)
class SourceFamily:
    """Several sources registered by one entry point, named by the settings."""

    members: Callable[[Settings], Mapping[str, SourceFactory]]


@dataclass(frozen=True)
class Registration:
    """One name in the registry: where it came from, and how to build it or why not."""

    name: str
    origin: str
    """The distribution and object that registered it, e.g. ``xhelio: xhelio.sources...``."""
    factory: SourceFactory | None = None
    problem: str = ""
    """Why the source cannot be used (a plugin that failed to load); empty when usable."""

    @property
    def usable(self) -> bool:
        """Whether the source can be built."""
        return self.factory is not None and not self.problem


def _origin(entry: EntryPoint) -> str:
    dist = entry.dist.name if entry.dist is not None else "?"
    return f"{dist}: {entry.value}"


def _ordered(found: Sequence[EntryPoint]) -> list[EntryPoint]:
    """Xhelio's own sources first, then plugins by distribution and name (stable order)."""

    def key(entry: EntryPoint) -> tuple[bool, str, str]:
        dist = entry.dist.name if entry.dist is not None else ""
        return (dist != _OWN_DISTRIBUTION, dist, entry.name)

    unique = {(e.name, e.value): e for e in found}  # one distribution seen twice on sys.path
    return sorted(unique.values(), key=key)


def _load(entry: EntryPoint, settings: Settings) -> list[Registration]:
    """The registrations one entry point makes; a failure is one broken registration."""
    origin = _origin(entry)
    try:
        loaded: object = entry.load()
        if isinstance(loaded, SourceFamily):
            members = loaded.members(settings)
            return [Registration(n, f"{origin} [{n}]", f) for n, f in members.items()]
    except Exception as exc:  # a plugin may fail in any way; it must not stop the others
        return [Registration(entry.name, origin, problem=f"failed to load: {_reason(exc)}")]
    if not callable(loaded):
        return [Registration(entry.name, origin, problem="is not a source class or factory")]
    factory: SourceFactory = loaded  # pyright: ignore[reportAssignmentType]
    return [Registration(entry.name, origin, factory)]


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


@functools.lru_cache(maxsize=4)
def _entry_points(search_path: tuple[str, ...]) -> list[EntryPoint]:
    """The group's entry points installed on `search_path` (read once per path)."""
    return _ordered(list(entry_points(group=ENTRY_POINT_GROUP)))


def registrations(settings: Settings) -> list[Registration]:
    """Every registered source, usable or not, in search order (xhelio's own first).

    Installed entry points are read once per `sys.path` (a plugin installed while the
    process runs is seen by the next process); configured families are asked each time.
    """
    found = _entry_points(tuple(sys.path))
    taken: dict[str, str] = {}
    out: list[Registration] = []
    for entry in found:
        for reg in _load(entry, settings):
            if not _NAME.match(reg.name):
                reg = Registration(
                    reg.name, reg.origin, problem="name must be lower-case letters, digits, - or _"
                )
            elif reg.name in taken and reg.usable:
                reg = Registration(
                    reg.name, reg.origin, problem=f"name already taken by {taken[reg.name]}"
                )
            elif reg.usable:
                taken[reg.name] = reg.origin
            out.append(reg)
    return out


def source_names(settings: Settings) -> list[str]:
    """Names of the usable registered sources, in search order."""
    return [r.name for r in registrations(settings) if r.usable]


def _find(name: str, settings: Settings) -> Registration:
    regs = registrations(settings)
    usable = next((r for r in regs if r.name == name and r.usable), None)
    if usable is not None:
        return usable
    broken = next((r for r in regs if r.name == name), None)
    if broken is not None:
        raise UserError(
            f"Data source '{name}' ({broken.origin}) cannot be used: {broken.problem}. "
            "Fix or uninstall that plugin; `xhelio sources` lists every source."
        )
    names = ", ".join(r.name for r in regs if r.usable) or "none"
    raise UserError(
        f"Unknown data source '{name}'. Registered sources: {names}. "
        "`xhelio sources` lists them (a development checkout registers its built-in "
        "sources when installed: pip install -e .)."
    )


def make_source(
    name: str,
    settings: Settings,
    cached: bool = True,
    cache: FragmentCache | None = None,
    catalog: Callable[[], Catalog] | None = None,
) -> DataSource:
    """Build the source registered as `name`, behind the fragment cache by default.

    `cache` shares one open cache (index and size limit) between sources and `catalog`
    one catalog index; by default a source opens what it needs itself.

    Raises:
        UserError: no usable source has that name (the message lists those that do).
    """
    factory = _find(name, settings).factory
    assert factory is not None  # _find returns usable registrations only
    source = factory(SourceSetup(name, settings, cache, catalog))
    if not cached:
        return source
    from xhelio.sources.cache import FragmentCache
    from xhelio.sources.cache_front import SourceBehindCache

    return SourceBehindCache(source, cache or FragmentCache(settings))


class _ListsRegisteredSources:
    """Puts the registered source names into a JSON schema, as its enum."""

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema: dict[str, Any] = handler(core_schema)
        try:
            names = source_names(load_settings())
        except ConfigError:
            return schema
        if names:
            schema["enum"] = names
        return schema


SourceName = Annotated[str, _ListsRegisteredSources()]
"""A registered source's name: the schema lists the names; `make_source` checks them."""
