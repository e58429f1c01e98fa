"""`Services`: one set of resources per process, shared by threads, closed once."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from servers.hapi_server import HapiTestServer, make_info, synthetic_frame
from xhelio.config import load_settings
from xhelio.services import Services, ServicesClosedError
from xhelio.sources.cache import CachedSource
from xhelio.sources.cdaweb_sources import CdawebHapiSource
from xhelio.timerange import TimeRange


def test_threads_share_one_instance_of_each_resource(xhelio_home: Path) -> None:
    with Services() as services:
        seen: list[tuple[int, int, int, int]] = []
        barrier = threading.Barrier(4)

        def grab() -> None:
            barrier.wait()
            seen.append(
                (
                    id(services.catalog),
                    id(services.cache),
                    id(services.sessions),
                    id(services.source("hapi")),
                )
            )

        threads = [threading.Thread(target=grab) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(set(seen)) == 1
        hapi = services.source("hapi")
        assert isinstance(hapi, CachedSource) and hapi.cache is services.cache
        assert services.source("cdf").cache is services.cache  # one index, one size limit


def test_close_releases_everything_and_later_use_is_a_clear_error(xhelio_home: Path) -> None:
    start, stop = "2024-01-01", "2024-01-02"
    with HapiTestServer(version="3.3", formats=("csv",)) as server:
        server.add_dataset(
            "SYN",
            make_info(start, stop, [("n", "cm^-3", None)], cadence="PT1M"),
            synthetic_frame(start, stop, "PT1M", ["n"]),
        )
        services = Services(load_settings(hapi_url=server.url))
        source = services.source("hapi")
        window = TimeRange(datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, 6, tzinfo=UTC))
        assert len(source.fetch("SYN", ["n"], window)["n"].frame) == 360
        assert isinstance(source, CachedSource) and isinstance(source.inner, CdawebHapiSource)
        client = source.inner.hapi.client
        catalog, cache = services.catalog, services.cache
        services.close()
        services.close()  # twice is harmless
    assert services.closed and client.is_closed
    with pytest.raises(sqlite3.ProgrammingError):
        catalog.dataset("AC_H2_MFI")
    with pytest.raises(sqlite3.ProgrammingError):
        cache.info()
    for use in (lambda: services.cache, lambda: services.source("hapi")):
        with pytest.raises(ServicesClosedError, match="closed"):
            use()
    with pytest.raises(RuntimeError, match="closed"):
        client.get(server.url)


def test_services_of_another_home_use_that_homes_state(xhelio_home: Path, tmp_path: Path) -> None:
    other = tmp_path / "h2"
    other.mkdir()
    (other / "config.toml").write_text("cache_max_mb = 7\n")
    with Services(load_settings(home=other)) as services:
        assert services.cache.folder.is_relative_to(other)
        assert services.cache.max_bytes == 7 * 2**20
        assert services.sessions.root.is_relative_to(other)
    assert not (xhelio_home / "cache").exists()
