"""HapiSource against the loopback HapiTestServer: real CDAWeb answers, formats, faults."""

from __future__ import annotations

import csv
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import cdflib
import httpx
import numpy as np
import pandas as pd
import pytest

from servers.hapi_server import HapiTestServer, make_info, running_hapi_server, synthetic_frame
from xhelio.config import Settings, load_settings
from xhelio.errors import (
    ConfigError,
    NoDataError,
    RequestTooLargeError,
    ServerError,
    ServerUnreachableError,
    TruncatedResponseError,
    UnknownDatasetError,
    UnknownParameterError,
)
from xhelio.sources.hapi import DataFormat, HapiSource
from xhelio.sources.hapi_parse import (
    dataset_info_from_hapi,
    mask_fill,
    parse_binary,
    parse_csv,
    parse_hapi_time,
    split_time_range,
)
from xhelio.sources.hapi_status import HapiRequest
from xhelio.sources.hapi_stream import BinaryBodyDecoder, CsvBodyDecoder
from xhelio.sources.http import RetryPolicy, is_retryable
from xhelio.timerange import TimeRange

FAST_RETRY = RetryPolicy(retries=2, backoff_base_s=0.01)
ALL_FILE = "cdaweb_hapi_AC_H2_MFI_all_1997-09-02.csv"
DE2_FILE = "de2_ion2s_rpa_19830213_v01.cdf"
MAG_FILE = "cdaweb_hapi_AC_H2_MFI_Magnitude_1997-09-02.csv"


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def day_range(day: int, days: float = 1.0) -> TimeRange:
    start = utc(2024, 1, day)
    return TimeRange(start, start + timedelta(days=days))


@pytest.fixture
def server() -> Iterator[HapiTestServer]:
    yield from running_hapi_server()


def source_for(
    server: HapiTestServer,
    data_format: DataFormat = "auto",
    retry: RetryPolicy = FAST_RETRY,
    **settings: Any,
) -> HapiSource:
    return HapiSource(
        load_settings(hapi_url=server.url, **settings), data_format=data_format, retry=retry
    )


def add_synthetic(
    server: HapiTestServer,
    dataset_id: str = "SYN",
    days: int = 3,
    max_request_duration: str | None = None,
) -> pd.DataFrame:
    start, stop = "2024-01-01", f"2024-01-{1 + days:02d}"
    info = make_info(
        start,
        stop,
        [("B", "nT", 3), ("n", "cm^-3", None)],
        max_request_duration=max_request_duration,
    )
    frame = synthetic_frame(start, stop, "PT1M", ["Bx", "By", "Bz", "n"])
    server.add_dataset(dataset_id, info, frame)
    return frame


# real CDAWeb answers -------------------------------------------------------------------


def read_real_rows(path: Path) -> tuple[list[datetime], list[list[float]]]:
    """Independent reading of a real HAPI CSV file with the stdlib csv module."""
    times: list[datetime] = []
    rows: list[list[float]] = []
    with path.open() as fh:
        for row in csv.reader(line for line in fh if not line.startswith("#")):
            times.append(datetime.fromisoformat(row[0].replace("Z", "+00:00")))
            rows.append([float(x) for x in row[1:]])
    return times, rows


def test_real_cdaweb_csv_parsed_exactly(real_data: Path) -> None:
    with HapiTestServer(version="2.0") as server:
        server.add_hapi_csv(real_data / ALL_FILE)
        source = source_for(server, data_format="csv")
        data = source.fetch(
            "AC_H2_MFI",
            ["Magnitude", "BGSEc", "SC_pos_GSE"],
            TimeRange(utc(1997, 9, 2), utc(1997, 9, 4)),
        )
    times, rows = read_real_rows(real_data / ALL_FILE)
    expected_index = pd.DatetimeIndex(times).as_unit("ns")
    assert len(times) == 48
    mag = data["Magnitude"]
    assert list(mag.frame.columns) == ["Magnitude"]
    assert mag.units == "nT"
    assert mag.description == "B-field magnitude"
    assert mag.frame.index.equals(expected_index)
    assert str(pd.DatetimeIndex(mag.frame.index).tz) == "UTC"
    np.testing.assert_array_equal(mag.frame["Magnitude"].to_numpy(), [r[0] for r in rows])
    bgse = data["BGSEc"].frame
    assert list(bgse.columns) == ["BGSEc_0", "BGSEc_1", "BGSEc_2"]
    np.testing.assert_array_equal(bgse.to_numpy(), [r[1:4] for r in rows])
    pos = data["SC_pos_GSE"]
    assert pos.units == "km"
    np.testing.assert_array_equal(pos.frame.to_numpy(), [r[7:10] for r in rows])


def test_real_single_parameter_answer_matches_the_real_magnitude_file(real_data: Path) -> None:
    with HapiTestServer(version="2.0") as server:
        server.add_hapi_csv(real_data / ALL_FILE)
        data = source_for(server).fetch(
            "AC_H2_MFI", ["magnitude"], TimeRange(utc(1997, 9, 2, 6), utc(1997, 9, 3, 6))
        )
        assert server.data_requests()[-1].query["parameters"] == "Magnitude"
    times, rows = read_real_rows(real_data / MAG_FILE)
    expected = pd.Series([r[0] for r in rows], index=pd.DatetimeIndex(times).as_unit("ns"))
    got = data["Magnitude"].frame["Magnitude"]
    assert len(got) == 24
    np.testing.assert_array_equal(got.to_numpy(), expected.loc[got.index].to_numpy())
    assert got.index[0] == pd.Timestamp("1997-09-02T06:00Z")


def test_real_fill_values_become_nan(real_data: Path, tmp_path: Path) -> None:
    lines = (real_data / ALL_FILE).read_text().splitlines(keepends=True)
    data_rows = [i for i, line in enumerate(lines) if not line.startswith("#")]
    first, second = data_rows[5], data_rows[10]
    # CDAWeb writes -1.0E31 as declared, or the float32-rounded value it stored.
    lines[first] = lines[first].replace("4.254", "-1.0E31", 1)
    parts = lines[second].split(",")
    parts[2] = "-9.999999848243207e+30"
    lines[second] = ",".join(parts)
    modified = tmp_path / "with_fill.csv"
    modified.write_text("".join(lines))
    with HapiTestServer(version="2.0") as server:
        server.add_hapi_csv(modified)
        data = source_for(server, data_format="csv").fetch(
            "AC_H2_MFI", ["Magnitude", "BGSEc"], TimeRange(utc(1997, 9, 2), utc(1997, 9, 3))
        )
    mag = data["Magnitude"].frame["Magnitude"]
    assert np.isnan(mag.to_numpy()).sum() == 1 and np.isnan(mag.iloc[5])
    bgse = data["BGSEc"].frame
    assert np.isnan(bgse.iloc[10, 0])
    assert int(bgse.isna().sum().sum()) == 1
    assert mag.iloc[4] == pytest.approx(5.174)


def test_mask_fill_is_exact_for_small_fills() -> None:
    values = np.array([[-999.0], [-999.0001], [1.0], [-1e31]])
    masked = mask_fill(values, "-999")
    assert np.isnan(masked[0, 0])
    assert masked[1, 0] == -999.0001
    assert masked[3, 0] == -1e31
    assert np.isnan(mask_fill(values, "-1.0E31")[3, 0])
    assert not np.isnan(mask_fill(values, None)).any()
    # declared float32-rounded while the data says -1e31, and the other way round
    assert np.isnan(mask_fill(np.array([[-1e31]]), "-9.999999848243207e+30")[0, 0])
    assert np.isnan(mask_fill(np.array([[-9.999999848243207e30]]), "-1e31")[0, 0])
    assert mask_fill(np.array([[-1e30]]), "-1e31")[0, 0] == -1e30


def test_negative_zero_fill_masks_the_tiny_fill_not_real_zeros(real_data: Path) -> None:
    # CDAWeb's /info gives DE-2 RPA fills as "-0.0": FILLVAL -1e-31 printed too short.
    # The real file has exact zeros in the ion drift `x` that are data, not fill.
    drift = np.asarray(cdflib.CDF(str(real_data / DE2_FILE)).varget("x"), dtype=np.float64)
    zeros = drift == 0.0
    assert zeros.any()
    masked = mask_fill(drift, "-0.0")
    assert not np.isnan(masked[zeros]).any()
    np.testing.assert_array_equal(masked, drift)
    fills = mask_fill(np.array([-0.0, float(np.float32(-1e-31)), -1e-31, 0.0, -2.5]), "-0.0")
    assert np.isnan(fills[:3]).all() and list(fills[3:]) == [0.0, -2.5]


def test_non_hapi_server_gives_clear_error(server: HapiTestServer) -> None:
    source = HapiSource(load_settings(hapi_url=server.url + "/nowhere"), retry=FAST_RETRY)
    with pytest.raises(ServerError, match=r"HTTP 404.*XHELIO_HAPI_URL") as caught:
        source.info("AC_H2_MFI")
    assert caught.value.status_code == 404


# formats, vectors, bins ----------------------------------------------------------------


def test_csv_and_binary_give_identical_frames(server: HapiTestServer) -> None:
    frame = add_synthetic(server)
    frame.iloc[400, 1] = np.nan  # sent as the fill value, must come back as NaN
    server.add_dataset("SYN", server.info_of("SYN"), frame)
    tr = TimeRange(utc(2024, 1, 1, 5), utc(2024, 1, 3, 2))
    by_csv = source_for(server, data_format="csv").fetch("SYN", ["B", "n"], tr)
    by_binary = source_for(server, data_format="binary").fetch("SYN", ["B", "n"], tr)
    formats = [r.query["format"] for r in server.data_requests()]
    assert formats == ["csv", "binary"]
    for name in ("B", "n"):
        pd.testing.assert_frame_equal(by_csv[name].frame, by_binary[name].frame)
    expected = frame.loc[(frame.index >= tr.start) & (frame.index < tr.end)]
    assert list(by_csv["B"].frame.columns) == ["B_0", "B_1", "B_2"]
    np.testing.assert_array_equal(by_csv["B"].frame.to_numpy(), expected[["Bx", "By", "Bz"]])
    np.testing.assert_array_equal(by_binary["n"].frame["n"].to_numpy(), expected["n"])
    assert np.isnan(by_binary["B"].frame.iloc[100, 1])
    assert int(by_csv["B"].frame.isna().sum().sum()) == 1


def test_auto_format_prefers_binary_only_when_offered() -> None:
    for formats, expected in ((("csv", "binary"), "binary"), (("csv",), "csv")):
        with HapiTestServer(formats=formats) as server:
            add_synthetic(server, days=1)
            source_for(server).fetch("SYN", ["n"], day_range(1, 0.5))
            assert server.data_requests()[-1].query["format"] == expected


@pytest.mark.parametrize("fmt", ["csv", "binary"])
def test_body_decoded_in_small_pieces_equals_one_parse(
    server: HapiTestServer, fmt: Literal["csv", "binary"]
) -> None:
    # Pieces are parsed on a worker thread while the rest downloads; cut at whole rows
    # (CSV lines, binary records) they must give exactly what one parse of the body gives.
    add_synthetic(server, days=1)
    raw = httpx.get(f"{server.url}/info", params={"dataset": "SYN"}).json()
    params = dataset_info_from_hapi("SYN", raw).data_parameters
    body = httpx.get(
        f"{server.url}/data",
        params={
            "dataset": "SYN",
            "start": "2024-01-01T00:00:00Z",
            "stop": "2024-01-02T00:00:00Z",
            "format": fmt,
        },
    ).content
    request = HapiRequest(f"{server.url}/data", dataset_id="SYN")
    length = int(raw["parameters"][0]["length"])
    decoder = (
        BinaryBodyDecoder(length, params, request, piece_bytes=4096)
        if fmt == "binary"
        else CsvBodyDecoder(params, request, piece_bytes=4096)
    )
    try:
        for i in range(0, len(body), 1000):
            decoder.feed(body[i : i + 1000])
        pieces = decoder.finish()
    finally:
        decoder.close()
    whole = (
        parse_binary(body, length, params, "") if fmt == "binary" else parse_csv(body, params, "")
    )
    assert len(whole.times) == 1440
    np.testing.assert_array_equal(pieces.times, whole.times)
    for p in params:
        np.testing.assert_array_equal(pieces.values[p.name], whole.values[p.name])


def test_vector_labels_name_columns_when_they_fit(server: HapiTestServer) -> None:
    info = make_info("2024-01-01", "2024-01-02", [("B", "nT", 3), ("V", "km/s", 3)])
    info["parameters"][1]["label"] = ["Bx GSE", "By GSE", "Bz GSE"]
    info["parameters"][2]["label"] = ["only", "two"]
    frame = synthetic_frame("2024-01-01", "2024-01-02", "PT10M", list("abcdef"))
    server.add_dataset("VEC", info, frame)
    data = source_for(server).fetch("VEC", ["B", "V"], day_range(1))
    assert list(data["B"].frame.columns) == ["Bx GSE", "By GSE", "Bz GSE"]
    assert list(data["V"].frame.columns) == ["V_0", "V_1", "V_2"]
    np.testing.assert_array_equal(data["V"].frame.to_numpy(), frame[["d", "e", "f"]])


@pytest.mark.parametrize("fmt", ["csv", "binary"])
def test_two_dimensional_parameter_keeps_bins(server: HapiTestServer, fmt: DataFormat) -> None:
    centers = [10.0, 31.6, 100.0, 316.0]
    info = make_info("2024-01-01", "2024-01-02", [("flux", "1/(cm^2 s sr eV)", 4)])
    info["parameters"][1]["bins"] = [{"name": "energy", "units": "eV", "centers": centers}]
    frame = synthetic_frame("2024-01-01", "2024-01-02", "PT5M", ["e0", "e1", "e2", "e3"])
    server.add_dataset("SPEC", info, frame)
    source = source_for(server, data_format=fmt)
    assert source.info("SPEC").parameter("flux") is not None
    flux = source.fetch("SPEC", ["flux"], day_range(1))["flux"]
    assert flux.is_2d and flux.bins is not None
    np.testing.assert_array_equal(flux.bins, centers)
    assert (flux.bins_name, flux.bins_units) == ("energy", "eV")
    assert flux.frame.shape == (288, 4)
    np.testing.assert_array_equal(flux.frame.to_numpy(), frame.to_numpy())


# metadata ------------------------------------------------------------------------------


def test_info_catalog_capabilities(server: HapiTestServer) -> None:
    add_synthetic(server, max_request_duration="P1D")
    server.add_dataset(
        "OTHER",
        make_info("2024-01-01", "2024-01-02", [("x", "1", None)]),
        synthetic_frame("2024-01-01", "2024-01-02", "PT1H", ["x"]),
        title="Another dataset",
    )
    source = source_for(server)
    assert source.catalog() == [("SYN", "SYN"), ("OTHER", "Another dataset")]
    assert source.capabilities()["outputFormats"] == ["csv", "binary"]
    info = source.info("SYN")
    assert info.start == utc(2024, 1, 1) and info.stop == utc(2024, 1, 4)
    assert (info.cadence, info.max_request_duration) == ("PT1M", "P1D")
    assert [p.name for p in info.parameters] == ["Time", "B", "n"]
    b = info.parameter("B")
    assert b is not None and b.size == (3,) and b.units == "nT" and b.fill == "-1.0E31"
    source.info("SYN")
    assert sum(1 for r in server.requests if r.endpoint == "info") == 1  # memoised


def test_default_server_comes_from_settings(
    server: HapiTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_synthetic(server, days=1)
    monkeypatch.setenv("XHELIO_HAPI_URL", server.url + "/")
    source = HapiSource(load_settings())
    assert source.server_url == server.url
    assert source.fetch("SYN", ["n"], day_range(1, 0.25))["n"].frame.shape == (360, 1)


@pytest.mark.parametrize(
    ("version", "names", "foreign"),
    [
        ("2.0", {"id", "time.min", "time.max"}, {"dataset", "start", "stop"}),
        ("3.3", {"dataset", "start", "stop"}, {"id", "time.min", "time.max"}),
    ],
)
def test_parameter_names_follow_server_version(
    version: str, names: set[str], foreign: set[str]
) -> None:
    with HapiTestServer(version=version, strict_names=True) as server:
        add_synthetic(server, days=1)
        data = source_for(server).fetch("SYN", ["B"], day_range(1, 0.5))
        assert data["B"].frame.shape == (720, 3)
        data_query = server.data_requests()[-1].query
        info_query = next(r.query for r in server.requests if r.endpoint == "info")
    assert names <= data_query.keys() and not foreign & data_query.keys()
    assert ("id" if version == "2.0" else "dataset") in info_query
    assert data_query["parameters"] == "B"


# range handling ------------------------------------------------------------------------


def test_max_request_duration_splits_into_consecutive_chunks(server: HapiTestServer) -> None:
    frame = add_synthetic(server, days=3, max_request_duration="P1D")
    calls: list[tuple[int, int | None, str]] = []
    tr = TimeRange(utc(2024, 1, 1, 12), utc(2024, 1, 3, 18))
    data = source_for(server).fetch(
        "SYN", ["n", "B"], tr, progress=lambda d, t, w: calls.append((d, t, w))
    )
    chunks = [(r.query["start"], r.query["stop"]) for r in server.data_requests()]
    assert chunks == [
        ("2024-01-01T12:00:00Z", "2024-01-02T12:00:00Z"),
        ("2024-01-02T12:00:00Z", "2024-01-03T12:00:00Z"),
        ("2024-01-03T12:00:00Z", "2024-01-03T18:00:00Z"),
    ]
    assert all(r.query["parameters"] == "B,n" for r in server.data_requests())
    assert [(d, t) for d, t, _ in calls] == [(1, 3), (2, 3), (3, 3)]
    assert "SYN" in calls[0][2]
    expected = frame.loc[(frame.index >= tr.start) & (frame.index < tr.end), "n"]
    got = data["n"].frame["n"]
    assert got.index.is_unique and got.index.is_monotonic_increasing
    np.testing.assert_array_equal(got.to_numpy(), expected.to_numpy())
    assert got.index.equals(pd.DatetimeIndex(expected.index).as_unit("ns"))


def test_server_refuses_unsplit_request_beyond_limit(server: HapiTestServer) -> None:
    add_synthetic(server, days=3, max_request_duration="P1D")
    query = {"dataset": "SYN", "start": "2024-01-01T00:00Z", "stop": "2024-01-02T00:01Z"}
    answer = httpx.get(server.url + "/data", params=query)
    assert answer.status_code == 400
    assert answer.json()["status"]["code"] == 1408


def test_rows_outside_range_and_duplicates_at_joins_are_dropped() -> None:
    with HapiTestServer(inclusive_stop=True) as server:
        frame = add_synthetic(server, days=3, max_request_duration="PT12H")
        tr = TimeRange(utc(2024, 1, 1, 0, 0, 30), utc(2024, 1, 2, 12))
        got = source_for(server).fetch("SYN", ["n"], tr)["n"].frame
        assert len(server.data_requests()) == 3
    expected = frame.loc[(frame.index >= tr.start) & (frame.index < tr.end)]
    assert got.index.is_unique
    assert got.index[0] == pd.Timestamp("2024-01-01T00:01Z")
    assert got.index[-1] == pd.Timestamp("2024-01-02T11:59Z")
    np.testing.assert_array_equal(got["n"].to_numpy(), expected["n"].to_numpy())


def test_no_data_in_range(server: HapiTestServer) -> None:
    add_synthetic(server, days=1)
    with pytest.raises(NoDataError, match=r"SYN.*2030-01-01T00:00:00Z.*2024-01-01"):
        source_for(server).fetch("SYN", ["n"], TimeRange(utc(2030, 1, 1), utc(2030, 1, 2)))


def test_unknown_parameter_is_caught_before_any_data_request(server: HapiTestServer) -> None:
    add_synthetic(server, days=1)
    with pytest.raises(UnknownParameterError, match=r"'Bogus'.*Available: B, n"):
        source_for(server).fetch("SYN", ["Bogus"], day_range(1))
    assert server.data_requests() == []


def test_unknown_dataset_from_info(server: HapiTestServer) -> None:
    with pytest.raises(UnknownDatasetError, match=r"NOPE.*unknown dataset id"):
        source_for(server).info("NOPE")


# faults --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "error", "server_words"),
    [
        ("1201", NoDataError, "no data for time range: injected fault"),
        ("1406", UnknownDatasetError, "unknown dataset id: injected fault"),
        ("1407", UnknownParameterError, "unknown dataset parameter: injected fault"),
        ("1408", RequestTooLargeError, "too much time or data requested: injected fault"),
        ("1500", ServerError, "Internal server error: injected fault"),
        ("http500", ServerError, "Internal Server Error (injected)"),
    ],
)
def test_fault_maps_to_typed_error_and_next_request_works(
    server: HapiTestServer, kind: Any, error: type[Exception], server_words: str
) -> None:
    add_synthetic(server, days=1)
    source = source_for(server, retry=RetryPolicy(retries=1, backoff_base_s=0.001))
    server.fail_next(kind, count=2)
    with pytest.raises(error) as caught:
        source.fetch("SYN", ["B"], day_range(1, 0.5))
    message = str(caught.value)
    assert server_words in message
    assert "SYN" in message or kind in {"1500", "http500"}
    server.clear_faults()
    assert source.fetch("SYN", ["B"], day_range(1, 0.5))["B"].frame.shape == (720, 3)


def test_retries_after_500_then_succeeds(server: HapiTestServer) -> None:
    add_synthetic(server, days=1)
    server.fail_next("http500", count=2)
    data = source_for(server, retry=RetryPolicy(retries=3, backoff_base_s=0.001)).fetch(
        "SYN", ["n"], day_range(1, 0.5)
    )
    assert data["n"].frame.shape == (720, 1)
    queries = [r.query for r in server.data_requests()]
    assert len(queries) == 3 and queries[0] == queries[1] == queries[2]


def test_gives_up_after_configured_retries(server: HapiTestServer) -> None:
    add_synthetic(server, days=1)
    server.fail_next("1500", count=10)
    source = source_for(server, retry=RetryPolicy(retries=2, backoff_base_s=0.001))
    with pytest.raises(ServerError, match="gave up after 3 attempts") as caught:
        source.fetch("SYN", ["n"], day_range(1, 0.5))
    assert caught.value.status_code == 500
    assert len(server.data_requests()) == 3


def test_no_retry_after_hapi_14xx(server: HapiTestServer) -> None:
    add_synthetic(server, days=1)
    server.fail_next("1406")
    with pytest.raises(UnknownDatasetError):
        source_for(server).fetch("SYN", ["n"], day_range(1, 0.5))
    assert len(server.data_requests()) == 1


def test_retry_policy_backoff_and_retryable_kinds() -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(retries=3, backoff_base_s=0.5, backoff_max_s=1.5, sleep=sleeps.append)
    assert [policy.delay(i) for i in range(4)] == [0.5, 1.0, 1.5, 1.5]
    assert is_retryable(ServerError("x", status_code=503))
    assert not is_retryable(ServerError("x", status_code=404))
    assert not is_retryable(ServerError("x"))
    assert RetryPolicy.from_settings(Settings(http_retries=5)).retries == 5


@pytest.mark.parametrize("fmt", ["csv", "binary"])
@pytest.mark.parametrize("kind", ["cut_stream", "cut_chunked", "cut_body"])
def test_truncated_stream_is_detected(server: HapiTestServer, fmt: DataFormat, kind: Any) -> None:
    add_synthetic(server, days=1)
    source = source_for(server, data_format=fmt)
    server.fail_next(kind)
    with pytest.raises(TruncatedResponseError) as caught:
        source.fetch("SYN", ["B", "n"], day_range(1, 0.5))
    message = str(caught.value)
    assert "SYN" in message and "2024-01-01T00:00:00Z to 2024-01-01T12:00:00Z" in message
    assert len(server.data_requests()) == 1  # a cut stream is reported, not retried
    assert source.fetch("SYN", ["B", "n"], day_range(1, 0.5))["n"].frame.shape == (720, 1)


def test_slow_server_beyond_timeout_gives_clear_error(server: HapiTestServer) -> None:
    add_synthetic(server, days=1)
    source = source_for(
        server, retry=RetryPolicy(retries=1, backoff_base_s=0.001), http_timeout_s=0.3
    )
    source.info("SYN")
    server.fail_next("slow", count=2, delay_s=2.0)
    with pytest.raises(ServerUnreachableError) as caught:
        source.fetch("SYN", ["n"], day_range(1, 0.5))
    message = str(caught.value)
    assert server.url in message and "0.3 s" in message and "XHELIO_HTTP_TIMEOUT_S" in message
    assert len(server.data_requests()) == 2


def test_one_slow_answer_is_retried(server: HapiTestServer) -> None:
    add_synthetic(server, days=1)
    source = source_for(
        server, retry=RetryPolicy(retries=1, backoff_base_s=0.001), http_timeout_s=0.3
    )
    server.fail_next("slow", count=1, delay_s=2.0)
    assert source.fetch("SYN", ["n"], day_range(1, 0.5))["n"].frame.shape == (720, 1)
    assert len(server.data_requests()) == 2


def test_unreachable_server_names_url_and_setting() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/hapi"
    sleeps: list[float] = []
    policy = RetryPolicy(retries=3, backoff_base_s=0.5, sleep=sleeps.append)
    source = HapiSource(load_settings(hapi_url=url), retry=policy)
    with pytest.raises(ServerUnreachableError) as caught:
        source.info("AC_H2_MFI")
    message = str(caught.value)
    assert url in message and "XHELIO_HAPI_URL" in message and "refused" in message
    assert sleeps == []  # nobody listening: fail at once, no backoff


@pytest.mark.parametrize("url", ["cdaweb.gsfc.nasa.gov/hapi", "ftp://127.0.0.1/hapi", "http://"])
def test_server_address_that_is_not_http_is_a_config_error(url: str) -> None:
    source = HapiSource(load_settings(hapi_url=url), retry=FAST_RETRY)
    with pytest.raises(ConfigError, match="XHELIO_HAPI_URL"):
        source.info("AC_H2_MFI")


# parsing details -----------------------------------------------------------------------


def test_time_parsing_accepts_hapi_forms() -> None:
    assert parse_hapi_time("1997-245T00:00:00.000Z") == utc(1997, 9, 2)
    assert parse_hapi_time("2024-01-01T12:30Z") == utc(2024, 1, 1, 12, 30)
    assert parse_hapi_time("2024-02-29T00:00:00.123456789Z") == utc(2024, 2, 29) + timedelta(
        microseconds=123456
    )


def test_day_of_year_csv_is_parsed_vectorised() -> None:
    info = make_info("2024-01-01", "2024-01-02", [("n", "1", None)])
    params = dataset_info_from_hapi("X", info).data_parameters
    body = b"2024-060T00:00:00.000Z,1.5\n2024-060T00:01:00.500Z,2.5\n"
    arrays = parse_csv(body, params, "test")
    got = pd.DatetimeIndex(arrays.times.astype("datetime64[ns]"))
    assert list(got) == [pd.Timestamp("2024-02-29T00:00"), pd.Timestamp("2024-02-29T00:01:00.5")]
    np.testing.assert_array_equal(arrays.values["n"][:, 0], [1.5, 2.5])


def test_split_uses_calendar_months() -> None:
    pieces = split_time_range(TimeRange(utc(2024, 1, 15), utc(2024, 4, 1)), "P1M")
    assert [(p.start.date().isoformat(), p.end.date().isoformat()) for p in pieces] == [
        ("2024-01-15", "2024-02-15"),
        ("2024-02-15", "2024-03-15"),
        ("2024-03-15", "2024-04-01"),
    ]
    assert split_time_range(day_range(1), None) == [day_range(1)]
