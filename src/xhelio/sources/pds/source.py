"""NASA PDS PPI as a `DataSource`: the shipped catalog searched, products read over HTTP.

`search` ranks the catalog (`catalog.load_catalog`) by the words of the query, in its
titles, ids, missions, instruments and targets; `info` is the catalog's description, or,
for a dataset whose fields the catalog does not record, the fields of its first label
in the archive. `fetch` finds the products of the range (`archive.PpiArchive`),
downloads each label and table once into the shared disk cache, reads them
(`products.read_product`), and joins the requested fields in time order over
[start, end). Progress counts products. Units, descriptions, fill values and valid
ranges come from the labels; `cite` names "NASA PDS PPI", the dataset, its bundle (PDS4)
or data set (PDS3), and the DOI a label gave (kept in ``<home>/sources/pds.dois.json``
so data later served from the fragment cache is still cited with it).

Without the ``planetary`` extra the source is registered but its search and fetch say
how to install it (a `ConfigError`; the one search leaves it out with that note).

Imports config, errors, timerange, catalog.model and sources modules; pdr and pandas
load on the first fetch.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.errors import NoDataError, ServerError, UnknownDatasetError, UnknownParameterError
from xhelio.sources.base import Citation, DatasetHit, ParameterData, ProgressCallback, SourceStatus
from xhelio.sources.http import probe
from xhelio.sources.pds.catalog import PdsDataset, load_catalog
from xhelio.sources.registry import SourceSetup
from xhelio.sources.search import rank_datasets
from xhelio.timerange import TimeRange

if TYPE_CHECKING:  # the archive client and readers load on the first fetch
    import pandas as pd

    from xhelio.sources.cache import FragmentCache
    from xhelio.sources.pds.archive import PpiArchive, Product
    from xhelio.sources.pds.products import ProductTable

__all__ = ["PDS_ACKNOWLEDGEMENT", "PDS_PROVIDER", "PDS_URL", "PdsSource"]

PDS_PROVIDER = "NASA PDS PPI"
PDS_URL = "https://pds-ppi.igpp.ucla.edu/"
PDS_ACKNOWLEDGEMENT = (
    "Data from NASA's Planetary Data System, Planetary Plasma Interactions node "
    "(PDS PPI, https://pds-ppi.igpp.ucla.edu). Cite the data set or bundle and its DOI, "
    "and acknowledge the instrument team."
)
"""PDS's request to its users, in our words: name the archive, the data set and its DOI."""


class PdsSource:
    """The PDS PPI archive (see the module docstring)."""

    cadence_sizes_fragments = False
    """The catalog gives no cadence: cache fragments stay one day."""

    def __init__(self, setup: SourceSetup) -> None:
        self.name = setup.name
        self.settings = setup.settings
        self.server_url = setup.settings.pds_url
        """Keys the fragment cache, so data of different archives never mixes."""
        self._shared_cache = setup.cache
        self._archive: PpiArchive | None = None
        self._own_cache: FragmentCache | None = None
        self._described: dict[str, DatasetInfo] = {}
        self._lock = threading.Lock()

    @property
    def archive(self) -> PpiArchive:
        """The archive client (made on first use)."""
        with self._lock:
            if self._archive is None:
                from xhelio.sources.pds.archive import PpiArchive

                cache = self._shared_cache
                if cache is None:
                    from xhelio.sources.cache import FragmentCache

                    cache = self._own_cache = FragmentCache(self.settings)
                self._archive = PpiArchive(self.settings, cache)
            return self._archive

    def _dataset(self, dataset_id: str) -> PdsDataset:
        found = load_catalog().get(dataset_id)
        if found is None:
            raise UnknownDatasetError(dataset_id)
        return found

    def search(self, query: str, limit: int = 10, mission: str | None = None) -> list[DatasetHit]:
        """The catalog ranked by the query's words (titles, ids, missions, targets)."""
        catalog = load_catalog()
        searched = [replace(d.info, instrument=d.words) for d in catalog.datasets.values()]
        hits = rank_datasets(searched, query, self.name, limit, mission)
        return [
            replace(h, title=catalog.datasets[h.dataset_id].info.title, mission_id=h.mission_id)
            for h in hits
        ]

    def info(self, dataset_id: str) -> DatasetInfo:
        """The catalog's description; fields from the archive's first label if it has none."""
        info = self._dataset(dataset_id).info
        if info.parameters:
            return info
        with self._lock:
            known = self._described.get(info.id)
        if known is not None:
            return known
        described = replace(info, parameters=self._fields_from_archive(info.id))
        with self._lock:
            self._described[info.id] = described
        return described

    def _fields_from_archive(self, dataset_id: str) -> tuple[ParameterInfo, ...]:
        from xhelio.sources.pds.archive import file_name
        from xhelio.sources.pds.products import read_fields

        dataset = self._dataset(dataset_id)
        first = self.archive.find_products(dataset_id, dataset.slot, None)[0]
        label = self.archive.download(first.label_url, dataset_id)
        return tuple(
            ParameterInfo(
                name=f.name,
                type="isotime" if f.is_time else "double",
                units=f.units,
                description=f.description,
                fill=str(f.fills[0]) if f.fills else None,
            )
            for f in read_fields(label, file_name(first.label_url))
        )

    def fetch(
        self,
        dataset_id: str,
        parameters: Sequence[str],
        time_range: TimeRange,
        progress: ProgressCallback | None = None,
    ) -> dict[str, ParameterData]:
        """The parameters over the range, read from the products that cover it."""
        dataset = self._dataset(dataset_id)
        products = self.archive.find_products(dataset.info.id, dataset.slot, time_range)
        tables: list[ProductTable] = []
        for done, product in enumerate(products, 1):
            tables.append(self._read(dataset.info.id, product))
            if progress is not None:
                progress(done, len(products), f"{dataset.info.id}: {done}/{len(products)} products")
        doi = next((t.doi for t in tables if t.doi), None)
        if doi:
            self._remember_doi(dataset.info.id, doi)
        return {name: _join(dataset.info.id, name, tables, time_range) for name in parameters}

    def _read(self, dataset_id: str, product: Product) -> ProductTable:
        from xhelio.sources.pds.archive import file_name
        from xhelio.sources.pds.products import read_product

        label = self.archive.download(product.label_url, dataset_id)
        table = self.archive.download(product.table_url, dataset_id)
        try:
            return read_product(
                label, table, file_name(product.label_url), file_name(product.table_url)
            )
        except ServerError:
            # What does not read must not stay in the cache for the next fetch.
            self.archive.cache.forget_file(label)
            self.archive.cache.forget_file(table)
            raise

    @property
    def _dois_file(self) -> Path:
        return self.settings.home / "sources" / "pds.dois.json"

    def _dois(self) -> dict[str, str]:
        try:
            saved: Any = json.loads(self._dois_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in saved.items()} if isinstance(saved, dict) else {}

    def _remember_doi(self, dataset_id: str, doi: str) -> None:
        with self._lock:
            dois = self._dois()
            if dois.get(dataset_id) == doi:
                return
            dois[dataset_id] = doi
            try:
                self._dois_file.parent.mkdir(parents=True, exist_ok=True)
                self._dois_file.write_text(json.dumps(dois, indent=1), encoding="utf-8")
            except OSError:
                return  # a later citation then lacks the DOI; the data is unaffected

    def cite(self, dataset_id: str) -> Citation:
        """NASA PDS PPI, the dataset and its bundle or data set, and a DOI a label gave."""
        try:
            dataset = self._dataset(dataset_id)
        except UnknownDatasetError:
            return Citation(PDS_PROVIDER, PDS_URL, dataset_id, acknowledgement=PDS_ACKNOWLEDGEMENT)
        kind = "PDS3 data set" if dataset.pds_version == 3 else "PDS4 bundle"
        return Citation(
            provider=PDS_PROVIDER,
            url=PDS_URL,
            dataset=dataset.info.id,
            title=f"{dataset.info.title} ({kind} {dataset.bundle})",
            doi=self._dois().get(dataset.info.id),
            acknowledgement=PDS_ACKNOWLEDGEMENT,
        )

    def status(self) -> SourceStatus:
        """Catalog size, and whether the archive answers now."""
        problem = probe(self.server_url + "/", self.settings)
        try:
            size: int | None = len(load_catalog().datasets)
        except ServerError:
            size = None
        return SourceStatus(PDS_PROVIDER, self.server_url, size, not problem, problem)

    def close(self) -> None:
        """Close the HTTP client and the cache this source opened."""
        if self._archive is not None:
            self._archive.close()
        if self._own_cache is not None:
            self._own_cache.close()
            self._own_cache = None


def _join(
    dataset_id: str, name: str, tables: Sequence[ProductTable], time_range: TimeRange
) -> ParameterData:
    """One parameter over [start, end) from every product that has it."""
    import pandas as pd

    pieces: list[pd.Series] = []
    info = None
    for table in tables:
        if name not in table.values:
            continue
        info = info or table.fields.get(name)
        pieces.append(pd.Series(table.values[name], index=table.times))
    if not pieces:
        columns = sorted({c for t in tables for c in t.values})
        raise UnknownParameterError(dataset_id, name, columns)
    joined = pd.concat(pieces).sort_index(kind="stable")
    index = pd.DatetimeIndex(joined.index)
    keep = (index >= time_range.start) & (index < time_range.end)
    series = pd.Series(joined.to_numpy()[keep], index=index[keep])
    if series.empty:
        raise NoDataError(f"The PDS products of {dataset_id} hold no {name} data in {time_range}.")
    if series.dtype == object:
        raise UnknownParameterError(
            dataset_id, f"{name} (text, not numbers)", sorted(tables[0].values)
        )
    frame = series.astype(float).to_frame(name)
    frame.index.name = "time"
    meta: dict[str, Any] = {}
    notes = tuple(n for t in tables for n in t.notes)
    if info is not None:
        if info.fills:
            meta["fill"] = list(info.fills)
        if info.valid_min is not None:
            meta["valid_min"] = info.valid_min
        if info.valid_max is not None:
            meta["valid_max"] = info.valid_max
        if info.raw_units and info.raw_units != info.units:
            meta["raw_units"] = info.raw_units
    return ParameterData(
        name=name,
        frame=frame,
        units=info.units if info is not None else "",
        description=info.description if info is not None else "",
        notes=notes,
        meta=meta,
    )
