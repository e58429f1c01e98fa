"""DataFetcher: validation, clamping to coverage, reports, all-NaN warnings, repeats."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import numpy as np
import pytest

from servers.hapi_server import HapiTestServer, make_info, synthetic_frame
from xhelio.catalog.index import open_catalog
from xhelio.catalog.model import DatasetInfo
from xhelio.config import load_settings
from xhelio.data.fetch import DataFetcher, clamp_to_availability
from xhelio.data.store import DataStore
from xhelio.errors import DataUnavailableError, UnknownParameterError
from xhelio.sources.registry import make_source
from xhelio.timerange import TimeRange, parse_time_range

START, STOP = "2023-03-01T00:00:00Z", "2023-03-03T00:00:00Z"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[HapiTestServer]:
    # AC_H2_MFI's real parameter names, served with synthetic values.
    info = make_info(START, STOP, [("Magnitude", "nT", None), ("BGSEc", "nT", 3)], cadence="PT1H")
    frame = synthetic_frame(START, STOP, "PT1H", ["Magnitude", "Bx", "By", "Bz"])
    frame["By"] = np.nan  # one component entirely fill values
    with HapiTestServer() as hapi:
        hapi.add_dataset("AC_H2_MFI", info, frame)
        monkeypatch.setenv("XHELIO_HAPI_URL", hapi.url)
        yield hapi


def fetcher() -> tuple[DataFetcher, DataStore]:
    settings = load_settings()
    store = DataStore()
    return DataFetcher(open_catalog(settings), make_source("hapi", settings), store), store


def test_report_has_points_coverage_cadence_and_nan(server: HapiTestServer) -> None:
    f, store = fetcher()
    (mag,) = f.fetch("ac_h2_mfi", ["magnitude"], "2023-03-01")
    assert mag.label == "AC_H2_MFI.Magnitude"
    assert (mag.points, mag.start, mag.stop) == (24, "2023-03-01T00:00:00Z", "2023-03-01T23:00:00Z")
    assert mag.cadence == "1 h" and mag.nan_fraction == 0 and mag.units == "nT"
    entry = store.get("AC_H2_MFI.Magnitude")
    assert entry.source_dataset == "AC_H2_MFI" and entry.is_timeseries
    assert str(entry.data.index.tz) == "UTC"


def test_all_nan_component_is_a_warning_and_still_stored(server: HapiTestServer) -> None:
    f, store = fetcher()
    (vec,) = f.fetch("AC_H2_MFI", ["BGSEc"], "2023-03-01 to 2023-03-02")
    assert vec.points == 48
    assert len(vec.all_nan_columns) == 1
    assert vec.nan_fraction == pytest.approx(1 / 3)
    assert any("all NaN" in note for note in vec.notes)
    assert store.get("AC_H2_MFI.BGSEc").data.shape == (48, 3)


def test_repeat_is_detected_and_not_refetched(server: HapiTestServer) -> None:
    f, _ = fetcher()
    f.fetch("AC_H2_MFI", ["Magnitude"], "2023-03-01")
    before = len(server.data_requests())
    (again,) = f.fetch("AC_H2_MFI", ["Magnitude"], "2023-03-01")
    assert again.already_loaded and len(server.data_requests()) == before
    (wider,) = f.fetch("AC_H2_MFI", ["Magnitude"], "2023-03-01 to 2023-03-02")
    assert not wider.already_loaded and wider.points == 48


def test_unknown_parameter_lists_the_real_ones(server: HapiTestServer) -> None:
    f, _ = fetcher()
    with pytest.raises(UnknownParameterError, match="BGSEc"):
        f.fetch("AC_H2_MFI", ["Bx"], "2023-03-01")


def test_clamping_partial_overlap_and_no_overlap() -> None:
    info = DatasetInfo(
        id="OLD_MISSION",
        start=datetime(2000, 1, 1, tzinfo=UTC),
        stop=datetime(2005, 1, 1, tzinfo=UTC),
    )
    now = datetime(2026, 11, 21, tzinfo=UTC)
    clamped, note = clamp_to_availability(info, parse_time_range("1999-12-30 to 2000-01-02"), now)
    assert clamped == TimeRange(datetime(2000, 1, 1, tzinfo=UTC), datetime(2000, 1, 3, tzinfo=UTC))
    assert note is not None and "OLD_MISSION" in note and "2000-01-01" in note
    end_clamped, _ = clamp_to_availability(info, parse_time_range("2004-12-31 to 2005-01-05"), now)
    assert end_clamped.end == datetime(2005, 1, 1, tzinfo=UTC)
    with pytest.raises(DataUnavailableError, match="covers 2000-01-01T00:00:00Z to 2005-01-01"):
        clamp_to_availability(info, parse_time_range("2010"), now)
    inside, none = clamp_to_availability(info, parse_time_range("2003"), now)
    assert none is None and inside == parse_time_range("2003")


def test_ongoing_dataset_end_is_left_to_the_server() -> None:
    info = DatasetInfo(
        id="LIVE", start=datetime(2018, 1, 1, tzinfo=UTC), stop=datetime(2026, 2, 1, tzinfo=UTC)
    )
    now = datetime(2026, 11, 21, tzinfo=UTC)
    wanted = parse_time_range("last week", now=now)
    clamped, note = clamp_to_availability(info, wanted, now)
    assert clamped == wanted and note is None


def test_unknown_coverage_fails_open() -> None:
    wanted = parse_time_range("2024-01-15")
    assert clamp_to_availability(DatasetInfo(id="X"), wanted) == (wanted, None)
