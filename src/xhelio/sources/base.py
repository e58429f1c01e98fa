"""The `DataSource` interface and the shape of fetched data.

A source turns (dataset, parameters, time range) into `ParameterData`: one DataFrame per
parameter with a UTC DatetimeIndex named ``time``; a scalar has one column named after the
parameter, a vector one column per component, a 2-D parameter (spectrogram) one column per
bin with the bin centres in `bins`. Imports only `catalog.model`, `timerange`, `errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from xhelio.catalog.model import DatasetInfo
from xhelio.timerange import TimeRange

__all__ = ["DataSource", "ParameterData", "ProgressCallback"]

ProgressCallback = Callable[[int, int | None, str], None]
"""Called as progress(done, total, what); `total` is None when unknown (bytes or steps)."""


@dataclass(frozen=True)
class ParameterData:
    """Values of one parameter over a time range."""

    name: str
    frame: pd.DataFrame
    units: str = ""
    description: str = ""
    bins: np.ndarray | None = None
    bins_name: str | None = None
    bins_units: str | None = None
    meta: dict[str, Any] = field(default_factory=dict[str, Any])
    """JSON-able structure beyond a flat table (see `xhelio.sources.dims`): ``dims``
    (one record per non-time dimension: name, size, units, centres, edges, labels, or
    the frame columns holding them per record), ``fill``, ``valid_min``/``valid_max``,
    ``raw_units``, ``display_type``, ``scale_type``, ``label_axis``."""

    @property
    def is_2d(self) -> bool:
        """Whether this parameter has bins or several dimensions (not a plain vector)."""
        dims = self.meta.get("dims") or []
        multi = len(dims) > 1 or any(d.get("is_bins") for d in dims)
        return self.bins is not None or multi


class DataSource(Protocol):
    """A place data comes from: a HAPI server or CDAWeb's CDF archive."""

    name: str

    def info(self, dataset_id: str) -> DatasetInfo:
        """Return the dataset's metadata, from the server."""
        ...

    def fetch(
        self,
        dataset_id: str,
        parameters: Sequence[str],
        time_range: TimeRange,
        progress: ProgressCallback | None = None,
    ) -> dict[str, ParameterData]:
        """Return every requested parameter over `time_range` (start inclusive, end exclusive).

        Fill values are NaN; VALIDMIN/VALIDMAX are kept in `meta`, not applied.
        Raises `NoDataError` when the server has nothing in range,
        `UnknownDatasetError`/`UnknownParameterError` for bad ids, and `ServerError`
        subclasses for failures of the service.
        """
        ...
