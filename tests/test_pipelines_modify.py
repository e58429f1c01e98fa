"""LLM-mediated replay with a scripted model: mission swap by intents, style-only variants."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pipeline_support import (
    MARCH,
    SMOOTH_CODE,
    figure,
    make_session,
    open_fresh,
)
from xhelio.agents.pipeline_modify import MODIFY_TOOLS, replay_with_modifications
from xhelio.config import load_settings
from xhelio.errors import UserError
from xhelio.pipelines.extract import extract_pipeline
from xhelio.pipelines.model import TIME_RANGE_VAR, Pipeline
from xhelio.pipelines.store import PipelineStore
from xhelio.tools.workspace import Workspace

Turn = Callable[[str], list[tuple[str, dict[str, Any]]] | str]


def scripted(turns: list[Turn], seen: list[str], tools: list[set[str]]) -> FunctionModel:
    """A model that answers each request with the next turn, given the first prompt."""

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(
            str(p.content)
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, UserPromptPart)
        )
        seen.append(prompt)
        seen.append(info.instructions or "")
        tools.append({t.name for t in info.function_tools})
        step = turns.pop(0)(prompt)
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        return ModelResponse(parts=[ToolCallPart(name, args) for name, args in step])

    return FunctionModel(reply)


def _range_in(prompt: str) -> str:
    found = re.search(r"Exact time_range for tool calls: (\S+Z to \S+Z)$", prompt, re.M)
    assert found, prompt
    return found.group(1)


def _saved(pl_workspace: Workspace) -> Pipeline:
    make_session(pl_workspace)
    pipeline = extract_pipeline(pl_workspace.session.operations, "ACE overview")
    PipelineStore(load_settings()).save(pipeline)
    return pipeline


def test_run_my_ace_pipeline_for_wind_instead(pl_workspace: Workspace) -> None:
    pipeline = _saved(pl_workspace)

    def swap(prompt: str) -> list[tuple[str, dict[str, Any]]]:
        # the model reads the intents: |B| and the GSE vector from ACE's MFI
        assert "Fetch Magnitude" in prompt and "Fetch BGSEc" in prompt
        assert "use Wind instead" in prompt
        window = _range_in(prompt)
        return [
            (
                "fetch_data",
                {"dataset_id": "WI_H0_MFI", "parameter_id": "BF1", "time_range": window},
            ),
            (
                "fetch_data",
                {"dataset_id": "WI_H0_MFI", "parameter_id": "BGSE", "time_range": window},
            ),
        ]

    def recompute(prompt: str) -> list[tuple[str, dict[str, Any]]]:
        return [
            (
                "custom_operation",
                {
                    "source_labels": ["WI_H0_MFI.BGSE"],
                    "code": SMOOTH_CODE,
                    "output_label": "B_smooth",
                    "description": "Wind B smoothed over 30 minutes",
                },
            )
        ]

    def replot(prompt: str) -> list[tuple[str, dict[str, Any]]]:
        spec = figure(_range_in(prompt))
        spec["data"][0]["data_label"] = "WI_H0_MFI.BF1"
        spec["layout"]["title"]["text"] = spec["layout"]["title"]["text"].replace("ACE", "Wind")
        return [("render_plotly_json", {"figure": spec})]

    seen: list[str] = []
    offered: list[set[str]] = []
    model = scripted([swap, recompute, replot, lambda _: "Swapped ACE for Wind."], seen, offered)
    store = PipelineStore(load_settings())
    ws = open_fresh()
    try:
        out = replay_with_modifications(
            pipeline,
            ws.funnel,
            "use Wind instead of ACE",
            model,
            {TIME_RANGE_VAR: MARCH},
            save_as="Wind overview",
            store=store,
        )
        assert out.replay.status == "completed"
        assert out.usage.requests == 4 and out.answer == "Swapped ACE for Wind."
        assert out.calls == ["fetch_data", "fetch_data", "custom_operation", "render_plotly_json"]
        assert "Apply ONLY the user's requested modifications" in seen[1]  # instructions
        assert "Fetch BGSEc (nT) from dataset AC_H2_MFI" in seen[0]  # to_llm_context
        assert offered[0] == set(MODIFY_TOOLS)
        variant = out.variant
        assert variant is not None and out.saved and variant.parent_id == pipeline.id
        assert variant.datasets == ["WI_H0_MFI"]  # the ACE fetches were superseded
        assert variant.variables[TIME_RANGE_VAR].default.startswith("2001-03-01")
        plot = ws.session.plot.current
        assert plot is not None and {t.data_label for t in plot.traces} >= {"WI_H0_MFI.BF1"}
        # other data logic: a family of its own
        assert store.row(variant.id).family_id != store.row(pipeline.id).family_id
        assert store.load("Wind overview").id == variant.id
    finally:
        ws.close()


def test_a_style_change_touches_only_the_figure_and_stays_in_the_family(
    pl_workspace: Workspace,
) -> None:
    pipeline = _saved(pl_workspace)

    def restyle(prompt: str) -> list[tuple[str, dict[str, Any]]]:
        spec = figure(_range_in(prompt))
        spec["data"][1]["line"] = {"color": "red"}
        return [("render_plotly_json", {"figure": spec})]

    seen: list[str] = []
    model = scripted([restyle, lambda _: "The smoothed field is red now."], seen, [])
    store = PipelineStore(load_settings())
    ws = open_fresh()
    try:
        out = replay_with_modifications(
            pipeline,
            ws.funnel,
            "make the smoothed line red",
            model,
            {TIME_RANGE_VAR: MARCH},
            save_as="ACE overview red",
            store=store,
        )
        assert out.calls == ["render_plotly_json"]  # no re-fetch, no recompute
        fetches = [op for op in ws.session.operations if op["tool"] == "fetch_data"]
        assert {op["caller"] for op in fetches} == {"pipeline"}
        assert out.variant is not None
        family = store.family(store.row(pipeline.id).family_id)
        assert [r.id for r in family] == [pipeline.id, out.variant.id]
        hits = store.search("ACE overview")
        assert [[v.id for v in h.variants] for h in hits] == [[pipeline.id, out.variant.id]]
    finally:
        ws.close()


def test_an_empty_modification_is_refused(pl_workspace: Workspace) -> None:
    pipeline = _saved(pl_workspace)
    with pytest.raises(UserError, match="Say what to change"):
        replay_with_modifications(pipeline, pl_workspace.funnel, "  ", scripted([], [], []))


def test_through_the_tools_the_caller_applies_the_change_and_saves_a_variant(
    pl_workspace: Workspace,
) -> None:
    pipeline = _saved(pl_workspace)
    ws = open_fresh()
    try:
        out = ws.funnel.call(
            "run_pipeline",
            {"pipeline": "ACE overview", "time_range": MARCH, "modifications": "red line"},
            caller="orchestrator",
        ).to_dict()
        assert out["status"] == "completed" and "variant_of" in out["instruction"]
        assert "s004 render_plotly_json" in out["pipeline_context"]
        spec = figure(out["variables"][TIME_RANGE_VAR])
        spec["data"][1]["line"] = {"color": "red"}
        assert (
            ws.funnel.call("render_plotly_json", {"figure": spec}, caller="orchestrator").status
            == "ok"
        )
        saved = ws.funnel.call(
            "save_pipeline",
            {"name": "ACE overview red", "variant_of": "ACE overview"},
            caller="orchestrator",
        ).to_dict()
        assert saved["parent_id"] == pipeline.id and saved["family_size"] == 2
        red = PipelineStore(load_settings()).load("ACE overview red")
        assert red.steps[-1].args["figure"]["data"][1]["line"] == {"color": "red"}
        bad = ws.funnel.call(
            "save_pipeline", {"name": "x", "variant_of": "Nope"}, caller="t"
        ).to_dict()
        assert bad["status"] == "error" and "Nope" in bad["message"]
    finally:
        ws.close()
