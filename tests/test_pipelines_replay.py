"""Deterministic replay through the funnel: new ranges, repeatability, failure propagation."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pipeline_support import (
    MARCH,
    make_session,
    open_fresh,
)
from xhelio.config import load_settings
from xhelio.errors import UserError
from xhelio.pipelines.extract import extract_pipeline
from xhelio.pipelines.model import TIME_RANGE_VAR, Pipeline
from xhelio.pipelines.replay import replay_pipeline
from xhelio.pipelines.store import PipelineStore
from xhelio.tools.workspace import Workspace


def saved(pl_workspace: Workspace) -> Pipeline:
    make_session(pl_workspace)
    pipeline = extract_pipeline(pl_workspace.session.operations, "ACE overview")
    PipelineStore(load_settings()).save(pipeline)
    return pipeline


def test_replay_after_restart_for_another_month(pl_workspace: Workspace) -> None:
    pipeline = saved(pl_workspace)
    ws = open_fresh()  # a new session, nothing in memory
    try:
        loaded = PipelineStore(load_settings()).load("ACE overview")
        result = replay_pipeline(loaded, ws.funnel, {TIME_RANGE_VAR: MARCH})
        assert result.status == "completed", result.summary()
        assert result.labels == ["AC_H2_MFI.Magnitude", "AC_H2_MFI.BGSEc", "B_smooth"]
        smooth = ws.session.store.get("B_smooth").data
        assert isinstance(smooth, pd.DataFrame)
        assert smooth.index[0] >= pd.Timestamp("2001-03-01", tz="UTC")
        assert smooth.index[-1] < pd.Timestamp("2001-03-05", tz="UTC")
        figure = ws.session.plot.current
        assert figure is not None and figure.panels == 2
        # The new range, as people read it (inclusive days), in the title and the summary.
        title = figure.figure["layout"]["title"]["text"]
        assert "ACE |B| and smoothed B, 2001-03-01 to 2001-03-04" in title, title
        assert "T00:00:00Z" not in title and "2001-01" not in title
        assert result.summary().startswith(
            f"Pipeline {loaded.id}: {len(pipeline.steps)} of {len(pipeline.steps)} steps "
            "completed for 2001-03-01 to 2001-03-04."
        )
        fetched = [
            op["args"]["time_range"] for op in ws.session.operations if op["tool"] == "fetch_data"
        ]
        assert set(fetched) == {"2001-03-01T00:00:00Z to 2001-03-05T00:00:00Z"}
        callers = {op["caller"] for op in ws.session.operations}
        assert callers == {"pipeline"}
        assert len(ws.session.operations) == len(pipeline.steps)
    finally:
        ws.close()


def _figure_json(ws: Workspace) -> str:
    assert ws.session.plot.current is not None
    return json.dumps(ws.session.plot.current.figure, sort_keys=True, default=str)


def test_same_pipeline_and_range_twice_gives_identical_data_and_figure(
    pl_workspace: Workspace,
) -> None:
    pipeline = saved(pl_workspace)
    outputs: list[tuple[str, pd.DataFrame]] = []
    for _ in range(2):
        ws = open_fresh()
        try:
            assert replay_pipeline(pipeline, ws.funnel, {"TIME_RANGE": MARCH}).status == "completed"
            data = ws.session.store.get("B_smooth").data
            assert isinstance(data, pd.DataFrame)
            outputs.append((_figure_json(ws), data))
        finally:
            ws.close()
    assert outputs[0][0] == outputs[1][0]
    pd.testing.assert_frame_equal(outputs[0][1], outputs[1][1])


def test_a_failed_critical_step_skips_its_dependents_only(pl_workspace: Workspace) -> None:
    pipeline = saved(pl_workspace)
    ws = open_fresh()
    try:
        # the BGSEc fetch fails: its smoothing and the figure are skipped, the
        # independent |B| fetch still completes.
        broken = Pipeline.from_dict(pipeline.to_dict())
        broken.steps[1].args["parameter_id"] = "NoSuchParam"
        result = replay_pipeline(broken, ws.funnel, {TIME_RANGE_VAR: MARCH})
        status = {s.step_id: s.status for s in result.steps}
        assert status == {"s001": "ok", "s002": "error", "s003": "skipped", "s004": "skipped"}
        assert result.status == "partial"
        assert "s002 (fetch_data) failed" in result.steps[3].message
        assert not result.figure_rendered
        assert "NoSuchParam" in result.summary()
    finally:
        ws.close()


def test_a_failed_non_critical_step_is_logged_and_the_run_goes_on(pl_workspace: Workspace) -> None:
    pipeline = saved(pl_workspace)
    data = pipeline.to_dict()
    data["steps"].append(
        {
            "step_id": "s005",
            "tool": "manage_plot",
            "args": {"action": "zoom", "time_range": "1990-01-01 to 1990-01-02"},
            "depends_on": ["s004"],
            "critical": False,
            "phase": "presentation",
        }
    )
    data["steps"].append(
        {
            "step_id": "s006",
            "tool": "manage_plot",
            "args": {"action": "export", "format": "html"},
            "depends_on": ["s004"],
            "critical": False,
            "phase": "presentation",
        }
    )
    ws = open_fresh()
    try:
        result = replay_pipeline(Pipeline.from_dict(data), ws.funnel, {TIME_RANGE_VAR: MARCH})
        status = [s.status for s in result.steps]
        assert status[-2:] == ["error", "ok"], result.summary()
        assert result.status == "partial" and result.exports
        assert "non-critical" in result.summary()
    finally:
        ws.close()


def test_nothing_works_is_failed(pl_workspace: Workspace) -> None:
    pipeline = saved(pl_workspace)
    for step in pipeline.steps:
        if step.tool == "fetch_data":
            step.args["dataset_id"] = "NO_SUCH_DATASET"
    ws = open_fresh()
    try:
        result = replay_pipeline(pipeline, ws.funnel)
        assert result.status == "failed"
        assert [s.status for s in result.steps].count("skipped") == 2
    finally:
        ws.close()


def test_bad_overrides_are_clear_errors_before_anything_runs(pl_workspace: Workspace) -> None:
    pipeline = saved(pl_workspace)
    before = len(pl_workspace.session.operations)
    with pytest.raises(UserError, match="Cannot run pipeline"):
        replay_pipeline(pipeline, pl_workspace.funnel, {TIME_RANGE_VAR: "the day after never"})
    with pytest.raises(UserError, match="no variable \\$MISSION"):
        replay_pipeline(pipeline, pl_workspace.funnel, {"MISSION": "wind"})
    assert len(pl_workspace.session.operations) == before
