"""The tool registry and the one execution funnel, on small real tools."""

from __future__ import annotations

import math
import threading
from typing import Any, Literal

from xhelio.errors import UnknownDatasetError
from xhelio.session.events import Event, EventBus
from xhelio.tools.funnel import ToolFunnel, sanitize
from xhelio.tools.registry import ToolRegistry, tool
from xhelio.tools.wrappers import GuardedToolset


class Ctx:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []


@tool("data_ops_compute")
def scale(
    ctx: Ctx, label: str, factor: float = 2.0, mode: Literal["a", "b"] = "a"
) -> dict[str, Any]:
    """Multiply a labelled value.

    Args:
        label: What to scale.
        factor: The multiplier.
        mode: Which mode.
    """
    ctx.calls.append(("scale", (label, factor, mode)))
    return {"value": factor * 2, "nan": math.nan, "inf": [1.0, math.inf]}


@tool("discovery")
def boom(ctx: Ctx, dataset_id: str) -> dict[str, Any]:
    """Fail like a real tool would."""
    if dataset_id == "bad":
        raise UnknownDatasetError(dataset_id, ["AC_H2_MFI"])
    raise RuntimeError("disk on fire")


def make() -> tuple[ToolFunnel, Ctx, list[Event]]:
    ctx = Ctx()
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append)
    return ToolFunnel(ToolRegistry([scale, boom]), ctx, bus), ctx, seen


def test_schema_comes_from_signature_and_docstring() -> None:
    schema = scale.schema
    assert schema["required"] == ["label"]
    props = schema["properties"]
    assert props["factor"]["type"] == "number"
    assert props["factor"]["description"] == "The multiplier."
    assert props["mode"]["enum"] == ["a", "b"]
    assert "ctx" not in props
    assert scale.description == "Multiply a labelled value."
    assert scale.category == "data_ops_compute"


def test_successful_call_is_sanitised_recorded_and_emitted() -> None:
    funnel, ctx, seen = make()
    result = funnel.call("scale", {"label": "x", "factor": 3}, caller="test")
    assert result.to_dict() == {"status": "ok", "value": 6.0, "nan": None, "inf": [1.0, None]}
    assert ctx.calls == [("scale", ("x", 3.0, "a"))]
    assert [e.type for e in seen] == ["tool_call", "tool_result"]
    assert seen[1].duration_ms is not None
    record = funnel.operations[0]
    assert record["tool"] == "scale" and record["status"] == "ok" and record["caller"] == "test"


def test_validation_errors_name_the_field_and_do_not_run() -> None:
    funnel, ctx, _ = make()
    result = funnel.call("scale", {"label": "x", "factor": "lots"})
    assert not result.ok and result.error_type == "ValidationError"
    assert "factor" in (result.error or "")
    extra = funnel.call("scale", {"label": "x", "colour": "red"})
    assert "colour" in (extra.error or "")
    missing = funnel.call("scale", {})
    assert "label" in (missing.error or "")
    assert ctx.calls == []


def test_unknown_tool_lists_available() -> None:
    funnel, _, _ = make()
    result = funnel.call("nope", {})
    assert result.error_type == "UnknownTool" and "scale" in (result.error or "")


def test_exceptions_become_structured_errors() -> None:
    funnel, _, seen = make()
    user = funnel.call("boom", {"dataset_id": "bad"})
    assert user.error_type == "UnknownDatasetError" and "AC_H2_MFI" in (user.error or "")
    crash = funnel.call("boom", {"dataset_id": "x"}).to_dict()
    assert crash == {
        "status": "error",
        "type": "RuntimeError",
        "message": "boom failed: disk on fire",
    }
    assert seen[-1].type == "tool_error" and "disk on fire" in seen[-1].summary
    # The funnel keeps working after failures.
    assert funnel.call("scale", {"label": "y"}).ok


def test_cancellation_and_guard_block_before_running() -> None:
    funnel, ctx, _ = make()
    blocked = GuardedToolset(funnel, lambda name, args: "stop repeating").call(
        "scale", {"label": "x"}
    )
    assert blocked.error_type == "LoopGuard" and blocked.error == "stop repeating"
    assert funnel.operations[-1]["result"]["type"] == "LoopGuard"  # refusals are logged
    funnel.cancel.set()
    cancelled = funnel.call("scale", {"label": "x"})
    assert cancelled.error_type == "Cancelled"
    assert ctx.calls == []


def test_sanitize_handles_numpy() -> None:
    import numpy as np

    assert sanitize({"a": np.float64("nan"), "b": np.arange(3), "c": np.int32(4)}) == {
        "a": None,
        "b": [0, 1, 2],
        "c": 4,
    }


def test_sanitize_columns_of_plain_values_and_of_mixed_kinds() -> None:
    import numpy as np

    class Label(str):
        pass

    columns = {
        "x": ("2024-02-01T00:00:00Z", None, 3, True),
        "y": [1.5, math.nan, -math.inf, 2, None],
        "z": [np.float64(2.5), np.float64("nan"), [math.inf, 1.0], Label("Bx"), np.int64(7)],
    }
    clean = sanitize(columns)
    assert clean == {
        "x": ["2024-02-01T00:00:00Z", None, 3, True],
        "y": [1.5, None, None, 2, None],
        "z": [2.5, None, [None, 1.0], "Bx", 7],
    }
    assert type(clean["x"]) is list and clean["x"] is not columns["x"]
    assert [type(v) for v in clean["z"]] == [np.float64, type(None), list, Label, int]


def test_event_bus_survives_a_broken_subscriber_and_threads() -> None:
    bus = EventBus()

    def broken(event: Event) -> None:
        raise ValueError("listener bug")

    bus.subscribe(broken)
    threads = [threading.Thread(target=lambda: bus.publish("x")) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [e.id for e in bus.events()]
    assert sorted(ids) == list(range(1, 21))
    assert bus.events(since_id=18) == bus.events()[18:]
