"""The catalog index (SQLite + FTS5) and the `Catalog` API every other layer uses.

The index lives at `settings.catalog_db`. It is built from the offline snapshot on first
use (into a temporary file that then replaces the old one with `os.replace`, so a crash
never leaves a half-written index) and rebuilt whenever the snapshot version or the
index schema changes; its schema is the store's numbered migrations
(`xhelio.migrations`). `Catalog.upsert` merges live-refreshed datasets into it, and a
rebuild carries them over: what `xhelio catalog refresh` brought in is never lost.

Search ranks datasets by, in order: an exact dataset id typed in the query, an id prefix
typed in the query, how many of the query's concepts a dataset matches, how far its id and
title cover the query's product words (`language.products`: "sunward", "pitch angle",
"5-minute", the same coverage the offline resolver uses), parameters whose
name is exactly a typed word, then FTS5 bm25 with column weights. Mission names in the
query restrict the search to those missions when that leaves any hit. User text never
reaches FTS5 syntax: it is split into words and each is quoted.

A time expression in the query is left out of the search. Dataset records and search
answers are kept in memory (`catalog.memo`), shared by every session of the process and
forgotten whenever the index changes. Imports only `catalog`
modules, `config`, `errors`, `language` and `timerange` from xhelio.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sqlite3
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from xhelio.catalog.aliases import AliasTable, QueryPlan, normalize_name, plan_query
from xhelio.catalog.memo import Memo
from xhelio.catalog.model import DatasetInfo, Mission, ParameterInfo
from xhelio.catalog.snapshot import load_snapshot, snapshot_version
from xhelio.config import Settings, load_settings
from xhelio.errors import UnknownDatasetError, UnknownParameterError, UserError
from xhelio.language.nearest import nearest_datasets, nearest_parameters
from xhelio.language.products import Term, coverage_score, product_terms, variant_count
from xhelio.migrations import Migration, migrate, sql
from xhelio.timerange import find_time

__all__ = ["Catalog", "SearchHit", "build_index", "is_auxiliary", "open_catalog"]

SCHEMA_VERSION = 1
_FTS_COLUMNS = ("ident", "title", "mission", "instrument", "params", "units", "param_text")
_FTS_WEIGHTS = (10.0, 4.0, 3.0, 2.0, 3.0, 1.0, 0.5)
_CANDIDATES = 300
_RECORDS_KEPT = 1500
"""Dataset records (with their parameters) kept in memory: a few missions' worth, ~25 MB."""
_SEARCHES_KEPT = 512
"""Search answers kept in memory (sessions ask the same quantities of the same missions)."""

_SCHEMA = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE missions(id TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE datasets(
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    id_upper TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    mission_id TEXT,
    instrument TEXT,
    keywords TEXT NOT NULL,
    start TEXT,
    stop TEXT,
    cadence TEXT,
    max_request_duration TEXT,
    pi_name TEXT,
    doi TEXT,
    auxiliary INTEGER NOT NULL,
    source TEXT NOT NULL
);
CREATE INDEX datasets_mission ON datasets(mission_id);
CREATE TABLE parameters(
    dataset_rowid INTEGER NOT NULL,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    units TEXT NOT NULL,
    size TEXT,
    fill TEXT,
    description TEXT NOT NULL,
    labels TEXT,
    bins TEXT,
    bins_name TEXT,
    bins_units TEXT,
    PRIMARY KEY(dataset_rowid, position)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE search USING fts5(
    {", ".join(_FTS_COLUMNS)}, tokenize='porter unicode61 remove_diacritics 2'
);
"""

_MIGRATIONS = (
    Migration(1, "catalog index: missions, datasets, parameters, FTS5 search", sql(_SCHEMA)),
)
_REFRESH = "refresh"
"""The `source` of rows a live refresh wrote (the others came from the snapshot)."""

_AUX_ID_TOKENS = frozenset(
    {
        "OR", "AT", "HK", "HKP", "HKPG", "EPH", "EPHM", "EPHEMERIS", "GIFWALK", "SSC",
        "ORBIT", "ATTITUDE", "POSITION", "STATE", "CALIBRATION", "SPHA", "AUX",
    }
)  # fmt: skip
_AUX_TITLE = re.compile(
    r"house-?keeping|calibration|ephemeris|attitude|\borbit(?:al)?\b|spin phase"
    r"|heliocentric coordinates",
    re.IGNORECASE,
)
# Long titles mention "orbit" or "calibration" in passing ("electron density along the
# orbit"); a title marks support data only when it names no measured quantity.
_SCIENCE_TITLE = re.compile(
    r"magnetic|plasma|particle|flux|science|densit|spectr|wave|electric|\bions?\b|electron"
    r"|proton|energ|count|intensit|moments|imag|radiation",
    re.IGNORECASE,
)
_AUX_INSTRUMENT = re.compile(r"ephemeris|engineering|housekeeping", re.IGNORECASE)


def is_auxiliary(info: DatasetInfo) -> bool:
    """Whether a dataset is support data (calibration, housekeeping, ephemeris, orbit...)."""
    # The first id segment names the spacecraft ("HK_" is Hawkeye), never the data kind.
    tokens = set(re.split(r"[_\-]", info.id.upper())[1:])
    if tokens & _AUX_ID_TOKENS:
        return True
    if _AUX_TITLE.search(info.title) and not _SCIENCE_TITLE.search(info.title):
        return True
    return bool(info.instrument and _AUX_INSTRUMENT.search(info.instrument))


@dataclass(frozen=True)
class SearchHit:
    """One search result; `score` is the bm25 relevance (higher is better)."""

    dataset_id: str
    title: str
    mission_id: str | None
    score: float
    matched_parameters: tuple[str, ...] = ()

    @property
    def parameters(self) -> tuple[str, ...]:
        """Same as `matched_parameters` (the name `tools/discovery.py` reads)."""
        return self.matched_parameters


def _stamp() -> str:
    return f"schema={SCHEMA_VERSION};snapshot={snapshot_version()}"


def _index_is_current(path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'stamp'").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False
    return row is not None and row[0] == _stamp()


def _refreshed(path: Path) -> list[tuple[DatasetInfo, list[str]]]:
    """The live-refreshed datasets of the index at `path` (none when it is unreadable)."""
    if not path.is_file():
        return []
    try:
        old = Catalog(path)
    except (sqlite3.DatabaseError, UnknownDatasetError):
        return []
    try:
        return [(old.dataset(i), keywords) for i, keywords in old.refreshed_records()]
    except (sqlite3.DatabaseError, UnknownDatasetError, ValueError):
        return []  # an index too old or too damaged to read: the snapshot alone
    finally:
        old.close()


def build_index(path: Path) -> None:
    """Build the index from the offline snapshot into `path`, atomically.

    Datasets a live refresh had written into the index at `path` are written again on top
    of the snapshot's, so a rebuild (a new snapshot or schema) loses none of them.
    """
    snapshot = load_snapshot()
    refreshed = _refreshed(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    tmp = Path(tmp_name)
    try:
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the index is no secret
        conn = sqlite3.connect(tmp)
        try:
            # A crash mid-build only loses the temp file, so no journal or fsync is needed.
            conn.execute("PRAGMA journal_mode = OFF")
            conn.execute("PRAGMA synchronous = OFF")
            migrate(conn, _MIGRATIONS, str(path))
            conn.executemany(
                "INSERT INTO missions(id, name) VALUES (?, ?)",
                [(m.id, m.name) for m in snapshot.missions],
            )
            aliases = AliasTable(snapshot.missions)
            names = {m.id: m.name for m in snapshot.missions}
            for record in snapshot.datasets:
                _write_dataset(conn, record.info, record.keywords, aliases, names, "snapshot")
            for info, keywords in refreshed:
                _write_dataset(conn, info, keywords, aliases, names, _REFRESH)
            conn.execute("INSERT INTO meta VALUES ('stamp', ?)", (_stamp(),))
            conn.execute("INSERT INTO meta VALUES ('snapshot_version', ?)", (snapshot.version,))
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _json_or_none(value: Sequence[Any] | None) -> str | None:
    return None if value is None else json.dumps(list(value))


def _write_dataset(
    conn: sqlite3.Connection,
    info: DatasetInfo,
    keywords: Sequence[str],
    aliases: AliasTable,
    mission_names: dict[str, str],
    source: str,
) -> None:
    """Insert or replace one dataset row, its parameters and its search document."""
    row = conn.execute("SELECT rowid FROM datasets WHERE id_upper = ?", (info.id.upper(),))
    existing = row.fetchone()
    values = (
        info.id,
        info.id.upper(),
        info.title,
        info.mission_id,
        info.instrument,
        json.dumps(list(keywords)),
        info.start.isoformat() if info.start else None,
        info.stop.isoformat() if info.stop else None,
        info.cadence,
        info.max_request_duration,
        info.pi_name,
        info.doi,
        int(is_auxiliary(info)),
        source,
    )
    columns = (
        "id, id_upper, title, mission_id, instrument, keywords, start, stop, cadence, "
        "max_request_duration, pi_name, doi, auxiliary, source"
    )
    if existing is None:
        cursor = conn.execute(
            f"INSERT INTO datasets({columns}) VALUES ({', '.join('?' * 14)})", values
        )
        rowid = int(cursor.lastrowid or 0)
    else:
        rowid = int(existing[0])
        assignments = ", ".join(f"{c.strip()} = ?" for c in columns.split(","))
        conn.execute(f"UPDATE datasets SET {assignments} WHERE rowid = ?", (*values, rowid))
        conn.execute("DELETE FROM parameters WHERE dataset_rowid = ?", (rowid,))
        conn.execute("DELETE FROM search WHERE rowid = ?", (rowid,))
    conn.executemany(
        "INSERT INTO parameters VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                rowid,
                position,
                p.name,
                p.type,
                p.units,
                _json_or_none(p.size),
                p.fill,
                p.description,
                _json_or_none(p.labels),
                _json_or_none(p.bins),
                p.bins_name,
                p.bins_units,
            )
            for position, p in enumerate(info.parameters)
        ],
    )
    mission_text = ""
    if info.mission_id:
        mission_text = " ".join(
            [
                info.mission_id,
                mission_names.get(info.mission_id, ""),
                *aliases.aliases(info.mission_id),
            ]
        )
    data_params = info.data_parameters
    document = (
        info.id,
        info.title,
        mission_text,
        " ".join([info.instrument or "", *keywords]),
        " ".join(p.name for p in data_params),
        " ; ".join(p.units for p in data_params if p.units),
        " ; ".join(p.description for p in data_params if p.description),
    )
    conn.execute(
        f"INSERT INTO search(rowid, {', '.join(_FTS_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (rowid, *document),
    )


def open_catalog(settings: Settings | None = None) -> Catalog:
    """Open the catalog index, building it from the snapshot first if needed."""
    settings = settings or load_settings()
    path = settings.catalog_db
    if not _index_is_current(path):
        build_index(path)
    return Catalog(path)


def _datetime(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _tuple_or_none(text: str | None, kind: type) -> tuple[Any, ...] | None:
    if text is None:
        return None
    return tuple(kind(v) for v in json.loads(text))


class Catalog:
    """Missions, datasets and parameters, with ranked search; backed by the SQLite index."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        # One connection shared by threads (the web server's workers); the lock serializes.
        self._conn = sqlite3.connect(path, check_same_thread=False)
        self._conn.execute("PRAGMA foreign_keys = OFF")
        # Read-only answers shared by every session, forgotten when the index changes.
        self._records: Memo[int, DatasetInfo] = Memo(_RECORDS_KEPT)
        self._searches: Memo[tuple[str, int, str | None], tuple[SearchHit, ...]] = Memo(
            _SEARCHES_KEPT
        )
        self._mission_list: Memo[str, tuple[Mission, ...]] = Memo(1)
        self._revision = self._data_version()
        self._reload_names()

    def _data_version(self) -> int:
        with self._lock:
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _current(self) -> None:
        """Forget what was remembered if another connection changed the index since."""
        revision = self._data_version()
        if revision != self._revision:
            self._revision = revision
            self._reload_names()

    def _reload_names(self) -> None:
        with self._lock:
            missions = self._conn.execute("SELECT id, name FROM missions ORDER BY id").fetchall()
            ids = self._conn.execute("SELECT id, mission_id FROM datasets ORDER BY id").fetchall()
        self._mission_names: dict[str, str] = {str(m): str(n) for m, n in missions}
        members: dict[str, list[str]] = {}
        for dataset_id, mission_id in ids:
            members.setdefault(str(mission_id), []).append(str(dataset_id))
        self._aliases = AliasTable(
            Mission(id=m, name=n, dataset_ids=tuple(members.get(m, ())))
            for m, n in self._mission_names.items()
        )
        self._ids: list[str] = [str(r[0]) for r in ids]
        for memo in (self._records, self._searches, self._mission_list):
            memo.clear()

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, tuple(args)).fetchall()

    @property
    def aliases(self) -> AliasTable:
        """Every name of every mission, for spotting missions in free text."""
        return self._aliases

    # datasets and parameters -------------------------------------------------------------

    def dataset_ids(self) -> list[str]:
        """Every dataset id in the catalog, sorted."""
        self._current()
        return list(self._ids)

    def dataset(self, dataset_id: str) -> DatasetInfo:
        """Full description of a dataset (id is case-insensitive)."""
        rows = self._datasets_where("d.id_upper = ?", [dataset_id.strip().upper()])
        if not rows:
            raise UnknownDatasetError(dataset_id, nearest_datasets(self, dataset_id))
        return rows[0]

    def parameter(self, dataset_id: str, name: str) -> ParameterInfo:
        """One parameter of a dataset (name is case-insensitive)."""
        info = self.dataset(dataset_id)
        found = info.parameter(name)
        if found is None:
            names = [p.name for p in info.data_parameters]
            raise UnknownParameterError(info.id, name, names, nearest_parameters(name, names, info))
        return found

    def availability(self, dataset_id: str) -> tuple[datetime | None, datetime | None]:
        """First and last time the dataset has data, as far as the catalog knows."""
        info = self.dataset(dataset_id)
        return info.start, info.stop

    def _datasets_where(self, where: str, args: Sequence[Any]) -> list[DatasetInfo]:
        self._current()
        rows = self._query(f"SELECT d.rowid FROM datasets d WHERE {where} ORDER BY d.id", args)
        rowids = [int(r[0]) for r in rows]
        records = self._records.get_many(rowids, self._load_records)
        return [records[r] for r in rowids]

    def _load_records(self, rowids: Sequence[int]) -> dict[int, DatasetInfo]:
        """The datasets at `rowids`, with their parameters, read from the index."""
        params = self._parameters_of(rowids)
        found: dict[int, DatasetInfo] = {}
        for chunk in _chunks(rowids):
            rows = self._query(
                "SELECT rowid, id, title, mission_id, instrument, start, stop, cadence, "
                "max_request_duration, pi_name, doi FROM datasets WHERE rowid IN "
                f"({', '.join('?' * len(chunk))})",
                chunk,
            )
            for r in rows:
                found[int(r[0])] = DatasetInfo(
                    id=r[1],
                    title=r[2],
                    mission_id=r[3],
                    instrument=r[4],
                    start=_datetime(r[5]),
                    stop=_datetime(r[6]),
                    cadence=r[7],
                    max_request_duration=r[8],
                    pi_name=r[9],
                    doi=r[10],
                    parameters=tuple(params.get(int(r[0]), ())),
                )
        return found

    def _parameters_of(self, rowids: Sequence[int]) -> dict[int, list[ParameterInfo]]:
        found: dict[int, list[ParameterInfo]] = {}
        for chunk in _chunks(rowids):
            rows = self._query(
                "SELECT dataset_rowid, name, type, units, size, fill, description, labels, "
                f"bins, bins_name, bins_units FROM parameters WHERE dataset_rowid IN "
                f"({', '.join('?' * len(chunk))}) ORDER BY dataset_rowid, position",
                chunk,
            )
            for r in rows:
                found.setdefault(int(r[0]), []).append(
                    ParameterInfo(
                        name=r[1],
                        type=r[2],
                        units=r[3],
                        size=_tuple_or_none(r[4], int),
                        fill=r[5],
                        description=r[6],
                        labels=_tuple_or_none(r[7], str),
                        bins=_tuple_or_none(r[8], float),
                        bins_name=r[9],
                        bins_units=r[10],
                    )
                )
        return found

    # missions ----------------------------------------------------------------------------

    def missions(self) -> list[Mission]:
        """Every mission, with its aliases and dataset ids."""
        self._current()
        return list(self._mission_list.get("all", self._read_missions))

    def _read_missions(self) -> tuple[Mission, ...]:
        members: dict[str, list[str]] = {m: [] for m in self._mission_names}
        for mission_id, dataset_id in self._query(
            "SELECT mission_id, id FROM datasets WHERE mission_id IS NOT NULL ORDER BY id"
        ):
            members.setdefault(str(mission_id), []).append(str(dataset_id))
        return tuple(
            Mission(
                id=mission_id,
                name=self._mission_names.get(mission_id, mission_id),
                aliases=self._aliases.aliases(mission_id),
                dataset_ids=tuple(ids),
            )
            for mission_id, ids in sorted(members.items())
        )

    def mission(self, name_or_alias: str) -> Mission:
        """The mission called `name_or_alias` (id, name or any alias, any case)."""
        mission_id = self._aliases.resolve(name_or_alias)
        if mission_id is None:
            known = {normalize_name(n): n for n in self._mission_names.values()}
            close = difflib.get_close_matches(normalize_name(name_or_alias), list(known), n=3)
            hint = f" Did you mean: {', '.join(known[c] for c in close)}?" if close else ""
            famous = ("ace", "wind", "omni", "psp", "solar-orbiter", "mms", "themis", "rbsp")
            examples = ", ".join(self._mission_names[m] for m in famous if m in self._mission_names)
            raise UserError(
                f"Unknown mission '{name_or_alias}'.{hint} Known missions include {examples}. "
                "Run `xhelio catalog missions` to list them all."
            )
        for mission in self.missions():
            if mission.id == mission_id:
                return mission
        raise UserError(f"Mission '{name_or_alias}' has no datasets in the catalog.")

    def browse(self, mission: str, include_auxiliary: bool = False) -> list[DatasetInfo]:
        """Datasets of a mission; support data (orbit, housekeeping...) only when asked."""
        mission_id = self.mission(mission).id
        where = "d.mission_id = ?" + ("" if include_auxiliary else " AND d.auxiliary = 0")
        return self._datasets_where(where, [mission_id])

    # search ------------------------------------------------------------------------------

    def search(self, query: str, limit: int = 20, mission: str | None = None) -> list[SearchHit]:
        """Datasets best matching free text, best first (see the module docstring)."""
        if limit <= 0:
            return []
        self._current()
        key = (query, limit, mission)
        return list(self._searches.get(key, lambda: tuple(self._search(query, limit, mission))))

    def _search(self, query: str, limit: int, mission: str | None) -> list[SearchHit]:
        forced = [self.mission(mission).id] if mission else None
        text = _without_time(query)
        plan = plan_query(text, self._aliases)
        # Look directions, distribution kinds and cadences ("sunward", "pitch angle",
        # "5-minute") rank the products whose own id and title say them first.
        terms = product_terms(text)
        if forced is not None:
            hits = self._ranked(plan, forced, limit, terms)
        else:
            hits = self._ranked(plan, plan.mission_ids, limit, terms) if plan.mission_ids else []
            if not hits:
                hits = self._ranked(plan, None, limit, terms)
        return hits

    def _product_cover(self, terms: Sequence[Term], ids: Sequence[int]) -> dict[int, float]:
        """Per dataset: how far its id and title cover the query's product words."""
        if not terms:
            return {}
        marks = ", ".join("?" * len(ids))
        rows = self._query(f"SELECT rowid, id, title FROM datasets WHERE rowid IN ({marks})", ids)
        # The words said decide first (as offline: `variant_count`), then how far they cover.
        return {
            int(rowid): 100.0
            * variant_count(info := DatasetInfo(str(ident), str(title)), terms, None)
            + coverage_score(info, terms, None)
            for rowid, ident, title in rows
        }

    def _ranked(
        self,
        plan: QueryPlan,
        missions: Sequence[str] | None,
        limit: int,
        query_terms: Sequence[Term] = (),
    ) -> list[SearchHit]:
        scope, scope_args = "", []
        if missions is not None:
            scope = f" AND d.mission_id IN ({', '.join('?' * len(missions))})"
            scope_args = list(missions)
        exact = self._id_matches(plan.id_words, scope, scope_args, prefix=False)
        prefixed = self._id_matches(plan.id_words, scope, scope_args, prefix=True)
        bm25: dict[int, float] = {}
        if plan.any_expression:
            bm25 = self._fts(plan.any_expression, scope, scope_args)
            if plan.all_expression:
                # Datasets matching every concept may sit below the OR query's cut-off:
                # fetch them, then score them with the same OR expression as the rest.
                complete = set(self._fts(plan.all_expression, scope, scope_args)) - set(bm25)
                if complete:
                    bm25.update(self._fts(plan.any_expression, scope, scope_args, complete))
        elif not exact and not prefixed and missions is not None and plan.mission_ids:
            # The query only named missions ("PSP"): list them, science data first.
            rows = self._query(
                f"SELECT d.rowid FROM datasets d WHERE 1 = 1{scope} ORDER BY d.auxiliary, d.id",
                scope_args,
            )
            bm25 = {int(r[0]): 0.0 for r in rows}
        candidates = set(bm25) | exact | prefixed
        if not candidates:
            return []
        ids = sorted(candidates)
        coverage = self._coverage(plan, ids)
        products = self._product_cover(query_terms, ids)
        exact_params = self._exact_parameter_hits(plan, ids)
        support = set() if plan.wants_support_data else self._auxiliary_among(ids)
        order = {rowid: n for n, rowid in enumerate(bm25)}
        ranked = sorted(
            ids,
            key=lambda r: (
                r in exact,
                r in prefixed,
                products.get(r, 0.0) // 100,
                coverage.get(r, 0),
                products.get(r, 0.0),
                exact_params.get(r, (0, 0)),
                r not in support,
                bm25.get(r, 0.0),
                -order.get(r, len(order)),
            ),
            reverse=True,
        )[:limit]
        return self._hits(ranked, bm25, plan)

    def _fts(
        self,
        expression: str,
        scope: str,
        args: Sequence[Any],
        only: Iterable[int] = (),
    ) -> dict[int, float]:
        """Rowids matching an FTS expression with their relevance (negated bm25)."""
        weights = ", ".join(str(w) for w in _FTS_WEIGHTS)
        restrict = list(only)
        among = f" AND s.rowid IN ({', '.join('?' * len(restrict))})" if restrict else ""
        rows = self._query(
            f"SELECT s.rowid, bm25(search, {weights}) AS rank FROM search s "
            "JOIN datasets d ON d.rowid = s.rowid "
            f"WHERE search MATCH ?{scope}{among} ORDER BY rank LIMIT {_CANDIDATES}",
            [expression, *args, *restrict],
        )
        return {int(r[0]): -float(r[1]) for r in rows}

    def _id_matches(
        self, words: Sequence[str], scope: str, args: Sequence[Any], prefix: bool
    ) -> set[int]:
        found: set[int] = set()
        for word in words:
            if prefix:
                # Only id-shaped words ("PSP_FLD_L2", "SOLO_L2_MAG-RTN"): a plain word
                # such as "WIND" would otherwise outrank real matches by prefix alone.
                if len(word) < 4 or not re.search(r"[_\-]", word):
                    continue
                # A range scan is a prefix test that needs no LIKE escaping of `_` or `%`.
                sql = (
                    f"SELECT d.rowid FROM datasets d WHERE d.id_upper > ? AND d.id_upper < ?{scope}"
                )
                params = [word, word + "\uffff", *args]
            else:
                sql = f"SELECT d.rowid FROM datasets d WHERE d.id_upper = ?{scope}"
                params = [word, *args]
            found.update(int(r[0]) for r in self._query(sql, params))
        return found

    def _auxiliary_among(self, ids: Sequence[int]) -> set[int]:
        marks = ", ".join("?" * len(ids))
        rows = self._query(
            f"SELECT rowid FROM datasets WHERE auxiliary = 1 AND rowid IN ({marks})", ids
        )
        return {int(r[0]) for r in rows}

    def _coverage(self, plan: QueryPlan, ids: Sequence[int]) -> dict[int, int]:
        counts: dict[int, int] = {}
        marks = ", ".join("?" * len(ids))
        for expression in plan.concept_expressions:
            rows = self._query(
                f"SELECT rowid FROM search WHERE search MATCH ? AND rowid IN ({marks})",
                [expression, *ids],
            )
            for (rowid,) in rows:
                counts[int(rowid)] = counts.get(int(rowid), 0) + 1
        return counts

    def _exact_parameter_hits(
        self, plan: QueryPlan, ids: Sequence[int]
    ) -> dict[int, tuple[int, int]]:
        """Per dataset: (whole typed words, word pieces) that are exactly a parameter name."""
        wanted = set(plan.typed_words)
        if not wanted:
            return {}
        rows = self._query(
            f"SELECT dataset_rowid, upper(name) FROM parameters WHERE dataset_rowid IN "
            f"({', '.join('?' * len(ids))}) AND upper(name) IN ({', '.join('?' * len(wanted))})",
            [*ids, *wanted],
        )
        names: dict[int, set[str]] = {}
        for rowid, name in rows:
            names.setdefault(int(rowid), set()).add(str(name))
        whole = set(plan.id_words) & wanted
        return {rowid: (len(found & whole), len(found - whole)) for rowid, found in names.items()}

    def _hits(
        self, ranked: Sequence[int], bm25: dict[int, float], plan: QueryPlan
    ) -> list[SearchHit]:
        if not ranked:
            return []
        records = self._records.get_many(ranked, self._load_records)
        return [
            SearchHit(
                dataset_id=records[rowid].id,
                title=records[rowid].title,
                mission_id=records[rowid].mission_id,
                score=round(bm25.get(rowid, 0.0), 4),
                matched_parameters=plan.matching_parameters(records[rowid].parameters),
            )
            for rowid in ranked
        ]

    # refresh -----------------------------------------------------------------------------

    def guess_mission(self, dataset_id: str) -> str | None:
        """Mission most common among datasets whose id shares this id's first segment."""
        head = re.split(r"[_\-]", dataset_id.upper(), maxsplit=1)[0]
        rows = self._query(
            "SELECT mission_id, count(*) FROM datasets WHERE mission_id IS NOT NULL AND "
            "(id_upper = ? OR (id_upper > ? AND id_upper < ?) OR (id_upper > ? AND id_upper < ?))"
            " GROUP BY mission_id ORDER BY 2 DESC",
            [head, head + "_", head + "_\uffff", head + "-", head + "-\uffff"],
        )
        return str(rows[0][0]) if rows else None

    def refreshed_records(self) -> list[tuple[str, list[str]]]:
        """Ids and keywords of the datasets a live refresh wrote (not the snapshot)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, keywords FROM datasets WHERE source = ?", (_REFRESH,)
            ).fetchall()
        return [(str(r[0]), [str(k) for k in json.loads(r[1])]) for r in rows]

    def upsert(self, infos: Iterable[DatasetInfo]) -> int:
        """Insert or replace datasets (from a live refresh); returns how many were written."""
        written = 0
        pending = list(infos)
        guessed = [
            info if info.mission_id else _with_mission(info, self.guess_mission(info.id))
            for info in pending
        ]
        with self._lock:
            try:
                for info in guessed:
                    _write_dataset(
                        self._conn, info, (), self._aliases, self._mission_names, _REFRESH
                    )
                    written += 1
                self._conn.commit()
            except BaseException:
                self._conn.rollback()
                raise
        self._reload_names()
        return written


def _chunks(rowids: Sequence[int], size: int = 500) -> list[list[int]]:
    """`rowids` in runs short enough for one SQL `IN (...)`."""
    return [list(rowids[n : n + size]) for n in range(0, len(rowids), size)]


def _without_time(query: str) -> str:
    """The query with its time expression blanked.

    Dates name no dataset: "2015-03-17", "day 76 of 2015" or "06:00 to 12:00" would
    otherwise match ids, titles and numbers.
    """
    found = find_time(query)
    for start, end in found.spans:
        query = query[:start] + " " * (end - start) + query[end:]
    return query


def _with_mission(info: DatasetInfo, mission_id: str | None) -> DatasetInfo:
    return replace(info, mission_id=mission_id)
