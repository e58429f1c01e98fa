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
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # eval

from eval.resolve_set import (
    STYLES,
    ResolveCase,
    build_cases,
    reciprocal_rank,
    sample,
    science_datasets,
)
from xhelio.agents.offline.parse import Vocabulary, parse_request
from xhelio.agents.offline.plan import build_plan
from xhelio.catalog.index import Catalog, open_catalog


@dataclass
class Tally:
    """Counts for one style (or all)."""

    n: int = 0
    top1: int = 0
    recall5: int = 0
    rr: float = 0.0
    offline_n: int = 0
    offline_top1: int = 0
    offline_wrong: int = 0
    misses: list[str] = field(default_factory=list[str])


def search_scores(catalog: Catalog, case: ResolveCase) -> tuple[bool, bool, float, str]:
    """(top-1 right, any of top 5 right, reciprocal rank in the top 10, first id)."""
    ranked = [h.dataset_id for h in catalog.search(case.text, limit=10)]
    top = ranked[0] if ranked else ""
    return (
        top in case.acceptable,
        any(d in case.acceptable for d in ranked[:5]),
        reciprocal_rank(ranked, case.acceptable),
        top,
    )


def offline_choice(vocab: Vocabulary, case: ResolveCase) -> str | None:
    """The dataset the offline resolver would fetch first, or None when it would ask."""
    plan = build_plan(vocab, parse_request(case.text, vocab))
    for step in plan.steps:
        if step.kind == "fetch" and step.candidates:
            return step.candidates[0].dataset_id
    return None


def evaluate(
    cases: list[ResolveCase], catalog: Catalog, offline: list[ResolveCase]
) -> dict[str, Tally]:
    """Tallies per style and under "all"."""
    tallies = {style: Tally() for style in (*STYLES, "all")}
    vocab = Vocabulary.from_catalog(catalog)
    offline_texts = {id(c) for c in offline}
    for case in cases:
        right, recalled, rr, top = search_scores(catalog, case)
        for key in (case.style, "all"):
            t = tallies[key]
            t.n += 1
            t.top1 += right
            t.recall5 += recalled
            t.rr += rr
        if not right:
            tallies["all"].misses.append(f"search  {case.text!r}: {top} (from {case.source})")
        if id(case) not in offline_texts:
            continue
        chosen = offline_choice(vocab, case)
        for key in (case.style, "all"):
            t = tallies[key]
            t.offline_n += 1
            t.offline_top1 += chosen in case.acceptable
            t.offline_wrong += chosen is not None and chosen not in case.acceptable
        if chosen is not None and chosen not in case.acceptable:
            tallies["all"].misses.append(f"offline {case.text!r}: {chosen} (from {case.source})")
    return tallies


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
