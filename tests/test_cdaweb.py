"""CdawebSource against the loopback CDAS server: listing, downloads, faults, reading."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cdflib
import numpy as np
import numpy.typing as npt
import pandas as pd
import pytest
from cdflib import cdfepoch
from cdflib.cdfwrite import CDF as CdfWriter

from servers.cdas_server import CdasTestServer, CdfVariable, Fault, write_istp_cdf
from xhelio.config import load_settings
from xhelio.errors import (
    NoDataError,
    ServerError,
    ServerUnreachableError,
    TruncatedResponseError,
    UnknownDatasetError,
    UnknownParameterError,
)
from xhelio.sources import cdf_reader
from xhelio.sources.cdaweb import CdawebSource
from xhelio.sources.http import RetryPolicy
from xhelio.timerange import TimeRange

ACE = "ac_k2_mfi_20220101_v03.cdf"
PSP = "psp_fld_l2_mag_rtn_1min_20200104_v02.cdf"
DAY1 = datetime(2020, 6, 1, tzinfo=UTC)
DAY2 = datetime(2020, 6, 2, tzinfo=UTC)
DAY3 = datetime(2020, 6, 3, tzinfo=UTC)


def varget(cdf: cdflib.CDF, name: str) -> npt.NDArray[Any]:
    """A variable as cdflib reads it, typed as an array."""
    return np.asarray(cdf.varget(name))


def naive_times(frame: pd.DataFrame) -> npt.NDArray[np.datetime64]:
    """The frame's UTC index as naive datetime64, the form cdflib returns."""
    return pd.DatetimeIndex(frame.index).tz_convert(None).to_numpy()


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture
def server() -> Iterator[CdasTestServer]:
    with CdasTestServer() as running:
        yield running


def new_source(server: CdasTestServer, **settings: Any) -> CdawebSource:
    """A source pointed at the test server, retrying once without waiting."""
    values: dict[str, Any] = {"cdas_url": server.url, "http_retries": 1, **settings}
    return CdawebSource(load_settings(**values), retry_policy=RetryPolicy(1, backoff_base_s=0))


@pytest.fixture
def source(server: CdasTestServer) -> Iterator[CdawebSource]:
    made = new_source(server)
    yield made
    made.close()


def day_file(folder: Path, day: datetime, first_value: float) -> Path:
    """Hourly TT2000 records from `day` 00:00 through the next day's 00:00 (25 records)."""
    start = int(cdfepoch.compute_tt2000([day.year, day.month, day.day]))
    epochs = start + np.arange(25, dtype=np.int64) * 3_600_000_000_000
    speed = first_value + np.arange(25, dtype=np.float64)
    field = np.stack([speed, -speed, speed * 2], axis=1)
    flux = np.outer(speed, [1.0, 2.0, 3.0])
    return write_istp_cdf(
        folder / f"test_h1_{day:%Y%m%d}_v01.cdf",
        [
            CdfVariable("Epoch", CdfWriter.CDF_TIME_TT2000, epochs),
            CdfVariable(
                "V",
                CdfWriter.CDF_REAL8,
                speed,
                {"VAR_TYPE": "data", "DEPEND_0": "Epoch", "UNITS": "km/s", "CATDESC": "Speed"},
            ),
            CdfVariable(
                "B",
                CdfWriter.CDF_REAL8,
                field,
                {"VAR_TYPE": "data", "DEPEND_0": "Epoch", "LABL_PTR_1": "B_label", "UNITS": "nT"},
            ),
            CdfVariable(
                "B_label",
                CdfWriter.CDF_CHAR,
                ["Bx", "By", "Bz"],
                record_varying=False,
                char_length=2,
            ),
            CdfVariable(
                "energy",
                CdfWriter.CDF_REAL4,
                np.array([5, 50, 500], dtype=np.float32),
                {"UNITS": "eV"},
                record_varying=False,
            ),
            CdfVariable(
                "flux",
                CdfWriter.CDF_REAL8,
                flux,
                {"VAR_TYPE": "data", "DEPEND_0": "Epoch", "DEPEND_1": "energy", "UNITS": "counts"},
            ),
        ],
    )


@pytest.fixture
def two_days(server: CdasTestServer, tmp_path: Path) -> list[Path]:
    """Two daily files of TEST_H1 whose last/first records share 2020-06-02T00:00."""
    files = [day_file(tmp_path, DAY1, 0.0), day_file(tmp_path, DAY2, 100.0)]
    # Listed out of order on purpose: the source must order by time itself.
    server.add_file("TEST_H1", files[1], DAY2, DAY3)
    server.add_file("TEST_H1", files[0], DAY1, DAY2)
    return files


def cdf_cache_files(source: CdawebSource) -> list[Path]:
    return sorted((source.settings.cache_dir / "files").glob("*"))


def test_real_ace_fetch_matches_cdflib(
    real_data: Path, server: CdasTestServer, source: CdawebSource
) -> None:
    server.add_file("AC_K2_MFI", real_data / ACE, utc("2022-01-01"), utc("2022-01-02"))
    window = TimeRange(utc("2022-01-01T05:00"), utc("2022-01-01T10:00"))
    data = source.fetch("AC_K2_MFI", ["Magnitude", "BGSEc"], window)

    cdf = cdflib.CDF(real_data / ACE)
    times = pd.DatetimeIndex(cdfepoch.to_datetime(varget(cdf, "Epoch"))[5:10]).tz_localize("UTC")
    assert data["Magnitude"].frame.index.equals(times)
    np.testing.assert_array_equal(
        data["Magnitude"].frame["Magnitude"].to_numpy(),
        varget(cdf, "Magnitude")[5:10].astype(np.float64),
    )
    np.testing.assert_array_equal(
        data["BGSEc"].frame.to_numpy(), varget(cdf, "BGSEc")[5:10].astype(np.float64)
    )
    assert list(data["BGSEc"].frame.columns) == ["Bx GSE", "By GSE", "Bz GSE"]
    assert data["BGSEc"].units == "nT"

    listing = [r for r in server.requests if "/orig_data/" in r.path]
    assert len(listing) == 1
    assert listing[0].path.endswith(
        "/dataviews/sp_phys/datasets/AC_K2_MFI/orig_data/20220101T050000Z,20220101T100000Z"
    )
    assert listing[0].headers["Accept"] == "application/json"
    assert len(server.file_requests()) == 1


def test_real_psp_fill_becomes_nan(
    real_data: Path, server: CdasTestServer, source: CdawebSource
) -> None:
    server.add_file(
        "PSP_FLD_L2_MAG_RTN_1MIN", real_data / PSP, utc("2020-01-04"), utc("2020-01-05")
    )
    name = "psp_fld_l2_mag_RTN_1min"
    day = TimeRange(utc("2020-01-04"), utc("2020-01-05"))
    frame = source.fetch("PSP_FLD_L2_MAG_RTN_1MIN", [name], day)[name].frame

    cdf = cdflib.CDF(real_data / PSP)
    raw = varget(cdf, name)
    expected = raw.astype(np.float64)
    expected[raw == cdf.varattsget(name)["FILLVAL"]] = np.nan
    np.testing.assert_array_equal(frame.to_numpy(), expected)
    times = cdfepoch.to_datetime(varget(cdf, "epoch_mag_RTN_1min"))
    np.testing.assert_array_equal(naive_times(frame), times)
    assert frame.isna().any().all()


def test_two_files_joined_in_order_reading_each_once(
    server: CdasTestServer,
    source: CdawebSource,
    two_days: list[Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[str] = []
    real_cdf = cdflib.CDF

    def counting_cdf(path: Path, *args: Any, **kwargs: Any) -> cdflib.CDF:
        opened.append(Path(path).name)
        return real_cdf(path, *args, **kwargs)

    monkeypatch.setattr(cdf_reader.cdflib, "CDF", counting_cdf)
    window = TimeRange(utc("2020-06-01T12:00"), utc("2020-06-02T06:00"))
    data = source.fetch("TEST_H1", ["V", "B", "flux"], window)

    assert sorted(name.split("_", 1)[1] for name in opened) == [p.name for p in two_days]
    assert len(server.file_requests()) == 2
    speed = data["V"].frame
    assert speed.index.is_monotonic_increasing and speed.index.is_unique
    assert speed.index[0] == pd.Timestamp("2020-06-01T12:00Z")
    assert speed.index[-1] == pd.Timestamp("2020-06-02T05:00Z")
    assert len(speed) == 18
    # The shared midnight record comes from the earlier file; the rest in order.
    expected = [*range(12, 25), *range(101, 106)]
    np.testing.assert_array_equal(speed["V"].to_numpy(), expected)
    assert data["V"].units == "km/s"
    assert data["V"].description == "Speed"
    assert list(data["B"].frame.columns) == ["Bx", "By", "Bz"]
    np.testing.assert_array_equal(data["B"].frame["By"].to_numpy(), [-v for v in expected])
    flux = data["flux"]
    assert flux.bins is not None
    np.testing.assert_array_equal(flux.bins, [5, 50, 500])
    assert (flux.bins_name, flux.bins_units) == ("energy", "eV")
    np.testing.assert_array_equal(flux.frame["flux_2"].to_numpy(), np.array(expected) * 3.0)


def test_records_out_of_order_are_sorted(
    server: CdasTestServer, source: CdawebSource, tmp_path: Path
) -> None:
    start = int(cdfepoch.compute_tt2000([2020, 6, 1]))
    order = np.array([3, 0, 4, 1, 2])
    epochs = start + order.astype(np.int64) * 60_000_000_000
    path = write_istp_cdf(
        tmp_path / "shuffled.cdf",
        [
            CdfVariable("Epoch", CdfWriter.CDF_TIME_TT2000, epochs),
            CdfVariable(
                "V", CdfWriter.CDF_REAL8, order * 10.0, {"VAR_TYPE": "data", "DEPEND_0": "Epoch"}
            ),
        ],
    )
    server.add_file("SHUFFLED", path, DAY1, DAY2)
    frame = source.fetch("SHUFFLED", ["V"], TimeRange(DAY1, DAY2))["V"].frame
    assert frame.index.is_monotonic_increasing
    np.testing.assert_array_equal(frame["V"].to_numpy(), [0, 10, 20, 30, 40])


def test_progress_counts_bytes_and_files(
    server: CdasTestServer, source: CdawebSource, two_days: list[Path]
) -> None:
    calls: list[tuple[int, int | None, str]] = []
    source.fetch(
        "TEST_H1", ["V"], TimeRange(DAY1, DAY3), progress=lambda d, t, w: calls.append((d, t, w))
    )
    total = sum(p.stat().st_size for p in two_days)
    assert calls[0] == (0, total, "TEST_H1: 0/2 files")
    assert calls[-1] == (total, total, "TEST_H1: 2/2 files")
    done = [d for d, _, _ in calls]
    assert done == sorted(done)


def test_refetch_reuses_downloaded_files_until_last_modified_changes(
    server: CdasTestServer, source: CdawebSource, two_days: list[Path]
) -> None:
    window = TimeRange(DAY1, DAY3)
    source.fetch("TEST_H1", ["V"], window)
    assert len(server.file_requests()) == 2
    again = source.fetch("TEST_H1", ["B"], window)
    assert len(server.file_requests()) == 2
    assert len(again["B"].frame) == 48

    server.add_file("TEST_H1", two_days[1], DAY2, DAY3, last_modified="2025-02-02T00:00:00.000Z")
    source.fetch("TEST_H1", ["V"], window)
    assert [r.path.rsplit("/", 1)[1] for r in server.file_requests()[2:]] == [two_days[1].name]


def test_listing_500_is_retried(
    server: CdasTestServer, source: CdawebSource, two_days: list[Path]
) -> None:
    server.inject("listing:TEST_H1", Fault(status=500))
    data = source.fetch("TEST_H1", ["V"], TimeRange(DAY1, DAY2))
    assert len(data["V"].frame) == 24
    assert len([r for r in server.requests if "/orig_data/" in r.path]) == 2


def test_listing_500_that_persists_is_a_server_error(
    server: CdasTestServer, source: CdawebSource, two_days: list[Path]
) -> None:
    server.inject("listing:TEST_H1", Fault(status=503), count=2)
    with pytest.raises(ServerError) as caught:
        source.fetch("TEST_H1", ["V"], TimeRange(DAY1, DAY2))
    assert caught.value.status_code == 503
    assert "TEST_H1" in caught.value.message
    assert "Injected failure" in caught.value.message
    assert "2 attempts" in caught.value.message
    assert len(source.fetch("TEST_H1", ["V"], TimeRange(DAY1, DAY2))["V"].frame) == 24


def test_file_500_is_a_server_error_and_leaves_no_partial_file(
    server: CdasTestServer, source: CdawebSource, two_days: list[Path]
) -> None:
    server.inject(two_days[1].name, Fault(status=500), count=2)
    with pytest.raises(ServerError) as caught:
        source.fetch("TEST_H1", ["V"], TimeRange(DAY1, DAY3))
    assert caught.value.status_code == 500
    assert two_days[1].name in caught.value.message
    assert not any(p.name.endswith(".part") for p in cdf_cache_files(source))
    assert len(source.fetch("TEST_H1", ["V"], TimeRange(DAY1, DAY3))["V"].frame) == 48


@pytest.mark.parametrize("close_early", [False, True], ids=["short-body", "cut-connection"])
def test_truncated_file_is_detected(
    server: CdasTestServer, source: CdawebSource, two_days: list[Path], close_early: bool
) -> None:
    server.inject(two_days[0].name, Fault(served_bytes=1000, close_early=close_early))
    with pytest.raises(TruncatedResponseError, match=two_days[0].name):
        source.fetch("TEST_H1", ["V"], TimeRange(DAY1, DAY2))
    assert cdf_cache_files(source) == []
    assert len(source.fetch("TEST_H1", ["V"], TimeRange(DAY1, DAY2))["V"].frame) == 24


def test_slow_listing_times_out_as_unreachable(
    server: CdasTestServer, two_days: list[Path]
) -> None:
    impatient = new_source(server, http_timeout_s=0.2)
    server.inject("listing:TEST_H1", Fault(delay_s=5), count=2)
    with pytest.raises(ServerUnreachableError, match="No answer"):
        impatient.fetch("TEST_H1", ["V"], TimeRange(DAY1, DAY2))
    assert len(impatient.fetch("TEST_H1", ["V"], TimeRange(DAY1, DAY2))["V"].frame) == 24
    impatient.close()


def test_unknown_dataset(
    server: CdasTestServer, source: CdawebSource, two_days: list[Path]
) -> None:
    with pytest.raises(UnknownDatasetError) as caught:
        source.fetch("NOT_A_DATASET", ["V"], TimeRange(DAY1, DAY2))
    assert "NOT_A_DATASET" in caught.value.message
    assert len(source.fetch("TEST_H1", ["V"], TimeRange(DAY1, DAY2))["V"].frame) == 24


def test_no_files_in_range(
    server: CdasTestServer, source: CdawebSource, two_days: list[Path]
) -> None:
    with pytest.raises(NoDataError, match=r"TEST_H1.*2021-01-01"):
        source.fetch("TEST_H1", ["V"], TimeRange(utc("2021-01-01"), utc("2021-01-02")))


def test_no_records_in_range(
    server: CdasTestServer, source: CdawebSource, two_days: list[Path]
) -> None:
    between_records = TimeRange(utc("2020-06-01T00:10"), utc("2020-06-01T00:50"))
    with pytest.raises(NoDataError, match="no valid records of V"):
        source.fetch("TEST_H1", ["V"], between_records)


def test_unknown_parameter(
    server: CdasTestServer, source: CdawebSource, two_days: list[Path]
) -> None:
    with pytest.raises(UnknownParameterError) as caught:
        source.fetch("TEST_H1", ["V", "Np"], TimeRange(DAY1, DAY2))
    assert caught.value.available == ["V", "B", "flux"]
    assert "'Np'" in caught.value.message


def test_info_reads_description_and_latest_file(
    server: CdasTestServer, source: CdawebSource, two_days: list[Path]
) -> None:
    info = source.info("TEST_H1")
    assert info.title == "TEST_H1 test dataset"
    assert (info.start, info.stop) == (DAY1, DAY3)
    assert info.pi_name == "Test PI"
    assert [p.name for p in info.data_parameters] == ["V", "B", "flux"]
    b = info.parameter("b")
    assert b is not None and b.labels == ("Bx", "By", "Bz") and b.units == "nT"
    assert server.file_requests()[-1].path.endswith(two_days[1].name)
    with pytest.raises(UnknownDatasetError, match="NOPE"):
        source.info("NOPE")


def test_unreachable_server() -> None:
    # conftest points XHELIO_CDAS_URL at the closed port 9 on loopback.
    settings = load_settings(http_retries=0)
    source = CdawebSource(settings)
    with pytest.raises(ServerUnreachableError, match="XHELIO_CDAS_URL"):
        source.fetch("AC_H2_MFI", ["Magnitude"], TimeRange(DAY1, DAY2))
    source.close()
