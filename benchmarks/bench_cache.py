"""Fragment cache: cold fill vs warm read of a year of 1-minute data (3-vector + scalar).

Run: python benchmarks/bench_cache.py [--reads N]

The wrapped source is an in-memory fake (slicing a pre-built year), so "cold" measures the
cache's own cost (splitting, parquet writes, index) plus a trivial fetch, and "warm" measures
reading the fragments back. Both fragment layouts are measured: adaptive (the default; the
dataset cadence of 1 minute gives 32-day fragments) and fixed 24-hour fragments.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.config import Settings
from xhelio.errors import NoDataError
from xhelio.sources.base import ParameterData, ProgressCallback
from xhelio.sources.cache import CachedSource, FragmentCache
from xhelio.timerange import TimeRange

YEAR = TimeRange(datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC))


class InMemorySource:
    """A year of 1-minute magnetic field data, served by slicing."""

    name = "memory"
    url = "memory://bench"

    def __init__(self) -> None:
        index = pd.date_range(YEAR.start, YEAR.end, freq="min", inclusive="left", name="time")
        rng = np.random.default_rng(0)
        vector = rng.normal(size=(len(index), 3))
        self.frames = {
            "B": pd.DataFrame(vector, index=index, columns=["B_x", "B_y", "B_z"]),
            "Bmag": pd.DataFrame({"Bmag": np.linalg.norm(vector, axis=1)}, index=index),
        }
        self.fetches = 0

    def info(self, dataset_id: str) -> DatasetInfo:
        return DatasetInfo(
            id=dataset_id,
            cadence="PT1M",
            start=YEAR.start,
            stop=YEAR.end,
            parameters=(
                ParameterInfo("B", units="nT", size=(3,)),
                ParameterInfo("Bmag", units="nT"),
            ),
        )

    def fetch(
        self,
        dataset_id: str,
        parameters: Sequence[str],
        time_range: TimeRange,
        progress: ProgressCallback | None = None,
    ) -> dict[str, ParameterData]:
        self.fetches += 1
        out: dict[str, ParameterData] = {}
        for name in parameters:
            frame = self.frames[name]
            low, high = frame.index.searchsorted(
                pd.DatetimeIndex([time_range.start, time_range.end])
            )
            out[name] = ParameterData(name, frame.iloc[low:high], units="nT")
        if all(d.frame.empty for d in out.values()):
            raise NoDataError(f"nothing in {time_range}")
        return out


def measure(adaptive: bool, reads: int) -> dict[str, float]:
    source = InMemorySource()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(home=Path(tmp))
        cache = FragmentCache(settings, max_bytes=10**10)
        cached = CachedSource(source, cache, adaptive_fragments=adaptive)
        started = time.perf_counter()
        cold = cached.fetch("BENCH", ["B", "Bmag"], YEAR)
        cold_ms = (time.perf_counter() - started) * 1000
        fetches = source.fetches
        warm_ms: list[float] = []
        warm_cpu_ms: list[float] = []
        warm = cold
        for _ in range(max(reads, 1)):
            fresh = CachedSource(source, cache, adaptive_fragments=adaptive)  # no memory reuse
            started, started_cpu = time.perf_counter(), time.process_time()
            warm = fresh.fetch("BENCH", ["B", "Bmag"], YEAR)
            warm_ms.append((time.perf_counter() - started) * 1000)
            warm_cpu_ms.append((time.process_time() - started_cpu) * 1000)
        assert source.fetches == fetches, "warm reads must not reach the source"
        for name in ("B", "Bmag"):
            pd.testing.assert_frame_equal(warm[name].frame, cold[name].frame, check_freq=False)
            pd.testing.assert_frame_equal(
                warm[name].frame, source.frames[name], check_freq=False, check_exact=True
            )
        info = cache.info()
        cache.close()
    return {
        "rows": len(warm["B"].frame),
        "fragment_days": cached.fragment_hours("BENCH") / 24,
        "files": info.entries,
        "mb": info.total_bytes / 1e6,
        "cold_ms": cold_ms,
        "warm_ms": statistics.median(warm_ms),
        "warm_cpu_ms": statistics.median(warm_cpu_ms),
    }


def one_file_floor(reads: int) -> float:
    """Median ms to read the same year from ONE parquet file per parameter (no fragments)."""
    source = InMemorySource()
    with tempfile.TemporaryDirectory() as tmp:
        paths: list[Path] = []
        for name, frame in source.frames.items():
            path = Path(tmp) / f"{name}.parquet"
            pq.write_table(
                pa.Table.from_pandas(frame), path, compression="lz4", use_dictionary=False
            )
            paths.append(path)
        times: list[float] = []
        for _ in range(reads):
            started = time.perf_counter()
            for path in paths:
                pq.read_table(path).to_pandas()
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description="Fragment cache: cold fill vs warm read.")
    parser.add_argument("--reads", type=int, default=7, help="warm reads (median reported)")
    args = parser.parse_args()
    print("A year of 1-minute data, 3-vector + scalar (4 columns), through CachedSource")
    print("(ms are wall-clock medians; 'warm cpu' is process CPU time, steadier on a busy host)")
    print(
        f"{'layout':>10} {'rows':>8} {'frag':>6} {'files':>6} {'MB':>6} "
        f"{'cold ms':>9} {'warm ms':>9} {'warm cpu':>9} {'cold/warm':>10}"
    )
    floor_ms = one_file_floor(args.reads)
    for adaptive in (True, False):
        r = measure(adaptive, args.reads)
        label = "adaptive" if adaptive else "fixed 24h"
        print(
            f"{label:>10} {r['rows']:>8.0f} {r['fragment_days']:>5.0f}d {r['files']:>6.0f} "
            f"{r['mb']:>6.1f} {r['cold_ms']:>9.1f} {r['warm_ms']:>9.1f} {r['warm_cpu_ms']:>9.1f} "
            f"{r['cold_ms'] / r['warm_ms']:>9.1f}x"
        )
    print(
        f"floor: the same year from one parquet file per parameter: {floor_ms:.1f} ms "
        "(warm read / floor is the cost of fragmenting)"
    )


if __name__ == "__main__":
    main()
