"""Benchmark figure resolution (downsampling) and PNG export.

Run: python benchmarks/bench_render.py [--sizes 1000000 10000000] [--warm 5]

For 1M and 10M point series (random walk with a one-sample spike and NaN gaps) it
reports the time to resolve the figure, the points sent and whether the sent points keep
the series' extrema. Peers measured in the same run: `tsdownsample`'s Rust MinMax and
MinMaxLTTB (when installed) for the downsampling core, and kaleido's one-shot
`calc_fig_sync` (a new browser per call, what `fig.write_image` does by default) for
export against our persistent browser (first call vs median of warm calls).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore
from xhelio.render.downsample import downsample_line
from xhelio.render.export import FigureExporter, find_browser, static_figure
from xhelio.render.figure import DEFAULT_POINT_BUDGET, render_plotly_json


def _series(n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    values = np.cumsum(rng.normal(size=n))
    values[n // 3] = values.max() + 500.0  # a one-sample spike must survive
    values[n // 2 : n // 2 + n // 1000] = np.nan  # a data gap must stay a gap
    return values


def _timed(action: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    times: list[float] = []
    result: Any = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return times, result


def bench_resolve(n: int) -> dict[str, Any]:
    """Resolve a one-trace figure of `n` points; return timings and fidelity checks."""
    values = _series(n)
    store = DataStore()
    index = pd.date_range("2024-01-01", periods=n, freq="10ms", tz="UTC")
    store.put(DataEntry("MMS1_FGM.B", pd.DataFrame({"Bt": values}, index=index), {"Bt": "nT"}))
    spec = {"data": [{"data_label": "MMS1_FGM.B"}]}
    times, result = _timed(lambda: render_plotly_json(spec, store), 3)
    sent = np.array([np.nan if v is None else v for v in result.figure["data"][0]["y"]])
    core, _ = _timed(lambda: downsample_line(values, DEFAULT_POINT_BUDGET), 3)
    row: dict[str, Any] = {
        "n": n,
        "resolve_first_s": times[0],
        "resolve_median_s": statistics.median(times),
        "downsample_median_s": statistics.median(core),
        "points_sent": result.points_sent,
        "max_kept": bool(np.nanmax(sent) == np.nanmax(values)),
        "min_kept": bool(np.nanmin(sent) == np.nanmin(values)),
        "gap_markers": int(sum(v is None for v in result.figure["data"][0]["y"])),
        "figure": result.figure,
    }
    row.update(_peer_downsample(values))
    return row


def _peer_downsample(values: np.ndarray) -> dict[str, Any]:
    try:
        import tsdownsample  # type: ignore[import-not-found]  # optional peer
    except ImportError:
        return {}
    finite = np.nan_to_num(values, nan=0.0)  # its non-NaN kernels need finite input
    minmax = tsdownsample.MinMaxDownsampler()
    lttb = tsdownsample.MinMaxLTTBDownsampler()
    mm_times, _ = _timed(lambda: minmax.downsample(finite, n_out=DEFAULT_POINT_BUDGET), 3)
    lt_times, _ = _timed(lambda: lttb.downsample(finite, n_out=DEFAULT_POINT_BUDGET), 3)
    return {
        "tsdownsample_minmax_s": statistics.median(mm_times),
        "tsdownsample_minmaxlttb_s": statistics.median(lt_times),
    }


def bench_export(figure: dict[str, Any], warm: int) -> dict[str, float]:
    """PNG export: persistent browser first and warm calls vs kaleido one-shot calls."""
    browser = find_browser()
    if browser is None:
        print("no Chrome/Chromium: export benchmark skipped (apt-get install chromium)")
        return {}
    with FigureExporter(browser) as exporter:
        first, _ = _timed(lambda: exporter.to_bytes(figure, "png"), 1)
        warm_times, _ = _timed(lambda: exporter.to_bytes(figure, "png"), warm)
    with FigureExporter(browser) as prewarmed:
        warm_up, _ = _timed(lambda: prewarmed.start_in_background().join(), 1)
        after_warm_up, _ = _timed(lambda: prewarmed.to_bytes(figure, "png"), 1)
    import kaleido  # only for the peer measurement

    # The peer gets the same SVG-only, raster-thinned figure: only browser reuse differs.
    static = static_figure(figure, raster_columns=int(figure["layout"]["width"]))
    oneshot, _ = _timed(
        lambda: kaleido.calc_fig_sync(static, opts={"format": "png"}, kopts={"mathjax": False}),
        3,
    )
    return {
        "export_first_s": first[0],
        "warm_up_s": warm_up[0],
        "export_after_warm_up_s": after_warm_up[0],
        "export_warm_median_s": statistics.median(warm_times),
        "kaleido_oneshot_median_s": statistics.median(oneshot),
    }


def main() -> None:
    """Run the benchmark and print a table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--warm", type=int, default=5, help="warm PNG exports to time")
    args = parser.parse_args()
    rows = [bench_resolve(n) for n in args.sizes]
    print(
        f"{'points':>11} {'resolve 1st':>11} {'resolve med':>11} {'core med':>9} "
        f"{'tsd minmax':>10} {'tsd mmlttb':>10} {'sent':>6} {'max ok':>6} {'min ok':>6} "
        f"{'gaps':>4}"
    )
    for row in rows:
        peer_mm = row.get("tsdownsample_minmax_s")
        peer_lt = row.get("tsdownsample_minmaxlttb_s")
        print(
            f"{row['n']:>11,} {row['resolve_first_s']:>10.3f}s {row['resolve_median_s']:>10.3f}s "
            f"{row['downsample_median_s']:>8.3f}s "
            f"{(f'{peer_mm:.3f}s' if peer_mm else 'n/a'):>10} "
            f"{(f'{peer_lt:.3f}s' if peer_lt else 'n/a'):>10} "
            f"{row['points_sent']:>6} {row['max_kept']!s:>6} {row['min_kept']!s:>6} "
            f"{row['gap_markers']:>4}"
        )
        if peer_mm:
            ratio = row["downsample_median_s"] / peer_mm
            print(f"{'':>11} our numpy min-max core / tsdownsample MinMax = {ratio:.1f}x")
    export = bench_export(rows[0]["figure"], args.warm)
    if export:
        print(
            f"PNG export ({rows[0]['points_sent']} points): first call "
            f"{export['export_first_s']:.2f}s (starts the browser), warm median "
            f"{export['export_warm_median_s']:.2f}s; kaleido one-shot median "
            f"{export['kaleido_oneshot_median_s']:.2f}s "
            f"({export['kaleido_oneshot_median_s'] / export['export_warm_median_s']:.1f}x slower)"
        )
        print(
            f"With start_in_background(): warm-up {export['warm_up_s']:.2f}s off the request "
            f"path, then first export {export['export_after_warm_up_s']:.2f}s"
        )


if __name__ == "__main__":
    main()
