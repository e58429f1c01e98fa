"""Benchmark: xhelio's HAPI client against `hapiclient` on the same loopback server.

One year of 1-minute data (525,600 rows; a 3-vector and a scalar, four value columns) is
served by `HapiTestServer` on 127.0.0.1 with pre-rendered bodies, then fetched in CSV and
binary by both clients in the same run. hapiclient's cache is off (temp cache dir,
``cache=False``, ``usecache=False``). Runs are interleaved and the best of N is kept, which
is robust to load from other processes. hapiclient returns times as strings, so it is
timed both as-is and with its own `hapitime2datetime` conversion (xhelio's result
already has a parsed UTC DatetimeIndex). Then the same year is fetched again through the
fragment cache (warm hits). ``--against REV`` also times warm hits of an earlier commit,
each in fresh processes interleaved with this checkout's (best of 3 each).

Run: ``python benchmarks/bench_hapi.py [--repeats N] [--against REV]``.

Measured (2 shared cores, load ~6, 2026-11-26, --repeats 3 --against 8f952fd): warm
hit of the year 128 ms against 225 ms at 8f952fd (0.57: fragment checksums CRC-32
instead of blake2b); hapiclient's CSV fetch of the year 10.9 s (warm hit / hapiclient
0.012); binary 0.53 s against hapiclient's 0.20 s without time parsing, 3.1 s with it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the loopback test server

from tests.servers.hapi_server import HapiTestServer, make_info, synthetic_frame

from revision import checkout
from xhelio.config import load_settings
from xhelio.sources.cache import CachedSource, FragmentCache
from xhelio.sources.hapi import DataFormat, HapiSource
from xhelio.timerange import TimeRange

START, STOP = "2023-01-01", "2024-01-01"
DATASET = "BENCH_1MIN"


def timed(run: Callable[[], int]) -> tuple[float, int]:
    """Wall time of one call of `run`, and the row count it returned."""
    t0 = time.perf_counter()
    rows = run()
    return time.perf_counter() - t0, rows


def xhelio_run(url: str, fmt: DataFormat) -> Callable[[], int]:
    """One full fetch by a fresh HapiSource (capabilities, info and data)."""

    def run() -> int:
        with HapiSource(load_settings(hapi_url=url), data_format=fmt) as source:
            data = source.fetch(
                DATASET,
                ["B", "n"],
                TimeRange(datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC)),
            )
        return len(data["B"].frame)

    return run


def hapiclient_run(url: str, fmt: str, cachedir: str, parse_times: bool) -> Callable[[], int]:
    """One full fetch by hapiclient with its cache disabled."""
    from hapiclient import hapi, hapitime2datetime  # type: ignore[import-untyped]

    def run() -> int:
        opts = {
            "format": fmt,
            "cache": False,
            "usecache": False,
            "cachedir": cachedir,
            "logging": False,
        }
        data, _meta = hapi(url, DATASET, "B,n", START + "T00:00:00Z", STOP + "T00:00:00Z", **opts)
        if parse_times:
            hapitime2datetime(data["Time"])
        return len(data)

    return run


def cache_runs(url: str, repeats: int) -> tuple[float, float]:
    """Cold fetch through the fragment cache (fills it), then the median warm hit."""
    settings = load_settings(hapi_url=url)
    year = TimeRange(datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC))
    with HapiSource(settings, data_format="binary") as inner:
        source = CachedSource(inner, FragmentCache(settings))
        t0 = time.perf_counter()
        source.fetch(DATASET, ["B", "n"], year)
        cold = time.perf_counter() - t0
        warm: list[float] = []
        for _ in range(max(repeats, 5)):
            t0 = time.perf_counter()
            data = source.fetch(DATASET, ["B", "n"], year)
            warm.append(time.perf_counter() - t0)
            assert len(data["B"].frame) == 525_600
    warm.sort()
    return cold, warm[len(warm) // 2]


def hit_in_child(url: str, repeats: int, src: Path | None) -> tuple[float, float]:
    """`cache_runs` in a fresh process with a fresh cache; `src`: another commit's xhelio."""
    with tempfile.TemporaryDirectory(prefix="xhelio-bench-hit-") as home:
        env = {**os.environ, "XHELIO_HOME": home}
        if src is not None:
            env["PYTHONPATH"] = str(src)
        command = [sys.executable, __file__, "--hit-child", url, "--repeats", str(repeats)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    cold, warm = json.loads(done.stdout.strip().splitlines()[-1])
    return float(cold), float(warm)


def compare_hits(url: str, repeats: int, rev: str) -> tuple[float, float]:
    """Best warm-hit seconds of this checkout and of `rev`, interleaved in fresh processes."""
    best = [float("inf"), float("inf")]
    with checkout(rev) as other:
        for _ in range(3):
            for k, src in enumerate((None, other)):
                best[k] = min(best[k], hit_in_child(url, repeats, src)[1])
    return best[0], best[1]


def main() -> None:
    """Serve the year, time both clients, print a table with ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--against", metavar="REV", help="also time warm cache hits of this git commit"
    )
    parser.add_argument("--hit-child", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.hit_child:
        print(json.dumps(cache_runs(args.hit_child, args.repeats)))
        return
    warnings.simplefilter("ignore", DeprecationWarning)  # hapiclient's, not ours

    info = make_info(START, STOP, [("B", "nT", 3), ("n", "cm^-3", None)], cadence="PT1M")
    frame = synthetic_frame(START, STOP, "PT1M", ["Bx", "By", "Bz", "n"])
    with HapiTestServer(version="3.3") as server, tempfile.TemporaryDirectory() as cachedir:
        server.add_dataset(DATASET, info, frame)
        os.environ["XHELIO_HOME"] = str(Path(cachedir) / "xhelio-home")
        t0 = time.perf_counter()
        server.prerender(DATASET, "csv")
        server.prerender(DATASET, "binary")
        print(f"server: {len(frame):,} rows pre-rendered in {time.perf_counter() - t0:.1f} s")
        best: dict[tuple[str, str], float] = {}
        counts: set[int] = set()
        formats: tuple[DataFormat, ...] = ("csv", "binary")
        for fmt in formats:
            runs = {
                "xhelio": xhelio_run(server.url, fmt),
                "hapiclient": hapiclient_run(server.url, fmt, cachedir, False),
                "hapiclient+times": hapiclient_run(server.url, fmt, cachedir, True),
            }
            # Interleaved so that load from other processes hits every contender alike.
            for _ in range(args.repeats):
                for name, run in runs.items():
                    seconds, n = timed(run)
                    counts.add(n)
                    best[fmt, name] = min(best.get((fmt, name), float("inf")), seconds)
        cold, warm = cache_runs(server.url, args.repeats)
        against = compare_hits(server.url, args.repeats, args.against) if args.against else None
    if len(counts) != 1:
        raise SystemExit(f"the clients returned different row counts: {sorted(counts)}")
    print(f"\n{'format':<36}{'xhelio s':>10}{'hapiclient s':>14}{'xhelio/hapiclient':>19}")
    for fmt in ("csv", "binary"):
        ours = best[fmt, "xhelio"]
        for name, label in (
            ("hapiclient", fmt),
            ("hapiclient+times", f"{fmt} (hapiclient + time parse)"),
        ):
            theirs = best[fmt, name]
            print(f"{label:<36}{ours:>10.3f}{theirs:>14.3f}{ours / theirs:>19.2f}")
    print(f"\nrows per fetch: {counts.pop():,}; best of {args.repeats} interleaved runs; loopback.")
    print(
        f"fragment cache, same year again: cold {cold:.3f} s, warm hit (median) "
        f"{warm * 1000:.0f} ms; warm/cold {warm / cold:.3f}; warm/hapiclient-csv "
        f"{warm / best['csv', 'hapiclient']:.3f}"
    )
    if against is not None:
        ours, theirs = against
        print(
            f"warm hit, best of 3 fresh processes each: this {ours * 1000:.0f} ms, "
            f"{args.against} {theirs * 1000:.0f} ms; this/{args.against} {ours / theirs:.3f}; "
            f"this/hapiclient-csv {ours / best['csv', 'hapiclient']:.4f}"
        )


if __name__ == "__main__":
    main()
