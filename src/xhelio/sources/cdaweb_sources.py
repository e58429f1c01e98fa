"""The two CDAWeb sources: its HAPI server ("hapi") and its CDF file archive ("cdf").

Both serve the datasets of the local catalog index (the offline CDAWeb snapshot,
refreshed by `xhelio catalog refresh`): `search` is the index's ranked search, `info` its
description (the server's for a dataset the index does not list), and `cite` names
CDAWeb, or the server ``XHELIO_HAPI_URL`` / ``XHELIO_CDAS_URL`` points at instead, with
the dataset's DOI and PI. They differ only in how they fetch: `HapiSource` over
``hapi_url``, `CdawebSource` (CDAS REST + CDF files) over ``cdas_url``, each built on the
first fetch (searching loads neither, nor pandas). An ongoing dataset's catalog stop
(snapshots lag the archive) is reported as unknown, so the fragment cache asks the server
rather than trusting a stale end; and the cache's fragments do not grow with the
catalog's cadence, which may be a guess (`cadence_sizes_fragments`).

Imports config, errors, catalog and sources modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, cast
from urllib.parse import urlsplit

from xhelio.catalog.index import Catalog, open_catalog
from xhelio.catalog.model import ONGOING_WINDOW, DatasetInfo
from xhelio.errors import UnknownDatasetError, XhelioError
from xhelio.sources.base import (
    Citation,
    DatasetHit,
    ParameterData,
    ProgressCallback,
    SourceStatus,
)
from xhelio.sources.http import probe
from xhelio.sources.registry import SourceSetup
from xhelio.timerange import TimeRange

if TYPE_CHECKING:  # the fetch machinery (pandas, cdflib) loads on the first fetch
    from xhelio.sources.cdaweb import CdawebSource
    from xhelio.sources.hapi import HapiSource

__all__ = ["CDAWEB_ACKNOWLEDGEMENT", "CdawebCdfSource", "CdawebHapiSource", "provider_name"]

CDAWEB_URL = "https://cdaweb.gsfc.nasa.gov/"
CDAWEB_ACKNOWLEDGEMENT = (
    "Data accessed through NASA's Coordinated Data Analysis Web (CDAWeb, "
    "https://cdaweb.gsfc.nasa.gov) of the Space Physics Data Facility at NASA Goddard "
    "Space Flight Center. Please acknowledge the dataset's principal investigator(s) and "
    "cite its DOI where one is given."
)
"""CDAWeb's request to its users, in our words: name the service, the PI and the DOI."""

_CDAWEB_HOST = "cdaweb.gsfc.nasa.gov"


def provider_name(url: str) -> str:
    """Who serves `url`: "NASA CDAWeb" for CDAWeb's hosts, else the server's host."""
    host = urlsplit(url).netloc or url
    if host.split(":", 1)[0].lower() == _CDAWEB_HOST:
        return "NASA CDAWeb"
    return f"the server at {host}"


class _CdawebCatalogSource:
    """Search, describe and cite through the catalog index; subclasses fetch."""

    _service_url: str
    cadence_sizes_fragments = False
    """The index's cadence is partly guessed from titles: cache fragments stay one day."""

    def __init__(self, setup: SourceSetup) -> None:
        self.name = setup.name
        self.settings = setup.settings
        self._open_shared = setup.catalog
        self._own_catalog: Catalog | None = None
        self._client: HapiSource | CdawebSource | None = None

    def _catalog(self) -> Catalog:
        if self._open_shared is not None:
            return self._open_shared()
        if self._own_catalog is None:
            self._own_catalog = open_catalog(self.settings)
        return self._own_catalog

    def search(self, query: str, limit: int = 10, mission: str | None = None) -> list[DatasetHit]:
        """The catalog index's ranked search (unchanged), tagged with this source."""
        return [
            DatasetHit(h.dataset_id, h.title, self.name, h.mission_id, h.parameters, h.score)
            for h in self._catalog().search(query, limit=limit, mission=mission)
        ]

    def info(self, dataset_id: str) -> DatasetInfo:
        """The catalog's description, else the server's; a stale ongoing stop is unknown."""
        try:
            info = self._catalog().dataset(dataset_id)
        except UnknownDatasetError as unknown:
            try:
                return self._describe(dataset_id)
            except XhelioError:
                raise unknown from None
        if info.stop is not None and info.stop >= datetime.now(UTC) - ONGOING_WINDOW:
            return replace(info, stop=None)
        return info

    def _make_client(self) -> HapiSource | CdawebSource:
        """The client this source fetches through (called once, on first use)."""
        raise NotImplementedError

    def _fetcher(self) -> HapiSource | CdawebSource:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _describe(self, dataset_id: str) -> DatasetInfo:
        """The server's description of a dataset the catalog does not list."""
        return self._fetcher().info(dataset_id)

    def fetch(
        self,
        dataset_id: str,
        parameters: Sequence[str],
        time_range: TimeRange,
        progress: ProgressCallback | None = None,
    ) -> dict[str, ParameterData]:
        """Fetch through the client (HAPI /data, or the CDF files of the range)."""
        return self._fetcher().fetch(dataset_id, parameters, time_range, progress)

    def cite(self, dataset_id: str) -> Citation:
        """The provider of `_service_url`, with the dataset's title, DOI and PI."""
        provider = provider_name(self._service_url)
        cdaweb = provider == "NASA CDAWeb"
        base = Citation(
            provider=provider,
            url=CDAWEB_URL if cdaweb else self._service_url,
            dataset=dataset_id,
            acknowledgement=CDAWEB_ACKNOWLEDGEMENT if cdaweb else "",
        )
        try:
            info = self._catalog().dataset(dataset_id)
        except XhelioError:
            return base
        return replace(base, dataset=info.id, title=info.title, doi=info.doi, pi=info.pi_name)

    def status(self) -> SourceStatus:
        """Catalog size, and whether the service answers one request now."""
        problem = probe(self._service_url, self.settings)
        return SourceStatus(
            provider=provider_name(self._service_url),
            url=self._service_url,
            datasets=len(self._catalog().dataset_ids()),
            reachable=not problem,
            detail=problem,
        )

    def close(self) -> None:
        """Close the client and the catalog connection if this source opened them."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._own_catalog is not None:
            self._own_catalog.close()
            self._own_catalog = None


class CdawebHapiSource(_CdawebCatalogSource):
    """CDAWeb's datasets fetched from its HAPI server (``hapi_url``)."""

    def __init__(self, setup: SourceSetup) -> None:
        super().__init__(setup)
        self.server_url = setup.settings.hapi_url.rstrip("/")
        """Keys the fragment cache, so data of different servers never mixes."""
        self._service_url = self.server_url

    @property
    def hapi(self) -> HapiSource:
        """The HAPI client it fetches through (made on first use)."""
        return cast("HapiSource", self._fetcher())

    def _make_client(self) -> HapiSource:
        from xhelio.sources.hapi import HapiSource

        return HapiSource(self.settings, self.server_url)


class CdawebCdfSource(_CdawebCatalogSource):
    """CDAWeb's datasets read from its CDF files (CDAS REST listing, ``cdas_url``)."""

    fetches_unlisted_variables = True
    """Every variable of a file is fetchable by name (support data, quality flags)."""

    def __init__(self, setup: SourceSetup) -> None:
        super().__init__(setup)
        self._shared_cache = setup.cache
        self._service_url = setup.settings.cdas_url

    @property
    def files(self) -> CdawebSource:
        """The CDAS file listing and CDF reader it fetches through (made on first use)."""
        return cast("CdawebSource", self._fetcher())

    def _make_client(self) -> CdawebSource:
        from xhelio.sources.cdaweb import CdawebSource

        return CdawebSource(self.settings, cache=self._shared_cache)
