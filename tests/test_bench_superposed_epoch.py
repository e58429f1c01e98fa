"""The superposed-epoch benchmark runs tiny: both methods agree and its figures are there."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_superposed_epoch.py"


def test_benchmark_runs_tiny_and_both_methods_agree() -> None:
    spec = importlib.util.spec_from_file_location("bench_superposed_epoch", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    figures = module.run(events=4, days=1, bin_minutes=30)  # asserts the methods agree
    assert figures["events"] == 4 and figures["points"] > 4 * 1440 * 0.9
    for key in ("vectorised_s", "pandas_loop_s", "vectorised_peak_mb", "pandas_loop_peak_mb"):
        assert figures[key] > 0
    assert figures["time_ratio"] == figures["pandas_loop_s"] / figures["vectorised_s"]
