"""FragmentCache and CachedSource against a counting in-process source (and loopback HAPI)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from servers.hapi_server import HapiTestServer, make_info, synthetic_frame
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.config import load_settings
from xhelio.errors import NoDataError, ServerError, UnknownParameterError
from xhelio.sources.base import ParameterData, ProgressCallback
from xhelio.sources.cache import (
    CachedSource,
    CacheError,
    FragmentCache,
    SeriesKey,
    adaptive_fragment_hours,
)
from xhelio.sources.cache import store as cache_store
from xhelio.sources.hapi import HapiSource
from xhelio.timerange import TimeRange

PARAMS = ("B", "n", "flux")
BINS = np.array([10.0, 20.0, 40.0])


def day(d: int, hour: int = 0) -> datetime:
    return datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=d - 1, hours=hour)


def span(first_day: int, end_day: int) -> TimeRange:
    return TimeRange(day(first_day), day(end_day))


@dataclass
class Call:
    dataset: str
    parameters: tuple[str, ...]
    start: datetime
    end: datetime


@dataclass
class CountingSource:
    """A real DataSource: deterministic hourly data, gaps, and a log of every fetch."""

    cadence: str | None = None
    stop: datetime | None = None
    gaps: list[TimeRange] = field(default_factory=list[TimeRange])
    gate: threading.Event | None = None
    fail_with: Exception | None = None
    name: str = "fake"
    url: str = "http://127.0.0.1:1/fake"
    calls: list[Call] = field(default_factory=list[Call])
    info_calls: int = 0
    entered: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def info(self, dataset_id: str) -> DatasetInfo:
        with self._lock:
            self.info_calls += 1
        return DatasetInfo(
            id=dataset_id,
            cadence=self.cadence,
            start=day(-3000),
            stop=self.stop,
            parameters=(
                ParameterInfo("Time", type="isotime"),
                ParameterInfo("B", units="nT", size=(3,)),
                ParameterInfo("n", units="cm^-3"),
                ParameterInfo("flux", units="1/(cm2 s)", size=(3,), bins=tuple(BINS)),
            ),
        )

    def fetch(
        self,
        dataset_id: str,
        parameters: Sequence[str],
        time_range: TimeRange,
        progress: ProgressCallback | None = None,
    ) -> dict[str, ParameterData]:
        with self._lock:
            self.calls.append(Call(dataset_id, tuple(parameters), time_range.start, time_range.end))
        self.entered.release()
        if self.gate is not None:
            self.gate.wait(10)
        if self.fail_with is not None:
            raise self.fail_with
        unknown = [p for p in parameters if p not in PARAMS]
        if unknown:
            raise UnknownParameterError(dataset_id, unknown[0], list(PARAMS))
        start = pd.Timestamp(time_range.start).ceil("h")
        times = pd.date_range(start, time_range.end, freq="h", inclusive="left", name="time")
        for gap in self.gaps:
            times = times[(times < gap.start) | (times >= gap.end)]
        if len(times) == 0:
            raise NoDataError(f"No data for {dataset_id} in {time_range}.")
        hours = (times - pd.Timestamp(day(1))) / pd.Timedelta(hours=1)
        base = np.asarray(hours, dtype=float) + hash(dataset_id) % 7
        frames = {
            "B": pd.DataFrame(
                {"B_x": np.sin(base), "B_y": np.cos(base), "B_z": base / 100}, index=times
            ),
            "n": pd.DataFrame({"n": 5 + np.sin(base / 5)}, index=times),
            "flux": pd.DataFrame(
                {f"flux_{i}": np.exp(-base / 1000) * b for i, b in enumerate(BINS)}, index=times
            ),
        }
        return {
            p: ParameterData(
                name=p,
                frame=frames[p],
                units={"B": "nT", "n": "cm^-3", "flux": "1/(cm2 s)"}[p],
                description=f"{p} of {dataset_id}",
                bins=BINS.copy() if p == "flux" else None,
                bins_name="energy" if p == "flux" else None,
                bins_units="keV" if p == "flux" else None,
            )
            for p in parameters
        }


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def make_cached(
    source: CountingSource, clock: Clock | None = None, adaptive_fragments: bool = True
) -> tuple[CachedSource, FragmentCache]:
    cache = FragmentCache()
    cached = CachedSource(source, cache, clock=clock, adaptive_fragments=adaptive_fragments)
    return cached, cache


def assert_same(got: dict[str, ParameterData], want: dict[str, ParameterData]) -> None:
    assert list(got) == list(want)
    for name, expected in want.items():
        actual = got[name]
        pd.testing.assert_frame_equal(
            actual.frame, expected.frame, check_exact=True, check_freq=False
        )
        assert isinstance(actual.frame.index, pd.DatetimeIndex)
        assert str(actual.frame.index.tz) == "UTC"
        assert actual.frame.index.name == "time"
        assert (actual.units, actual.description) == (expected.units, expected.description)
        assert (actual.bins_name, actual.bins_units) == (expected.bins_name, expected.bins_units)
        if expected.bins is None:
            assert actual.bins is None
        else:
            assert actual.bins is not None
            np.testing.assert_array_equal(actual.bins, expected.bins)


def test_partial_overlap_fetches_only_the_missing_fragments() -> None:
    source = CountingSource()
    cached, _ = make_cached(source)
    cached.fetch("DS", ["B", "n"], span(1, 4))  # caches Jan 1, 2, 3
    assert [(c.start, c.end) for c in source.calls] == [(day(1), day(4))]

    got = cached.fetch("DS", ["B", "n"], TimeRange(day(2, 6), day(5, 12)))

    assert source.calls[-1] == Call("DS", ("B", "n"), day(4), day(6))
    assert len(source.calls) == 2
    direct = CountingSource().fetch("DS", ["B", "n"], TimeRange(day(2, 6), day(5, 12)))
    assert_same(got, direct)


def test_warm_read_does_not_call_the_source_and_keeps_metadata() -> None:
    source = CountingSource()
    cached, _ = make_cached(source)
    first = cached.fetch("DS", list(PARAMS), TimeRange(day(1, 3), day(3, 7)))
    again = CachedSource(source, FragmentCache()).fetch(
        "DS", list(PARAMS), TimeRange(day(1, 3), day(3, 7))
    )
    assert len(source.calls) == 1
    assert_same(first, again)
    assert_same(again, CountingSource().fetch("DS", list(PARAMS), TimeRange(day(1, 3), day(3, 7))))


def test_missing_runs_are_coalesced_per_run_for_all_parameters() -> None:
    source = CountingSource()
    cached, _ = make_cached(source)
    cached.fetch("DS", ["B", "n"], span(2, 3))
    cached.fetch("DS", ["B", "n"], span(4, 5))
    source.calls.clear()

    cached.fetch("DS", ["B", "n"], span(1, 7))

    assert source.calls == [
        Call("DS", ("B", "n"), day(1), day(2)),
        Call("DS", ("B", "n"), day(3), day(4)),
        Call("DS", ("B", "n"), day(5), day(7)),
    ]


def test_only_the_missing_parameter_is_fetched() -> None:
    source = CountingSource()
    cached, _ = make_cached(source)
    cached.fetch("DS", ["B"], span(1, 4))
    got = cached.fetch("DS", ["B", "n"], span(1, 4))
    assert source.calls[-1] == Call("DS", ("n",), day(1), day(4))
    assert_same(got, CountingSource().fetch("DS", ["B", "n"], span(1, 4)))


def test_concurrent_identical_requests_cause_one_inner_fetch() -> None:
    source = CountingSource(gate=threading.Event())
    cached, _ = make_cached(source)
    results: list[dict[str, ParameterData]] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            results.append(cached.fetch("DS", ["B", "n"], span(1, 3)))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    assert source.entered.acquire(timeout=10)
    # A broken merge would let a second thread into the source while the first is held.
    source.entered.acquire(timeout=0.5)
    assert source.gate is not None
    source.gate.set()
    for thread in threads:
        thread.join(10)

    assert errors == []
    assert len(source.calls) == 1
    assert len(results) == 4
    for result in results[1:]:
        assert_same(result, results[0])


def test_a_failed_shared_fetch_fails_every_waiter_and_is_retried_later() -> None:
    source = CountingSource(gate=threading.Event(), fail_with=ServerError("HTTP 500 from fake"))
    cached, _ = make_cached(source)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            cached.fetch("DS", ["B"], span(1, 2))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    assert source.entered.acquire(timeout=10)
    source.entered.acquire(timeout=0.5)
    assert source.gate is not None
    source.gate.set()
    for thread in threads:
        thread.join(10)

    assert len(errors) == 3
    assert all(isinstance(e, ServerError) for e in errors)
    assert len(source.calls) == 1
    source.fail_with = None
    cached.fetch("DS", ["B"], span(1, 2))
    assert len(source.calls) == 2


def test_lru_eviction_keeps_the_most_recently_used() -> None:
    source = CountingSource()
    cached, cache = make_cached(source)
    cached.fetch("DS", ["B", "n"], span(1, 2))
    one_day = cache.info().total_bytes
    cache.max_bytes = int(one_day * 2.5)
    cached.fetch("DS", ["B", "n"], span(2, 3))
    cached.fetch("DS", ["B", "n"], span(1, 2))  # day 1 is now more recent than day 2
    assert len(source.calls) == 2

    cached.fetch("DS", ["B", "n"], span(3, 4))  # over the cap: day 2 must go

    assert cache.info().total_bytes <= cache.max_bytes
    cached.fetch("DS", ["B", "n"], span(1, 2))
    assert len(source.calls) == 3
    cached.fetch("DS", ["B", "n"], span(2, 3))  # the least recently used day was evicted
    assert len(source.calls) == 4
    assert (source.calls[-1].start, source.calls[-1].end) == (day(2), day(3))
    assert "B" in source.calls[-1].parameters


def test_info_and_clear(xhelio_home: Path) -> None:
    source = CountingSource()
    cached, cache = make_cached(source)
    cached.fetch("AC_H2_MFI", ["B", "n"], span(1, 4))
    cached.fetch("WI_H0_MFI", ["B"], span(1, 3))

    info = cache.info()
    assert info.location == load_settings().cache_dir == xhelio_home / "cache"
    assert (xhelio_home / "cache" / "index.sqlite").is_file()
    files = list((xhelio_home / "cache").rglob("*.parquet"))
    assert info.entries == len(files) == 8
    assert info.total_bytes == sum(f.stat().st_size for f in files)
    assert info.datasets["AC_H2_MFI"][0] == 6
    assert info.datasets["WI_H0_MFI"][0] == 2
    assert sum(b for _, b in info.datasets.values()) == info.total_bytes

    assert cache.clear("ac_h2_mfi") == 6
    assert list(cache.info().datasets) == ["WI_H0_MFI"]
    cached.fetch("WI_H0_MFI", ["B"], span(1, 3))
    assert len(source.calls) == 2
    assert cache.clear() == 2
    assert cache.info().entries == 0
    assert list((xhelio_home / "cache").rglob("*.parquet")) == []
    cached.fetch("WI_H0_MFI", ["B"], span(1, 3))
    assert len(source.calls) == 3


@pytest.mark.parametrize("damage", ["garbage", "truncated", "deleted"])
def test_a_damaged_fragment_is_refetched(damage: str) -> None:
    source = CountingSource()
    cached, cache = make_cached(source)
    cached.fetch("DS", ["B", "n"], span(1, 4))
    key = SeriesKey(source.name, source.url, "DS", "B")
    stored = cache.lookup(key, 24, 0, 10**6)
    victim = cache.folder / next(s.path for s in stored.values() if s.fragment == 19724)  # Jan 2
    if damage == "garbage":
        victim.write_bytes(b"not parquet at all")
    elif damage == "truncated":
        victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    else:
        victim.unlink()

    got = cached.fetch("DS", ["B", "n"], span(1, 4))

    assert source.calls[-1] == Call("DS", ("B",), day(2), day(3))
    assert len(source.calls) == 2
    assert_same(got, CountingSource().fetch("DS", ["B", "n"], span(1, 4)))
    cached.fetch("DS", ["B", "n"], span(1, 4))
    assert len(source.calls) == 2


def test_empty_fragments_are_cached_but_still_raise_no_data() -> None:
    source = CountingSource(gaps=[span(3, 5)])
    cached, _ = make_cached(source)
    with pytest.raises(NoDataError, match="DS"):
        cached.fetch("DS", ["B"], span(3, 5))
    with pytest.raises(NoDataError):
        cached.fetch("DS", ["B"], TimeRange(day(3, 5), day(4, 20)))
    assert len(source.calls) == 1

    got = cached.fetch("DS", ["B"], span(2, 6))

    assert [(c.start, c.end) for c in source.calls[1:]] == [(day(2), day(3)), (day(5), day(6))]
    assert_same(got, CountingSource(gaps=[span(3, 5)]).fetch("DS", ["B"], span(2, 6)))


def test_fragments_near_now_or_the_dataset_stop_are_refreshed() -> None:
    clock = Clock(day(8, 12))
    source = CountingSource(stop=day(30))
    cached, cache = make_cached(source, clock=clock)
    cached.fetch("DS", ["n"], span(5, 9))
    stored = cache.lookup(SeriesKey(source.name, source.url, "DS", "n"), 24, 0, 10**6)
    complete = {s.fragment - 19723: s.complete for s in stored.values()}  # 19723 is Jan 1
    assert complete == {4: True, 5: True, 6: False, 7: False}  # Jan 7 ends after now - 1 day

    clock.now += timedelta(minutes=5)
    cached.fetch("DS", ["n"], span(5, 9))
    assert len(source.calls) == 1  # still fresh

    clock.now += timedelta(minutes=20)
    cached.fetch("DS", ["n"], span(5, 9))
    assert source.calls[-1] == Call("DS", ("n",), day(7), day(9))

    ended = CountingSource(stop=day(3, 12))
    cached_ended, cache_ended = make_cached(ended, clock=Clock(day(300)))
    cached_ended.fetch("OLD", ["n"], span(1, 4))
    stored = cache_ended.lookup(SeriesKey(ended.name, ended.url, "OLD", "n"), 24, 0, 10**6)
    assert {s.fragment - 19723: s.complete for s in stored.values()} == {
        0: True,
        1: True,
        2: False,  # holds the dataset's stop: it may still grow
    }


def test_source_errors_pass_through_and_nothing_is_cached() -> None:
    source = CountingSource()
    cached, cache = make_cached(source)
    with pytest.raises(UnknownParameterError, match="nope"):
        cached.fetch("DS", ["B", "nope"], span(1, 2))
    assert cache.info().entries == 0


def test_adaptive_fragment_length_follows_cadence() -> None:
    assert adaptive_fragment_hours(24, None) == 24
    assert adaptive_fragment_hours(24, "PT1S") == 24
    assert adaptive_fragment_hours(24, "PT16S") == 24 * 8
    assert adaptive_fragment_hours(24, "PT60S") == 24 * 32
    assert adaptive_fragment_hours(24, "PT1H") == 24 * 32
    assert adaptive_fragment_hours(24, "bogus") == 24

    source = CountingSource(cadence="PT1M")
    cached, cache = make_cached(source)
    cached.fetch("DS", ["n"], span(10, 11))
    assert cached.fragment_hours("DS") == 768
    (call,) = source.calls
    assert (call.end - call.start) == timedelta(days=32)
    assert (call.start - datetime(1970, 1, 1, tzinfo=UTC)) % timedelta(days=32) == timedelta(0)

    # A new session reads the recorded layout: no info request, no fetch.
    again = CachedSource(source, FragmentCache())
    again.fetch("DS", ["n"], span(12, 20))
    assert (source.info_calls, len(source.calls)) == (1, 1)
    assert cache.info().entries == 1


def test_fixed_fragments_when_adaptive_is_off() -> None:
    source = CountingSource(cadence="PT1M")
    cached, _ = make_cached(source, adaptive_fragments=False)
    cached.fetch("DS", ["n"], TimeRange(day(10, 5), day(10, 6)))
    assert source.calls == [Call("DS", ("n",), day(10), day(11))]
    assert cached.fragment_hours("DS") == 24


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def _hapi_windows(server: HapiTestServer) -> list[tuple[datetime, datetime, str]]:
    return [
        (_utc(r.query["start"]), _utc(r.query["stop"]), r.query["parameters"])
        for r in server.data_requests()
    ]


@pytest.fixture
def hapi_server() -> Iterator[HapiTestServer]:
    info = make_info("2024-01-01", "2024-03-01", [("B", "nT", 3), ("n", "cm^-3", None)])
    frame = synthetic_frame("2024-01-01", "2024-03-01", "PT1M", ["B_x", "B_y", "B_z", "n"])
    with HapiTestServer(version="3.3") as server:
        server.add_dataset("DS", info, frame)
        yield server


def test_loopback_hapi_server_is_asked_only_for_the_missing_part(
    hapi_server: HapiTestServer,
) -> None:
    settings = load_settings()
    with HapiSource(settings, hapi_server.url) as hapi:
        cached = CachedSource(hapi, FragmentCache(settings), adaptive_fragments=False)
        cached.fetch("DS", ["B", "n"], span(1, 4))
        assert _hapi_windows(hapi_server) == [(day(1), day(4), "B,n")]
        hapi_server.clear_requests()

        got = cached.fetch("DS", ["B", "n"], TimeRange(day(2, 6), day(5, 12)))

        assert _hapi_windows(hapi_server) == [(day(4), day(6), "B,n")]
        hapi_server.clear_requests()
        direct = hapi.fetch("DS", ["B", "n"], TimeRange(day(2, 6), day(5, 12)))
        assert_same(got, direct)
        assert got["B"].units == "nT"

        hapi_server.clear_requests()
        cached.fetch("DS", ["n"], TimeRange(day(1, 1), day(5, 23)))
        assert _hapi_windows(hapi_server) == []


def test_loopback_hapi_adaptive_fragments_past_the_dataset_stop(
    hapi_server: HapiTestServer,
) -> None:
    settings = load_settings()
    with HapiSource(settings, hapi_server.url) as hapi:
        cached = CachedSource(hapi, FragmentCache(settings))
        got = cached.fetch("DS", ["n"], TimeRange(day(50), day(70)))  # runs past 2024-03-01
        assert cached.fragment_hours("DS") == 24 * 32
        windows = _hapi_windows(hapi_server)
        epoch = datetime(1970, 1, 1, tzinfo=UTC)
        assert windows
        assert all((a - epoch) % timedelta(days=32) == timedelta(0) for a, _, _ in windows)
        assert all((b - a) % timedelta(days=32) == timedelta(0) for a, b, _ in windows)
        assert_same(got, hapi.fetch("DS", ["n"], TimeRange(day(50), day(70))))
        hapi_server.clear_requests()
        cached.fetch("DS", ["n"], TimeRange(day(55), day(60)))
        assert _hapi_windows(hapi_server) == []


def test_a_full_disk_costs_the_cache_not_the_answer(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    source = CountingSource()
    cached, cache = make_cached(source)

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_store.pq, "write_table", disk_full)
    got = cached.fetch("DS", ["B"], span(1, 3))
    assert_same(got, CountingSource().fetch("DS", ["B"], span(1, 3)))
    assert "Could not cache DS/B" in caplog.text
    assert cache.info().entries == 0
    assert not [p for p in cache.folder.rglob("*") if p.name.endswith(".tmp")]


def test_servers_and_sources_do_not_share_fragments() -> None:
    one, two = CountingSource(), CountingSource(url="http://127.0.0.1:2/other")
    make_cached(one)[0].fetch("DS", ["n"], span(1, 2))
    make_cached(two)[0].fetch("DS", ["n"], span(1, 2))
    assert (len(one.calls), len(two.calls)) == (1, 1)


def test_a_corrupt_index_is_reported_and_nothing_is_deleted(xhelio_home: Path) -> None:
    source = CountingSource()
    cached, cache = make_cached(source)
    cached.fetch("DS", ["n"], span(1, 3))
    cache.close()
    damaged = b"this is not a database" * 100
    (xhelio_home / "cache" / "index.sqlite").write_bytes(damaged)
    for leftover in (xhelio_home / "cache").glob("index.sqlite-*"):
        leftover.unlink()
    files = sorted((xhelio_home / "cache").rglob("*.parquet"))
    assert files

    with pytest.raises(CacheError, match=r"cannot be opened.*Nothing was deleted"):
        FragmentCache()
    assert (xhelio_home / "cache" / "index.sqlite").read_bytes() == damaged
    assert sorted((xhelio_home / "cache").rglob("*.parquet")) == files


def test_checksums_recorded_as_blake2b_by_earlier_versions_still_verify() -> None:
    source = CountingSource()
    cached, cache = make_cached(source)
    want = cached.fetch("DS", ["B"], span(1, 3))
    with cache._transaction() as db:  # pyright: ignore[reportPrivateUsage]
        rows = db.execute("SELECT path, checksum FROM fragments").fetchall()
        assert rows and all(str(r[1]).startswith("crc32:") for r in rows)
        for path, _ in rows:
            old = hashlib.blake2b((cache.folder / path).read_bytes(), digest_size=16)
            db.execute("UPDATE fragments SET checksum=? WHERE path=?", (old.hexdigest(), path))
    calls = len(source.calls)
    assert_same(make_cached(source)[0].fetch("DS", ["B"], span(1, 3)), want)
    assert len(source.calls) == calls  # intact under the old checksum: read, not refetched
    damaged = cache.folder / str(rows[0][0])
    raw = bytearray(damaged.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    damaged.write_bytes(bytes(raw))
    assert_same(make_cached(source)[0].fetch("DS", ["B"], span(1, 3)), want)
    assert len(source.calls) == calls + 1  # a flipped bit under the old checksum: refetched
