"""HAPI servers a user configures, each a source under its own name.

``[hapi_servers]`` in the config file (``name = "https://..."``) or
``XHELIO_HAPI_SERVERS="name=https://...,other=https://..."`` registers each server through
the `CONFIGURED_SERVERS` family (an ``xhelio.sources`` entry point like any other).

A server's catalog is its ``/catalog`` list (ids and titles), fetched on the first search
and kept in ``<home>/sources/<name>.catalog.json`` for a day, so searching works without
the network and a server that is down costs one failed request, not one per search (a
stale copy is used when the server does not answer). `info` and `fetch` are the server's
``/info`` and ``/data``; `cite` names the server (its ``/about`` title, HAPI 3) with the
DOI and contact its ``/info`` gives.

Imports config, errors, catalog.model and sources modules.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from xhelio.catalog.model import DatasetInfo
from xhelio.config import Settings
from xhelio.errors import XhelioError
from xhelio.sources.base import Citation, DatasetHit, ParameterData, ProgressCallback, SourceStatus
from xhelio.sources.cdaweb_sources import provider_name
from xhelio.sources.http import probe
from xhelio.sources.netguard import request_guard
from xhelio.sources.registry import SourceFactory, SourceFamily, SourceSetup
from xhelio.sources.search import rank_datasets
from xhelio.timerange import TimeRange

if TYPE_CHECKING:  # the HAPI client (pandas) loads on first use, not to search
    from xhelio.sources.hapi import HapiSource

__all__ = ["CONFIGURED_SERVERS", "HapiServerSource", "kept_catalog_path"]

CATALOG_MAX_AGE_S = 86400.0
"""How long a kept copy of a server's /catalog is used before asking the server again."""


class HapiServerSource:
    """One HAPI server by URL, with its own catalog (see the module docstring)."""

    def __init__(
        self, setup: SourceSetup, url: str, provider: str = "", acknowledgement: str = ""
    ) -> None:
        self.name = setup.name
        self.provider = provider
        """Who to credit when the server's /about does not say (known servers)."""
        self.acknowledgement = acknowledgement
        self.settings = setup.settings
        self.server_url = url.rstrip("/")
        """Keys the fragment cache, so data of different servers never mixes."""
        self._client: HapiSource | None = None
        self._datasets: list[DatasetInfo] | None = None
        self._about: dict[str, Any] | None = None
        self._lock = threading.Lock()

    @property
    def _hapi(self) -> HapiSource:
        """The HAPI client (made on first use)."""
        if self._client is None:
            from xhelio.sources.hapi import HapiSource

            self._client = HapiSource(self.settings, server_url=self.server_url)
        return self._client

    @property
    def _kept(self) -> Path:
        return kept_catalog_path(self.settings, self.name)

    def datasets(self) -> list[DatasetInfo]:
        """The server's catalog: ids and titles (kept on disk, see the module docstring)."""
        with self._lock:
            if self._datasets is None:
                self._datasets = self._load_catalog()
            return self._datasets

    def refresh(self) -> int:
        """Ask the server for its /catalog now and keep it; return how many datasets it lists."""
        listing = self._hapi.catalog()
        _write_kept(self._kept, self.server_url, listing)
        with self._lock:
            self._datasets = [DatasetInfo(id=i, title=t) for i, t in listing]
            return len(self._datasets)

    def _load_catalog(self) -> list[DatasetInfo]:
        kept = _read_kept(self._kept, self.server_url)
        if kept is not None and time.time() - kept[0] < CATALOG_MAX_AGE_S:
            return kept[1]
        try:
            listing = self._hapi.catalog()
        except XhelioError:
            if kept is not None:
                return kept[1]
            raise
        _write_kept(self._kept, self.server_url, listing)
        return [DatasetInfo(id=i, title=t) for i, t in listing]

    def search(self, query: str, limit: int = 10, mission: str | None = None) -> list[DatasetHit]:
        """The server's catalog ranked by the words of `query` (ids and titles)."""
        return rank_datasets(self.datasets(), query, self.name, limit, mission)

    def info(self, dataset_id: str) -> DatasetInfo:
        """The server's /info for the dataset."""
        return self._hapi.info(dataset_id)

    def fetch(
        self,
        dataset_id: str,
        parameters: Sequence[str],
        time_range: TimeRange,
        progress: ProgressCallback | None = None,
    ) -> dict[str, ParameterData]:
        """The server's /data for the parameters over the range."""
        return self._hapi.fetch(dataset_id, parameters, time_range, progress)

    def _provider(self) -> tuple[str, str]:
        """The known provider, else the server's /about title (HAPI 3), else its host.

        With the /about citation, else the known server's terms; /about is asked once.
        """
        with self._lock:
            if self._about is None:
                self._about = self._read_about()
            about = self._about
        title = self.provider or str(about.get("title") or "").strip()
        request = str(about.get("citation") or "").strip() or self.acknowledgement
        return title or provider_name(self.server_url), request

    def _read_about(self) -> dict[str, Any]:
        """The server's /about answer; {} when it has none (HAPI 2) or does not answer."""
        url = f"{self.server_url}/about"
        try:
            with request_guard(url, self.settings.http_timeout_s):
                response = self._hapi.client.get(url)
            body: Any = response.json() if response.status_code == 200 else {}
        except (httpx.HTTPError, ValueError, XhelioError):
            return {}
        return body if isinstance(body, dict) else {}  # pyright: ignore[reportUnknownVariableType]

    def cite(self, dataset_id: str) -> Citation:
        """The server as provider, with the dataset's title, DOI and contact from /info."""
        provider, request = self._provider()
        base = Citation(provider, self.server_url, dataset_id, acknowledgement=request)
        try:
            info = self.info(dataset_id)
        except XhelioError:
            return base
        return Citation(
            provider, self.server_url, info.id, info.title, info.doi, info.pi_name, request
        )

    def status(self) -> SourceStatus:
        """Catalog size (from the kept copy or the server) and whether /capabilities answers."""
        problem = probe(f"{self.server_url}/capabilities", self.settings)
        try:
            size: int | None = len(self.datasets())
        except XhelioError:
            size = None
        provider = self.provider or provider_name(self.server_url)
        return SourceStatus(provider, self.server_url, size, not problem, problem)

    def close(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            self._client.close()


def kept_catalog_path(settings: Settings, name: str) -> Path:
    """Where the catalog of the server named `name` is kept."""
    return settings.home / "sources" / f"{name}.catalog.json"


def _read_kept(path: Path, url: str) -> tuple[float, list[DatasetInfo]] | None:
    """(when fetched, datasets) of a kept catalog of this server, or None."""
    try:
        saved: Any = json.loads(path.read_text(encoding="utf-8"))
        if saved.get("url") != url:
            return None
        datasets = [DatasetInfo(id=str(i), title=str(t)) for i, t in saved["datasets"]]
        return float(saved["fetched"]), datasets
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write_kept(path: Path, url: str, listing: Sequence[tuple[str, str]]) -> None:
    """Keep the catalog atomically; a failure to write only costs a later request."""
    body = json.dumps({"url": url, "fetched": time.time(), "datasets": list(listing)})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
        os.replace(temp, path)
    except OSError:
        return


def _configured(settings: Settings) -> Mapping[str, SourceFactory]:
    """One factory per configured server."""
    return {name: partial(HapiServerSource, url=url) for name, url in settings.hapi_servers}


CONFIGURED_SERVERS = SourceFamily(_configured)
"""The entry point registering every HAPI server of the settings under its name."""
