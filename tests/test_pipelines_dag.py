"""The live DAG through the pipeline tools: staleness, backdating, edits, ops library."""

from __future__ import annotations

from typing import Any

import pandas as pd

from pipeline_support import (
    SMOOTH_10MIN,
    SMOOTH_CODE,
    make_session,
)
from xhelio.tools.workspace import Workspace


def call(ws: Workspace, tool: str, **args: Any) -> dict[str, Any]:
    result = ws.funnel.call(tool, args, caller="orchestrator").to_dict()
    assert result.get("status") != "error", result
    return result


def node_of(ws: Workspace, tool: str) -> str:
    nodes = call(ws, "get_pipeline_info")["nodes"]
    return next(n["node_id"] for n in nodes if n["tool"] == tool)


def new_calls(ws: Workspace, since: int) -> list[str]:
    return [op["tool"] for op in ws.session.operations[since:] if op["caller"] == "pipeline"]


def test_summary_and_node_detail_with_code(pl_workspace: Workspace) -> None:
    make_session(pl_workspace)
    nodes = call(pl_workspace, "get_pipeline_info")["nodes"]
    assert [n["tool"] for n in nodes] == [
        "fetch_data",
        "fetch_data",
        "custom_operation",
        "render_plotly_json",
    ]
    assert all(n["status"] == "done" for n in nodes)
    detail = call(
        pl_workspace, "get_pipeline_info", node_id=node_of(pl_workspace, "custom_operation")
    )
    assert detail["args"]["code"] == SMOOTH_CODE
    # the 6-line smoothing went into the ops library when it ran, and the node sees it
    assert [m["same_code"] for m in detail["library_matches"]] == [True]


def test_new_window_reruns_only_the_compute_and_the_plot(pl_workspace: Workspace) -> None:
    make_session(pl_workspace)
    smooth = node_of(pl_workspace, "custom_operation")
    before = pl_workspace.session.store.get("B_smooth").data.copy()
    changed = call(
        pl_workspace,
        "modify_pipeline_node",
        action="update_params",
        node_id=smooth,
        params={"code": SMOOTH_10MIN, "description": "ACE B smoothed over 10 minutes"},
    )
    assert changed["stale"] == [node_of(pl_workspace, "render_plotly_json")]
    statuses = {n["node_id"]: n["status"] for n in changed["pipeline"]}
    assert statuses[smooth] == "dirty"
    intents = {n["node_id"]: n["intent"] for n in changed["pipeline"]}
    assert intents[smooth] == "ACE B smoothed over 10 minutes"
    start = len(pl_workspace.session.operations)
    result = call(pl_workspace, "execute_pipeline")
    assert new_calls(pl_workspace, start) == ["custom_operation", "render_plotly_json"]
    assert result["backdated"] == [] and result["still_stale"] == []
    after = pl_workspace.session.store.get("B_smooth").data
    assert isinstance(after, pd.DataFrame) and not after.equals(before)
    # nothing is stale any more: a second execute runs nothing
    start = len(pl_workspace.session.operations)
    assert call(pl_workspace, "execute_pipeline")["ran"] == []
    assert new_calls(pl_workspace, start) == []
    # saved now, the pipeline has the new window and says so
    saved = call(pl_workspace, "save_pipeline", name="ACE 10 min")
    assert any("smoothed over 10 minutes" in s for s in saved["step_list"])


def test_unchanged_output_backdates_its_descendants(pl_workspace: Workspace) -> None:
    make_session(pl_workspace)
    smooth = node_of(pl_workspace, "custom_operation")
    same_result = SMOOTH_CODE.replace("# keep the column names", "# same output, new comment")
    call(
        pl_workspace,
        "modify_pipeline_node",
        action="update_params",
        node_id=smooth,
        params={"code": same_result},
    )
    start = len(pl_workspace.session.operations)
    result = call(pl_workspace, "execute_pipeline")
    assert new_calls(pl_workspace, start) == ["custom_operation"]
    assert result["backdated"] == [node_of(pl_workspace, "render_plotly_json")]


def test_insert_after_rewires_the_plot_and_remove_guards_dependents(
    pl_workspace: Workspace,
) -> None:
    make_session(pl_workspace)
    smooth = node_of(pl_workspace, "custom_operation")
    inserted = call(
        pl_workspace,
        "modify_pipeline_node",
        action="insert_after",
        node_id=smooth,
        code="result = df * 2",
        output_label="B_double",
    )["inserted"]
    start = len(pl_workspace.session.operations)
    call(pl_workspace, "execute_pipeline")
    assert new_calls(pl_workspace, start) == ["custom_operation", "render_plotly_json"]
    plot = pl_workspace.session.plot.current
    assert plot is not None and any(t.data_label == "B_double" for t in plot.traces)
    refused = pl_workspace.funnel.call(
        "modify_pipeline_node", {"action": "remove", "node_id": inserted}, caller="orchestrator"
    ).to_dict()
    assert refused["status"] == "error" and "use its output" in refused["message"]


def test_library_save_apply_and_reuse_counts(pl_workspace: Workspace) -> None:
    make_session(pl_workspace)
    smooth = node_of(pl_workspace, "custom_operation")
    longer = SMOOTH_10MIN + "result = result.dropna(how='all')\n"
    call(
        pl_workspace,
        "modify_pipeline_node",
        action="update_params",
        node_id=smooth,
        params={"code": longer},
    )
    saved = call(
        pl_workspace,
        "modify_pipeline_node",
        action="save_to_library",
        node_id=smooth,
        description="ACE B smoothed over 10 minutes without empty rows",
    )
    entry_id = saved["library_id"]
    library = call(pl_workspace, "get_pipeline_info", list_library=True)["library"]
    assert entry_id in [e["id"] for e in library]
    count = next(e["use_count"] for e in library if e["id"] == entry_id)
    call(
        pl_workspace,
        "modify_pipeline_node",
        action="apply_library_op",
        node_id=smooth,
        library_id=entry_id,
    )
    call(pl_workspace, "execute_pipeline")
    ran = [op for op in pl_workspace.session.operations if op["tool"] == "custom_operation"][-1]
    assert f"[from {entry_id}]" in ran["args"]["description"]
    library = call(pl_workspace, "get_pipeline_info", list_library=True)["library"]
    assert next(e["use_count"] for e in library if e["id"] == entry_id) > count


def test_the_dag_survives_a_restart(pl_workspace: Workspace) -> None:
    make_session(pl_workspace)
    smooth = node_of(pl_workspace, "custom_operation")
    call(
        pl_workspace,
        "modify_pipeline_node",
        action="update_params",
        node_id=smooth,
        params={"code": SMOOTH_10MIN},
    )
    pl_workspace.save()
    from pipeline_support import open_workspace  # the same session id, re-opened

    again = open_workspace(pl_workspace.session.id)
    try:
        nodes = call(again, "get_pipeline_info")["nodes"]
        assert {n["node_id"]: n["status"] for n in nodes}[smooth] == "dirty"
    finally:
        again.close()


def test_save_only_what_the_last_request_did(pl_workspace: Workspace) -> None:
    import time

    make_session(pl_workspace)  # an earlier request: fetches, smoothing, figure
    history = pl_workspace.session.history
    history.append({"role": "user", "content": "the plan", "ts": time.time()})
    call(
        pl_workspace,
        "fetch_data",
        dataset_id="AC_H2_MFI",
        parameter_id="BGSM",
        time_range="2001-01-01 to 2001-01-02",
    )
    history.append({"role": "assistant", "content": "done", "ts": time.time()})
    history.append({"role": "user", "content": "save the plan as a pipeline", "ts": time.time()})
    plan = call(pl_workspace, "save_pipeline", name="plan only", scope="last_request")
    assert plan["step_list"] == ["s001 fetch_data: Fetch BGSM (nT) from dataset AC_H2_MFI"]
    whole = call(pl_workspace, "save_pipeline", name="whole session")
    assert len(whole["step_list"]) == 4 and "BGSM" not in " ".join(whole["step_list"])
