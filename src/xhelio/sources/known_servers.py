"""HAPI servers xhelio knows by name (AMDA, CSA, SSCWeb, INTERMAGNET, LISIRD...), as data.

`known_servers.json` beside this module lists each server's name, address, provider (who
to credit) and where the provider states its terms. `refresh_server` resolves a name or
an address to a server, asks it for its ``/catalog`` and keeps it (the same kept copy a
configured server has, see `sources.servers`); from then on the server is a data source
under its name (`REFRESHED_SERVERS`, an ``xhelio.sources`` entry point), so its datasets
are in the one search tagged with that name and cited with its provider. A server never
refreshed is not searched: nothing goes to the network for servers nobody asked for.

A server configured under ``[hapi_servers]`` with the same name wins (it is the user's).
Imports config, errors and `sources.servers`/`sources.registry`.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from functools import partial
from importlib.resources import files
from typing import Any

from xhelio.config import Settings
from xhelio.errors import UserError
from xhelio.sources.registry import SourceFactory, SourceFamily, SourceSetup
from xhelio.sources.servers import HapiServerSource, kept_catalog_path

__all__ = [
    "REFRESHED_SERVERS",
    "KnownServer",
    "RefreshedServer",
    "known_servers",
    "refresh_server",
    "resolve_server",
]


@dataclass(frozen=True)
class KnownServer:
    """One HAPI server of the registry."""

    name: str
    url: str
    provider: str
    citation: str = ""
    about: str = ""

    @property
    def acknowledgement(self) -> str:
        """What a citation says beyond the provider's name."""
        terms = f" Terms of use: {self.citation}" if self.citation else ""
        return f"Data served by {self.provider} over HAPI ({self.url}).{terms}"


@dataclass(frozen=True)
class RefreshedServer:
    """What `refresh_server` did: the source's name, its address and its catalog size."""

    name: str
    url: str
    provider: str
    datasets: int


@functools.cache
def known_servers() -> tuple[KnownServer, ...]:
    """The registry, read once from ``known_servers.json``."""
    text = files("xhelio.sources").joinpath("known_servers.json").read_text(encoding="utf-8")
    body: Any = json.loads(text)
    return tuple(KnownServer(**entry) for entry in body["servers"])


def _same_url(a: str, b: str) -> bool:
    def bare(url: str) -> str:
        return url.strip().rstrip("/").split("://", 1)[-1].lower()

    return bare(a) == bare(b)


def resolve_server(settings: Settings, name_or_url: str) -> KnownServer | None:
    """The server a name or address means: configured first, then the registry; else None."""
    wanted = name_or_url.strip()
    for name, url in settings.hapi_servers:
        if wanted.lower() == name or _same_url(wanted, url):
            known = _by_url(url)
            provider = known.provider if known is not None else ""
            return KnownServer(name, url, provider, known.citation if known else "")
    for server in known_servers():
        if wanted.lower() == server.name or _same_url(wanted, server.url):
            return server
    return None


def _by_url(url: str) -> KnownServer | None:
    return next((s for s in known_servers() if _same_url(s.url, url)), None)


def _source(settings: Settings, server: KnownServer) -> HapiServerSource:
    setup = SourceSetup(server.name, settings)
    return HapiServerSource(setup, server.url, server.provider, server.acknowledgement)


def refresh_server(settings: Settings, name_or_url: str) -> RefreshedServer:
    """Fetch and keep the catalog of the server `name_or_url` names; it becomes a source.

    Raises:
        UserError: no configured or known server has that name or address.
        ServerError: the server did not answer its /catalog.
    """
    server = resolve_server(settings, name_or_url)
    if server is None:
        names = ", ".join(s.name for s in known_servers())
        raise UserError(
            f"No HAPI server is known as '{name_or_url}'. Known servers: {names}. "
            "Add another under [hapi_servers] in config.toml (docs/sources.md)."
        )
    source = _source(settings, server)
    try:
        count = source.refresh()
    finally:
        source.close()
    return RefreshedServer(server.name, server.url, server.provider, count)


def _refreshed(settings: Settings) -> dict[str, SourceFactory]:
    """A factory per known server whose catalog was kept and that no configuration shadows."""
    configured = {name for name, _ in settings.hapi_servers}
    return {
        s.name: partial(
            HapiServerSource, url=s.url, provider=s.provider, acknowledgement=s.acknowledgement
        )
        for s in known_servers()
        if s.name not in configured and kept_catalog_path(settings, s.name).is_file()
    }


REFRESHED_SERVERS = SourceFamily(_refreshed)
"""The entry point registering every known server whose catalog was refreshed."""
