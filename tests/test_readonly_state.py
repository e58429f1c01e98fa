"""Read-only state files (issue 10, class 6): a clear error, never a traceback or a wipe.

The CLI runs in a child process without the right to ignore file permissions. Root
(which CI runs as) normally ignores them, so as root the child is started by `setpriv`
with CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER dropped: it is still uid 0,
the owner of the files, and bound by their mode bits like any user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from servers.catalog_hapi import CatalogHapiServer
from xhelio.catalog.index import open_catalog
from xhelio.config import load_settings
from xhelio.data.entry import DataEntry
from xhelio.session.persist import SessionStore

_CLI = "import sys; from xhelio.cli.main import app; sys.argv[0] = 'xhelio'; app()"


def _unprivileged() -> list[str]:
    """The command prefix that makes file permissions apply to the child."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    return [
        setpriv,
        "--inh-caps=-all",
        "--bounding-set=-dac_override,-dac_read_search,-fowner",
    ]


def _xhelio(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_unprivileged(), sys.executable, "-c", _CLI, *args],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "COLUMNS": "200"},
    )


@contextmanager
def _read_only(folder: Path) -> Generator[None]:
    """Make `folder` and everything in it read-only for the block, then restore."""
    paths = [folder, *folder.rglob("*")]
    modes = {p: p.stat().st_mode for p in paths}
    for p in paths:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        yield
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def omni(monkeypatch: pytest.MonkeyPatch) -> Iterator[CatalogHapiServer]:
    server = CatalogHapiServer(max_rows=500)
    with server:
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        yield server


def test_read_only_session_database_is_one_clear_error(
    omni: CatalogHapiServer, xhelio_home: Path
) -> None:
    open_catalog().close()
    store = SessionStore(load_settings())
    session = store.create("R")
    index = pd.date_range("2020-01-01", periods=10, freq="1min", tz="UTC", name="time")
    session.store.put(DataEntry("kept", pd.DataFrame({"v": np.arange(10.0)}, index=index)))
    store.save(session)
    folder = xhelio_home / "sessions"
    before = _snapshot(folder)
    args = {
        "dataset_id": "OMNI_HRO_1MIN",
        "parameter_id": "BZ_GSM",
        "time_range": "2001-01-01T00:00 to 2001-01-01T03:00",
    }
    with _read_only(folder):
        result = _xhelio("tool", "fetch_data", json.dumps(args), "--session", "R")
        assert result.returncode == 1, result.stdout + result.stderr
        output = result.stdout + result.stderr
        assert "Traceback" not in output
        assert "writable" in output and "sessions" in output
    assert _snapshot(folder) == before  # nothing written, nothing deleted
    assert [e.label for e in store.load("R").store] == ["kept"]


def test_read_only_cache_index_is_reported_and_kept(
    omni: CatalogHapiServer, xhelio_home: Path
) -> None:
    warm = _xhelio("fetch", "OMNI_HRO_1MIN", "BZ_GSM", "-t", "2001-01-01T00:00 to 2001-01-01T06:00")
    assert warm.returncode == 0, warm.stderr
    cache = xhelio_home / "cache"
    before = _snapshot(cache)
    assert "index.sqlite" in before
    with _read_only(cache):
        for args in (("cache", "info"), ("cache", "clear")):
            result = _xhelio(*args)
            output = result.stdout + result.stderr
            assert "Traceback" not in output
            assert result.returncode == 1, output
            assert "cache" in output.lower() and "Nothing was deleted" in output
    assert _snapshot(cache) == before
