"""Per-call overhead of the sandbox: warm worker vs a freshly spawned process per call.

Both sides run the same trivial operation (`result = df * 2` on 100 rows) through the
same executor code path, same run, same machine; the peer simply starts a new worker for
every call (what a sandbox without a warm worker pays). Prints a table and the ratio.

Run: python benchmarks/bench_sandbox.py [--warm-calls 200] [--cold-calls 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

import numpy as np
import pandas as pd

from xhelio.config import Settings
from xhelio.sandbox import SandboxExecutor

CODE = "result = df * 2"


def _frame() -> pd.DataFrame:
    index = pd.date_range("2024-01-01", periods=100, freq="1min", tz="UTC")
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.normal(size=(100, 3)), index=index, columns=["bx", "by", "bz"])


def _warm(settings: Settings, frame: pd.DataFrame, calls: int) -> list[float]:
    timings: list[float] = []
    with SandboxExecutor(settings) as sandbox:
        sandbox.warm_up()
        for _ in range(10):  # settle caches before measuring
            sandbox.run(CODE, {"b": frame})
        for _ in range(calls):
            started = time.perf_counter()
            sandbox.run(CODE, {"b": frame})
            timings.append(time.perf_counter() - started)
    return timings


def _cold(settings: Settings, frame: pd.DataFrame, calls: int) -> list[float]:
    timings: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        with SandboxExecutor(settings) as sandbox:
            sandbox.run(CODE, {"b": frame})
        timings.append(time.perf_counter() - started)
    return timings


def main() -> None:
    """Measure both modes and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--warm-calls", type=int, default=200)
    parser.add_argument("--cold-calls", type=int, default=5)
    args = parser.parse_args()
    settings = replace(Settings(), sandbox_timeout_s=120.0)
    frame = _frame()
    warm = _warm(settings, frame, args.warm_calls)
    cold = _cold(settings, frame, args.cold_calls)
    warm_ms = statistics.median(warm) * 1000
    cold_ms = statistics.median(cold) * 1000
    print(f"{'mode':<34}{'calls':>7}{'median ms':>12}{'p90 ms':>10}")
    for name, values in (("warm worker (reused)", warm), ("fresh spawned worker per call", cold)):
        ordered = sorted(values)
        p90 = ordered[int(0.9 * (len(ordered) - 1))] * 1000
        print(f"{name:<34}{len(values):>7}{statistics.median(values) * 1000:>12.2f}{p90:>10.2f}")
    print(f"ratio fresh/warm: {cold_ms / warm_ms:.0f}x")


if __name__ == "__main__":
    main()
