"""Extraction from a real, messy session; the document model; families and vanilla."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pipeline_support import (
    JANUARY,
    make_session,
)
from xhelio.errors import UserError
from xhelio.pipelines.extract import extract_pipeline
from xhelio.pipelines.model import TIME_RANGE_VAR, Pipeline, PipelineStep, phase_of
from xhelio.tools.meaning import backfill_meaning
from xhelio.tools.toolset import default_registry
from xhelio.tools.workspace import Workspace


def logged(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hand-written log records with the meaning the funnel records from the tool specs."""
    backfill_meaning(records, default_registry())
    return records


def test_messy_session_becomes_a_clean_parameterised_dag(pl_workspace: Workspace) -> None:
    results = make_session(pl_workspace)
    assert results[1]["status"] == "error"  # the failed fetch really failed
    pipeline = extract_pipeline(pl_workspace.session.operations, "ACE overview")
    tools = [s.tool for s in pipeline.steps]
    # search, the failed fetch, the unplotted SC_pos_GSE fetch and describe are gone
    assert tools == ["fetch_data", "fetch_data", "custom_operation", "render_plotly_json"]
    assert [s.args.get("parameter_id") for s in pipeline.steps[:2]] == ["Magnitude", "BGSEc"]
    fetch_b, smooth, render = pipeline.steps[1], pipeline.steps[2], pipeline.steps[3]
    assert smooth.depends_on == [fetch_b.step_id]
    assert render.depends_on == sorted([pipeline.steps[0].step_id, smooth.step_id])
    assert smooth.produces == ["B_smooth"]
    assert [s.phase for s in pipeline.steps] == ["appropriation"] * 3 + ["presentation"]
    assert all(s.args["time_range"] == TIME_RANGE_VAR for s in pipeline.steps[:2])
    title = render.args["figure"]["layout"]["title"]["text"]
    assert title.endswith(TIME_RANGE_VAR) and JANUARY not in title
    assert pipeline.variables[TIME_RANGE_VAR].default == (
        "2001-01-01T00:00:00Z to 2001-01-05T00:00:00Z"  # the end day is included
    )
    assert "BGSEc" in fetch_b.intent and "30 minutes" in smooth.intent
    assert "rolling" in smooth.args["code"]  # code is never parameterised


def test_a_relative_range_is_resolved_when_it_was_recorded() -> None:
    op = {
        "seq": 1,
        "tool": "fetch_data",
        "status": "ok",
        "started": 1_000_000_000.0,  # 2001-09-09
        "args": {"dataset_id": "AC_H2_MFI", "parameter_id": "Magnitude", "time_range": "last week"},
        "result": {"label": "AC_H2_MFI.Magnitude"},
    }
    pipeline = extract_pipeline(logged([op]), "relative")
    assert pipeline.variables[TIME_RANGE_VAR].default.startswith("2001-09-0")


def test_model_can_choose_steps_and_intents(pl_workspace: Workspace) -> None:
    make_session(pl_workspace)
    ops = pl_workspace.session.operations
    fetch_seq = next(op["seq"] for op in ops if op["args"].get("parameter_id") == "SC_pos_GSE")
    pipeline = extract_pipeline(
        ops, "position", select=[fetch_seq], intents={fetch_seq: "Spacecraft position"}
    )
    assert [s.intent for s in pipeline.steps] == ["Spacecraft position"]
    with pytest.raises(UserError, match="not successful"):
        extract_pipeline(ops, "bad", select=[2])  # seq 2 is the failed fetch


def test_nothing_to_save_is_a_clear_error() -> None:
    with pytest.raises(UserError, match="nothing to save"):
        search = {"seq": 1, "tool": "search_datasets", "status": "ok", "args": {}}
        extract_pipeline(logged([search]), "x")


def _step(sid: str, tool: str, args: dict[str, object], deps: list[str]) -> PipelineStep:
    spec = default_registry().get(tool)
    assert spec is not None
    return PipelineStep(
        sid,
        tool,
        dict(args),
        produces=[str(args.get("output_label", ""))],
        depends_on=deps,
        phase=phase_of(spec.phase),
        tool_phase=spec.phase,
    )


def test_fingerprint_ignores_step_ids_names_and_figures() -> None:
    fetch = {"dataset_id": "AC_H2_MFI", "parameter_id": "BGSEc", "time_range": TIME_RANGE_VAR}
    comp = {"source_labels": ["AC_H2_MFI.BGSEc"], "code": "result = df", "output_label": "B"}
    a = Pipeline(
        "pl_a",
        "one",
        [
            _step("s001", "fetch_data", fetch, []),
            _step("s002", "custom_operation", comp, ["s001"]),
            _step("s003", "render_plotly_json", {"figure": {"data": []}}, ["s002"]),
        ],
    )
    b = Pipeline(
        "pl_b",
        "two",
        [
            _step("x7", "fetch_data", fetch, []),
            _step("x9", "custom_operation", comp, ["x7"]),
            _step("x10", "manage_plot", {"action": "export"}, ["x9"]),
        ],
    )
    assert a.appropriation_fingerprint() == b.appropriation_fingerprint()
    b.steps[1].args = {**comp, "code": "result = df * 2"}
    assert a.appropriation_fingerprint() != b.appropriation_fingerprint()
    assert not a.is_vanilla()  # a transform
    plain = Pipeline("pl_c", "plain", [_step("s001", "fetch_data", fetch, [])])
    assert plain.is_vanilla()


def test_documents_round_trip_and_seed_002_documents_migrate() -> None:
    seed = {
        "id": "pl_ace_overview",
        "name": "ACE B-field Overview",
        "variables": {"$TIME_RANGE": {"type": "time_range", "default": "last 7 days"}},
        "steps": [
            {
                "step_id": 1,
                "tool_name": "fetch_data",
                "tool_args": {
                    "dataset_id": "AC_H2_MFI",
                    "parameter_id": "BGSEc",
                    "time_range": "$TIME_RANGE",
                },
                "intent": "Fetch ACE B",
                "produces": ["AC_H2_MFI.BGSEc"],
                "depends_on": [],
                "critical": True,
            },
            {
                "step_id": 2,
                "tool_name": "render_plotly_json",
                "tool_args": {"figure": {}},
                "intent": "Plot",
                "depends_on": [1],
                "critical": False,
            },
        ],
    }
    migrated = Pipeline.from_dict(seed)
    assert [s.step_id for s in migrated.steps] == ["s001", "s002"]
    assert migrated.steps[1].depends_on == ["s001"]
    assert migrated.steps[1].phase == "presentation" and not migrated.steps[1].critical
    again = Pipeline.from_dict(json.loads(json.dumps(migrated.to_dict())))
    assert again.to_dict() == migrated.to_dict()
    with pytest.raises(UserError, match="newer xhelio"):
        Pipeline.from_dict({**migrated.to_dict(), "schema_version": 99})


def test_llm_context_names_steps_intents_and_phases(pl_workspace: Workspace) -> None:
    make_session(pl_workspace)
    text = extract_pipeline(pl_workspace.session.operations, "ACE").to_llm_context()
    assert "Appropriation phase" in text and "Presentation phase" in text
    assert "s003 custom_operation after s002 -> B_smooth" in text
    assert "$TIME_RANGE" in text


def test_a_label_fetched_again_after_the_plot_keeps_the_fetch_the_plot_used() -> None:
    def fetch(seq: int, time_range: str) -> dict[str, object]:
        args = {"dataset_id": "AC_H2_MFI", "parameter_id": "Magnitude", "time_range": time_range}
        result = {"label": "AC_H2_MFI.Magnitude"}
        return {"seq": seq, "tool": "fetch_data", "status": "ok", "args": args, "result": result}

    figure = {"data": [{"type": "scatter", "data_label": "AC_H2_MFI.Magnitude"}]}
    render = {
        "seq": 2,
        "tool": "render_plotly_json",
        "status": "ok",
        "args": {"figure": figure},
        "result": {},
    }
    # A later turn fetched the same label for another range (and its computation failed).
    ops = [fetch(1, "2001-01-01 to 2001-01-03"), render, fetch(3, "2001-06-01 to 2001-06-09")]
    pipeline = extract_pipeline(logged(ops), "ace")
    assert [s.tool for s in pipeline.steps] == ["fetch_data", "render_plotly_json"]
    assert pipeline.steps[1].depends_on == [pipeline.steps[0].step_id]
    assert pipeline.variables[TIME_RANGE_VAR].default.startswith("2001-01-01")


def test_a_title_naming_the_range_as_people_read_it_follows_the_new_range() -> None:
    iso = "2024-01-15T00:00:00Z to 2024-01-17T00:00:00Z"
    args = {"dataset_id": "AC_H2_MFI", "parameter_id": "Magnitude", "time_range": iso}
    fetch = {"seq": 1, "tool": "fetch_data", "status": "ok", "args": args}
    fetch["result"] = {"label": "AC_H2_MFI.Magnitude"}
    figure = {
        "data": [{"type": "scatter", "data_label": "AC_H2_MFI.Magnitude"}],
        "layout": {"title": {"text": "ACE |B|, 2024-01-15 to 2024-01-16"}},
    }
    render = {"seq": 2, "tool": "render_plotly_json", "status": "ok", "args": {"figure": figure}}
    pipeline = extract_pipeline(logged([fetch, {**render, "result": {}}]), "ace")
    title = pipeline.steps[1].args["figure"]["layout"]["title"]["text"]
    assert title == f"ACE |B|, {TIME_RANGE_VAR}"
