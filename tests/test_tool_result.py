"""`ToolResult`: the typed form of funnel results, and the one no-usable-data verdict."""

from __future__ import annotations

from typing import Any

import pytest

from xhelio.operations import ToolResult
from xhelio.tools.result import no_usable_data, no_usable_result
from xhelio.tools.results import FetchReport

OK_FETCH = {
    "status": "ok",
    "label": "AC_H1_MFI.Magnitude",
    "points": 10,
    "columns": ["Magnitude"],
    "all_nan_columns": [],
    "requested": "2024-01-01",
}


@pytest.mark.parametrize(
    ("tool", "result"),
    [
        ("fetch_data", OK_FETCH),
        # A successful result may have fields named like an error's own.
        ("describe_data", {"status": "ok", "type": "frame", "message": "note", "points": 3}),
        ("clarify", {"status": "ok", "message": "The question goes to the user."}),
        ("fetch_data", {"status": "error", "type": "UnknownDatasetError", "message": "no"}),
        ("fetch_data", {"status": "error", "type": "X", "message": "m", "label": "L"}),
        ("list_missions", {"missions": []}),  # no status means ok
    ],
)
def test_a_result_round_trips(tool: str, result: dict[str, Any]) -> None:
    typed = ToolResult.from_dict(tool, result)
    assert typed.to_dict() == {"status": "ok", **result}
    assert typed.ok == (result.get("status") != "error")


def test_labels_are_kept_only_on_success() -> None:
    made = ["AC_H1_MFI.Magnitude"]
    assert ToolResult.from_dict("fetch_data", OK_FETCH, made).labels == made
    failed = ToolResult.from_dict("fetch_data", {**OK_FETCH, "status": "error", "type": "E"}, made)
    assert failed.labels == [] and failed.error_type == "E"


def test_one_verdict_for_no_usable_data() -> None:
    empty = {**OK_FETCH, "points": 0}
    nan = {**OK_FETCH, "all_nan_columns": ["Magnitude"]}
    assert no_usable_data(OK_FETCH) is None
    assert no_usable_data(empty) == "it returned no data points"
    assert no_usable_data(nan) == "all its values are fill values (NaN)"
    fetched = ToolResult.from_dict("fetch_data", nan).model_copy(
        update={"output": FetchReport.model_validate(nan)}
    )
    assert no_usable_result(fetched) == no_usable_data(nan)
    assert no_usable_result(ToolResult.from_dict("describe_data", nan)) is None  # untyped
    failed = ToolResult.from_dict("fetch_data", {"status": "error"})
    assert no_usable_result(failed) is None
