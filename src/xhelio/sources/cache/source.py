"""`CachedSource`: a `DataSource` in front of another that fetches only missing fragments.

A request reads the cached fragments and asks the wrapped source only for the missing
ones, one request per run of adjacent missing fragments, all missing parameters at once.

Fragment length: see `fragments`. The choice is recorded per dataset in the index, so warm
reads never ask the server for the cadence. The price: a cold request for one day of
1-minute data fetches the whole 32-day fragment around it.

Completeness: a fragment is *complete* when it ends before both "now minus
`settle_margin`" (1 day by default: late-arriving near-real-time data) and the dataset's
stop date. Complete fragments are reused forever (until evicted or cleared); incomplete
ones (overlapping the present or the dataset's stop) are stored too but reused only for
`incomplete_ttl` (10 minutes) after they were fetched, then fetched again. A fragment for
which the source raised `NoDataError` is stored as an empty fragment under the same rules.

A cache that never lies: a source's answer whose completeness it could not prove
(`ParameterData.proven_until`: a close-delimited HAPI body that stops early, CDF files
missing at the end of a listing, contradictory duplicates) is stored only in the
fragments that end by that time; the fragments from there on are returned but not
stored, so the next request asks for them again, and the result carries `proven_until`
so the answer can say where the data stops. Data that stops where the dataset's
coverage does (its stop date, within one cadence) is whole. Duplicate times go through
`drop_duplicate_times` (identical rows dropped, contradictory ones reported and not kept
for good) before anything is stored.

Robustness: identical concurrent requests are merged (see `inflight`); a failed write
(disk full, read-only index) is logged and the data is still returned.

Imports only `errors`, `timerange`, `catalog.model`, `sources.base` and its siblings;
never HTTP.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from xhelio.catalog.model import DatasetInfo
from xhelio.errors import NoDataError, ServerError, XhelioError
from xhelio.sources.base import (
    DataSource,
    ParameterData,
    ProgressCallback,
    drop_duplicate_times,
)
from xhelio.sources.cache.encoding import (
    ArrowTable,
    as_utc_sorted,
    assemble,
    empty_fragment_table,
    fragment_table,
    split_fragments,
)
from xhelio.sources.cache.fragments import (
    EPOCH,
    adaptive_fragment_hours,
    fragment_span,
    fragment_start,
)
from xhelio.sources.cache.inflight import INFLIGHT
from xhelio.sources.cache.store import FragmentCache, SeriesKey
from xhelio.sources.sizing import reaches
from xhelio.timerange import TimeRange

__all__ = ["CachedSource"]

_log = logging.getLogger(__name__)


def _runs(indices: Sequence[int]) -> list[tuple[int, int]]:
    """Group sorted fragment indices into (first, last) runs of consecutive ones."""
    runs: list[tuple[int, int]] = []
    for index in indices:
        if runs and runs[-1][1] == index - 1:
            runs[-1] = (runs[-1][0], index)
        else:
            runs.append((index, index))
    return runs


def _server_of(inner: DataSource) -> str:
    """Return the server URL of a source when it exposes one, so caches of servers differ."""
    for attribute in ("url", "base_url", "server_url"):
        value: object = getattr(inner, attribute, None)
        if isinstance(value, str):
            return value
    return ""


class CachedSource:
    """A `DataSource` that serves from the fragment cache and fetches only what is missing."""

    def __init__(
        self,
        inner: DataSource,
        cache: FragmentCache,
        *,
        server_url: str | None = None,
        adaptive_fragments: bool = True,
        settle_margin: timedelta = timedelta(days=1),
        incomplete_ttl: timedelta = timedelta(minutes=10),
        info_ttl: timedelta = timedelta(hours=1),
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.server_url = _server_of(inner) if server_url is None else server_url
        self.adaptive_fragments = adaptive_fragments
        self.settle_margin = settle_margin
        self.incomplete_ttl = incomplete_ttl
        self.info_ttl = info_ttl
        self._clock = clock or (lambda: datetime.now(UTC))
        self._infos: dict[str, tuple[datetime, DatasetInfo]] = {}
        self._hours: dict[str, int] = {}
        self._lock = threading.Lock()

    def info(self, dataset_id: str) -> DatasetInfo:
        """Return the dataset's metadata from the wrapped source, remembered for `info_ttl`."""
        now = self._clock()
        with self._lock:
            remembered = self._infos.get(dataset_id)
        if remembered is not None and now - remembered[0] < self.info_ttl:
            return remembered[1]
        info = self.inner.info(dataset_id)
        with self._lock:
            self._infos[dataset_id] = (now, info)
        return info

    def fragment_hours(self, dataset_id: str) -> int:
        """Return the fragment length used for `dataset_id` (asks `info` once per dataset)."""
        with self._lock:
            known = self._hours.get(dataset_id)
        if known is not None:
            return known
        hours = base = self.cache.fragment_hours
        if self.adaptive_fragments:
            recorded = self.cache.layout(self.name, self.server_url, dataset_id)
            if recorded is None:
                hours = adaptive_fragment_hours(base, self.info(dataset_id).cadence)
                self.cache.set_layout(self.name, self.server_url, dataset_id, hours)
            else:
                hours = recorded
        with self._lock:
            self._hours[dataset_id] = hours
        return hours

    def fetch(
        self,
        dataset_id: str,
        parameters: Sequence[str],
        time_range: TimeRange,
        progress: ProgressCallback | None = None,
    ) -> dict[str, ParameterData]:
        """Return every requested parameter over `time_range`, fetching only missing fragments."""
        names = list(dict.fromkeys(parameters))
        if not names:
            # "All parameters" has no per-parameter fragments to cache.
            return self.inner.fetch(dataset_id, parameters, time_range, progress)
        hours = self.fragment_hours(dataset_id)
        first, last = fragment_span(time_range, hours)
        keys = {n: SeriesKey(self.name, self.server_url, dataset_id, n) for n in names}
        found: dict[str, dict[int, ArrowTable]] = {n: {} for n in names}
        missing: dict[str, set[int]] = {}
        used: list[str] = []
        now = self._clock().timestamp()
        ttl = self.incomplete_ttl.total_seconds()
        for name in names:
            stored = self.cache.lookup(keys[name], hours, first, last)
            for index in range(first, last + 1):
                entry = stored.get(index)
                fresh = entry is not None and (entry.complete or now - entry.fetched_at < ttl)
                table = self.cache.read(entry) if entry is not None and fresh else None
                if entry is None or table is None:
                    missing.setdefault(name, set()).add(index)
                else:
                    found[name][index] = table
                    used.append(entry.path)
        if used:
            self.cache.touch(used)
        notes: dict[str, list[str]] = {}
        unproven: dict[str, datetime] = {}
        if missing:
            self._fill(dataset_id, hours, keys, missing, found, progress, notes, unproven)
        result = {
            n: assemble(n, [found[n][i] for i in range(first, last + 1)], time_range) for n in names
        }
        for name in names:
            texts = notes.get(name)
            until = unproven.get(name)
            if texts or (until is not None and until < time_range.end):
                result[name] = replace(
                    result[name],
                    notes=tuple(texts or ()),
                    proven_until=until if until is not None and until < time_range.end else None,
                )
        if all(data.frame.empty for data in result.values()):
            raise NoDataError(
                f"No data for {dataset_id} ({', '.join(names)}) from {time_range}: the "
                f"server has nothing in this range. Try another time range, or check the "
                f"dataset's coverage with `xhelio catalog show {dataset_id}`."
            )
        return result

    def _fill(
        self,
        dataset_id: str,
        hours: int,
        keys: Mapping[str, SeriesKey],
        missing: Mapping[str, set[int]],
        found: dict[str, dict[int, ArrowTable]],
        progress: ProgressCallback | None,
        notes: dict[str, list[str]],
        unproven: dict[str, datetime],
    ) -> None:
        """Fetch the missing fragments this thread owns; wait for those others are fetching.

        A fragment the answer did not prove complete (it ends after the answer's
        `proven_until`) is returned but not stored, so the next request asks for it
        again; `unproven` gets, per parameter, the time from which data is unproven.
        """
        folder = str(self.cache.folder)
        fetch_keys = {
            (folder, keys[n].text(hours), i): (n, i)
            for n, indices in missing.items()
            for i in indices
        }
        owned, others = INFLIGHT.claim(list(fetch_keys))
        mine: dict[str, set[int]] = {}
        for key in owned:
            name, index = fetch_keys[key]
            mine.setdefault(name, set()).add(index)
        try:
            all_indices = sorted({i for indices in mine.values() for i in indices})
            for first, last in _runs(all_indices):
                run_names = [n for n in keys if any(first <= i <= last for i in mine.get(n, ()))]
                fetched, proven, run_notes = self._fetch_run(
                    dataset_id, hours, run_names, first, last, progress
                )
                for name, texts in run_notes.items():
                    notes.setdefault(name, []).extend(texts)
                if proven is not None and self._coverage_ended(dataset_id, proven):
                    proven = None  # the data stops where the dataset does: nothing is missing
                if proven is not None:
                    for name in run_names:
                        unproven[name] = min(unproven.get(name, proven), proven)
                settled = self._settled_until(dataset_id, hours, first)
                fetched_at = self._clock().timestamp()
                for (name, index), table in fetched.items():
                    if index not in mine[name]:
                        continue  # cached already; fetched only because the run spans it
                    end = fragment_start(index + 1, hours)
                    if proven is None or end <= proven:
                        # Never store what the answer could not prove: it is asked again.
                        self._store(keys[name], hours, index, table, end <= settled, fetched_at)
                    found[name][index] = table
                    key = (folder, keys[name].text(hours), index)
                    owned[key].set_result(table)
                    INFLIGHT.release(key)
        except BaseException as exc:
            for key, future in owned.items():
                if not future.done():
                    future.set_exception(exc)
                    INFLIGHT.release(key)
            raise
        for key, future in others.items():
            name, index = fetch_keys[key]
            found[name][index] = future.result()

    def _store(
        self,
        key: SeriesKey,
        hours: int,
        index: int,
        table: ArrowTable,
        complete: bool,
        fetched_at: float,
    ) -> None:
        """Write a fragment; a full or read-only disk costs the cache, not the answer."""
        try:
            self.cache.write(key, hours, index, table, complete=complete, fetched_at=fetched_at)
        except (OSError, sqlite3.Error) as exc:
            _log.warning(
                "Could not cache %s/%s fragment %s in %s (%s); the data is returned uncached. "
                "Free disk space or lower cache_max_mb.",
                key.dataset,
                key.parameter,
                fragment_start(index, hours).isoformat(),
                self.cache.folder,
                exc,
            )

    def _fetch_run(
        self,
        dataset_id: str,
        hours: int,
        names: Sequence[str],
        first: int,
        last: int,
        progress: ProgressCallback | None,
    ) -> tuple[dict[tuple[str, int], ArrowTable], datetime | None, dict[str, tuple[str, ...]]]:
        """Ask the wrapped source for fragments `first`..`last`, cut its answer per fragment.

        Returns the tables, the time before which the answer is proven complete (None:
        all of it) and each parameter's notes.
        """
        run = TimeRange(fragment_start(first, hours), fragment_start(last + 1, hours))
        try:
            result = self.inner.fetch(dataset_id, names, run, progress)
        except NoDataError as exc:
            empty = {(n, i): empty_fragment_table() for n in names for i in range(first, last + 1)}
            return empty, exc.proven_until, {}
        tables: dict[tuple[str, int], ArrowTable] = {}
        proven: datetime | None = None
        notes: dict[str, tuple[str, ...]] = {}
        for name in names:
            data = result.get(name) or next(
                (d for k, d in result.items() if k.lower() == name.lower()), None
            )
            if data is None:
                raise ServerError(
                    f"Source '{self.name}' answered {dataset_id} without parameter '{name}'. "
                    "Retry; if it persists, report it with the dataset id: the source broke "
                    "its contract of returning every requested parameter."
                )
            frame = as_utc_sorted(data.frame, f"{dataset_id}/{name}")
            # One duplicate rule for every source, applied before anything is stored.
            data = drop_duplicate_times(replace(data, frame=frame), f"{dataset_id}.{name}")
            if data.proven_until is not None:
                proven = data.proven_until if proven is None else min(proven, data.proven_until)
            notes[name] = data.notes
            for offset, part in enumerate(split_fragments(data.frame, first, last, hours)):
                tables[(name, first + offset)] = fragment_table(data, part)
        return tables, proven, notes

    def _coverage_ended(self, dataset_id: str, proven: datetime) -> bool:
        """Whether data proven up to `proven` reaches the dataset's stop (so it is whole)."""
        try:
            info = self.info(dataset_id)
        except XhelioError:
            return False
        stop = info.stop
        if stop is None:
            return False
        stop = stop.replace(tzinfo=UTC) if stop.tzinfo is None else stop.astimezone(UTC)
        return reaches(proven, stop, info.cadence)

    def _settled_until(self, dataset_id: str, hours: int, first: int) -> datetime:
        """Return the time before which fragments can no longer change (see module doc)."""
        cutoff = self._clock() - self.settle_margin
        if fragment_start(first + 1, hours) > cutoff:
            return cutoff  # nothing in this run can be complete: no need to ask for the stop
        try:
            stop = self.info(dataset_id).stop
        except XhelioError:
            return EPOCH.replace(year=1)  # unknown stop: keep everything refreshable
        if stop is None:
            return cutoff
        stop = stop.replace(tzinfo=UTC) if stop.tzinfo is None else stop.astimezone(UTC)
        return min(cutoff, stop)
