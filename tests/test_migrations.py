"""Schema migrations: the helper itself, and every store opening files of earlier versions.

`tests/data/stores_8f952fd` holds the state folder written by xhelio at commit 8f952fd
(before the version table): a saved session with fetched ACE data and a figure, a plan, a
saved pipeline, a library operation and the fetch cache's index. Each store opens its copy
and must find everything it held, with every migration recorded once.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from xhelio.agents.planning.store import TaskStore
from xhelio.config import load_settings
from xhelio.migrations import Migration, SchemaVersionError, applied_versions, migrate, sql
from xhelio.pipelines.store import PipelineStore
from xhelio.sandbox.ops_library import OpsLibrary
from xhelio.session.persist import SessionStore
from xhelio.sources.cache import FragmentCache

OLD_STATE = Path(__file__).parent / "data" / "stores_8f952fd"
DATABASES = (
    "sessions/sessions.sqlite",
    "plans.sqlite",
    "pipelines/index.sqlite",
    "ops_library.sqlite",
    "cache/index.sqlite",
)


def _rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table but the version table, to compare before and after."""
    with sqlite3.connect(path) as db:
        names = [
            str(r[0])
            for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        ]
        return {
            name: sorted(db.execute(f"SELECT * FROM {name}").fetchall(), key=repr)
            for name in names
            if name != "schema_migrations"
        }


def _open_every_store(home: Path) -> None:
    settings = load_settings()
    session = SessionStore(settings).load("fixture-session")
    assert [m["role"] for m in session.history] == ["user", "assistant"]
    entry = session.store.get("AC_H2_MFI.Magnitude")
    assert entry.points == 24 and entry.source_dataset == "AC_H2_MFI"
    assert [op["tool"] for op in session.operations][:2] == ["fetch_data", "render_plotly_json"]
    assert session.plot.current is not None

    plan = TaskStore(settings).load("p-fixture")
    assert plan.request == "plot ACE |B|" and plan.tasks[0].mission == "ACE"
    # Left open by a process that no longer runs: offered for resume, by design.
    assert plan.status == "interrupted"

    pipeline = PipelineStore(settings).load("pl_0c71f09469")
    assert pipeline.name == "ACE field plot" and len(pipeline.steps) == 2

    op = OpsLibrary(settings).get("cbf4f4803476")
    assert op is not None and "scipy.signal.butter" in op.code

    cache = FragmentCache(settings, folder=home / "cache")
    try:
        assert cache.info().datasets == {"AC_H2_MFI": (1, 2890)}
    finally:
        cache.close()


def test_state_written_by_the_previous_version_is_migrated_with_nothing_lost(
    xhelio_home: Path,
) -> None:
    shutil.copytree(OLD_STATE, xhelio_home, dirs_exist_ok=True)
    before = {name: _rows(xhelio_home / name) for name in DATABASES}

    _open_every_store(xhelio_home)
    _open_every_store(xhelio_home)  # a second open changes nothing

    for name in DATABASES:
        path = xhelio_home / name
        after = _rows(path)
        for table, rows in before[name].items():
            if (name, table) == ("plans.sqlite", "plans"):  # status: interrupted (see above)
                assert [r[:3] for r in after[table]] == [r[:3] for r in rows]
                continue
            assert after[table] == rows, f"{name}: {table} changed"
        with sqlite3.connect(path) as db:
            versions = applied_versions(db)
        assert versions and versions == list(range(1, len(versions) + 1)), name


def _counter(db: sqlite3.Connection) -> None:
    db.execute("INSERT INTO applied (n) VALUES (1)")


STEPS = (
    Migration(1, "counter table", sql("CREATE TABLE applied (n INTEGER)")),
    Migration(2, "count once", _counter),
)


def test_each_migration_runs_once_in_order_even_from_two_openers(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def open_store() -> None:
        start.wait()
        try:
            db = sqlite3.connect(path, timeout=30)
            try:
                assert migrate(db, STEPS) == 2
            finally:
                db.close()
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM applied").fetchone()[0] == 1
        assert applied_versions(db) == [1, 2]


def test_a_failing_migration_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    db = sqlite3.connect(path)
    migrate(db, STEPS[:1])

    def broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x INTEGER)")
        raise sqlite3.OperationalError("disk full")

    with pytest.raises(sqlite3.OperationalError, match="disk full"):
        migrate(db, (*STEPS[:1], Migration(2, "broken", broken)))
    assert applied_versions(db) == [1]
    assert db.execute("SELECT name FROM sqlite_master WHERE name='half_done'").fetchone() is None
    assert migrate(db, STEPS) == 2  # the fixed migration applies later
    db.close()


def test_a_file_of_a_newer_version_is_refused_not_guessed(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "store.sqlite")
    migrate(db, STEPS)
    with pytest.raises(SchemaVersionError, match="newer xhelio"):
        migrate(db, STEPS[:1], "store.sqlite")
    db.close()


def test_migrations_must_be_numbered_from_one() -> None:
    db = sqlite3.connect(":memory:")
    with pytest.raises(ValueError, match="numbered"):
        migrate(db, (STEPS[1],))
    db.close()
