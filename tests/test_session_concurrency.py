"""Concurrent writers on one session: real processes, real threads, one SQLite store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from servers.catalog_hapi import CatalogHapiServer
from xhelio.catalog.index import open_catalog
from xhelio.config import load_settings
from xhelio.data.entry import DataEntry
from xhelio.services import Services
from xhelio.session.persist import SessionStore

OMNI_PARAMS = [
    "RMS_phase", "F", "BX_GSE", "BY_GSE", "BZ_GSE", "BY_GSM", "BZ_GSM", "RMS_SD_B",
    "RMS_SD_fld_vec", "flow_speed", "Vx", "Vy", "Vz", "proton_density", "T", "Pressure",
    "E", "Beta", "Mach_num", "Mgs_mach_num", "x", "y", "z", "PC_N_INDEX",
]  # fmt: skip

# Each worker process runs four `xhelio tool fetch_data ... --session L` commands in a row,
# each a full CLI invocation (load the session, fetch, save) with its own exit code.
_WORKER = """
import json, sys
from xhelio.cli.main import app
codes = []
for name in sys.argv[1:]:
    args = {"dataset_id": "OMNI_HRO_1MIN", "parameter_id": name,
            "time_range": "2001-01-01T00:00 to 2001-01-01T03:00"}
    try:
        app(["tool", "fetch_data", json.dumps(args), "--session", "L"], standalone_mode=False)
        codes.append(0)
    except SystemExit as exc:
        codes.append(int(exc.code or 0))
print("CODES", json.dumps(codes))
"""


@pytest.fixture
def omni_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[CatalogHapiServer]:
    with CatalogHapiServer(max_rows=500) as server:
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        yield server


def test_six_processes_four_fetches_each_keep_everything(
    omni_server: CatalogHapiServer, xhelio_home: Path
) -> None:
    open_catalog().close()  # build the catalog index once, before the workers race
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, *OMNI_PARAMS[k * 4 : k * 4 + 4]],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(6)
    ]
    for worker in workers:
        out, err = worker.communicate(timeout=280)
        assert worker.returncode == 0, err[-2000:]
        codes = json.loads(out.rsplit("CODES", 1)[1])
        assert codes == [0, 0, 0, 0], out[-2000:] + err[-2000:]

    store = SessionStore(load_settings())
    session = store.load("L")
    assert sorted(session.store.labels()) == sorted(f"OMNI_HRO_1MIN.{p}" for p in OMNI_PARAMS)
    assert len(session.operations) == 24
    assert sorted(op["args"]["parameter_id"] for op in session.operations) == sorted(OMNI_PARAMS)
    for entry in session.store:
        assert isinstance(entry.data, pd.DataFrame) and len(entry.data) > 0


def _entry(label: str, value: float) -> DataEntry:
    index = pd.date_range("2020-01-01", periods=50, freq="1min", tz="UTC", name="time")
    return DataEntry(label, pd.DataFrame({"v": np.full(50, value)}, index=index))


def test_threads_append_turns_and_entries_without_losing_any(xhelio_home: Path) -> None:
    with Services() as services:
        services.sessions.create("T")
        barrier = threading.Barrier(4)
        errors: list[BaseException] = []

        def writer(k: int) -> None:
            try:
                session = services.sessions.load("T")
                barrier.wait()
                for turn in range(3):
                    session.history.append({"role": "user", "content": f"w{k} t{turn}"})
                    session.history.append({"role": "assistant", "content": f"ok {k} {turn}"})
                    session.operations.append({"tool": "x", "args": {"k": k, "turn": turn}})
                    session.store.put(_entry(f"w{k}.t{turn}", k * 10 + turn))
                    session.meta[f"writer{k}"] = turn
                    services.sessions.save(session)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        loaded = services.sessions.load("T")
    assert len(loaded.history) == 24
    assert len(loaded.operations) == 12
    assert len(loaded.store) == 12
    assert loaded.meta == {f"writer{k}": 2 for k in range(4)}
    # Each writer's turns stay in the order that writer saved them.
    for k in range(4):
        mine = [m["content"] for m in loaded.history if m["content"].startswith(f"w{k} ")]
        assert mine == [f"w{k} t0", f"w{k} t1", f"w{k} t2"]
    assert float(loaded.store.get("w3.t2").data["v"].iloc[0]) == 32.0


def test_same_label_saved_twice_keeps_last_and_old_reader_still_reads(xhelio_home: Path) -> None:
    store = SessionStore(load_settings())
    first = store.create("S")
    first.store.put(_entry("a", 1.0))
    store.save(first)
    reader = store.load("S")
    second = store.load("S")
    second.store.put(_entry("a", 2.0))
    store.save(second)
    # The file the first reader's record named is still there (no save deletes it).
    assert float(reader.store.get("a").data["v"].iloc[0]) == 1.0
    assert float(store.load("S").store.get("a").data["v"].iloc[0]) == 2.0
    files = list((xhelio_home / "sessions" / "S" / "data").glob("*.parquet"))
    assert len(files) == 2


def test_unchanged_session_saved_again_writes_nothing_new(xhelio_home: Path) -> None:
    store = SessionStore(load_settings())
    session = store.create("U")
    session.store.put(_entry("a", 1.0))
    session.history.append({"role": "user", "content": "hi"})
    store.save(session)
    store.save(session)
    again = store.load("U")
    store.save(again)
    loaded = store.load("U")
    assert len(loaded.history) == 1
    assert len(list((xhelio_home / "sessions" / "U" / "data").glob("*.parquet"))) == 1


def test_read_only_database_is_a_clear_error(xhelio_home: Path) -> None:
    store = SessionStore(load_settings())
    store.create("R")
    db = xhelio_home / "sessions" / "sessions.sqlite"
    for path in db.parent.glob("sessions.sqlite*"):
        path.chmod(0o444)
    db.parent.chmod(0o555)
    try:
        if os.access(db, os.W_OK):
            pytest.skip("running as root: permissions are not enforced")
        from xhelio.session.persist import SessionStoreError

        with pytest.raises(SessionStoreError, match="writable"):
            session = store.load("R")
            session.history.append({"role": "user", "content": "x"})
            store.save(session)
    finally:
        db.parent.chmod(0o755)
        for path in db.parent.glob("sessions.sqlite*"):
            path.chmod(0o644)


def test_delete_and_lock(xhelio_home: Path) -> None:
    store = SessionStore(load_settings())
    session = store.create("D")
    session.store.put(_entry("a", 1.0))
    store.save(session)
    with store.lock("D"), store.lock("D"):  # re-entrant within a thread
        pass
    assert store.delete("D")
    assert not store.exists("D")
    assert not (xhelio_home / "sessions" / "D").exists()


def test_damaged_database_is_a_clear_error_not_a_traceback(xhelio_home: Path) -> None:
    from xhelio.session.persist import SessionStoreError

    folder = xhelio_home / "sessions"
    folder.mkdir()
    (folder / "sessions.sqlite").write_bytes(b"\x00garbage, not a database" * 100)
    with pytest.raises(SessionStoreError, match="session database"):
        SessionStore(load_settings())
    assert (folder / "sessions.sqlite").read_bytes().startswith(b"\x00garbage")  # untouched


def test_a_writer_without_a_figure_keeps_another_writers_figure(xhelio_home: Path) -> None:
    store = SessionStore(load_settings())
    store.create("F")
    plotter = store.load("F")
    talker = store.load("F")  # loaded before any figure existed
    plotter.store.put(_entry("a", 1.0))
    plotter.plot.render({"data": [{"data_label": "a"}]})
    store.save(plotter)
    figure = xhelio_home / "sessions" / "F" / "figure.json"
    assert figure.exists()
    talker.history.append({"role": "user", "content": "hello"})
    store.save(talker)
    assert figure.exists()  # the other writer's figure survives this save
    loaded = store.load("F")
    assert loaded.plot.saved() is not None and len(loaded.history) == 1
    loaded.plot.reset()  # a writer that removes its figure does remove it
    store.save(loaded)
    assert not figure.exists()


def test_session_locks_are_not_kept_after_use_and_still_exclude(xhelio_home: Path) -> None:
    """A server locks every session it runs: nothing may stay behind per session."""
    from xhelio.session import persist

    store = SessionStore(load_settings())
    for n in range(50):
        with store.lock(f"S{n}"), store.lock(f"S{n}"):
            pass
    assert not persist._LOCKS  # pyright: ignore[reportPrivateUsage]
    inside: list[int] = []
    overlaps: list[int] = []

    def hold(n: int) -> None:
        for _ in range(30):
            with store.lock("SHARED"):
                inside.append(n)
                if len(inside) > 1:
                    overlaps.append(n)
                inside.remove(n)

    threads = [threading.Thread(target=hold, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == []
    assert not persist._LOCKS  # pyright: ignore[reportPrivateUsage]
