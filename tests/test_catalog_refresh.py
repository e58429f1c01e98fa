"""Refreshing the catalog from a real HAPI server on 127.0.0.1 (tests/servers/hapi_server)."""

from __future__ import annotations

import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from servers.hapi_server import HapiTestServer, make_info, synthetic_frame
from xhelio.catalog.index import open_catalog
from xhelio.catalog.refresh import refresh_catalog
from xhelio.config import Settings, load_settings
from xhelio.errors import ServerUnreachableError
from xhelio.migrations import applied_versions

START, STOP = "2024-01-01T00:00:00Z", "2024-01-01T02:00:00Z"


@pytest.fixture(scope="module")
def snapshot_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The snapshot index, built once for this module."""
    settings = Settings(home=tmp_path_factory.mktemp("snapshot-index"))
    open_catalog(settings).close()
    return settings.catalog_db


@pytest.fixture(autouse=True)
def fresh_index(snapshot_index: Path, xhelio_home: Path) -> None:
    """Each test refreshes its own copy of the snapshot index."""
    shutil.copyfile(snapshot_index, xhelio_home / "catalog.sqlite")


def _settings(**overrides: object) -> Settings:
    # No retry back-off: injected faults are meant to stick.
    values: dict[str, object] = {"http_retries": 0, "catalog_refresh_workers": 4, **overrides}
    return load_settings(**values)


def _serve_three(server: HapiTestServer) -> None:
    """An existing snapshot dataset with newer info, a new dataset, and a broken one."""
    ace = make_info(
        START,
        "2030-06-01T00:00:00Z",
        [("Magnitude", "nT", None), ("BGSEc", "nT", 3)],
        cadence="PT16S",
        max_request_duration="P10D",
    )
    server.add_dataset(
        "AC_H0_MFI",
        ace,
        synthetic_frame(START, STOP, "PT16S", ["Magnitude", "BGSEc_0", "BGSEc_1", "BGSEc_2"]),
        title="H0 - ACE Magnetic Field (server title)",
    )
    new = make_info(START, STOP, [("B_vec", "nT", 3), ("N_quokka", "cm^-3", None)], cadence="PT1M")
    server.add_dataset(
        "XH_TEST_QUOKKA",
        new,
        synthetic_frame(START, STOP, "PT1M", ["B_vec_0", "B_vec_1", "B_vec_2", "N_quokka"]),
        title="Quokka probe magnetometer and plasma 1-minute test data",
    )
    broken = make_info(START, STOP, [("x", "km", None)])
    server.add_dataset("XH_BROKEN", broken, synthetic_frame(START, STOP, "PT1M", ["x"]))
    server.fail_next("http500", count=50, dataset="XH_BROKEN", endpoint="info")


def test_refresh_merges_new_and_updated_datasets_and_counts_failures() -> None:
    calls: list[tuple[int, int, str]] = []
    with HapiTestServer(version="3.3") as server:
        _serve_three(server)
        report = refresh_catalog(
            _settings(), server.url, progress=lambda d, t, i: calls.append((d, t, i))
        )
        info_queries = [r.query for r in server.requests if r.endpoint == "info"]

    assert report.hapi_version == "3.3"
    assert report.total == 3
    assert report.added == ["XH_TEST_QUOKKA"]
    assert report.updated == ["AC_H0_MFI"]
    assert list(report.failed) == ["XH_BROKEN"]
    assert "500" in report.failed["XH_BROKEN"]
    assert report.succeeded == 2
    assert sorted(d for d, _, _ in calls) == [1, 2, 3]
    assert {t for _, t, _ in calls} == {3}
    # A HAPI 3.x server is asked with `dataset=`.
    assert info_queries and all("dataset" in q and "id" not in q for q in info_queries)

    with open_catalog() as catalog:
        ace = catalog.dataset("AC_H0_MFI")
        assert ace.stop == datetime(2030, 6, 1, tzinfo=UTC)
        assert ace.max_request_duration == "P10D"
        assert ace.cadence == "PT16S"
        # The snapshot's richer title, PI and mission stay.
        assert ace.title.startswith("H0 - ACE Magnetic Field 16-Second")
        assert ace.pi_name == "N. Ness" and ace.mission_id == "ace"
        assert [p.name for p in ace.data_parameters] == ["Magnitude", "BGSEc"]

        quokka = catalog.dataset("xh_test_quokka")
        assert quokka.title == "Quokka probe magnetometer and plasma 1-minute test data"
        assert quokka.cadence == "PT1M"
        assert quokka.start == datetime(2024, 1, 1, tzinfo=UTC)
        assert catalog.parameter("XH_TEST_QUOKKA", "B_vec").size == (3,)
        assert catalog.parameter("XH_TEST_QUOKKA", "N_quokka").fill == "-1.0E31"
        assert catalog.search("quokka density", limit=1)[0].dataset_id == "XH_TEST_QUOKKA"
        assert len(catalog.dataset_ids()) == 2890


def test_a_rebuild_of_the_index_keeps_what_a_refresh_brought(xhelio_home: Path) -> None:
    with HapiTestServer(version="3.3") as server:
        _serve_three(server)
        refresh_catalog(_settings(), server.url)
    index = xhelio_home / "catalog.sqlite"
    with sqlite3.connect(index) as db:  # as after an upgrade: another snapshot or schema
        db.execute("UPDATE meta SET value = 'schema=0;snapshot=old' WHERE key = 'stamp'")
    db.close()

    with open_catalog() as catalog:
        quokka = catalog.dataset("XH_TEST_QUOKKA")
        assert quokka.cadence == "PT1M" and catalog.parameter("XH_TEST_QUOKKA", "B_vec").size == (
            3,
        )
        assert catalog.search("quokka density", limit=1)[0].dataset_id == "XH_TEST_QUOKKA"
        assert catalog.dataset("AC_H0_MFI").max_request_duration == "P10D"  # refreshed wins
        assert len(catalog.dataset_ids()) == 2890
    with sqlite3.connect(index) as db:
        assert applied_versions(db) == [1]
        stamp = db.execute("SELECT value FROM meta WHERE key = 'stamp'").fetchone()[0]
    db.close()
    assert stamp != "schema=0;snapshot=old"


def test_a_damaged_index_is_rebuilt_from_the_snapshot(xhelio_home: Path) -> None:
    (xhelio_home / "catalog.sqlite").write_bytes(b"<html>not a database</html>")
    with open_catalog() as catalog:
        assert len(catalog.dataset_ids()) == 2889


def test_refresh_speaks_hapi_2_to_a_2_0_server() -> None:
    with HapiTestServer(version="2.0", strict_names=True) as server:
        _serve_three(server)
        report = refresh_catalog(_settings(), server.url)
        info_queries = [r.query for r in server.requests if r.endpoint == "info"]
    assert report.hapi_version == "2.0"
    assert report.succeeded == 2 and list(report.failed) == ["XH_BROKEN"]
    assert info_queries and all("id" in q and "dataset" not in q for q in info_queries)


def test_refresh_falls_back_to_id_when_capabilities_is_silent() -> None:
    with HapiTestServer(version="2.0", strict_names=True) as server:
        _serve_three(server)
        server.fail_next("http500", count=5, endpoint="capabilities")
        report = refresh_catalog(_settings(catalog_refresh_workers=1), server.url)
        info_queries = [r.query for r in server.requests if r.endpoint == "info"]
    assert report.hapi_version is None
    assert report.succeeded == 2
    # The first /info tried the 3.x name, was refused with 1401, and every later one used id.
    assert "dataset" in info_queries[0]
    assert all("id" in q for q in info_queries[1:])


def test_refresh_reports_hapi_errors_per_dataset() -> None:
    with HapiTestServer(version="3.3") as server:
        _serve_three(server)
        server.fail_next("1406", count=1, dataset="XH_TEST_QUOKKA", endpoint="info")
        report = refresh_catalog(_settings(), server.url)
    assert set(report.failed) == {"XH_BROKEN", "XH_TEST_QUOKKA"}
    assert "1406" in report.failed["XH_TEST_QUOKKA"]
    assert report.updated == ["AC_H0_MFI"]


def test_refresh_retries_transient_server_errors() -> None:
    with HapiTestServer(version="3.3") as server:
        _serve_three(server)
        server.fail_next("http500", count=1, dataset="XH_TEST_QUOKKA", endpoint="info")
        report = refresh_catalog(_settings(http_retries=1), server.url)
    assert "XH_TEST_QUOKKA" in report.added


def test_unreachable_server_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with HapiTestServer() as server:
        url = server.url
    sleeps: list[float] = []
    monkeypatch.setattr("xhelio.catalog.refresh.time.sleep", sleeps.append)
    with pytest.raises(ServerUnreachableError, match="Cannot reach HAPI server"):
        refresh_catalog(_settings(), url)
    assert sleeps == []  # connection refused: reported at once, not retried
