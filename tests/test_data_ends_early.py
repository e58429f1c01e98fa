"""Data that stops early (issue 27): proven only up to its last record, and said.

A HAPI answer without Content-Length or chunking, cut at a row boundary, and a CDAS
listing missing its last files, both served on loopback: the tail is not cached (the
next fetch asks for it again, with the cache's default reuse window for incomplete
data), and the answer says where the data stops. Data that stops where the dataset's
coverage ends is whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from servers.catalog_hapi import CatalogHapiServer
from servers.cdas_server import CdasTestServer
from servers.hapi_server import HapiTestServer, make_info, synthetic_frame
from xhelio.catalog.model import DatasetInfo
from xhelio.cli.main import app
from xhelio.config import load_settings
from xhelio.data.fetch import data_end_note
from xhelio.sources.base import ParameterData
from xhelio.sources.cache import CachedSource, FragmentCache
from xhelio.sources.cdaweb import CdawebSource
from xhelio.sources.hapi import DataFormat, HapiSource
from xhelio.timerange import TimeRange

runner = CliRunner()
COVERAGE = ("2024-01-01", "2024-02-01")
SIXTEEN_DAYS = TimeRange(datetime(2024, 1, 2, tzinfo=UTC), datetime(2024, 1, 18, tzinfo=UTC))


@pytest.fixture
def hapi() -> Iterator[HapiTestServer]:
    with HapiTestServer(version="3.3", formats=("csv", "binary")) as server:
        info = make_info(*COVERAGE, [("B", "nT", 3), ("n", "cm^-3", None)], cadence="PT1M")
        server.add_dataset("SYN", info, synthetic_frame(*COVERAGE, "PT1M", ["Bx", "By", "Bz", "n"]))
        yield server


def cached(server: HapiTestServer, fmt: DataFormat) -> CachedSource:
    """The cache as every caller builds it: default reuse window, adaptive fragments."""
    settings = load_settings(hapi_url=server.url, http_retries=0)
    return CachedSource(HapiSource(settings, data_format=fmt), FragmentCache(settings))


@pytest.mark.parametrize("fmt", ["csv", "binary"])
def test_a_close_delimited_answer_cut_at_a_row_boundary_is_asked_again(
    hapi: HapiTestServer, fmt: DataFormat
) -> None:
    truth = HapiSource(load_settings(hapi_url=hapi.url), data_format=fmt).fetch(
        "SYN", ["B", "n"], SIXTEEN_DAYS
    )
    hapi.fail_next("close_rows")
    source = cached(hapi, fmt)
    first = source.fetch("SYN", ["B", "n"], SIXTEEN_DAYS)
    last = first["n"].frame.index[-1]
    assert len(first["n"].frame) < len(truth["n"].frame)
    # The answer is proven only up to its last record, and says so.
    for name in ("B", "n"):
        assert first[name].proven_until == last.to_pydatetime()
    hapi.clear_requests()
    second = source.fetch("SYN", ["B", "n"], SIXTEEN_DAYS)
    assert len(hapi.data_requests()) >= 1  # the tail was asked again, not reused
    for name in ("B", "n"):
        pd.testing.assert_frame_equal(second[name].frame, truth[name].frame, check_freq=False)
        assert second[name].proven_until is None
    hapi.clear_requests()
    source.fetch("SYN", ["B", "n"], SIXTEEN_DAYS)
    assert hapi.data_requests() == []  # the whole answer is now cached


def test_a_close_delimited_answer_reaching_the_datasets_stop_is_whole() -> None:
    with HapiTestServer(version="3.3", formats=("csv",)) as server:
        # The dataset's coverage ends on Jan 10; the request runs past it.
        info = make_info("2024-01-01", "2024-01-10", [("n", "cm^-3", None)], cadence="PT1M")
        server.add_dataset(
            "ENDED", info, synthetic_frame("2024-01-01", "2024-01-10", "PT1M", ["n"])
        )
        window = TimeRange(datetime(2024, 1, 5, tzinfo=UTC), datetime(2024, 1, 15, tzinfo=UTC))
        server.fail_next("close_whole")
        data = HapiSource(load_settings(hapi_url=server.url)).fetch("ENDED", ["n"], window)
    assert data["n"].proven_until is None
    assert data["n"].frame.index[-1] == pd.Timestamp("2024-01-09T23:59", tz="UTC")


def test_cli_fetch_says_where_a_cut_answer_stops_and_the_next_fetch_is_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with CatalogHapiServer(max_rows=200_000) as server:
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        monkeypatch.setenv("XHELIO_HTTP_RETRIES", "0")
        args = ["fetch", "OMNI_HRO_1MIN", "BZ_GSM", "-t", "2001-01-01 to 2001-01-17"]
        server.fail_next("close_rows")
        cut = runner.invoke(app, args)
        assert cut.exit_code == 0, cut.output
        text = " ".join(cut.output.split())
        assert "OMNI_HRO_1MIN.BZ_GSM stops at 2001-01-0" in text
        assert "before the requested end 2001-01-18T00:00:00Z" in text
        assert "the next fetch asks for it again" in text
        server.clear_requests()
        whole = runner.invoke(app, args)
        assert whole.exit_code == 0, whole.output
        assert server.data_requests(), "the unproven tail was served from the cache"
        assert "stops at" not in whole.output
        assert "24480" in whole.output  # 17 days (the end day included) of 1-minute records


def test_cdf_files_missing_at_the_end_are_asked_for_again(real_data: Path) -> None:
    cdf = real_data / "ac_k2_mfi_20220101_v03.cdf"
    if not cdf.exists():
        pytest.skip("real ACE CDF not present")
    day = datetime(2022, 1, 1, tzinfo=UTC)
    window = TimeRange(day, day + timedelta(days=3))
    with CdasTestServer() as server:
        # The dataset covers five days; the listing has only the first day's file.
        server.add_dataset("AC_K2_MFI", stop=day + timedelta(days=5))
        server.add_file("AC_K2_MFI", cdf, day, day + timedelta(days=1))
        settings = load_settings(cdas_url=server.url, http_retries=0)
        inner = CdawebSource(settings)
        source = CachedSource(inner, FragmentCache(settings), adaptive_fragments=False)
        data = source.fetch("AC_K2_MFI", ["Magnitude"], window)["Magnitude"]
        assert data.proven_until == day + timedelta(days=1)
        listings = len([r for r in server.requests if "orig_data" in r.path])
        source.fetch("AC_K2_MFI", ["Magnitude"], window)
        again = [r for r in server.requests if "orig_data" in r.path]
        assert len(again) == listings + 1  # days 2-3 were not kept as empty
        assert "20220102" in again[-1].path  # and only they were asked for
        inner.close()


def _data(times: pd.DatetimeIndex, proven_until: datetime | None = None) -> ParameterData:
    frame = pd.DataFrame({"n": np.ones(len(times))}, index=times)
    return ParameterData("n", frame, proven_until=proven_until)


def test_the_note_names_the_stop_a_gap_and_a_legitimate_end() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    times = pd.date_range("2024-01-02", "2024-01-08", freq="min", tz="UTC", inclusive="left")
    ongoing = DatasetInfo(id="DS", cadence="PT1M", stop=now)
    gap = data_end_note(ongoing, "DS.n", _data(times), SIXTEEN_DAYS, now)
    assert gap is not None
    assert "stops at 2024-01-07T23:59:00Z, 10 days before the requested end" in gap
    assert "still producing data" in gap and "gap in the data" in gap
    cut = data_end_note(ongoing, "DS.n", _data(times, times[-1].to_pydatetime()), SIXTEEN_DAYS, now)
    assert cut is not None and "asks for it again" in cut
    old = datetime(2024, 6, 1, tzinfo=UTC)
    goes_on = DatasetInfo(id="DS", cadence="PT1M", stop=old)
    assert "goes on to 2024-06-01" in str(
        data_end_note(goes_on, "DS.n", _data(times), SIXTEEN_DAYS, now)
    )
    ended = DatasetInfo(id="DS", cadence="PT1M", stop=datetime(2024, 1, 8, tzinfo=UTC))
    assert data_end_note(ended, "DS.n", _data(times), SIXTEEN_DAYS, now) is None
    recent = pd.date_range(now - timedelta(days=3), now - timedelta(hours=6), freq="min")
    lagging = TimeRange(now - timedelta(days=3), now)
    lag = str(data_end_note(ongoing, "DS.n", _data(recent), lagging, now))
    assert "6 h before the requested end" in lag and "not have reached the archive" in lag
    whole = pd.date_range("2024-01-02", "2024-01-18", freq="min", tz="UTC", inclusive="left")
    assert data_end_note(ongoing, "DS.n", _data(whole), SIXTEEN_DAYS, now) is None
