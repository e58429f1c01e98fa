"""Benchmark: replaying a saved pipeline vs asking the (scripted) LLM path again.

Part 1. "Show ACE |B| for last week" (fetch, compute, plot) runs end to end through the
real OpenAI-compatible HTTP path (a scripted chat-completions server on 127.0.0.1 that
answers instantly) against the loopback HAPI server; the result is saved as a pipeline
and replayed for the same range in a fresh session. Reported: model requests, input
tokens (1 token per 4 characters of each request body, as `bench_agents.py`), and the
median wall time of each path. The scripted model costs no time at all, so the measured
ratio is a floor; the table adds the ratio with a typical hosted-model latency per
request (`--model-latency`, default 1.5 s, an assumption, not a measurement).

Part 2. PipelineStore with 1,000 pipelines: save time, then search latency (median and
p95 over queries by text, mission and dataset).

Run: ``python benchmarks/bench_pipelines.py [--runs 3] [--model-latency 1.5]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_script import Script, ace_week
from bench_agents import compute_steps
from servers.hapi_server import HapiTestServer
from servers.openai_chat_server import OpenAIChatServer, prompt_tokens
from xhelio.agents.factory import make_assistant
from xhelio.agents.orchestrator import HISTORY_KEY
from xhelio.agents.turn import run_turn
from xhelio.config import load_settings
from xhelio.pipelines.model import Pipeline
from xhelio.pipelines.replay import replay_pipeline
from xhelio.pipelines.store import PipelineStore
from xhelio.tools.workspace import Workspace, open_workspace

REQUEST = "Show ACE |B| for last week"


def llm_turn(workspace: Workspace) -> tuple[float, int, int]:
    """One scripted LLM turn in `workspace`; (seconds, model requests, input tokens)."""
    script = Script(compute_steps())
    workspace.session.meta.pop(HISTORY_KEY, None)  # every turn starts the same conversation
    with OpenAIChatServer(script.http_reply) as chat:
        os.environ.update(OPENAI_BASE_URL=chat.base_url, XHELIO_MODEL="openai-chat:bench")
        started = time.perf_counter()
        assistant, _ = make_assistant(workspace)
        result = run_turn(workspace, assistant, REQUEST)
        elapsed = time.perf_counter() - started
    if result.error or script.left():
        raise SystemExit(f"the scripted request failed: {result.error or script.left()}")
    return elapsed, len(chat.requests), sum(prompt_tokens(body) for body in chat.requests)


def replay_turn(workspace: Workspace, pipeline: Pipeline) -> float:
    """One deterministic replay in `workspace`; seconds."""
    started = time.perf_counter()
    result = replay_pipeline(pipeline, workspace.funnel)
    elapsed = time.perf_counter() - started
    if result.status != "completed":
        raise SystemExit(result.summary())
    return elapsed


def _report(
    title: str, llm: list[tuple[float, int, int]], replays: list[float], latency: float
) -> None:
    llm_s = statistics.median(t for t, _, _ in llm)
    replay_s = statistics.median(replays)
    requests, tokens = llm[-1][1], llm[-1][2]
    print(f"\n{title} ({len(replays)} runs each, medians)")
    print(f"{'path':34} {'model req':>9} {'tokens':>8} {'wall s':>8}")
    print(f"{'scripted LLM (instant model)':34} {requests:>9} {tokens:>8} {llm_s:>8.3f}")
    print(f"{'pipeline replay':34} {0:>9} {0:>8} {replay_s:>8.3f}")
    print(f"ratio with an instant model: {llm_s / replay_s:.1f}x")
    with_latency = llm_s + requests * latency
    print(f"ratio with {latency:.1f} s per model request (assumed): {with_latency / replay_s:.1f}x")


def part1(runs: int, latency: float) -> None:
    """LLM path vs replay on the same loopback servers: warm session, then cold sessions."""
    info, frame = ace_week()
    with HapiTestServer() as hapi:
        hapi.add_dataset("AC_H2_MFI", info, frame)
        os.environ["XHELIO_HAPI_URL"] = hapi.url
        workspace = open_workspace(settings=load_settings())
        try:
            llm_turn(workspace)  # warm-up: catalog, cache, sandbox worker, imports
            saved = workspace.funnel.call("save_pipeline", {"name": "ACE |B| bench"})
            pipeline = PipelineStore(load_settings()).load(str(saved.payload["id"]))
            llm: list[tuple[float, int, int]] = []
            replays: list[float] = []
            for _ in range(runs):
                llm.append(llm_turn(workspace))
                replays.append(replay_turn(workspace, pipeline))
        finally:
            workspace.close()
        _report(f"Part 1a: '{REQUEST}' again in the same (warm) session", llm, replays, latency)
        cold_llm: list[tuple[float, int, int]] = []
        cold_replays: list[float] = []
        for _ in range(runs):
            for kind in ("llm", "replay"):
                fresh = open_workspace(settings=load_settings(), ephemeral=True)
                try:
                    if kind == "llm":
                        cold_llm.append(llm_turn(fresh))
                    else:
                        cold_replays.append(replay_turn(fresh, pipeline))
                finally:
                    fresh.close()
        _report(
            "Part 1b: each in a new session (sandbox worker started cold)",
            cold_llm,
            cold_replays,
            latency,
        )


def part2(count: int = 1000, queries: int = 60) -> None:
    """Save `count` pipelines, then time searches."""
    from xhelio.config import load_settings
    from xhelio.pipelines.model import TIME_RANGE_VAR, Pipeline, PipelineStep, PipelineVariable
    from xhelio.pipelines.store import PipelineStore

    missions = [
        ("AC_H2_MFI", "ace"),
        ("WI_H0_MFI", "wind"),
        ("OMNI_HRO_1MIN", "omni"),
        ("MMS1_FGM_SRVY_L2", "mms"),
        ("PSP_FLD_L2_MAG_RTN", "psp"),
    ]
    words = ["storm", "shock", "overview", "smoothed", "spectrogram", "density", "speed"]
    store = PipelineStore(load_settings())
    started = time.perf_counter()
    for i in range(count):
        dataset, mission = missions[i % len(missions)]
        steps = [
            PipelineStep(
                f"s{j:03d}",
                "fetch_data",
                {
                    "dataset_id": dataset,
                    "parameter_id": f"P{(i + j) % 7}",
                    "time_range": TIME_RANGE_VAR,
                },
                f"Fetch P{j} from dataset {dataset}",
                [f"{dataset}.P{j}"],
            )
            for j in range(1, 4)
        ]
        steps.append(
            PipelineStep(
                "s004",
                "custom_operation",
                {
                    "source_labels": [f"{dataset}.P1"],
                    "code": f"result = df*{i % 13}",
                    "output_label": "X",
                },
                "Compute X",
                ["X"],
                ["s001"],
            )
        )
        name = f"{mission} {words[i % len(words)]} {words[(i // 7) % len(words)]} {i}"
        store.save(
            Pipeline(
                f"pl_bench{i:05d}",
                name,
                steps,
                f"{name} analysis",
                {TIME_RANGE_VAR: PipelineVariable("time_range", "", "2001-01-01")},
            ),
            [mission],
        )
    save_s = time.perf_counter() - started
    timings: list[float] = []
    families = 0
    for q in range(queries):
        args: dict[str, Any] = [
            {"query": f"{words[q % len(words)]} {words[(q + 3) % len(words)]}"},
            {"mission": missions[q % len(missions)][1]},
            {"dataset": missions[q % len(missions)][0], "query": words[q % len(words)]},
        ][q % 3]
        t0 = time.perf_counter()
        families += len(store.search(**args))
        timings.append(time.perf_counter() - t0)
    timings.sort()
    p95 = timings[int(0.95 * (len(timings) - 1))]
    print(f"\nPart 2: PipelineStore with {count} pipelines")
    print(f"save: {save_s:.2f} s total, {save_s / count * 1000:.2f} ms per pipeline")
    print(
        f"search: median {statistics.median(timings) * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms "
        f"over {queries} queries ({families / queries:.1f} families per answer, limit 20)"
    )


def main() -> None:
    """Run both parts in a throwaway XHELIO_HOME."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model-latency", type=float, default=1.5)
    options = parser.parse_args()
    os.environ["XHELIO_HOME"] = tempfile.mkdtemp(prefix="xhelio-bench-pipelines-")
    os.environ.pop("OPENAI_API_KEY", None)
    part1(options.runs, options.model_latency)
    part2()


if __name__ == "__main__":
    main()
