"""Export to a script and a notebook; both run in a fresh process and match the replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from pipeline_support import (
    MARCH,
    make_session,
    open_fresh,
)
from servers.catalog_hapi import CatalogHapiServer
from xhelio.config import load_settings
from xhelio.pipelines.export import dataset_citations, export_notebook, export_script
from xhelio.pipelines.extract import extract_pipeline
from xhelio.pipelines.model import TIME_RANGE_VAR, Pipeline
from xhelio.pipelines.replay import replay_pipeline
from xhelio.tools.data_tools import frame_of
from xhelio.tools.workspace import Workspace


def _replayed(pipeline: Pipeline) -> tuple[dict[str, pd.DataFrame], dict[str, object]]:
    ws = open_fresh()
    try:
        assert replay_pipeline(pipeline, ws.funnel, {TIME_RANGE_VAR: MARCH}).status == "completed"
        data = {e.label: frame_of(e) for e in ws.session.store}
        assert ws.session.plot.current is not None
        return data, ws.session.plot.current.figure
    finally:
        ws.close()


def _run(args: list[str], server: CatalogHapiServer, home: Path, cwd: Path) -> None:
    env = {**os.environ, "XHELIO_HOME": str(home), "XHELIO_HAPI_URL": server.url}
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _same_outputs(out: Path, data: dict[str, pd.DataFrame], fig: dict[str, object]) -> None:
    assert {p.stem for p in out.glob("*.parquet")} == set(data)
    for label, frame in data.items():
        pd.testing.assert_frame_equal(pd.read_parquet(out / f"{label}.parquet"), frame)
    exported = json.loads((out / "figure.json").read_text())
    assert json.dumps(exported["data"], sort_keys=True) == json.dumps(
        json.loads(json.dumps(fig["data"], default=str)), sort_keys=True
    )
    assert exported["layout"]["title"] == json.loads(json.dumps(fig["layout"]))["title"]


def _pipeline(pl_workspace: Workspace) -> Pipeline:
    make_session(pl_workspace)
    return extract_pipeline(pl_workspace.session.operations, "ACE overview")


def test_exported_script_reproduces_the_replay(
    pl_workspace: Workspace, pl_hapi_env: CatalogHapiServer, tmp_path: Path
) -> None:
    pipeline = _pipeline(pl_workspace)
    citations = dataset_citations(pipeline, load_settings())
    script = export_script(pipeline, citations)
    assert "import xhelio.agents" not in script and "Assistant" not in script
    head = script.split('"""')[1]
    assert "AC_H2_MFI" in head and "DOI: 10." in head and "PI: " in head
    path = tmp_path / "ace_overview.py"
    path.write_text(script)
    data, fig = _replayed(pipeline)
    _run(
        [str(path), "--time-range", MARCH, "--out", "out", "--no-png"],
        pl_hapi_env,
        tmp_path / "fresh-home",
        tmp_path,
    )
    _same_outputs(tmp_path / "out", data, fig)


def test_exported_notebook_cells_run_and_match(
    pl_workspace: Workspace, pl_hapi_env: CatalogHapiServer, tmp_path: Path
) -> None:
    pipeline = _pipeline(pl_workspace)
    notebook = json.loads(export_notebook(pipeline))
    assert notebook["nbformat"] == 4
    cells = notebook["cells"]
    assert cells[0]["cell_type"] == "markdown" and "Data citations" in "".join(cells[0]["source"])
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert len(code) == 3 + len(pipeline.steps)
    code[0] = code[0].replace(repr(pipeline.variables[TIME_RANGE_VAR].default), repr(MARCH))
    # as Jupyter would: the cells in order in one namespace (the last shows the figure)
    (tmp_path / "cells.py").write_text("\n\n".join(code) + "\nxh.close()\n")
    data, fig = _replayed(pipeline)
    _run(["cells.py"], pl_hapi_env, tmp_path / "fresh-home", tmp_path)
    _same_outputs(tmp_path / "pipeline_output", data, fig)


def test_script_skips_a_failed_styling_step_keeps_export_files_and_fails_clearly(
    pl_workspace: Workspace, pl_hapi_env: CatalogHapiServer, tmp_path: Path
) -> None:
    data = _pipeline(pl_workspace).to_dict()
    render = data["steps"][-1]["step_id"]
    extra = [
        ("manage_plot", {"action": "zoom", "time_range": "1990-01-01 to 1990-01-02"}),
        ("save_data", {"label": "B_smooth", "format": "csv", "filename": "b_smooth.csv"}),
    ]
    for i, (tool, args) in enumerate(extra):
        step = {"step_id": f"s10{i}", "tool": tool, "args": args, "depends_on": [render]}
        data["steps"].append({**step, "critical": False, "phase": "presentation"})
    script = tmp_path / "ace.py"
    script.write_text(export_script(Pipeline.from_dict(data)))
    env = {**os.environ, "XHELIO_HOME": str(tmp_path / "home"), "XHELIO_HAPI_URL": pl_hapi_env.url}
    args = [sys.executable, str(script), "--time-range", MARCH, "--out", "out", "--no-png"]
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "skipped: manage_plot failed" in done.stdout
    assert (tmp_path / "out" / "b_smooth.csv").read_text().count("\n") > 10
    assert (tmp_path / "out" / "figure.json").exists()

    env["XHELIO_HAPI_URL"] = "http://127.0.0.1:9/hapi"  # nothing listens on port 9
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: fetch_data failed: ServerUnreachableError")
