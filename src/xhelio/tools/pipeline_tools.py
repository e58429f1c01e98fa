"""Pipeline tools: save / run / search / list / delete saved pipelines, and the live DAG.

Category `pipeline` (saved pipelines) and `pipeline_ops` (the current session's DAG). The
orchestrator and the planner are given these tools; sub-agents are not (each sub-agent
names its own tools). Replays run through a funnel on the same session, registry,
operations log and event bus as the caller's, with caller "pipeline".
"""

from __future__ import annotations

from typing import Any, Literal

from xhelio.errors import UserError, XhelioError
from xhelio.pipelines.dag import load_dag, save_dag
from xhelio.pipelines.extract import extract_pipeline
from xhelio.pipelines.model import TIME_RANGE_VAR, Pipeline
from xhelio.pipelines.replay import replay_pipeline
from xhelio.pipelines.store import PipelineStore
from xhelio.tools.context import ToolContext
from xhelio.tools.funnel import ToolFunnel
from xhelio.tools.registry import tool

__all__ = [
    "MODIFY_INSTRUCTION",
    "PIPELINE_TOOLS",
    "PIPELINE_TOOL_NAMES",
    "session_funnel",
    "store_missions",
]

MODIFY_INSTRUCTION = (
    "The pipeline has been executed. The data and plot are ready. Apply ONLY the user's "
    "requested modifications — do not re-fetch data or re-plot unless the modification "
    "requires it. To swap a mission, read each step's intent and use the equivalent "
    "dataset and parameter of the other spacecraft. To keep the result, call save_pipeline "
    "with variant_of set to this pipeline's id."
)


def session_funnel(ctx: ToolContext) -> ToolFunnel:
    """The funnel of the context's session: same registry, operations log and events."""
    if ctx.funnel is None:
        raise UserError("Pipelines replay only in a workspace's session (open_workspace).")
    return ctx.funnel


def store_missions(ctx: ToolContext, pipeline: Pipeline) -> list[str]:
    """Mission names of a pipeline's datasets from the catalog (unknown ones skipped)."""
    names: list[str] = []
    for dataset in pipeline.datasets:
        try:
            mission = ctx.catalog.dataset(dataset).mission_id
        except XhelioError:  # a dataset missing from the catalog just adds nothing
            continue
        if mission and mission not in names:
            names.append(mission)
    return names


def _last_request_ops(ctx: ToolContext) -> list[dict[str, Any]]:
    """Operations of the last finished request (a completed plan runs within one request).

    While a request is in progress (the history ends with its user message, as when the
    user says "save the plan as a pipeline"), the request before it is the one meant.
    """
    history = ctx.session.history
    asked = [i for i, h in enumerate(history) if h.get("role") == "user"]
    in_progress = bool(asked) and asked[-1] == len(history) - 1
    done = asked[:-1] if in_progress else asked
    if not done:
        return list(ctx.session.operations)
    start = float(history[done[-1]].get("ts") or 0.0)
    end = float(history[asked[-1]].get("ts") or 0.0) if in_progress else float("inf")
    return [op for op in ctx.session.operations if start <= float(op.get("started", 0)) < end]


@tool("pipeline")
def save_pipeline(
    ctx: ToolContext,
    name: str,
    description: str = "",
    step_seqs: list[int] | None = None,
    intents: dict[int, str] | None = None,
    scope: Literal["session", "last_request"] = "session",
    variant_of: str | None = None,
) -> dict[str, Any]:
    """Save this session's analysis as a replayable pipeline (fetch, compute, plot steps).

    Failed and exploratory calls are dropped and the time range becomes $TIME_RANGE.

    Args:
        name: Name to find it by, e.g. 'ACE overview'.
        description: What the analysis shows.
        step_seqs: Optional: sequence numbers of the operations to keep (default: chosen
            automatically from what the figure needs).
        intents: Optional: intent text per operation sequence number.
        scope: 'session' (all operations) or 'last_request' (e.g. the plan just completed).
        variant_of: Id or name of the saved pipeline this one modifies (after run_pipeline
            with modifications): recorded as its parent.
    """
    operations = ctx.session.operations if scope == "session" else _last_request_ops(ctx)
    pipeline = extract_pipeline(
        operations,
        name,
        description=description,
        select=step_seqs,
        intents=intents,
        source_session=ctx.session.id,
    )
    store = PipelineStore(ctx.settings)
    if variant_of:
        pipeline.parent_id = store.resolve(variant_of).id
    row = store.save(pipeline, store_missions(ctx, pipeline))
    family = store.family(row.family_id)
    return {
        **row.to_dict(),
        "variables": {k: v.to_dict() for k, v in pipeline.variables.items()},
        "step_list": [f"{s.step_id} {s.tool}: {s.intent}" for s in pipeline.steps],
        "family_size": len(family),
        "note": ""
        if row.to_dict()["indexed"]
        else ("Saved, but not indexed for search: fewer than 3 fetches and no computation."),
    }


@tool("pipeline", time_args=("time_range",), runs_code=True)
def run_pipeline(
    ctx: ToolContext,
    pipeline: str,
    time_range: str | None = None,
    variable_overrides: dict[str, str] | None = None,
    modifications: str | None = None,
) -> dict[str, Any]:
    """Replay a saved pipeline (id or name) for a new time range, without any model.

    With `modifications`, it replays first and returns the pipeline's step-by-step
    context: then apply ONLY the requested change (e.g. another spacecraft, a colour).

    Args:
        pipeline: Pipeline id (pl_...) or name.
        time_range: New time range, e.g. 'March 2001'.
        variable_overrides: Other variables, e.g. {"$TIME_RANGE": "2001-03-01 to 2001-03-05"}.
        modifications: What to change relative to the saved pipeline.
    """
    saved = PipelineStore(ctx.settings).load(pipeline)
    overrides = dict(variable_overrides or {})
    if time_range:
        if TIME_RANGE_VAR not in saved.variables:
            raise UserError(f"Pipeline {saved.id} has no time range to change.")
        overrides[TIME_RANGE_VAR] = time_range
    result = replay_pipeline(saved, session_funnel(ctx), overrides)
    out = {**result.to_dict(), "name": saved.name}
    if result.status == "failed":
        out["status"] = "error"
        out["type"] = "PipelineFailed"
        out["message"] = result.summary()
    if modifications:
        out["modifications"] = modifications
        out["pipeline_context"] = saved.to_llm_context()
        out["instruction"] = MODIFY_INSTRUCTION
    return out


@tool("pipeline")
def search_pipelines(
    ctx: ToolContext,
    query: str = "",
    mission: str | None = None,
    dataset: str | None = None,
    limit: int = 10,
) -> dict[str, Any]:
    """Search saved pipelines by words, mission or dataset; variants come grouped by family.

    Args:
        query: Words from the name, description or step intents.
        mission: Mission name or id, e.g. ACE.
        dataset: Dataset id, e.g. AC_H2_MFI.
        limit: Maximum families.
    """
    hits = PipelineStore(ctx.settings).search(query, mission, dataset, max(1, min(limit, 50)))
    return {"families": [h.to_dict() for h in hits]}


@tool("pipeline")
def list_pipelines(ctx: ToolContext) -> dict[str, Any]:
    """List every saved pipeline, newest first, with its family and whether it is indexed."""
    return {"pipelines": [r.to_dict() for r in PipelineStore(ctx.settings).list()]}


@tool("pipeline")
def delete_pipeline(ctx: ToolContext, pipeline: str) -> dict[str, Any]:
    """Delete a saved pipeline.

    Args:
        pipeline: Pipeline id (pl_...) or name.
    """
    row = PipelineStore(ctx.settings).delete(pipeline)
    return {"deleted": row.id, "name": row.name}


@tool("pipeline_ops")
def get_pipeline_info(
    ctx: ToolContext, node_id: str | None = None, list_library: bool = False
) -> dict[str, Any]:
    """Inspect the current session's pipeline DAG: summary, one node in full, or the ops library.

    Args:
        node_id: A node to show in full (arguments, code, matching library entries).
        list_library: Show the most used saved operations instead.
    """
    if list_library:
        entries = ctx.ops_library.top(20)
        return {
            "library": [
                {"id": e.id, "description": e.description, "use_count": e.use_count, "code": e.code}
                for e in entries
            ]
        }
    dag = load_dag(ctx.session)
    save_dag(ctx.session, dag)
    if node_id:
        return dag.detail(node_id, ctx.ops_library)
    return dag.summary()


@tool("pipeline_ops")
def modify_pipeline_node(
    ctx: ToolContext,
    action: Literal[
        "update_params", "remove", "insert_after", "apply_library_op", "save_to_library"
    ],
    node_id: str,
    params: dict[str, Any] | None = None,
    code: str | None = None,
    output_label: str | None = None,
    description: str = "",
    library_id: str | None = None,
) -> dict[str, Any]:
    """Change one node of the session's DAG; descendants become stale until execute_pipeline.

    Args:
        action: update_params, remove, insert_after, apply_library_op or save_to_library.
        node_id: The node to act on, e.g. s003.
        params: For update_params: arguments to change, e.g. {"code": "...",
            "description": "B smoothed over 10 min"} (a new description is the new intent).
        code: For insert_after: the code of the new computation.
        output_label: For insert_after: label of the new result.
        description: For insert_after / save_to_library: what the code does.
        library_id: For apply_library_op: the ops library entry to use.
    """
    dag = load_dag(ctx.session)
    out: dict[str, Any] = {"action": action, "node_id": node_id}
    if action == "update_params":
        out["stale"] = dag.update_params(node_id, params or {})
    elif action == "remove":
        dag.remove(node_id)
    elif action == "insert_after":
        if not code:
            raise UserError("insert_after needs code for the new computation.")
        out["inserted"] = dag.insert_after(node_id, code, output_label, description).step_id
    elif action == "apply_library_op":
        entry = ctx.ops_library.get(library_id or "")
        if entry is None:
            raise UserError(
                f"No ops library entry {library_id!r}; see get_pipeline_info(list_library=true)."
            )
        node = dag.node(node_id)
        if node.tool != "custom_operation":
            raise UserError(f"{node_id} is a {node.tool}; library code applies to computations.")
        text = str(node.args.get("description") or entry.description)
        out["stale"] = dag.update_params(
            node_id, {"code": entry.code, "description": f"{text} [from {entry.id}]"}
        )
    else:
        node = dag.node(node_id)
        if node.tool != "custom_operation":
            raise UserError(f"{node_id} is a {node.tool}; only computations have code to save.")
        saved = ctx.ops_library.record(
            str(node.args.get("code", "")),
            description or str(node.args.get("description", "")),
            list(node.args.get("source_labels") or []),
        )
        if saved is None:
            raise UserError(
                "Not saved: the library keeps code of 5 or more lines with a description."
            )
        out["library_id"] = saved.id
    save_dag(ctx.session, dag)
    out["pipeline"] = dag.summary()["nodes"]
    return out


@tool("pipeline_ops")
def execute_pipeline(ctx: ToolContext, use_cache: bool = True) -> dict[str, Any]:
    """Re-run the session DAG's modified and stale nodes; unchanged outputs skip descendants.

    Args:
        use_cache: False re-runs every node.
    """
    dag = load_dag(ctx.session)
    result = dag.execute(ctx.session, session_funnel(ctx), use_cache)
    save_dag(ctx.session, dag)
    return result


PIPELINE_TOOLS = [
    save_pipeline,
    run_pipeline,
    search_pipelines,
    list_pipelines,
    delete_pipeline,
    get_pipeline_info,
    modify_pipeline_node,
    execute_pipeline,
]
PIPELINE_TOOL_NAMES = tuple(t.name for t in PIPELINE_TOOLS)
"""What the orchestrator and the planner are offered (sub-agents are not)."""
