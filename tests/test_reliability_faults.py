"""Every reliability fault class of issue 10, injected by loopback HAPI and CDAS servers.

(Concurrent writers, class 1, are in test_session_concurrency.py; configuration, class
12 and part of 8, in test_config.py.)
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from servers.catalog_hapi import CatalogHapiServer
from servers.cdas_server import CdasTestServer, Fault
from servers.hapi_server import HapiTestServer, make_info, synthetic_frame
from xhelio.cli.main import app
from xhelio.config import load_settings
from xhelio.errors import (
    BadTimeRangeError,
    CancelledError,
    RateLimitedError,
    RequestDeadlineError,
    ServerError,
)
from xhelio.services import Services
from xhelio.sources.cache import CachedSource, FragmentCache
from xhelio.sources.cdaweb import CdawebSource
from xhelio.sources.hapi import HapiSource
from xhelio.sources.http import RetryPolicy
from xhelio.sources.netguard import cancel_scope
from xhelio.timerange import TimeRange, parse_time_range

runner = CliRunner()
START, STOP = "2024-01-01", "2024-01-04"
WINDOW = TimeRange(datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 3, tzinfo=UTC))


@pytest.fixture
def hapi() -> Iterator[HapiTestServer]:
    with HapiTestServer(version="3.3", formats=("csv",)) as server:
        info = make_info(START, STOP, [("n", "cm^-3", None)], cadence="PT1M")
        server.add_dataset("SYN", info, synthetic_frame(START, STOP, "PT1M", ["n"]))
        yield server


def cached(server: HapiTestServer, sleeps: list[float] | None = None, **values: Any) -> Any:
    settings = load_settings(hapi_url=server.url, **values)
    policy = RetryPolicy.from_settings(settings, backoff_base_s=0.001)
    if sleeps is not None:
        policy = RetryPolicy(
            retries=2,
            backoff_base_s=0.001,
            sleep=sleeps.append,
            retry_after_max_s=settings.http_retry_after_max_s,
        )
    source = HapiSource(settings, retry=policy)
    return CachedSource(
        source, FragmentCache(settings), adaptive_fragments=False, incomplete_ttl=timedelta(0)
    )


def frame_of(source: Any, window: TimeRange = WINDOW) -> pd.DataFrame:
    return source.fetch("SYN", ["n"], window)["n"].frame


# 3: a close-delimited body cut at a row boundary -------------------------------------


def test_close_delimited_cut_at_a_row_boundary_is_never_cached_as_complete(
    hapi: HapiTestServer,
) -> None:
    truth = frame_of(cached(hapi))
    (Path(load_settings().cache_dir)).joinpath("index.sqlite")  # cache exists
    runner.invoke(app, ["cache", "clear"])
    hapi.fail_next("close_rows")
    source = cached(hapi)
    first = frame_of(source)
    assert len(first) < len(truth)  # what arrived, the server having said nothing more
    hapi.clear_requests()
    second = frame_of(source)
    # The unproven part was asked again, and the answer is now whole.
    assert len(hapi.data_requests()) >= 1
    pd.testing.assert_frame_equal(second, truth)
    hapi.clear_requests()
    pd.testing.assert_frame_equal(frame_of(source), truth)
    assert hapi.data_requests() == []  # a framed, complete answer is cached for good


# 4: duplicate timestamps, identical and contradictory --------------------------------


def test_identical_duplicates_dropped_contradictory_reported_and_not_cached(
    hapi: HapiTestServer,
) -> None:
    truth = frame_of(cached(hapi))
    runner.invoke(app, ["cache", "clear"])
    hapi.fail_next("duplicate_rows")
    pd.testing.assert_frame_equal(frame_of(cached(hapi)), truth)
    runner.invoke(app, ["cache", "clear"])

    hapi.fail_next("contradict_rows")
    source = cached(hapi)
    data = source.fetch("SYN", ["n"], WINDOW)["n"]
    assert data.frame.index.is_unique
    assert any("different values" in note for note in data.notes)
    pd.testing.assert_frame_equal(data.frame, truth)  # the first value of each was kept
    hapi.clear_requests()
    frame_of(source)
    assert len(hapi.data_requests()) >= 1  # the contradictory part was not kept


# 7: a flipped bit in a cached fragment -------------------------------------------------


def test_flipped_bit_in_a_fragment_is_detected_and_refetched(
    hapi: HapiTestServer, xhelio_home: Path
) -> None:
    source = cached(hapi)
    truth = frame_of(source)
    fragment = sorted((xhelio_home / "cache" / "fragments").rglob("*.parquet"))[0]
    raw = bytearray(fragment.read_bytes())
    raw[len(raw) // 3] ^= 0x10
    fragment.write_bytes(bytes(raw))
    hapi.clear_requests()
    pd.testing.assert_frame_equal(frame_of(cached(hapi)), truth)
    assert len(hapi.data_requests()) == 1


# 8, 9, 10: typed network failures, deadline, cancellation, 429 --------------------------


def test_redirect_loop_and_undecodable_body_are_typed_errors(hapi: HapiTestServer) -> None:
    hapi.fail_next("redirect_loop", count=50, endpoint="any")
    with pytest.raises(ServerError, match="redirects in a loop"):
        frame_of(cached(hapi))
    hapi.clear_faults()
    hapi.fail_next("bad_encoding", count=5)
    with pytest.raises(ServerError, match=r"decod|cut"):
        frame_of(cached(hapi))


def test_trickling_server_hits_the_whole_request_deadline(hapi: HapiTestServer) -> None:
    hapi.fail_next("trickle", count=5, delay_s=0.05)
    with pytest.raises(RequestDeadlineError, match="XHELIO_HTTP_DEADLINE_S"):
        frame_of(cached(hapi, http_deadline_s=1.0, http_retries=0))


def test_cancel_interrupts_a_stalled_read(hapi: HapiTestServer) -> None:
    source = cached(hapi, http_timeout_s=300)
    frame_of(source, TimeRange(WINDOW.start, WINDOW.start + timedelta(hours=1)))  # warm /info
    runner.invoke(app, ["cache", "clear"])
    hapi.clear_requests()
    hapi.fail_next("stall", delay_s=120)
    cancel = threading.Event()
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            with cancel_scope(cancel):
                frame_of(source)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    while not hapi.data_requests() and worker.is_alive():
        threading.Event().wait(0.05)
    cancel.set()
    worker.join(timeout=60)  # liveness bound only: the read timeout here is 300 s
    assert not worker.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], CancelledError)


def test_429_is_retried_honouring_retry_after_and_bounded(hapi: HapiTestServer) -> None:
    sleeps: list[float] = []
    hapi.fail_next("http429", delay_s=2.5)
    truth = frame_of(cached(hapi, sleeps))
    assert sleeps == [2.5]
    assert len(truth) > 0
    runner.invoke(app, ["cache", "clear"])
    hapi.fail_next("http429", delay_s=3600)
    with pytest.raises(RateLimitedError) as caught:
        frame_of(cached(hapi, [], http_retry_after_max_s=60))
    message = caught.value.message
    assert "127.0.0.1 is limiting" in message and "3600" in message
    assert "HAPI server" not in message  # the URL is not blamed


def test_years_outside_pandas_range_are_a_time_range_error() -> None:
    for text in ("3000", "2200 to 2300", "1500-01-01 to 1500-02-01"):
        with pytest.raises(BadTimeRangeError, match="1678 to 2261"):
            parse_time_range(text)


# 2 and 5: bounded memory and atomic --out ------------------------------------------------


@pytest.fixture
def omni(monkeypatch: pytest.MonkeyPatch) -> Iterator[CatalogHapiServer]:
    # Enough rows that no request is thinned: the data does not depend on how it is cut.
    with CatalogHapiServer(max_rows=200_000) as server:
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        yield server


def test_loading_over_the_memory_budget_is_refused_before_fetching(
    omni: CatalogHapiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XHELIO_SESSION_MEMORY_MB", "1")
    args = '{"dataset_id": "OMNI_HRO_1MIN", "parameter_id": "BZ_GSM", "time_range": "2005"}'
    result = runner.invoke(app, ["tool", "fetch_data", args, "--session", "M"])
    assert result.exit_code == 1
    assert "XHELIO_SESSION_MEMORY_MB" in result.stdout and "shorter range" in result.stdout
    assert "in memory" in result.stdout
    assert omni.data_requests() == []


def test_fetch_to_a_file_streams_in_pieces_equal_to_one_fetch(
    omni: CatalogHapiServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    window = "2001-01-01 to 2001-03-31"
    whole = tmp_path / "whole.parquet"
    result = runner.invoke(app, ["fetch", "OMNI_HRO_1MIN", "BZ_GSM", "-t", window, "-o", whole])
    assert result.exit_code == 0, result.output
    omni.clear_requests()
    runner.invoke(app, ["cache", "clear"])
    monkeypatch.setenv("XHELIO_FETCH_PIECE_MB", "1")  # 90 days of 1-min data: ~2 MB
    out = tmp_path / "pieces.parquet"
    result = runner.invoke(app, ["fetch", "OMNI_HRO_1MIN", "BZ_GSM", "-t", window, "-o", out])
    assert result.exit_code == 0, result.output
    found = re.search(r"\((\d+)\s+pieces\)", result.stderr)
    assert found is not None, result.stderr
    pieces = int(found.group(1))
    assert pieces > 1  # written piece by piece (each fetched through the cache)
    streamed = pq.read_table(out).to_pandas()
    expected = pq.read_table(whole).to_pandas()
    np.testing.assert_array_equal(streamed.index.asi8, expected.index.asi8)
    # (The synthetic server's values depend on each request's start, so only their shape
    # and validity can be compared; the times must match exactly: no row lost or doubled.)
    assert streamed.shape == expected.shape and list(streamed.columns) == list(expected.columns)
    assert bool(np.isfinite(streamed.to_numpy()).all())
    # The file keeps the data's meaning as a file written whole does: units, citation.
    whole_schema, streamed_schema = pq.read_schema(whole), pq.read_schema(out)
    for name in expected.columns:
        units = whole_schema.field(name).metadata
        assert units and streamed_schema.field(name).metadata == units
    assert streamed_schema.metadata[b"xhelio"] == whole_schema.metadata[b"xhelio"]


def test_a_streamed_fetch_masks_valid_range_and_is_noted_in_the_session(
    omni: CatalogHapiServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XHELIO_FETCH_PIECE_MB", "1")
    window = "2001-01-01 to 2001-03-31"
    out = tmp_path / "streamed.csv"
    args = ["fetch", "OMNI_HRO_1MIN", "BZ_GSM", "-t", window, "-o", out]
    result = runner.invoke(app, [*args, "--valid-range", "--session", "big"])
    assert result.exit_code == 0, result.output
    assert "pieces)" in result.stderr
    assert "Too large to load into session big" in " ".join(result.stderr.split())
    with Services() as services:
        session = services.sessions.load("big")
        noted = [e for e in services.sessions.events("big") if e.get("type") == "data_written"]
    assert len(noted) == 1
    assert "OMNI_HRO_1MIN.BZ_GSM" in noted[0]["summary"]
    assert str(out.resolve()) in noted[0]["summary"]
    assert len(session.store) == 0  # the data itself was not loaded
    # Units in the header and the meaning beside it, as for a CSV written whole.
    header = out.read_text().splitlines()[0]
    assert header.startswith("time,") and "BZ_GSM [nT]" in header
    sidecar = json.loads((tmp_path / "streamed.csv.meta.json").read_text())
    assert sidecar["parameters"]["OMNI_HRO_1MIN.BZ_GSM"]["units"] == "nT"
    assert sidecar["citations"][0]["dataset"] == "OMNI_HRO_1MIN"
    # The pieces were fetched with the valid-range check asked for (HAPI gives no
    # VALIDMIN/VALIDMAX, and the note says so instead of passing over the option).
    assert "no VALIDMIN/VALIDMAX" in " ".join(result.output.split())


def test_failed_fetch_leaves_the_previous_out_file_intact(
    omni: CatalogHapiServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "outputs"
    folder.mkdir()
    monkeypatch.setenv("XHELIO_HTTP_RETRIES", "0")
    monkeypatch.setenv("XHELIO_FETCH_PIECE_MB", "1")
    # The first weeks are cached, so the streamed run writes pieces before it fails.
    warm = runner.invoke(
        app, ["fetch", "OMNI_HRO_1MIN", "BZ_GSM", "-t", "2001-01-01 to 2001-01-20"]
    )
    assert warm.exit_code == 0, warm.output
    for name in ("kept.csv", "kept.parquet"):
        out = folder / name
        out.write_text("previous good content\n")
        omni.fail_next("cut_stream", count=100)
        args = ["fetch", "OMNI_HRO_1MIN", "BZ_GSM", "-t", "2001-01-01 to 2001-03-31", "-o", out]
        result = runner.invoke(app, args)
        assert result.exit_code == 1
        assert "ended early" in result.stderr
        assert out.read_text() == "previous good content\n"
    assert sorted(p.name for p in folder.iterdir()) == ["kept.csv", "kept.parquet"]


# 6 and 11: the cache index and the one cache for fragments and files -------------------


def test_unopenable_cache_index_is_one_line_and_kept(xhelio_home: Path) -> None:
    (xhelio_home / "cache").mkdir()
    index = xhelio_home / "cache" / "index.sqlite"
    index.write_bytes(b"garbage" * 500)
    result = runner.invoke(app, ["cache", "info"])
    assert result.exit_code == 1
    assert "cannot be opened" in result.stderr and "Traceback" not in result.output
    assert index.read_bytes() == b"garbage" * 500


def test_html_page_instead_of_a_cdf_is_not_kept_and_cache_sees_cdf_files(
    real_data: Path, xhelio_home: Path
) -> None:
    cdf = real_data / "ac_k2_mfi_20220101_v03.cdf"
    if not cdf.exists():
        pytest.skip("real ACE CDF not present")
    day = datetime(2022, 1, 1, tzinfo=UTC)
    with CdasTestServer() as server:
        server.add_file("AC_K2_MFI", cdf, day, day + timedelta(days=1))
        settings = load_settings(cdas_url=server.url, http_retries=0)
        source = CdawebSource(settings)
        page = b"<html><body>Down for maintenance</body></html>"
        server.inject(cdf.name, Fault(body=page, content_type="text/html"))
        with pytest.raises(ServerError, match="web page"):
            source.fetch("AC_K2_MFI", ["Magnitude"], TimeRange(day, day + timedelta(hours=2)))
        server.inject(cdf.name, Fault(body=page, content_type="application/x-cdf"))
        with pytest.raises(ServerError):
            source.fetch("AC_K2_MFI", ["Magnitude"], TimeRange(day, day + timedelta(hours=2)))
        assert FragmentCache(settings).info().entries == 0  # the bad file was not kept
        data = source.fetch("AC_K2_MFI", ["Magnitude"], TimeRange(day, day + timedelta(hours=2)))
        assert len(data["Magnitude"].frame) > 0
        source.close()
    info = runner.invoke(app, ["cache", "info", "--json"])
    assert '"AC_K2_MFI"' in info.stdout
    cleared = runner.invoke(app, ["cache", "clear"])
    assert "Removed 1" in cleared.stdout
    assert (
        list((xhelio_home / "cache" / "files").glob("*")) == []
        if (xhelio_home / "cache" / "files").exists()
        else True
    )


def test_fragments_and_downloaded_files_share_one_size_limit(
    hapi: HapiTestServer, xhelio_home: Path
) -> None:
    settings = load_settings(hapi_url=hapi.url)
    cache = FragmentCache(settings)
    download = cache.new_file_path("old.cdf")
    download.write_bytes(np.random.default_rng(0).bytes(200_000))
    kept = cache.add_file("old-key", "AC_K2_MFI", "old.cdf", download)
    assert cache.file_for("old-key") == kept
    # Room for the download and a little more: new fragments must push the old file out.
    cache.max_bytes = 205_000
    source = CachedSource(HapiSource(settings), cache, adaptive_fragments=False)
    assert len(source.fetch("SYN", ["n"], WINDOW)["n"].frame) == 2 * 1440
    info = cache.info()
    assert info.total_bytes <= cache.max_bytes
    assert "SYN" in info.datasets and "AC_K2_MFI" not in info.datasets
    assert cache.file_for("old-key") is None and not kept.exists()
