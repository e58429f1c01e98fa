"""Benchmark: catalog-wide resolution, requests generated from the catalog's own metadata.

For every science dataset of the shipped catalog, requests in several phrasing styles
(see `tests/eval/resolve_set.py`) with the set of acceptable answers. Prints, per style
and overall:

- `search_datasets` (`Catalog.search`, what the LLM agents see): top-1 accuracy,
  Recall@5 and MRR@10;
- the offline resolver (`parse_request` + `build_plan`, no fetch): top-1 accuracy (its
  first fetch is an acceptable dataset) and WRONG rate (it would fetch another dataset;
  asking instead is neither).

`--sample N` evaluates a fixed sample (the CI test uses one), `--offline-sample N` caps the
slower offline part, `--failures` lists misses. Run: ``python benchmarks/bench_resolve.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # eval

from eval.resolve_set import build_cases, evaluate, sample, science_datasets
from xhelio.catalog.index import open_catalog


def main() -> None:
    """Generate the requests, run both resolvers and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sample", type=int, default=0, help="evaluate this many requests")
    parser.add_argument(
        "--offline-sample", type=int, default=1500, help="offline resolver on this many"
    )
    parser.add_argument("--failures", action="store_true", help="list the misses")
    args = parser.parse_args()
    with open_catalog() as catalog:
        cases = build_cases(science_datasets(catalog))
        if args.sample:
            cases = sample(cases, args.sample)
        offline = sample(cases, args.offline_sample, seed=7)
        tallies = evaluate(cases, catalog, offline)
    print(f"{len(cases)} requests ({len(offline)} through the offline resolver)")
    print(
        f"{'style':<12}{'n':>6}{'top1':>8}{'R@5':>8}{'MRR':>8}"
        f"{'off n':>8}{'off top1':>10}{'WRONG':>8}"
    )
    for style, t in tallies.items():
        if not t.n:
            continue
        off = max(t.offline_n, 1)
        print(
            f"{style:<12}{t.n:>6}{t.top1 / t.n:>8.1%}{t.recall5 / t.n:>8.1%}{t.rr / t.n:>8.3f}"
            f"{t.offline_n:>8}{t.offline_top1 / off:>10.1%}{t.offline_wrong / off:>8.1%}"
        )
    if args.failures:
        print("\n".join(tallies["all"].misses))


if __name__ == "__main__":
    main()
