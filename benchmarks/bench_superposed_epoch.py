"""Superposed epoch over N events x D days of 1-minute data, against a plain pandas loop.

Run: python benchmarks/bench_superposed_epoch.py [--events 100] [--days 10] [--bin 60]

The series is as long as the events need: the events are spread without
overlap, each with a window of D days (D/3 before, 2D/3 after its epoch). Both methods
compute the per-event bin means, then the mean, median, quartiles and counts per bin;
the benchmark checks they agree, then reports wall time and peak memory (tracemalloc) of
each and their ratios.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from xhelio.events.epoch import superposed_epoch


def make_data(events: int, days: float) -> tuple[pd.Series, pd.DatetimeIndex]:
    """1-minute data covering `events` non-overlapping windows of `days` days."""
    span = pd.Timedelta(days=days)
    start = pd.Timestamp("2015-01-01", tz="UTC")
    epochs = pd.DatetimeIndex([start + span * (i + 1 / 3) + pd.Timedelta(minutes=7 * i)
                               for i in range(events)])  # fmt: skip
    times = pd.date_range(start, epochs[-1] + span, freq="1min")
    values = np.random.default_rng(0).normal(0, 5, len(times))
    return pd.Series(values, index=times), epochs


def pandas_loop(
    series: pd.Series, epochs: pd.DatetimeIndex, before: float, after: float, bin_minutes: float
) -> pd.DataFrame:
    """The plain way: slice each event, group its samples by bin, then describe the bins."""
    columns = []
    width = pd.Timedelta(minutes=bin_minutes)
    for zero in epochs:
        window = series[zero - pd.Timedelta(hours=before) : zero + pd.Timedelta(hours=after)]
        window = window[window.index < zero + pd.Timedelta(hours=after)]
        bins = np.floor((window.index - zero + pd.Timedelta(hours=before)) / width).astype(int)
        columns.append(window.groupby(bins).mean())
    stacked = pd.concat(columns, axis=1)
    return pd.DataFrame(
        {
            "mean": stacked.mean(axis=1),
            "median": stacked.median(axis=1),
            "q25": stacked.quantile(0.25, axis=1),
            "q75": stacked.quantile(0.75, axis=1),
            "count": stacked.count(axis=1),
        }
    )


def measure(run: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, seconds, peak MiB allocated while running)."""
    tracemalloc.start()
    began = time.perf_counter()
    result = run()
    seconds = time.perf_counter() - began
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return result, seconds, peak / 2**20


def run(events: int = 100, days: float = 10, bin_minutes: float = 60) -> dict[str, float]:
    """Both methods on the same data; their times, peaks and ratios (loop / vectorised)."""
    series, epochs = make_data(events, days)
    before, after = days * 24 / 3, days * 24 * 2 / 3
    fast, fast_s, fast_mb = measure(
        lambda: superposed_epoch(series, epochs, before, after, bin_minutes)
    )
    slow, slow_s, slow_mb = measure(lambda: pandas_loop(series, epochs, before, after, bin_minutes))
    np.testing.assert_allclose(fast.table["mean"].to_numpy(), slow["mean"].to_numpy())
    np.testing.assert_allclose(fast.table["median"].to_numpy(), slow["median"].to_numpy())
    np.testing.assert_allclose(fast.table["q25"].to_numpy(), slow["q25"].to_numpy())
    return {
        "events": events,
        "days": days,
        "points": len(series),
        "vectorised_s": fast_s,
        "pandas_loop_s": slow_s,
        "time_ratio": slow_s / fast_s,
        "vectorised_peak_mb": fast_mb,
        "pandas_loop_peak_mb": slow_mb,
        "memory_ratio": slow_mb / fast_mb,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--days", type=float, default=10)
    parser.add_argument("--bin", type=float, default=60, help="bin width in minutes")
    args = parser.parse_args()
    f = run(args.events, args.days, args.bin)
    print(f"{f['events']} events x {f['days']:g} days of 1-min data ({f['points']:,} points)")
    print(f"  vectorised : {f['vectorised_s']:.3f} s, peak {f['vectorised_peak_mb']:.1f} MiB")
    print(f"  pandas loop: {f['pandas_loop_s']:.3f} s, peak {f['pandas_loop_peak_mb']:.1f} MiB")
    print(f"  loop/vectorised: time x{f['time_ratio']:.1f}, memory x{f['memory_ratio']:.2f}")


if __name__ == "__main__":
    main()
