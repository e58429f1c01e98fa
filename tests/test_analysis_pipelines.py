"""Analysis steps are pipeline steps: extracted from a session and replayed on a new range."""

from __future__ import annotations

import pandas as pd

from pipeline_support import JANUARY, MARCH, open_fresh
from xhelio.pipelines.extract import extract_pipeline
from xhelio.pipelines.model import TIME_RANGE_VAR
from xhelio.pipelines.replay import replay_pipeline
from xhelio.tools.workspace import Workspace


def test_minimum_variance_and_psd_replay_for_another_month(pl_workspace: Workspace) -> None:
    calls = [
        ("fetch_data", {"dataset_id": "AC_H2_MFI", "parameter_id": "BGSEc",
                        "time_range": JANUARY}),
        ("minimum_variance", {"label": "AC_H2_MFI.BGSEc", "time_range": JANUARY}),
        ("power_spectrum", {"label": "AC_H2_MFI.BGSEc"}),
    ]  # fmt: skip
    for name, args in calls:
        assert pl_workspace.funnel.call(name, args, caller="test").ok
    pipeline = extract_pipeline(pl_workspace.session.operations, "ACE MVA")
    assert [s.tool for s in pipeline.steps] == [name for name, _ in calls]
    ws = open_fresh()
    try:
        result = replay_pipeline(pipeline, ws.funnel, {TIME_RANGE_VAR: MARCH})
        assert result.status == "completed", result.summary()
        assert {"AC_H2_MFI.BGSEc.LMN", "AC_H2_MFI.BGSEc.PSD"} <= set(result.labels)
        lmn = ws.session.store.get("AC_H2_MFI.BGSEc.LMN").data
        assert isinstance(lmn, pd.DataFrame)
        assert lmn.index[0] >= pd.Timestamp("2001-03-01", tz="UTC")
    finally:
        ws.close()
