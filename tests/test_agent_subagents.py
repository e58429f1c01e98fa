"""Sub-agents on their own: LoopGuard layers, mission modes, data-ops, extraction, viz, insight.

Each test drives one real sub-agent (real tools, funnel, catalog, loopback HAPI server,
sandbox) with a scripted FunctionModel and checks what it stored, which tools ran and what
the model was sent.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pydantic_ai.messages import BinaryContent, ModelRequest, ToolReturnPart, UserPromptPart

from agent_script import Script, scripted_config, tool_returns, user_prompts
from servers.hapi_server import HapiTestServer, make_info, synthetic_frame
from xhelio.agents.data_ops import DataOpsAgent
from xhelio.agents.insight import InsightAgent, figure_png
from xhelio.agents.mission import MissionAgents, candidates_in
from xhelio.agents.models import ModelRouter
from xhelio.agents.specialists import VisualizationAgent, export_request, extraction_agent
from xhelio.agents.subagent import AgentEnv, DelegationResult
from xhelio.agents.toolbridge import run_coroutine
from xhelio.config import load_settings
from xhelio.render.export import find_browser
from xhelio.tools.workspace import Workspace, open_workspace

START, STOP = "2024-01-10T00:00:00Z", "2024-01-12T00:00:00Z"
DAY = "2024-01-10"


@pytest.fixture
def hapi(monkeypatch: pytest.MonkeyPatch) -> Iterator[HapiTestServer]:
    info = make_info(START, STOP, [("Magnitude", "nT", None), ("BGSEc", "nT", 3)], cadence="PT1H")
    frame = synthetic_frame(START, STOP, "PT1H", ["Magnitude", "Bx", "By", "Bz"])
    empty = frame.copy()
    empty[["Bx", "By", "Bz"]] = np.nan  # a merged dataset with nothing but fill values
    with HapiTestServer() as server:
        server.add_dataset("AC_H2_MFI", info, frame)
        server.add_dataset("AC_H0_MFI", info, empty)
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        yield server


@pytest.fixture
def workspace(hapi: HapiTestServer) -> Iterator[Workspace]:
    ws = open_workspace(settings=load_settings())
    yield ws
    ws.close()


def env_for(workspace: Workspace, script: Script) -> AgentEnv:
    return AgentEnv(workspace, ModelRouter(scripted_config(), build=script.build))


def fetch(dataset: str, parameter: str = "BGSEc", time_range: str = DAY) -> tuple[str, Any]:
    return "fetch_data", {
        "dataset_id": dataset,
        "parameter_id": parameter,
        "time_range": time_range,
    }


def ran(workspace: Workspace, caller: str) -> list[tuple[str, str]]:
    """(tool, status) of every call `caller` sent through the funnel; guard refusals 'blocked'."""
    return [
        (op["tool"], "blocked" if op["result"].get("type") == "LoopGuard" else op["status"])
        for op in workspace.session.operations
        if op["caller"] == caller
    ]


def mission_run(
    workspace: Workspace, script: Script, request: str, **kwargs: Any
) -> DelegationResult:
    agent = MissionAgents(env_for(workspace, script)).get("ACE")
    return run_coroutine(lambda: agent.fetch(request, threading.Event(), **kwargs))


# -- LoopGuard layers ---------------------------------------------------------------------


def test_total_call_limit_stops_a_round_before_it_runs(workspace: Workspace) -> None:
    too_many = [("list_parameters", {"dataset_id": f"AC_H{i}_MFI"}) for i in range(13)]
    script = Script({"mission:ACE": [too_many, "Stopped."]})
    result = mission_run(workspace, script, "everything", mode="task")
    assert ran(workspace, "mission:ace") == [("list_parameters", "blocked")] * 13
    assert result.failed and result.stopped is not None
    assert "would pass the limit of 12 tool calls" in result.stopped
    assert (script.seen[-1].info.model_settings or {}).get("tool_choice") == "none"


def test_repeating_an_earlier_call_stops_the_loop(workspace: Workspace) -> None:
    same = [("list_parameters", {"dataset_id": "AC_H2_MFI"})]
    script = Script({"mission:ACE": [same, same, "Here are the parameters."]})
    result = mission_run(workspace, script, "what parameters?")
    assert ran(workspace, "mission:ace") == [
        ("list_parameters", "ok"),
        ("list_parameters", "blocked"),
    ]
    assert result.stopped is not None and "repeats an earlier call" in result.stopped
    assert not result.failed and result.text == "Here are the parameters."


def test_a_cycle_of_rounds_stops_the_loop(workspace: Workspace) -> None:
    bad = [fetch("AC_H2_MFI", "Bfield")]
    look = [("list_parameters", {"dataset_id": "AC_H2_MFI"})]
    script = Script({"mission:ACE": [bad, look, bad, "Going in circles."]})
    result = mission_run(workspace, script, "field")
    assert ran(workspace, "mission:ace") == [
        ("fetch_data", "error"),
        ("list_parameters", "ok"),
        ("fetch_data", "blocked"),
    ]
    assert result.stopped is not None and "repeats the calls of a recent round" in result.stopped


def test_two_rounds_of_only_errors_stop_the_loop(workspace: Workspace) -> None:
    script = Script(
        {
            "mission:ACE": [
                [fetch("AC_H2_MFI", "Bfield")],
                [fetch("AC_H2_MFI", "B_total")],
                "Neither parameter exists.",
            ]
        }
    )
    result = mission_run(workspace, script, "field")
    assert ran(workspace, "mission:ace") == [("fetch_data", "error"), ("fetch_data", "error")]
    assert result.failed and result.stopped is not None
    assert "every tool call failed in 2 consecutive rounds" in result.stopped
    assert len(result.errors) == 2 and "Bfield" in result.errors[0]
    report = result.for_model()
    assert report["status"] == "error" and report["errors"] == result.errors[-3:]


def test_iteration_limit_of_task_mode(workspace: Workspace) -> None:
    rounds: list[Any] = [
        [("list_parameters", {"dataset_id": ds})]
        for ds in ("AC_H2_MFI", "AC_H0_MFI", "AC_H1_MFI", "AC_H3_MFI", "AC_H0_SWE")
    ]
    script = Script({"mission:ACE": [*rounds, [fetch("AC_H2_MFI")], "Out of rounds."]})
    result = mission_run(workspace, script, "inspect", mode="task")
    assert ran(workspace, "mission:ace") == [("list_parameters", "ok")] * 5 + [
        ("fetch_data", "blocked")
    ]
    assert result.stopped is not None and "limit of 5 rounds" in result.stopped
    assert result.text == "Out of rounds." and not result.failed


# -- mission agent ------------------------------------------------------------------------


def test_candidate_inspection_skips_an_all_nan_candidate(workspace: Workspace) -> None:
    script = Script(
        {
            "mission:ACE": [
                [
                    ("list_parameters", {"dataset_id": "AC_H0_MFI"}),
                    ("list_parameters", {"dataset_id": "AC_H2_MFI"}),
                ],
                [fetch("AC_H0_MFI")],
                [fetch("AC_H2_MFI")],
                "Stored AC_H2_MFI.BGSEc (24 points).",
            ]
        }
    )
    result = mission_run(
        workspace,
        script,
        "Magnetic field vector",
        mode="task",
        candidates=["AC_H0_MFI", "AC_H2_MFI"],
    )
    assert not result.failed and result.labels == ["AC_H2_MFI.BGSEc"]
    assert [tool for tool, _ in ran(workspace, "mission:ace")] == [
        "list_parameters",
        "list_parameters",
        "fetch_data",
        "fetch_data",
    ]
    # The all-NaN fetch stored data, but the agent was told it is unusable and moved on.
    assert len(result.errors) == 1 and "AC_H0_MFI.BGSEc is all NaN" in result.errors[0]
    skipped = tool_returns(script.seen[2].messages, "fetch_data")[0]
    assert "NoUsableData" in skipped and "all NaN" in skipped
    prompt = user_prompts(script.seen[0].messages)[0]
    assert "Candidate datasets to inspect: AC_H0_MFI, AC_H2_MFI" in prompt
    assert "Task mode" in prompt
    # Task mode forces a tool call on the first request only.
    assert (script.seen[0].info.model_settings or {}).get("tool_choice") == "required"
    assert (script.seen[1].info.model_settings or {}).get("tool_choice") is None


def test_direct_mode_and_the_candidate_marker() -> None:
    assert candidates_in("B field\nCandidate datasets to inspect: AC_H2_MFI, AC_H0_MFI\n") == [
        "AC_H2_MFI",
        "AC_H0_MFI",
    ]
    assert candidates_in("fetch AC_H2_MFI BGSEc") == []


def test_mission_agents_are_cached_per_session_and_fetch_only(workspace: Workspace) -> None:
    agents = MissionAgents(env_for(workspace, Script({})))
    ace = agents.get("ACE")
    assert agents.get("ace") is ace and len(agents) == 1
    assert set(ace.tool_names) == {
        "search_datasets",
        "list_parameters",
        "get_data_availability",
        "browse_datasets",
        "fetch_data",
        "list_fetched_data",
        # where the spacecraft was and its geometry (docs/ephemeris.md)
        "get_ephemeris",
        "spacecraft_separation",
        "magnetic_connectivity",
        "transform_frame",
    }


# -- data ops, extraction, visualization, insight ----------------------------------------


def test_data_ops_thinks_then_executes(workspace: Workspace) -> None:
    workspace.funnel.call("fetch_data", dict(fetch("AC_H2_MFI")[1]), "setup")
    code = "result = df.pow(2).sum(axis=1).pow(0.5).to_frame('Bmag')"
    plan = "Input AC_H2_MFI.BGSEc (nT, 3 columns); magnitude via sqrt of sum of squares; ACE_Bmag."
    script = Script(
        {
            "data_ops.think": [[("describe_data", {"label": "AC_H2_MFI.BGSEc"})], plan],
            "data_ops": [
                [
                    (
                        "custom_operation",
                        {
                            "source_labels": ["AC_H2_MFI.BGSEc"],
                            "code": code,
                            "output_label": "ACE_Bmag",
                            "units": "nT",
                        },
                    )
                ],
                "Stored ACE_Bmag (24 points, nT).",
            ],
        }
    )
    agent = DataOpsAgent(env_for(workspace, script))
    result = run_coroutine(lambda: agent.compute("magnitude of the ACE field", threading.Event()))
    assert not result.failed and result.labels == ["ACE_Bmag"]
    assert result.tools == ["describe_data", "custom_operation"]
    assert ran(workspace, "data_ops.think") == [("describe_data", "ok")]
    assert ran(workspace, "data_ops") == [("custom_operation", "ok")]
    stored = workspace.session.store.get("ACE_Bmag")
    assert stored.units == {"Bmag": "nT"} and stored.points == 24
    execute_prompt = user_prompts(script.requests_of("data_ops")[0].messages)[0]
    assert f"Plan:\n{plan}" in execute_prompt and "AC_H2_MFI.BGSEc: 3 col, nT" in execute_prompt
    think_tools = {t.name for t in script.requests_of("data_ops.think")[0].info.function_tools}
    assert "custom_operation" not in think_tools and "get_function_docs" in think_tools


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF with `text` in Helvetica (enough for pypdf to extract)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def test_extraction_reads_a_named_pdf_and_stores_a_table(
    workspace: Workspace, tmp_path: Path
) -> None:
    pdf = tmp_path / "flares.pdf"
    pdf.write_bytes(minimal_pdf("X5.8 flare 2024-05-10T17:00Z"))
    secret = tmp_path / "other.pdf"
    secret.write_bytes(minimal_pdf("not yours"))
    workspace.session.history.append({"role": "user", "content": f"read {pdf} into a table"})
    records = [{"time": "2024-05-10T17:00Z", "class": "X5.8"}]
    script = Script(
        {
            "data_extraction": [
                [("read_document", {"path": str(secret)})],
                [("read_document", {"path": str(pdf)})],
                [("store_dataframe", {"label": "flares", "records": records})],
                "Stored flares (1 row).",
            ]
        }
    )
    agent = extraction_agent(env_for(workspace, script))
    result = run_coroutine(lambda: agent.arun(f"read {pdf} into a table", threading.Event()))
    assert not result.failed and result.labels == ["flares"]
    refused, read = tool_returns(script.seen[2].messages, "read_document")
    assert "only opens files the user named" in refused
    assert "X5.8 flare 2024-05-10T17:00Z" in read
    frame = workspace.session.store.get("flares").data
    assert isinstance(frame, pd.DataFrame) and isinstance(frame.index, pd.DatetimeIndex)
    assert str(frame.index.tz) == "UTC" and list(frame.columns) == ["class"]


def test_extraction_passes_a_named_image_to_the_model(workspace: Workspace, tmp_path: Path) -> None:
    image = tmp_path / "table.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32)
    workspace.session.history.append({"role": "user", "content": "what is in table.png?"})
    script = Script(
        {"data_extraction": [[("read_document", {"path": str(image)})], "A table of speeds."]}
    )
    agent = extraction_agent(env_for(workspace, script))
    result = run_coroutine(lambda: agent.arun("read table.png", threading.Event()))
    assert not result.failed
    last = script.seen[-1].messages[-1]
    assert isinstance(last, ModelRequest)
    returned = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    assert '"kind":"image"' in str(returned[0].content)
    shown = [p.content for p in last.parts if isinstance(p, UserPromptPart)]
    images = [c for part in shown for c in part if isinstance(c, BinaryContent)]
    assert len(images) == 1 and images[0].media_type == "image/png"
    assert images[0].data == image.read_bytes()


def test_visualization_renders_and_exports_without_a_model(workspace: Workspace) -> None:
    workspace.funnel.call("fetch_data", dict(fetch("AC_H2_MFI", "Magnitude")[1]), "setup")
    figure = {"data": [{"type": "scatter", "data_label": "AC_H2_MFI.Magnitude"}]}
    script = Script({"visualization": [[("render_plotly_json", {"figure": figure})], "Done."]})
    agent = VisualizationAgent(env_for(workspace, script))
    drawn = run_coroutine(lambda: agent.draw("plot AC_H2_MFI.Magnitude", threading.Event()))
    assert not drawn.failed and ran(workspace, "visualization") == [("render_plotly_json", "ok")]
    exported = run_coroutine(lambda: agent.draw("save it as ace.html", threading.Event()))
    assert exported.text.startswith("Exported the figure to") and len(script.seen) == 2
    assert (workspace.session.folder / "exports" / "ace.html").exists()


def test_export_requests_are_recognised() -> None:
    assert export_request("export the plot as png") is not None
    assert export_request("Save the figure to ace_field.pdf") == export_request(
        "save ace_field.pdf"
    )
    found = export_request("please download the figure as PDF")
    assert found is not None and found.format == "pdf" and found.filename is None
    assert export_request("export the data as csv") is None
    assert export_request("plot ACE and export it as png") is None
    assert export_request("show me ACE data") is None


@pytest.mark.skipif(find_browser() is None, reason="no Chrome/Chromium for PNG export")
def test_insight_sends_the_figure_png_and_data_context(workspace: Workspace) -> None:
    workspace.funnel.call("fetch_data", dict(fetch("AC_H2_MFI")[1]), "setup")
    workspace.funnel.call(
        "render_plotly_json", {"figure": {"data": [{"data_label": "AC_H2_MFI.BGSEc"}]}}, "setup"
    )
    script = Script({"insight": ["Overview: a smooth rotation of the field."]})
    agent = InsightAgent(env_for(workspace, script), figure_png)
    result = run_coroutine(lambda: agent.analyze("what do you see?", threading.Event()))
    assert result.text == "Overview: a smooth rotation of the field." and not result.failed
    (seen,) = script.seen
    assert seen.info.function_tools == []
    (prompt,) = [p for p in seen.messages[0].parts if isinstance(p, UserPromptPart)]
    text, image = prompt.content
    assert isinstance(text, str) and '"data_label":"AC_H2_MFI.BGSEc"' in text
    assert '"units":{"BGSEc":"nT"}' in text or "nT" in text
    assert isinstance(image, BinaryContent) and image.data[:8] == b"\x89PNG\r\n\x1a\n"


def test_insight_without_a_figure_fails_clearly(workspace: Workspace) -> None:
    agent = InsightAgent(env_for(workspace, Script({})), lambda figure: b"")
    result = run_coroutine(lambda: agent.analyze("what do you see?", threading.Event()))
    assert result.failed and "no figure to analyse" in result.text
