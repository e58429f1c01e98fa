"""Concurrent sessions against `xhelio serve`: throughput, latency, errors, no leakage.

N sessions (10, then 50) each ask `--turns` offline requests, one after the other, all
sessions in parallel, over real HTTP on loopback (uvicorn), with data from a loopback HAPI
server. Every request names its own mission, quantity and day, so each answer can be
checked to hold only its own data: the response's session id, its data labels (dataset
of the asked mission) and start day, and at the end every session's entries.

    .venv/bin/python benchmarks/bench_server.py [--sessions 10 50] [--turns 2]
        [--against REV [--rounds 2]]

Prints one JSON object per N: requests, requests_per_s, p50_ms, p99_ms, errors, leaks, and
cpu_ms_per_request (the benchmark process's CPU, server and client, per answered request:
steadier than latency on a shared machine). `--against REV` measures commit REV the same
way in the same run, alternating fresh processes of both (`rounds` times), each line
labelled with its `revision`: before/after figures under the same load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # loopback servers

import httpx

from revision import checkout
from servers.catalog_hapi import CatalogHapiServer
from servers.xhelio_api import LiveServer

# (request words, dataset id prefix the answer's data must come from)
ASKS: list[tuple[str, str]] = [
    ("ACE magnetic field", "AC_"),
    ("Wind magnetic field", "WI_"),
    ("OMNI solar wind speed", "OMNI"),
    ("ACE solar wind speed", "AC_"),
    ("Wind proton density", "WI_"),
]


@dataclass
class Outcome:
    """What one run measured."""

    sessions: int
    latencies_ms: list[float] = field(default_factory=list[float])
    errors: list[str] = field(default_factory=list[str])
    leaks: list[str] = field(default_factory=list[str])
    wall_s: float = 0.0
    cpu_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        done = sorted(self.latencies_ms)
        p99 = done[min(len(done) - 1, round(0.99 * (len(done) - 1)))] if done else None
        return {
            "sessions": self.sessions,
            "requests": len(done) + len(self.errors),
            "requests_per_s": round(len(done) / self.wall_s, 2) if self.wall_s else None,
            "p50_ms": round(statistics.median(done), 1) if done else None,
            "p99_ms": round(p99, 1) if p99 is not None else None,
            "errors": len(self.errors),
            "leaks": len(self.leaks),
            "cpu_ms_per_request": round(1000 * self.cpu_s / len(done), 1) if done else None,
            "first_error": self.errors[0] if self.errors else None,
            "first_leak": self.leaks[0] if self.leaks else None,
        }


def _ask_for(session: int, turn: int) -> tuple[str, str, str]:
    words, prefix = ASKS[(session + turn) % len(ASKS)]
    day = f"2024-02-{1 + (session * 3 + turn) % 28:02d}"
    return f"{words} on {day}", prefix, day


async def _session(client: httpx.AsyncClient, index: int, turns: int, out: Outcome) -> None:
    created = await client.post("/sessions", json={"title": f"bench {index}"})
    sid = created.json()["id"]
    mine: set[str] = set()
    for turn in range(turns):
        question, prefix, day = _ask_for(index, turn)
        started = time.perf_counter()
        try:
            reply = await client.post("/ask", json={"question": question, "session_id": sid})
        except httpx.HTTPError as exc:
            out.errors.append(f"{question}: {type(exc).__name__}")
            continue
        elapsed = (time.perf_counter() - started) * 1000
        body = reply.json()
        if reply.status_code != 200 or body.get("error"):
            out.errors.append(f"{question}: {reply.status_code} {body.get('error')}")
            continue
        out.latencies_ms.append(elapsed)
        if body["session_id"] != sid:
            out.leaks.append(f"{question}: answered in session {body['session_id']}")
        for item in body["data"]:
            mine.add(item["label"])
            own_day = str(item["start"]).startswith(day)
            if not str(item["dataset"]).startswith(prefix) or not own_day:
                out.leaks.append(f"{question}: got {item['label']} from {item['start']}")
    entries = (await client.get(f"/sessions/{sid}/entries")).json()["entries"]
    foreign = {e["label"] for e in entries} - mine
    if foreign:
        out.leaks.append(f"session {index} holds {sorted(foreign)}")


async def _run(url: str, sessions: int, turns: int) -> Outcome:
    out = Outcome(sessions)
    limits = httpx.Limits(max_connections=sessions + 5)
    async with httpx.AsyncClient(base_url=url + "/api/v1", timeout=600, limits=limits) as client:
        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(_session(client, i, turns, out) for i in range(sessions)))
        out.wall_s = time.perf_counter() - started
        out.cpu_s = time.process_time() - cpu
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--against", metavar="REV", help="also measure this commit (before)")
    parser.add_argument("--rounds", type=int, default=1, help="alternations with --against")
    args = parser.parse_args()
    if args.against:
        _compare(args.against, args.rounds, args.sessions, args.turns)
        return
    home = tempfile.mkdtemp(prefix="xhelio-bench-server-")
    os.environ["XHELIO_HOME"] = home
    for var in ("XHELIO_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        os.environ.pop(var, None)
    os.environ.pop("GOOGLE_API_KEY", None)
    with CatalogHapiServer() as hapi:
        os.environ["XHELIO_HAPI_URL"] = hapi.url
        from xhelio.server import ServerConfig, create_app

        app = create_app(ServerConfig(workers=64, max_open_sessions=256))
        with LiveServer(app) as server:
            warm = httpx.post(
                server.url + "/api/v1/ask", json={"question": _ask_for(999, 0)[0]}, timeout=600
            )
            assert warm.status_code == 200, warm.text
            for count in args.sessions:
                print(json.dumps(asyncio.run(_run(server.url, count, args.turns)).summary()))


def _compare(rev: str, rounds: int, sessions: list[int], turns: int) -> None:
    """Both checkouts in fresh processes, alternately: `rev` first, then this one."""
    command = [sys.executable, __file__, "--turns", str(turns), "--sessions", *map(str, sessions)]
    with checkout(rev) as other:
        for round_ in range(1, rounds + 1):
            for label, src in ((rev, other), ("this checkout", None)):
                env = dict(os.environ)
                if src is not None:
                    env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")])
                done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
                for line in done.stdout.splitlines():
                    print(json.dumps({"revision": label, "round": round_, **json.loads(line)}))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
