"""Benchmark: the cost of reading a turn's request against a long offline session.

Run: python benchmarks/bench_session_turns.py [--turns 30]

An offline answer reads its request against the session: earlier user requests are
replayed to complete follow-ups ("same for Wind", "zoom in"). This plays a session of
`--turns` requests (no data fetched: each turn is the reading and the plan, which is the
part that grows with the history) and reports, per turn, the time to interpret it and the
number of requests parsed. The peer in the same run is the same session with every kept
reading dropped before each turn, which is how every turn worked before readings were
kept with their messages: its turn N parses N requests. The ratio of the mean cost of the
last cycle of requests to the first cycle (the same requests, early and late in the
session) shows whether a turn's cost grows with the session.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import xhelio.agents.offline.assistant as assistant_module
from xhelio.agents.offline.assistant import OfflineAssistant
from xhelio.config import load_settings
from xhelio.language.intent import RequestIntent
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.tools.workspace import open_workspace

REQUESTS = [
    "ACE magnetic field for 2015-03-16 to 2015-03-18",
    "now smooth it over 30 minutes",
    "add Wind",
    "shift to the next day",
    "OMNI Dst for 2003-10-29 to 2003-11-01",
    "same for the next day",
    "plot the solar wind speed and density from ACE SWEPAM on 2017-09-07",
    "zoom in on 06:00 to 12:00",
    "Wind 3DP electron spectrogram for 2012-03-07",
    "show the proton temperature too",
]


def _session(turns: int, forget: bool) -> list[tuple[float, int]]:
    """(seconds, requests parsed) per turn of one session."""
    parsed = 0

    def counting(text: str, vocab: Vocabulary) -> RequestIntent:
        nonlocal parsed
        parsed += 1
        return parse_request(text, vocab)

    original: Callable[[str, Vocabulary], RequestIntent] = assistant_module.parse_request
    assistant_module.parse_request = counting
    workspace = open_workspace(settings=load_settings())
    try:
        assistant = OfflineAssistant(workspace)
        _ = assistant.vocab  # built once, outside the turns measured
        history = workspace.session.history
        costs: list[tuple[float, int]] = []
        for turn in range(turns):
            request = REQUESTS[turn % len(REQUESTS)]
            history.append({"role": "user", "content": request})
            if forget:
                assistant._read.clear()  # pyright: ignore[reportPrivateUsage]
            parsed = 0
            start = time.perf_counter()
            assistant.interpret(request, assistant.parse(request))
            costs.append((time.perf_counter() - start, parsed))
            history.append({"role": "assistant", "content": "(answer)"})
        return costs
    finally:
        assistant_module.parse_request = original
        workspace.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=30)
    turns = parser.parse_args().turns
    _session(len(REQUESTS), forget=False)  # warm-up: first-use caches are not a turn's cost
    print(f"{turns}-turn offline session: time to read each turn's request (no fetch)")
    print(f"{'session':<30} {'early ms':>9} {'late ms':>9} {'ratio':>6} {'parsed 1..N':>12}")
    late: list[float] = []
    for name, forget in (
        ("readings kept with messages", False),
        ("re-read every turn (before)", True),
    ):
        costs = _session(turns, forget)
        # The same requests early and late: the first and the last cycle of REQUESTS.
        cycle = min(len(REQUESTS), turns // 2)
        first = statistics.fmean(c for c, _ in costs[:cycle])
        last = statistics.fmean(c for c, _ in costs[-cycle:])
        late.append(last)
        parsed = f"{costs[0][1]}..{costs[-1][1]}"
        print(
            f"{name:<30} {first * 1e3:>9.1f} {last * 1e3:>9.1f} {last / first:>6.1f} {parsed:>12}"
        )
    print(f"late turns, kept / re-read: {late[0] / late[1]:.2f}")


if __name__ == "__main__":
    main()
