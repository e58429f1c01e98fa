"""The `DataSource` protocol every source implements, and the shape of what it returns.

A source is one class with six methods: `search` its catalog, describe a dataset
(`info`), `fetch` parameters over a time range, `cite` a dataset, report its `status`,
and `close`. It registers under a name through the ``xhelio.sources`` entry-point group
(see `xhelio.sources.registry` and docs/sources.md); the fragment cache, the fetcher,
search, plotting, export and pipelines then work with it unchanged.

`fetch` turns (dataset, parameters, time range) into `ParameterData`: one DataFrame per
parameter with a UTC DatetimeIndex named ``time``; a scalar has one column named after the
parameter, a vector one column per component, a 2-D parameter (spectrogram) one column per
bin with the bin centres in `bins`. Imports only `catalog.model`, `timerange`, `errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from xhelio.catalog.model import DatasetInfo
from xhelio.timerange import TimeRange

if TYPE_CHECKING:  # pandas and numpy load when data is handled, not to search a catalog
    import numpy as np
    import pandas as pd

__all__ = [
    "Citation",
    "DataSource",
    "DatasetHit",
    "ParameterData",
    "ProgressCallback",
    "SourceStatus",
    "drop_duplicate_times",
]

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


@dataclass(frozen=True)
class DatasetHit:
    """One dataset a source's catalog found for a search, tagged with that source."""

    dataset_id: str
    title: str
    source: str
    """The registered name of the source that found it (what `fetch_data` takes)."""
    mission_id: str | None = None
    parameters: tuple[str, ...] = ()
    """Parameters of the dataset that matched the query."""
    score: float = 0.0
    """The source's own relevance, higher is better; comparable only within one source."""
    also_from: tuple[str, ...] = ()
    """Other sources whose catalog found the same dataset (filled by the merged search)."""


@dataclass(frozen=True)
class Citation:
    """How to credit data from a source: the real provider, and what is known of a dataset."""

    provider: str
    """Who serves the data, e.g. "NASA CDAWeb" or the title of a HAPI server."""
    url: str
    """Where the provider is found (the service's address)."""
    dataset: str = ""
    title: str = ""
    doi: str | None = None
    pi: str | None = None
    acknowledgement: str = ""
    """The provider's request to its users, when it makes one."""


@dataclass(frozen=True)
class SourceStatus:
    """What `xhelio sources` shows about one source."""

    provider: str
    url: str
    datasets: int | None = None
    """Size of the source's catalog (None: not known without asking the server)."""
    reachable: bool | None = None
    """Whether the service answered just now (None: not asked, e.g. local files)."""
    detail: str = ""
    """Why it is not reachable, or anything else a user should know."""


class DataSource(Protocol):
    """A place data comes from: one catalog, its datasets' data, and how to credit it.

    Implementations must not touch the network when constructed; errors are the ones of
    `xhelio.errors` (`UnknownDatasetError`, `NoDataError`, `ServerError`...).
    """

    name: str
    """The name the source is registered under ('hapi', 'cdf', a configured server...)."""

    def search(self, query: str, limit: int = 10, mission: str | None = None) -> list[DatasetHit]:
        """Return the datasets of this source's catalog best matching `query`, best first.

        `mission` restricts the search to one mission; a source that does not know it
        returns no hit (or raises `UserError` naming the missions it knows).
        """
        ...

    def info(self, dataset_id: str) -> DatasetInfo:
        """Return the dataset's metadata: title, coverage, cadence, parameters."""
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

    def cite(self, dataset_id: str) -> Citation:
        """Return how to credit `dataset_id`: the provider, and its DOI and PI where known."""
        ...

    def status(self) -> SourceStatus:
        """Return the provider, its address, the catalog size and whether it answers now."""
        ...

    def close(self) -> None:
        """Release what the source holds (HTTP clients, files); safe to call twice."""
        ...


def drop_duplicate_times(data: ParameterData, what: str) -> ParameterData:
    """Sort by time; drop rows repeating a time with identical values; report the others.

    Every source's data goes through this (the fragment cache applies it before storing),
    so duplicates are handled the same way over HAPI and CDF. Rows that repeat a time
    with DIFFERENT values keep the first and add a note; the data is then not proven
    complete from the first contradiction on, so a cache does not keep it for good.
    """
    import numpy as np
    import pandas as pd

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
