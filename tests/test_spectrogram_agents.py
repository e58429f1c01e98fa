"""Spectrograms from the conversational entry points: offline `ask` and the visualization agent.

A loopback HAPI server serves an electron flux whose energy bins change mid-day
(time-varying bins, ``centers`` naming a parameter) with a 7-hour gap. Both entry points
must draw it as one heatmap (no line properties reaching Plotly), with no colour in the gap
and the energies of each record where that record measured.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from agent_script import Script, scripted_config
from servers.hapi_server import HapiTestServer
from xhelio.agents.models import ModelRouter
from xhelio.agents.specialists import VisualizationAgent
from xhelio.agents.subagent import AgentEnv
from xhelio.agents.toolbridge import run_coroutine
from xhelio.cli.main import app
from xhelio.config import load_settings
from xhelio.tools.workspace import open_workspace

runner = CliRunner(env={"COLUMNS": "200"})
BINS = 12
GAP = (480, 900)  # minutes of the day without records: 08:00 to 15:00


def _flux_dataset() -> tuple[dict[str, Any], pd.DataFrame]:
    minutes = np.concatenate([np.arange(0, GAP[0]), np.arange(GAP[1], 1440)])
    index = pd.Timestamp("2020-01-01", tz="UTC") + pd.to_timedelta(minutes, "min")
    energies = np.tile(np.geomspace(10, 1e4, BINS), (minutes.size, 1))
    energies[minutes >= GAP[1]] *= 3  # the instrument steps its sweep up after the gap
    flux = 1e8 * energies**-1.5
    info = {
        "startDate": "2020-01-01Z",
        "stopDate": "2020-001T23:59Z",
        "cadence": "PT1M",
        "parameters": [
            {"name": "Time", "type": "isotime", "units": "UTC", "fill": None, "length": 24},
            {
                "name": "Flux",
                "type": "double",
                "units": "1/(cm^2 s sr eV)",
                "size": [BINS],
                "fill": "-1e31",
                "description": "Electron differential energy flux",
                "bins": [{"name": "energy", "units": "eV", "centers": "Energy"}],
            },
            {"name": "Energy", "type": "double", "units": "eV", "size": [BINS], "fill": "-1e31"},
        ],
    }
    columns = [f"F{i}" for i in range(BINS)] + [f"E{i}" for i in range(BINS)]
    return info, pd.DataFrame(np.hstack([flux, energies]), index=index, columns=columns)


@pytest.fixture
def hapi(monkeypatch: pytest.MonkeyPatch) -> Iterator[HapiTestServer]:
    with HapiTestServer(version="3.3") as server:
        info, frame = _flux_dataset()
        server.add_dataset("T_ELEC", info, frame)
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        refreshed = runner.invoke(app, ["catalog", "refresh", "--server", server.url])
        assert refreshed.exit_code == 0, refreshed.output
        yield server


def _check_heatmap(trace: dict[str, Any]) -> None:
    """One heatmap, no colour in the gap, and energies of both sweeps on its y grid."""
    assert trace["type"] == "heatmap"
    assert "mode" not in trace and "line" not in trace
    edges = pd.DatetimeIndex(pd.to_datetime(trace["x"])).as_unit("ns").asi8  # column edges
    z = np.array([[np.nan if v is None else v for v in row] for row in trace["z"]], dtype=float)
    assert z.shape[1] == edges.size - 1
    middles = pd.DatetimeIndex(edges[:-1] + (edges[1:] - edges[:-1]) // 2)
    inside = (middles > pd.Timestamp("2020-01-01T08:00")) & (
        middles < pd.Timestamp("2020-01-01T15:00")
    )
    assert inside.any(), "the gap must be an empty column of its own"
    assert np.isnan(z[:, inside]).all()
    # Every column outside the gap holds data: no bucket straddles the gap.
    assert np.isfinite(z[:, ~inside]).any(axis=0).all()
    y = np.asarray(trace["y"], dtype=float)
    # Both sweeps' centres are on the grid: 10 eV (before) and 3e4 eV (after the gap).
    assert y.min() <= 10.5 and y.max() >= 2.9e4


def test_offline_ask_and_visualization_agent_draw_a_spectrogram(hapi: HapiTestServer) -> None:
    # One test for both entry points: the catalog refresh of a fresh home is the slow part.
    result = runner.invoke(app, ["ask", "plot T_ELEC Flux on 2020-01-01", "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert "plot failed" not in answer["answer"].lower()
    session = answer["session_id"]
    workspace = open_workspace(session)
    try:
        current = workspace.session.plot.current
        assert current is not None
        (trace,) = current.figure["data"]
        _check_heatmap(trace)
        colour_title = json.dumps(trace["colorbar"]["title"])
        assert "cm" in colour_title and "log" in colour_title
    finally:
        workspace.close()
    _visualization_agent_draws_a_spectrogram()


def _visualization_agent_draws_a_spectrogram() -> None:
    workspace = open_workspace(settings=load_settings())
    try:
        workspace.funnel.call(
            "fetch_data",
            {"dataset_id": "T_ELEC", "parameter_id": "Flux", "time_range": "2020-01-01"},
            "setup",
        )
        # What a model writes by habit for any series: a line trace. It must still work.
        figure = {"data": [{"type": "scatter", "mode": "lines", "data_label": "T_ELEC.Flux"}]}
        script = Script({"visualization": [[("render_plotly_json", {"figure": figure})], "Done."]})
        env = AgentEnv(workspace, ModelRouter(scripted_config(), build=script.build))
        agent = VisualizationAgent(env)
        drawn = run_coroutine(lambda: agent.draw("plot T_ELEC.Flux", threading.Event()))
        assert not drawn.failed, drawn.text
        current = workspace.session.plot.current
        assert current is not None
        (trace,) = current.figure["data"]
        _check_heatmap(trace)
        # The model is told what it drew: a heatmap, not 12 lines.
        (summary,) = current.summary()["traces"]
        assert summary["type"] == "heatmap"
    finally:
        workspace.close()
