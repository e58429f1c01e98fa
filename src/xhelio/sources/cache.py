"""Disk cache of fetched data in time fragments, and `CachedSource` in front of a source.

Time is cut into fixed fragments aligned to 1970-01-01T00:00Z (so 24-hour fragments start
at UTC midnight). One parquet file holds one fragment of one parameter of one dataset of
one server; a SQLite index (`index.sqlite` in the cache folder) records every file with its
size and last access, for LRU eviction under `cache_max_mb`. A request reads the cached
fragments and asks the wrapped source only for the missing ones, one request per run of
adjacent missing fragments, all missing parameters at once.

Fragment length: `cache_fragment_hours` (24 by default) is the base. When the dataset's
cadence is known, the length is doubled (up to 32x) while a fragment still holds at most
`TARGET_FRAGMENT_ROWS` rows, so a year of 1-minute data is 13 files per parameter instead
of 365 (`benchmarks/bench_cache.py`: a warm read of that year, 3-vector + scalar, costs
~50 ms CPU from 26 files against ~240-300 ms from 730 daily files, mostly per-file
overhead). The choice is recorded per dataset in the index, so warm reads never ask the
server for the cadence. The price: a cold request for one day of 1-minute data fetches
the whole 32-day fragment around it.

Completeness: a fragment is *complete* when it ends before both "now minus
`settle_margin`" (1 day by default: late-arriving near-real-time data) and the dataset's
stop date. Complete fragments are reused forever (until evicted or cleared); incomplete
ones (overlapping the present or the dataset's stop) are stored too but reused only for
`incomplete_ttl` (10 minutes) after they were fetched, then fetched again. A fragment for
which the source raised `NoDataError` is stored as an empty fragment under the same rules.

A cache that never lies: a source's answer whose completeness it could not prove
(`ParameterData.proven_until`, e.g. a close-delimited HAPI body) is stored complete only
before that time; duplicate times go through `drop_duplicate_times` (identical rows
dropped, contradictory ones reported and not kept for good) before anything is stored.

Robustness: identical concurrent requests are merged (one in-flight future per fragment,
shared by every `CachedSource` in the process, so N threads asking for the same missing
day cause one fetch and see its result or its error). Writes are atomic (temp file +
`os.replace`); every file's checksum is in the index and verified on read, so a damaged
or unreadable fragment is deleted and fetched again, never returned; an index that
cannot be opened is reported (`CacheError`) and never deleted; a failed write (disk
full, read-only index) is logged and the data is still returned. Files in one folder
are indexed by one SQLite database (WAL), so several processes may share a cache.

Whole downloaded files (CDAWeb's CDFs) are kept in the same index (table ``files``,
folder ``files/``) under the same size limit: eviction, `info` and `clear` see
fragments and files together.

Imports only `config`, `errors`, `timerange`, `catalog.model`, `sources.base`; never HTTP.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from xhelio.catalog.model import DatasetInfo
from xhelio.config import Settings, load_settings
from xhelio.errors import DataUnavailableError, NoDataError, ServerError, XhelioError
from xhelio.migrations import Migration, columns, migrate, sql
from xhelio.sources.base import (
    DataSource,
    ParameterData,
    ProgressCallback,
    drop_duplicate_times,
)
from xhelio.sources.sizing import cadence_seconds
from xhelio.timerange import TimeRange

__all__ = [
    "CacheError",
    "CacheInfo",
    "CachedSource",
    "FragmentCache",
    "SeriesKey",
    "StoredFragment",
]

TARGET_FRAGMENT_ROWS = 50_000
MAX_FRAGMENT_MULTIPLIER = 32
INDEX_FILE = "index.sqlite"
FRAGMENTS_DIR = "fragments"
FILES_DIR = "files"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_META_KEY = b"xhelio"
_log = logging.getLogger(__name__)

ArrowTable = Any
"""A `pyarrow.Table` (pyarrow ships no type stubs)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS fragments (
    path TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    source TEXT NOT NULL,
    server TEXT NOT NULL,
    dataset TEXT NOT NULL,
    parameter TEXT NOT NULL,
    hours INTEGER NOT NULL,
    fragment INTEGER NOT NULL,
    size INTEGER NOT NULL,
    rows INTEGER NOT NULL,
    complete INTEGER NOT NULL,
    fetched_at REAL NOT NULL,
    last_access REAL NOT NULL,
    checksum TEXT
);
CREATE INDEX IF NOT EXISTS fragments_by_key ON fragments (key, fragment);
CREATE INDEX IF NOT EXISTS fragments_by_access ON fragments (last_access);
CREATE TABLE IF NOT EXISTS layouts (
    source TEXT NOT NULL,
    server TEXT NOT NULL,
    dataset TEXT NOT NULL,
    base_hours INTEGER NOT NULL,
    hours INTEGER NOT NULL,
    PRIMARY KEY (source, server, dataset, base_hours)
);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    dataset TEXT NOT NULL,
    size INTEGER NOT NULL,
    checksum TEXT NOT NULL,
    last_access REAL NOT NULL
);
"""


def _add_checksums(db: sqlite3.Connection) -> None:
    """An index written before checksums existed gets the column (empty: not verified)."""
    if "checksum" not in columns(db, "fragments"):
        db.execute("ALTER TABLE fragments ADD COLUMN checksum TEXT")


_MIGRATIONS = (
    Migration(1, "fragments, layouts and files tables", sql(_SCHEMA)),
    Migration(2, "fragments.checksum column", _add_checksums),
)


@dataclass(frozen=True)
class SeriesKey:
    """What a cached series is: one parameter of one dataset of one server."""

    source: str
    server: str
    dataset: str
    parameter: str

    def text(self, hours: int) -> str:
        """Return the index key of this series cut in `hours`-long fragments."""
        return "\x1f".join((self.source, self.server, self.dataset, self.parameter, str(hours)))


@dataclass(frozen=True)
class StoredFragment:
    """One row of the cache index: a fragment file and its state."""

    path: str
    fragment: int
    complete: bool
    fetched_at: float
    rows: int
    checksum: str | None = None


@dataclass(frozen=True)
class CacheInfo:
    """What the fragment cache holds and where."""

    location: Path
    entries: int
    total_bytes: int
    max_bytes: int
    datasets: dict[str, tuple[int, int]]
    """Dataset id -> (fragments, bytes), summed over sources and servers."""


def _slug(text: str) -> str:
    """Return a file-name-safe form of `text`; hashed when it was changed or has capitals.

    Capitals get a hash too so two ids differing only in case stay apart on
    case-insensitive file systems.
    """
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", text)[:60].lstrip(".") or "_"
    if safe == text and text == text.lower():
        return safe
    return f"{safe}-{hashlib.sha1(text.encode()).hexdigest()[:10]}"


def fragment_start(index: int, hours: int) -> datetime:
    """Return the start of fragment `index` when fragments are `hours` long."""
    return _EPOCH + timedelta(hours=hours * index)


def fragment_span(time_range: TimeRange, hours: int) -> tuple[int, int]:
    """Return the first and last fragment index that `time_range` touches."""
    span_us = hours * 3_600_000_000
    start_us = (time_range.start - _EPOCH) // _US
    end_us = (time_range.end - _EPOCH) // _US
    return start_us // span_us, -(-end_us // span_us) - 1


class FragmentCache:
    """Parquet fragment files plus a SQLite index with LRU eviction; thread-safe."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        folder: Path | None = None,
        max_bytes: int | None = None,
        fragment_hours: int | None = None,
    ) -> None:
        settings = settings or load_settings()
        self.folder = folder or settings.cache_dir
        self.max_bytes = settings.cache_max_mb * 1024 * 1024 if max_bytes is None else max_bytes
        self.fragment_hours = fragment_hours or settings.cache_fragment_hours
        if self.fragment_hours < 1:
            raise XhelioError(
                f"cache_fragment_hours is {self.fragment_hours}; set XHELIO_CACHE_FRAGMENT_HOURS "
                "to a whole number of hours, 1 or more (24 is the default)."
            )
        self._lock = threading.RLock()
        self._last_stamp = 0.0
        self.folder.mkdir(parents=True, exist_ok=True)
        self._db = self._open_index()

    def _open_index(self) -> sqlite3.Connection:
        """Open the index; one that cannot be opened is reported, never deleted."""
        path = self.folder / INDEX_FILE
        try:
            return self._connect(path)
        except sqlite3.Error as exc:
            raise CacheError(
                f"The cache index {path} cannot be opened ({exc}). Nothing was deleted. If "
                "its permissions are wrong, fix them; if it is damaged, delete the folder "
                f"{self.folder} to start an empty cache (or set XHELIO_HOME elsewhere)."
            ) from exc

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, check_same_thread=False, timeout=30.0)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            migrate(db, _MIGRATIONS, str(path))
        except sqlite3.Error:
            db.close()
            raise
        return db

    def close(self) -> None:
        """Close the index database."""
        with self._lock:
            self._db.close()

    @contextmanager
    def _transaction(self) -> Generator[sqlite3.Connection]:
        with self._lock, self._db:
            yield self._db

    def _stamp(self) -> float:
        """Return now as a strictly increasing float, so LRU order is never a tie."""
        with self._lock:
            self._last_stamp = max(time.time(), self._last_stamp + 1e-6)
            return self._last_stamp

    def layout(self, source: str, server: str, dataset: str) -> int | None:
        """Return the fragment length in hours recorded for a dataset, if any."""
        with self._lock:
            row = self._db.execute(
                "SELECT hours FROM layouts WHERE source=? AND server=? AND dataset=?"
                " AND base_hours=?",
                (source, server, dataset, self.fragment_hours),
            ).fetchone()
        return None if row is None else int(row[0])

    def set_layout(self, source: str, server: str, dataset: str, hours: int) -> None:
        """Record the fragment length in hours used for a dataset under the current base."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO layouts (source, server, dataset, base_hours, hours)"
                " VALUES (?,?,?,?,?)",
                (source, server, dataset, self.fragment_hours, hours),
            )

    def lookup(
        self, key: SeriesKey, hours: int, first: int, last: int
    ) -> dict[int, StoredFragment]:
        """Return the indexed fragments of `key` between fragment `first` and `last`."""
        with self._lock:
            rows = self._db.execute(
                "SELECT path, fragment, complete, fetched_at, rows, checksum FROM fragments "
                "WHERE key=? AND fragment BETWEEN ? AND ?",
                (key.text(hours), first, last),
            ).fetchall()
        return {
            int(r[1]): StoredFragment(
                str(r[0]), int(r[1]), bool(r[2]), float(r[3]), int(r[4]), r[5] and str(r[5])
            )
            for r in rows
        }

    def read(self, stored: StoredFragment) -> ArrowTable | None:
        """Return a fragment's table, or None (file and row deleted) when it is damaged.

        The file's checksum (recorded when it was written) is verified first, so a
        flipped bit is a refetch, never a wrong value.
        """
        path = self.folder / stored.path
        try:
            raw = path.read_bytes()
            if stored.checksum is not None and _checksum(raw) != stored.checksum:
                raise ValueError("checksum mismatch")
            with pq.ParquetFile(pa.BufferReader(raw)) as parquet:
                # Fragments are small: a thread pool per file costs more than it saves.
                table = parquet.read(use_threads=False)
            _fragment_meta(table)
        except (OSError, ValueError, pa.ArrowException) as exc:
            _log.warning("Cached fragment %s is damaged (%s); fetching it again.", path, exc)
            try:
                with self._transaction() as db:
                    # Only the row we read: another thread may have rewritten the file since.
                    gone = db.execute(
                        "DELETE FROM fragments WHERE path=? AND fetched_at=?",
                        (stored.path, stored.fetched_at),
                    ).rowcount
                if gone:
                    path.unlink(missing_ok=True)
            except sqlite3.Error:
                pass  # a read-only index: the fragment is refetched, just not forgotten
            return None
        return table

    def touch(self, paths: Sequence[str]) -> None:
        """Mark fragments as just used (for LRU eviction)."""
        stamp = self._stamp()
        try:
            with self._transaction() as db:
                db.executemany(
                    "UPDATE fragments SET last_access=? WHERE path=?", [(stamp, p) for p in paths]
                )
        except sqlite3.Error as exc:  # a read-only index still serves reads
            _log.warning("Cannot update the cache index (%s); LRU order not updated.", exc)

    def write(
        self,
        key: SeriesKey,
        hours: int,
        fragment: int,
        table: ArrowTable,
        *,
        complete: bool,
        fetched_at: float | None = None,
    ) -> None:
        """Store one fragment atomically (temp file + rename), then evict down to the cap.

        `fetched_at` (POSIX seconds, default now) is when the data was fetched, which
        decides how long an incomplete fragment is reused.
        """
        start = fragment_start(fragment, hours)
        relative = Path(
            FRAGMENTS_DIR,
            _slug(key.source),
            _slug(key.server or "local"),
            _slug(key.dataset),
            _slug(key.parameter),
            f"{hours}h",
            f"{start:%Y%m%dT%H%M}.parquet",
        )
        target = self.folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
        try:
            pq.write_table(
                table,
                temp,
                compression="lz4",
                # pyarrow documents a list of column names here; its inferred type says bool.
                use_dictionary=_dictionary_columns(table),  # pyright: ignore[reportArgumentType]
            )
            checksum = _checksum(temp.read_bytes())
            os.replace(temp, target)
        finally:
            temp.unlink(missing_ok=True)
        stamp = self._stamp()
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO fragments (path, key, source, server, dataset, parameter,"
                " hours, fragment, size, rows, complete, fetched_at, last_access, checksum)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    relative.as_posix(),
                    key.text(hours),
                    key.source,
                    key.server,
                    key.dataset,
                    key.parameter,
                    hours,
                    fragment,
                    target.stat().st_size,
                    table.num_rows,
                    int(complete),
                    stamp if fetched_at is None else fetched_at,
                    stamp,
                    checksum,
                ),
            )
        self._evict()

    def _evict(self, keep: Sequence[str] = ()) -> None:
        """Delete least recently used fragments AND files until their total fits the cap."""
        doomed: list[tuple[str, str]] = []
        with self._transaction() as db:
            total = int(
                db.execute(
                    "SELECT (SELECT COALESCE(SUM(size), 0) FROM fragments)"
                    " + (SELECT COALESCE(SUM(size), 0) FROM files)"
                ).fetchone()[0]
            )
            if total <= self.max_bytes:
                return
            for table, path, size, _ in db.execute(
                "SELECT 'fragments', path, size, last_access FROM fragments"
                " UNION ALL SELECT 'files', path, size, last_access FROM files"
                " ORDER BY last_access ASC"
            ).fetchall():
                if total <= self.max_bytes:
                    break
                if path in keep:
                    continue
                doomed.append((str(table), str(path)))
                total -= int(size)
            for table, path in doomed:
                db.execute(f"DELETE FROM {table} WHERE path=?", (path,))
        for _, path in doomed:
            (self.folder / path).unlink(missing_ok=True)

    # whole files (CDF downloads) ------------------------------------------------------------

    def file_for(self, key: str) -> Path | None:
        """Return the cached file stored under `key` if it is intact (checksum verified)."""
        with self._lock:
            row = self._db.execute(
                "SELECT path, checksum FROM files WHERE key=?", (key,)
            ).fetchone()
        if row is None:
            return None
        path = self.folder / str(row[0])
        try:
            intact = _file_checksum(path) == str(row[1])
        except OSError:
            intact = False
        if not intact:
            self.forget_file(path)
            return None
        try:
            with self._transaction() as db:
                db.execute(
                    "UPDATE files SET last_access=? WHERE path=?", (self._stamp(), str(row[0]))
                )
        except sqlite3.Error as exc:
            _log.warning("Cannot update the cache index (%s); LRU order not updated.", exc)
        return path

    def new_file_path(self, name: str) -> Path:
        """Return a fresh temporary path in the cache folder for a download of `name`."""
        folder = self.folder / FILES_DIR
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f".{_slug(name)}.{uuid.uuid4().hex}.part"

    def add_file(self, key: str, dataset: str, name: str, temp: Path) -> Path:
        """Move a complete download `temp` into the cache under `key`; return its path."""
        digest = hashlib.sha256(key.encode()).hexdigest()[:20]
        relative = Path(FILES_DIR, f"{digest}_{_slug(name)}")
        target = self.folder / relative
        checksum = _file_checksum(temp)
        size = temp.stat().st_size
        os.replace(temp, target)
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO files (path, key, dataset, size, checksum, last_access)"
                " VALUES (?,?,?,?,?,?)",
                (relative.as_posix(), key, dataset, size, checksum, self._stamp()),
            )
        self._evict(keep=[relative.as_posix()])
        return target

    def forget_file(self, path: Path) -> None:
        """Delete a cached file and its index row (it failed to read, or is damaged)."""
        relative = path.relative_to(self.folder).as_posix() if path.is_absolute() else str(path)
        try:
            with self._transaction() as db:
                db.execute("DELETE FROM files WHERE path=?", (relative,))
        except sqlite3.Error as exc:
            _log.warning("Cannot update the cache index (%s).", exc)
        (self.folder / relative).unlink(missing_ok=True)

    # reporting -------------------------------------------------------------------------

    def info(self) -> CacheInfo:
        """Return the number of cached items (fragments and files), their size, per dataset."""
        with self._lock:
            rows = self._db.execute(
                "SELECT dataset, COUNT(*), SUM(size) FROM ("
                " SELECT dataset, size FROM fragments UNION ALL SELECT dataset, size FROM files)"
                " GROUP BY dataset ORDER BY SUM(size) DESC, dataset"
            ).fetchall()
        usage = {str(r[0]): (int(r[1]), int(r[2])) for r in rows}
        return CacheInfo(
            location=self.folder,
            entries=sum(count for count, _ in usage.values()),
            total_bytes=sum(size for _, size in usage.values()),
            max_bytes=self.max_bytes,
            datasets=usage,
        )

    def clear(self, dataset: str | None = None) -> int:
        """Remove every cached item (or those of `dataset`, any case); return files removed."""
        where, args = (
            ("", ()) if dataset is None else (" WHERE dataset=? COLLATE NOCASE", (dataset,))
        )
        with self._transaction() as db:
            paths = [
                str(r[0])
                for table in ("fragments", "files")
                for r in db.execute(f"SELECT path FROM {table}{where}", args)
            ]
            for table in ("fragments", "layouts", "files"):
                db.execute(f"DELETE FROM {table}{where}", args)
        removed = 0
        for path in paths:
            target = self.folder / path
            if target.exists():
                target.unlink()
                removed += 1
        if dataset is None:
            # Files the index lost track of (a crash between rename and insert), and the
            # CDF folder of versions that kept downloads outside the index.
            for folder in (FRAGMENTS_DIR, FILES_DIR, "cdf"):
                for orphan in (self.folder / folder).rglob("*"):
                    if orphan.is_file():
                        orphan.unlink()
                        removed += 1
                shutil.rmtree(self.folder / folder, ignore_errors=True)
        return removed


def _checksum(data: bytes) -> str:
    """A content checksum of a cached file (detects any flipped bit)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _file_checksum(path: Path) -> str:
    """`_checksum` of a file, read in blocks (downloads can be large)."""
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class CacheError(DataUnavailableError):
    """The disk cache cannot be used (its index cannot be opened)."""


def _dictionary_columns(table: ArrowTable) -> list[str]:
    """Return the columns worth dictionary-encoding: not floats or times.

    Measurement values rarely repeat, and parquet's dictionary pages for them made reads
    5-7x slower for no size gain.
    """
    return [
        str(f.name)
        for f in table.schema
        if not (pa.types.is_floating(f.type) or pa.types.is_timestamp(f.type))
    ]


def _fragment_table(data: ParameterData, frame: pd.DataFrame) -> ArrowTable:
    """Return `frame` (one fragment of `data`) as an Arrow table carrying `data`'s metadata."""
    # One thread: a fragment is small, and pyarrow's per-call thread pool dominated the cost.
    table = pa.Table.from_pandas(frame, preserve_index=True, nthreads=1)
    bins = data.bins
    meta = {
        "name": data.name,
        "units": data.units,
        "description": data.description,
        "bins": None if bins is None else bins.tolist(),
        "bins_dtype": None if bins is None else str(bins.dtype),
        "bins_name": data.bins_name,
        "bins_units": data.bins_units,
        "meta": data.meta,  # dims, fill, valid range: what a flat table cannot say
    }
    schema_meta = dict(table.schema.metadata or {})
    schema_meta[_META_KEY] = json.dumps(meta).encode()
    return table.replace_schema_metadata(schema_meta)


def _empty_fragment_table() -> ArrowTable:
    """Return the marker of a fragment in which the source had no data at all."""
    return pa.table({}).replace_schema_metadata({_META_KEY: b'{"empty": true}'})


def _fragment_meta(table: ArrowTable) -> dict[str, object]:
    """Return the xhelio metadata of a fragment table; ValueError when absent or invalid."""
    raw = (table.schema.metadata or {}).get(_META_KEY)
    if raw is None:
        raise ValueError("fragment has no xhelio metadata")
    meta: object = json.loads(raw)
    if not isinstance(meta, dict):
        raise ValueError("fragment metadata is not an object")
    return {str(k): v for k, v in meta.items()}  # pyright: ignore[reportUnknownVariableType]


def _is_empty_marker(table: ArrowTable) -> bool:
    return _fragment_meta(table).get("empty") is True


def _empty_frame() -> pd.DataFrame:
    return pd.DataFrame(index=pd.DatetimeIndex([], tz="UTC", name="time"))


def _as_utc_sorted(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """Return `frame` with a sorted UTC DatetimeIndex; ServerError when it has no time index."""
    index = frame.index
    if not isinstance(index, pd.DatetimeIndex):
        raise ServerError(
            f"{what} came back without a time index, so it cannot be cached. "
            "This is a bug in the data source; report it with the dataset id."
        )
    if index.tz is None:
        frame = frame.tz_localize("UTC")
    elif str(index.tz) != "UTC":
        frame = frame.tz_convert("UTC")
    if not frame.index.is_monotonic_increasing:
        frame = frame.sort_index(kind="stable")
    return frame


def _split(frame: pd.DataFrame, first: int, last: int, hours: int) -> list[pd.DataFrame]:
    """Cut `frame` into fragments `first`..`last`; rows outside them are dropped."""
    bounds = pd.DatetimeIndex([fragment_start(i, hours) for i in range(first, last + 2)])
    positions = frame.index.searchsorted(bounds)
    return [frame.iloc[positions[k] : positions[k + 1]] for k in range(last - first + 1)]


def _assemble(name: str, tables: Sequence[ArrowTable], time_range: TimeRange) -> ParameterData:
    """Concatenate fragment tables into one `ParameterData` trimmed to `time_range`."""
    filled = [t for t in tables if not _is_empty_marker(t)]
    if not filled:
        return ParameterData(name=name, frame=_empty_frame())
    try:
        frame = pa.concat_tables(filled, promote_options="permissive").to_pandas()
    except pa.ArrowInvalid:
        # Fragments fetched at different times may disagree on a column type.
        frame = pd.concat([t.to_pandas() for t in filled])
    low, high = frame.index.searchsorted(pd.DatetimeIndex([time_range.start, time_range.end]))
    frame = frame.iloc[low:high]
    meta = _fragment_meta(filled[-1])
    raw_bins = meta.get("bins")
    bins = None if raw_bins is None else np.asarray(raw_bins, dtype=str(meta.get("bins_dtype")))
    return ParameterData(
        name=str(meta.get("name") or name),
        frame=frame,
        units=str(meta.get("units") or ""),
        description=str(meta.get("description") or ""),
        bins=bins,
        bins_name=None if meta.get("bins_name") is None else str(meta.get("bins_name")),
        bins_units=None if meta.get("bins_units") is None else str(meta.get("bins_units")),
        meta=_extra_meta(meta.get("meta")),
    )


def _extra_meta(value: object) -> dict[str, Any]:
    """The source's JSON metadata (dims, fill, valid range) stored with a fragment."""
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]


def adaptive_fragment_hours(base_hours: int, cadence: str | None) -> int:
    """Return `base_hours` doubled while a fragment of this cadence stays under the row target."""
    seconds = cadence_seconds(cadence)
    if seconds is None:
        return base_hours
    rows_per_base = base_hours * 3600 / seconds
    multiplier = 1
    while (
        multiplier * 2 <= MAX_FRAGMENT_MULTIPLIER
        and rows_per_base * multiplier * 2 <= TARGET_FRAGMENT_ROWS
    ):
        multiplier *= 2
    return base_hours * multiplier


_FetchKey = tuple[str, str, int]
"""(cache folder, series key text, fragment index): one fragment being fetched."""


class _InflightFetches:
    """Fragments some thread is fetching right now, so identical requests wait, not refetch.

    One registry per process (not per `CachedSource`), because each `make_source` call
    builds a new wrapper over the same cache folder.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._futures: dict[_FetchKey, Future[ArrowTable]] = {}

    def claim(
        self, keys: Sequence[_FetchKey]
    ) -> tuple[dict[_FetchKey, Future[ArrowTable]], dict[_FetchKey, Future[ArrowTable]]]:
        """Return (futures this caller must resolve, futures other threads will resolve)."""
        owned: dict[_FetchKey, Future[ArrowTable]] = {}
        others: dict[_FetchKey, Future[ArrowTable]] = {}
        with self._lock:
            for key in keys:
                existing = self._futures.get(key)
                if existing is None:
                    owned[key] = self._futures[key] = Future()
                else:
                    others[key] = existing
        return owned, others

    def release(self, key: _FetchKey) -> None:
        """Forget a resolved fragment."""
        with self._lock:
            self._futures.pop(key, None)


_INFLIGHT = _InflightFetches()


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
        if missing:
            self._fill(dataset_id, hours, keys, missing, found, progress, notes)
        result = {
            n: _assemble(n, [found[n][i] for i in range(first, last + 1)], time_range)
            for n in names
        }
        for name, texts in notes.items():
            if texts:
                result[name] = replace(result[name], notes=tuple(texts))
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
    ) -> None:
        """Fetch the missing fragments this thread owns; wait for those others are fetching."""
        folder = str(self.cache.folder)
        fetch_keys = {
            (folder, keys[n].text(hours), i): (n, i)
            for n, indices in missing.items()
            for i in indices
        }
        owned, others = _INFLIGHT.claim(list(fetch_keys))
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
                settled = self._settled_until(dataset_id, hours, first)
                if proven is not None:
                    # Never store as complete what the answer could not prove complete.
                    settled = min(settled, proven)
                fetched_at = self._clock().timestamp()
                for (name, index), table in fetched.items():
                    if index not in mine[name]:
                        continue  # cached already; fetched only because the run spans it
                    complete = fragment_start(index + 1, hours) <= settled
                    self._store(keys[name], hours, index, table, complete, fetched_at)
                    found[name][index] = table
                    key = (folder, keys[name].text(hours), index)
                    owned[key].set_result(table)
                    _INFLIGHT.release(key)
        except BaseException as exc:
            for key, future in owned.items():
                if not future.done():
                    future.set_exception(exc)
                    _INFLIGHT.release(key)
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
            empty = {(n, i): _empty_fragment_table() for n in names for i in range(first, last + 1)}
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
            frame = _as_utc_sorted(data.frame, f"{dataset_id}/{name}")
            # One duplicate rule for every source, applied before anything is stored.
            data = drop_duplicate_times(replace(data, frame=frame), f"{dataset_id}.{name}")
            if data.proven_until is not None:
                proven = data.proven_until if proven is None else min(proven, data.proven_until)
            notes[name] = data.notes
            for offset, part in enumerate(_split(data.frame, first, last, hours)):
                tables[(name, first + offset)] = _fragment_table(data, part)
        return tables, proven, notes

    def _settled_until(self, dataset_id: str, hours: int, first: int) -> datetime:
        """Return the time before which fragments can no longer change (see module doc)."""
        cutoff = self._clock() - self.settle_margin
        if fragment_start(first + 1, hours) > cutoff:
            return cutoff  # nothing in this run can be complete: no need to ask for the stop
        try:
            stop = self.info(dataset_id).stop
        except XhelioError:
            return _EPOCH.replace(year=1)  # unknown stop: keep everything refreshable
        if stop is None:
            return cutoff
        stop = stop.replace(tzinfo=UTC) if stop.tzinfo is None else stop.astimezone(UTC)
        return min(cutoff, stop)
