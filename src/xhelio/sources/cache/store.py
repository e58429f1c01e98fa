"""The fragment store: parquet files plus a SQLite index with checksums and LRU eviction.

One parquet file holds one fragment of one parameter of one dataset of one server; a
SQLite index (`index.sqlite` in the cache folder) records every file with its size, state
(complete or not, when fetched), checksum and last access, for LRU eviction under
`cache_max_mb`. Writes are atomic (temp file + `os.replace`); every checksum is verified
on read, so a damaged or unreadable fragment is deleted (to be fetched again), never
returned; an index that cannot be opened is reported (`CacheError`) and never deleted.
Files in one folder are indexed by one SQLite database (WAL), so several processes may
share a cache. The dataset's chosen fragment length is recorded too (table ``layouts``),
so warm reads never ask the server for the cadence.

Whole downloaded files (CDAWeb's CDFs) are kept in the same index (table ``files``,
folder ``files/``) under the same size limit: eviction, `info` and `clear` see
fragments and files together. Imports only `config`, `errors`, `timerange` and the
sibling `fragments` and `encoding`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import sqlite3
import threading
import time
import uuid
import zlib
from collections.abc import Generator, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from xhelio.config import Settings, load_settings
from xhelio.errors import DataUnavailableError, XhelioError
from xhelio.migrations import Migration, columns, migrate, sql
from xhelio.sources.cache.encoding import ArrowTable, dictionary_columns, fragment_meta
from xhelio.sources.cache.fragments import fragment_start

__all__ = ["CacheError", "CacheInfo", "FragmentCache", "SeriesKey", "StoredFragment"]

INDEX_FILE = "index.sqlite"
FRAGMENTS_DIR = "fragments"
FILES_DIR = "files"
_log = logging.getLogger(__name__)

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
            if stored.checksum is not None and _checksum(raw, stored.checksum) != stored.checksum:
                raise ValueError("checksum mismatch")
            with pq.ParquetFile(pa.BufferReader(raw)) as parquet:
                # Fragments are small: a thread pool per file costs more than it saves.
                table = parquet.read(use_threads=False)
            fragment_meta(table)
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
                use_dictionary=dictionary_columns(table),  # pyright: ignore[reportArgumentType]
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
            intact = _file_checksum(path, str(row[1])) == str(row[1])
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


_CRC = "crc32:"


def _checksum(data: bytes, like: str | None = None) -> str:
    """A content checksum of a cached file, in the form of `like` (default CRC-32).

    CRC-32 catches every flipped bit and every burst of up to 32 bits, at several GB/s:
    the blake2b used before cost half of every warm read (30 ms of a year of 1-minute
    data). Checksums recorded as blake2b by earlier versions are still verified as such.
    This guards against damage on disk, not against someone forging files.
    """
    return _digest([data], like)


def _file_checksum(path: Path, like: str | None = None) -> str:
    """`_checksum` of a file, read in blocks (downloads can be large)."""
    with path.open("rb") as fh:
        return _digest(iter(lambda: fh.read(1 << 20), b""), like)


def _digest(blocks: Iterable[bytes], like: str | None) -> str:
    if like is None or like.startswith(_CRC):
        crc = 0
        for block in blocks:
            crc = zlib.crc32(block, crc)
        return f"{_CRC}{crc:08x}"
    digest = hashlib.blake2b(digest_size=16)
    for block in blocks:
        digest.update(block)
    return digest.hexdigest()


class CacheError(DataUnavailableError):
    """The disk cache cannot be used (its index cannot be opened)."""
