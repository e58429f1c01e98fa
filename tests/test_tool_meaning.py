"""Tool specs carry meaning: the funnel records it, wrappers compose around the funnel."""

from __future__ import annotations

from typing import Any

import pytest

from xhelio.operations import Operation, ToolResult, label_mentions
from xhelio.session.events import EventBus
from xhelio.tools.funnel import ToolFunnel
from xhelio.tools.meaning import backfill_meaning
from xhelio.tools.registry import Produces, Tool, ToolOutput, ToolRegistry, tool
from xhelio.tools.toolset import default_registry
from xhelio.tools.wrappers import GuardedToolset, PolicyToolset, TurnToolset, TurnUsage


class Store:
    def __init__(self) -> None:
        self.data: dict[str, float] = {"wind.v": 400.0}


class Made(ToolOutput):
    label: str
    value: float


@tool("data_ops_fetch", produces=Produces(result_field="label"), time_args=("when",), result=Made)
def load(ctx: Store, name: str, when: str) -> dict[str, Any]:
    """Load a value.

    Args:
        name: What to load.
        when: A time range.
    """
    ctx.data[f"{name}.v"] = 1.0
    return {"label": f"{name}.v", "value": 1.0}


@tool("data_ops_compute", produces=Produces(argument="out"), reads=("inputs",))
def add(ctx: Store, inputs: list[str], out: str) -> dict[str, Any]:
    """Add values.

    Args:
        inputs: Labels (or label.column) to add.
        out: The new label.
    """
    ctx.data[out] = sum(ctx.data[i.split(".col")[0]] for i in inputs)
    return {"total": ctx.data[out]}


@tool("data_ops_fetch", result=Made)
def liar(ctx: Store) -> dict[str, Any]:
    """Return a result that breaks its own declared model."""
    return {"value": "not a number"}


def funnel() -> tuple[ToolFunnel, Store]:
    store = Store()
    registry = ToolRegistry([load, add, liar])
    return ToolFunnel(registry, store, EventBus(), labels=lambda: list(store.data)), store


def test_the_funnel_records_what_a_call_meant() -> None:
    f, _ = funnel()
    fetched = f.call("load", {"name": "ace", "when": "last week"}, caller="me")
    assert fetched.labels == ["ace.v"] and fetched.phase == "fetch"
    assert isinstance(fetched.output, Made) and fetched.output.value == 1.0
    summed = f.call("add", {"inputs": ["ace.v", "wind.v.col1"], "out": "sum"})
    assert summed.labels == ["sum"]
    first, second = (Operation.of(r) for r in f.operations)
    assert first.phase == "fetch" and first.produced == ["ace.v"]
    assert first.time_ranges == {"when": "last week"} and first.caller == "me"
    assert second.phase == "compute" and second.produced == ["sum"]
    assert second.read == ["ace.v", "wind.v"]  # `label.column` names its label
    assert second.duration_ms >= 0 and second.started > 0


def test_a_failed_call_produces_nothing() -> None:
    f, _ = funnel()
    failed = f.call("add", {"inputs": ["missing"], "out": "x"})
    assert not failed.ok and failed.labels == []
    assert Operation.of(f.operations[-1]).produced == [] and f.operations[-1]["error"]


def test_a_result_breaking_its_declared_model_is_an_error() -> None:
    f, _ = funnel()
    result = f.call("liar", {})
    assert result.error_type == "ResultError" and "Made" in (result.error or "")


def test_declaring_an_argument_the_function_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown arguments"):
        tool("data_ops_compute", reads=("nope",))(add.function)
    with pytest.raises(ValueError, match="exactly one"):
        Produces()


def test_wrappers_compose_their_checks_around_one_funnel() -> None:
    f, store = funnel()
    seen: list[str] = []

    def policy(spec: Tool, args: dict[str, Any]) -> ToolResult | None:
        seen.append("policy")
        if spec.phase == "compute":
            return ToolResult.failure(spec.name, "Refused", "no computing here")
        return None

    def guard(name: str, args: dict[str, Any]) -> str | None:
        seen.append("guard")
        return None

    usage = TurnUsage(max_requests=3)
    toolset = GuardedToolset(TurnToolset(PolicyToolset(f, policy), usage), guard)
    assert toolset.turn is usage and toolset.funnel is f and f.turn is None
    refused = toolset.call("add", {"inputs": ["wind.v"], "out": "x"})
    assert refused.error_type == "Refused" and "x" not in store.data
    assert seen == ["policy"]  # the server's policy refuses before the guard counts the call
    assert toolset.call("load", {"name": "b", "when": "today"}).ok
    assert seen == ["policy", "policy", "guard"]
    assert [r["status"] for r in f.operations] == ["error", "ok"]  # refusals are logged


def test_old_logs_get_their_meaning_from_the_specs() -> None:
    records: list[dict[str, Any]] = [
        {"seq": 1, "tool": "fetch_data", "status": "ok", "args": {"time_range": "2001"},
         "result": {"label": "AC_H2_MFI.Magnitude"}},
        {"seq": 2, "tool": "custom_operation", "status": "ok",
         "args": {"source_labels": ["AC_H2_MFI.Magnitude"], "code": "", "output_label": "B"}},
        {"seq": 3, "tool": "gone_tool", "status": "ok", "args": {}},
        {"seq": 4, "tool": "run_pipeline", "status": "completed", "args": {"pipeline": "p"}},
    ]  # fmt: skip
    backfill_meaning(records, default_registry())
    fetch, compute, unknown, replay = (Operation.of(r) for r in records)
    assert replay.ok and replay.phase == "pipeline"  # an old log's own success status
    assert fetch.produced == ["AC_H2_MFI.Magnitude"] and fetch.time_ranges == {"time_range": "2001"}
    assert compute.read == ["AC_H2_MFI.Magnitude"] and compute.produced == ["B"]
    assert unknown.phase is None and unknown.produced == []


def test_the_label_creating_tools_are_those_whose_spec_says_so() -> None:
    makers = {t.name for t in default_registry().label_makers()}
    builtin = {"fetch_data", "custom_operation", "store_dataframe"}
    web = {"call_api", "search_literature", "search_web"}  # answers stored as entries
    methods = {"minimum_variance", "power_spectrum", "plasma_quantities", "query_data"}
    events = {"import_events", "detect_storms", "superposed_epoch", "fetch_for_events"}
    geometry = {"get_ephemeris", "transform_frame", "magnetic_connectivity"}
    assert builtin | web | methods | events | geometry <= makers
    assert "render_plotly_json" not in makers and "list_parameters" not in makers
    assert all(t.phase in {"fetch", "compute"} for t in default_registry().label_makers())


def test_labels_written_inside_text_are_found_whole_and_longest_first() -> None:
    known = ["OMNI.DST", "OMNI", "ace", "events.storms", "OMNI.DST_2"]
    sql = 'SELECT * FROM "OMNI.DST" JOIN ace USING (t) WHERE t IN (SELECT 1 FROM "events.storms")'
    assert label_mentions([sql], known) == ["events.storms", "OMNI.DST", "ace"]
    assert label_mentions(["SELECT ace_speed FROM spaced"], known) == []
    assert label_mentions(["SELECT * FROM OMNI.DST_2"], known) == ["OMNI.DST_2"]
