"""Benchmark: the request evaluation set, pass rate per group and silent WRONG answers.

Runs every case of `tests/eval/requests.toml` through the offline assistant (`run_turn`,
the same path as the REPL and `xhelio ask`) against the loopback catalog-wide HAPI server,
and prints, per group, how many passed and how many were WRONG: data other than asked
with no statement of the difference. `--failures` lists every case that did not pass,
`--json FILE` writes the verdicts, `--cases FILE` runs another set (the held-out
`tests/eval/heldout.toml`, written before the language work and never tuned to).
Run: ``python benchmarks/bench_requests.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # servers, eval

from eval.harness import CASES_FILE, load_cases, run_all, served_home, table


def main() -> None:
    """Run the set and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--failures", action="store_true", help="list cases that did not pass")
    parser.add_argument("--group", help="only this group")
    parser.add_argument("--json", type=Path, help="write verdicts to this file")
    parser.add_argument(
        "--cases", type=Path, default=CASES_FILE, help="request set (e.g. tests/eval/heldout.toml)"
    )
    args = parser.parse_args()
    cases = [c for c in load_cases(args.cases) if args.group in (None, c.group)]
    with tempfile.TemporaryDirectory() as home, served_home(Path(home)):
        outcomes = run_all(cases)
    rows = table(outcomes)
    print(f"{'group':<16}{'pass':>6}{'total':>7}{'rate':>8}{'WRONG':>7}")
    for group, (passed, total, wrong) in rows.items():
        if total:
            print(f"{group:<16}{passed:>6}{total:>7}{passed / total:>8.0%}{wrong:>7}")
    passed = sum(r[0] for r in rows.values())
    total = sum(r[1] for r in rows.values())
    wrong = sum(r[2] for r in rows.values())
    print(f"{'all':<16}{passed:>6}{total:>7}{passed / max(total, 1):>8.0%}{wrong:>7}")
    if args.failures:
        for o in outcomes:
            if o.verdict != "PASS":
                print(f"\n[{o.verdict}] ({o.case.group}) {o.case.text}\n  " + "; ".join(o.reasons))
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "group": o.case.group,
                        "text": o.case.text,
                        "verdict": o.verdict,
                        "reasons": o.reasons,
                    }
                    for o in outcomes
                ],
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
