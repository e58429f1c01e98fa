"""Benchmark: model requests and input tokens per request, per agent, for canonical requests.

Each canonical request is run once, end to end, through the real OpenAI-compatible HTTP
path (`XHELIO_MODEL=openai-chat:...`, `OPENAI_BASE_URL` at a scripted chat-completions
server on 127.0.0.1) against the loopback HAPI server, so the bodies measured are exactly
what a real provider would receive. Input tokens are estimated as one token per 4
characters of the JSON of messages and tools (the server reports that as usage, so the
numbers are also what `UsageTracker` shows). The second table gives the fixed cost each
agent pays on every request: its system prompt and its tool schemas.
Run: ``python benchmarks/bench_agents.py``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # servers, agent script

from agent_script import ACE_REQUEST, FETCH, Script, ace_steps, ace_week, http_agent_key
from servers.hapi_server import HapiTestServer
from servers.openai_chat_server import OpenAIChatServer, prompt_tokens

FlowSteps = dict[str, list[Any]]

WIND_FETCH = {"dataset_id": "WI_H2_MFI", "parameter_id": "BGSE", "time_range": "last week"}
BMAG_CODE = "result = df.pow(2).sum(axis=1).pow(0.5).to_frame('Bmag')"


def _planned(status: str, tasks: list[dict[str, Any]], **extra: Any) -> list[Any]:
    return [("final_result", {"status": status, "reasoning": "-", "tasks": tasks, **extra})]


def compare_steps() -> FlowSteps:
    """'Compare ACE and Wind magnetic field for last week': planned, two missions, one figure."""
    steps = ace_steps()
    figure = {
        "data": [
            {"data_label": "AC_H2_MFI.BGSEc", "yaxis": "y"},
            {"data_label": "WI_H2_MFI.BGSE", "yaxis": "y2"},
        ],
        "layout": {"yaxis": {"domain": [0.52, 1]}, "yaxis2": {"domain": [0, 0.48]}},
    }
    fetches = [
        {
            "description": f"Fetch {name} magnetic field",
            "instruction": "Fetch the magnetic field vector",
            "mission": name,
            "candidate_datasets": [dataset],
        }
        for name, dataset in (("ACE", "AC_H2_MFI"), ("Wind", "WI_H2_MFI"))
    ]
    plot = {
        "description": "Plot both",
        "instruction": "AC_H2_MFI.BGSEc over WI_H2_MFI.BGSE",
        "mission": "__visualization__",
    }
    return {
        "planner.discovery": [
            [
                ("list_parameters", {"dataset_id": "AC_H2_MFI"}),
                ("list_parameters", {"dataset_id": "WI_H2_MFI"}),
            ],
            "Checked AC_H2_MFI and WI_H2_MFI.",
        ],
        "planner": [
            _planned("continue", fetches),
            _planned("continue", [plot]),
            _planned("done", [], summary="ACE (top) and Wind (bottom) magnetic field."),
        ],
        "mission:ACE": steps["mission:ACE"],
        "mission:Wind": [
            [("list_parameters", {"dataset_id": "WI_H2_MFI"})],
            [("fetch_data", WIND_FETCH)],
            "Fetched WI_H2_MFI.BGSE.",
        ],
        "visualization": [[("render_plotly_json", {"figure": figure})], "Two panels."],
    }


def compute_steps() -> FlowSteps:
    """'Show ACE |B| for last week': fetch, compute the magnitude, plot it."""
    operation = {
        "source_labels": ["AC_H2_MFI.BGSEc"],
        "code": BMAG_CODE,
        "output_label": "ACE_Bmag",
        "units": "nT",
    }
    return {
        "orchestrator": [
            [
                (
                    "delegate_to_mission",
                    {"mission_id": "ACE", "request": "magnetic field, last week"},
                )
            ],
            [("delegate_to_data_ops", {"request": "|B| of AC_H2_MFI.BGSEc as ACE_Bmag"})],
            [("delegate_to_visualization", {"request": "Plot ACE_Bmag"})],
            "ACE |B| for last week.",
        ],
        "mission:ACE": [[("fetch_data", FETCH)], "Fetched AC_H2_MFI.BGSEc."],
        "data_ops.think": [
            [("describe_data", {"label": "AC_H2_MFI.BGSEc"})],
            "Magnitude: sqrt of the sum of squares of the 3 columns (nT), output ACE_Bmag.",
        ],
        "data_ops": [[("custom_operation", operation)], "Stored ACE_Bmag."],
        "visualization": [
            [("render_plotly_json", {"figure": {"data": [{"data_label": "ACE_Bmag"}]}})],
            "One panel.",
        ],
    }


FLOWS: list[tuple[str, str, FlowSteps]] = [
    ("one mission fetch+plot", ACE_REQUEST, ace_steps()),
    (
        "two missions compare (planned)",
        "Compare ACE and Wind magnetic field for last week",
        compare_steps(),
    ),
    ("fetch+compute+plot", "Show ACE |B| for last week", compute_steps()),
]


def run_flow(request: str, steps: FlowSteps) -> list[dict[str, Any]]:
    """Run one request through the real HTTP path; return the request bodies sent."""
    from xhelio.agents.factory import make_assistant
    from xhelio.agents.turn import run_turn
    from xhelio.config import load_settings
    from xhelio.tools.workspace import open_workspace

    script = Script(steps)
    info, frame = ace_week()
    wind = frame.rename(columns={"Magnitude": "BF1"})
    wind_info = json.loads(
        json.dumps(info).replace('"Magnitude"', '"BF1"').replace('"BGSEc"', '"BGSE"')
    )
    with HapiTestServer() as hapi, OpenAIChatServer(script.http_reply) as chat:
        hapi.add_dataset("AC_H2_MFI", info, frame)
        hapi.add_dataset("WI_H2_MFI", wind_info, wind)
        os.environ.update(
            XHELIO_HAPI_URL=hapi.url,
            OPENAI_BASE_URL=chat.base_url,
            XHELIO_MODEL="openai-chat:bench",
        )
        workspace = open_workspace(settings=load_settings(), ephemeral=True)
        try:
            assistant, _ = make_assistant(workspace)
            result = run_turn(workspace, assistant, request)
        finally:
            workspace.close()
    if result.error or script.left():
        raise SystemExit(f"{request!r} did not run as scripted: {result.error or script.left()}")
    return chat.requests


def fixed_cost(body: dict[str, Any]) -> tuple[int, int]:
    """Tokens of a request's system prompt and of its tool schemas."""
    system = [m for m in body["messages"] if m.get("role") == "system"]
    return prompt_tokens({"messages": system}), prompt_tokens({"tools": body.get("tools", [])})


def main() -> None:
    """Run every flow and print per-agent request counts and input tokens."""
    os.environ["XHELIO_HOME"] = tempfile.mkdtemp(prefix="xhelio-bench-agents-")
    os.environ.pop("OPENAI_API_KEY", None)
    sizes: dict[str, tuple[int, int, int]] = {}
    print(f"{'request':24} {'agent':16} {'req':>4} {'input tokens per request':34} {'total':>7}")
    for title, request, steps in FLOWS:
        bodies = run_flow(request, steps)
        per_agent: dict[str, list[int]] = {}
        for body in bodies:
            agent = http_agent_key(body)
            per_agent.setdefault(agent, []).append(prompt_tokens(body))
            system, tools = fixed_cost(body)
            sizes[agent] = (system, tools, len(body.get("tools", [])))
        for agent, tokens in per_agent.items():
            shown = ", ".join(map(str, tokens))
            print(f"{title:24} {agent:16} {len(tokens):>4} {shown:34} {sum(tokens):>7}")
        total = sum(sum(t) for t in per_agent.values())
        print(f"{title:24} {'ALL':16} {len(bodies):>4} {'':34} {total:>7}\n")
    print(f"{'agent':16} {'system prompt tok':>18} {'tool schemas tok':>17} {'tools':>6}")
    for agent, (system, tools, count) in sorted(sizes.items()):
        print(f"{agent:16} {system:>18} {tools:>17} {count:>6}")


if __name__ == "__main__":
    main()
