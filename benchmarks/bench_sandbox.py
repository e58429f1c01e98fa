"""Per-call overhead of the sandbox: warm zygote (fresh isolated child per call) vs cold start.

All modes run the same trivial operation (`result = df * 2` on 100 rows) through the
same executor code path, same run, same machine:

* spaced: calls 100 ms apart, as when a model or a user issues them (the zygote has
  forked, isolated and pre-warmed the next child in between, so the call's path is
  only the request, the run and the reply);
* bursts: three calls back-to-back after a pause (a pipeline replay's compute steps);
* sustained back-to-back: each call right after the previous reply, for as long as the
  run lasts. Every call costs a fork, a copy-on-write warm-up and an exit besides the
  code, so on a small machine this measures how fast those run, not a waiting call;
* fresh: a new executor per call (what a sandbox without a warm process pays).

Run: python benchmarks/bench_sandbox.py [--calls 100] [--cold-calls 3] [--gap-ms 100]
The script measures whatever `xhelio` is on the path, so pointing PYTHONPATH at an
older checkout measures that version the same way (for before/after figures).
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


def _warm(
    settings: Settings, frame: pd.DataFrame, calls: int, gap_s: float, burst: int = 1
) -> list[float]:
    """`calls` timed calls, in groups of `burst` back-to-back calls `gap_s` apart."""
    timings: list[float] = []
    with SandboxExecutor(settings) as sandbox:
        sandbox.warm_up()
        for _ in range(5):  # settle caches before measuring
            sandbox.run(CODE, {"b": frame})
        for number in range(calls):
            if number % burst == 0:
                time.sleep(gap_s)
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
    """Measure every mode and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--cold-calls", type=int, default=3)
    parser.add_argument("--gap-ms", type=float, default=100.0)
    args = parser.parse_args()
    settings = replace(Settings(), sandbox_timeout_s=120.0)
    frame = _frame()
    rows = [
        (
            f"warm, calls {args.gap_ms:g} ms apart",
            _warm(settings, frame, args.calls, args.gap_ms / 1000),
        ),
        (
            "warm, bursts of 3 calls",
            _warm(settings, frame, args.calls - args.calls % 3 or 3, 0.3, burst=3),
        ),
        ("warm, sustained back-to-back", _warm(settings, frame, args.calls, 0.0)),
        ("fresh executor per call", _cold(settings, frame, args.cold_calls)),
    ]
    print(f"{'mode':<34}{'calls':>7}{'median ms':>12}{'p90 ms':>10}")
    for name, values in rows:
        ordered = sorted(values)
        p90 = ordered[int(0.9 * (len(ordered) - 1))] * 1000
        print(f"{name:<34}{len(values):>7}{statistics.median(values) * 1000:>12.2f}{p90:>10.2f}")


if __name__ == "__main__":
    main()
