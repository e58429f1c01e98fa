"""The `DataSource` interface and the shape of fetched data.

A source turns (dataset, parameters, time range) into `ParameterData`: one DataFrame per
parameter with a UTC DatetimeIndex named ``time``; a scalar has one column named after the
parameter, a vector one column per component, a 2-D parameter (spectrogram) one column per
bin with the bin centres in `bins`. Imports only `catalog.model`, `timerange`, `errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import pandas as pd

from xhelio.catalog.model import DatasetInfo
from xhelio.timerange import TimeRange

__all__ = ["DataSource", "ParameterData", "ProgressCallback", "drop_duplicate_times"]

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
    proven_until: datetime | None = None
    """None: the whole requested range is known complete. Else the data is only known
    complete before this time (a response whose end could not be proven); a cache must
    not keep what follows as complete."""
    notes: tuple[str, ...] = ()
    """Things a user should know about this data (e.g. contradictory duplicate times)."""
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


def drop_duplicate_times(data: ParameterData, what: str) -> ParameterData:
    """Sort by time; drop rows repeating a time with identical values; report the others.

    Every source's data goes through this (the fragment cache applies it before storing),
    so duplicates are handled the same way over HAPI and CDF. Rows that repeat a time
    with DIFFERENT values keep the first and add a note; the data is then not proven
    complete from the first contradiction on, so a cache does not keep it for good.
    """
    frame = data.frame
    if frame.empty:
        return data
    if not frame.index.is_monotonic_increasing:
        frame = frame.sort_index(kind="stable")
    repeated = frame.index.duplicated(keep=False)
    if not bool(repeated.any()):
        return data if frame is data.frame else replace(data, frame=frame)
    # Positional column names: a data column may itself be called "time".
    rows = pd.DataFrame(
        {k: frame.iloc[:, k].to_numpy() for k in range(frame.shape[1])} | {-1: frame.index}
    )
    rows = rows[[-1, *range(frame.shape[1])]]
    identical = rows.duplicated(keep="first").to_numpy()
    rows = rows.loc[~identical]
    clash = rows.iloc[:, 0].duplicated(keep="first").to_numpy()
    kept = frame.iloc[np.flatnonzero(~identical)].iloc[np.flatnonzero(~clash)]
    if not bool(clash.any()):
        return replace(data, frame=kept)
    times = pd.DatetimeIndex(rows.iloc[:, 0].to_numpy()[clash])
    first_bad: datetime = times.to_pydatetime()[0]
    note = (
        f"{what}: the server sent {int(clash.sum())} row(s) repeating a time with different "
        f"values (first at {first_bad.isoformat()}); the first value of each was kept. "
        "These rows are not cached, so a later fetch asks again."
    )
    proven = first_bad if data.proven_until is None else min(data.proven_until, first_bad)
    return replace(data, frame=kept, proven_until=proven, notes=(*data.notes, note))
