"""A dataset or parameter id that does not exist is an error naming the nearest real ones.

Sources report an unknown id as the server does (HAPI's 1406/1407, a 404): this adds the
nearest ids from the catalog (`language.nearest`), so a model that made one up can pick
a real one on its next call instead of guessing again.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from xhelio.catalog.index import Catalog
from xhelio.catalog.model import DatasetInfo
from xhelio.errors import UnknownDatasetError, UnknownParameterError
from xhelio.language.nearest import nearest_datasets, nearest_parameters

__all__ = ["nearest_ids_named"]


def _listed(catalog: Catalog, dataset_id: str) -> DatasetInfo | None:
    try:
        return catalog.dataset(dataset_id)
    except UnknownDatasetError:
        return None


@contextmanager
def nearest_ids_named(catalog: Catalog) -> Generator[None]:
    """Unknown dataset or parameter errors raised inside name the nearest real ids."""
    try:
        yield
    except UnknownDatasetError as unknown:
        if unknown.suggestions:
            raise
        near = nearest_datasets(catalog, unknown.dataset_id)
        raise UnknownDatasetError(unknown.dataset_id, near) from unknown
    except UnknownParameterError as unknown:
        if unknown.nearest:
            raise
        info = _listed(catalog, unknown.dataset_id)
        near = nearest_parameters(unknown.parameter, unknown.available, info)
        raise UnknownParameterError(
            unknown.dataset_id, unknown.parameter, unknown.available, near
        ) from unknown
