"""PlotState: the session's current figure and every manage_plot action.

HTML export is tested here; PNG/PDF through a real browser are in test_export.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore, UnknownLabelError
from xhelio.errors import BadTimeRangeError, UserError
from xhelio.render.plot_state import NO_PLOT_MESSAGE, PlotState

N = 400_000
START = pd.Timestamp("2024-03-01", tz="UTC")


@pytest.fixture
def store() -> DataStore:
    times = pd.date_range(START, periods=N, freq="1s")
    ramp = np.arange(N, dtype=float)
    store = DataStore()
    store.put(
        DataEntry(
            "AC_H2_MFI.BGSEc",
            pd.DataFrame({"Bx": np.sin(ramp / 900), "By": np.cos(ramp / 900), "Bz": ramp}, times),
            {"Bx": "nT", "By": "nT", "Bz": "nT"},
            source_dataset="AC_H2_MFI",
            source_parameter="BGSEc",
        )
    )
    store.put(
        DataEntry("AC_H0_SWE.Vp", pd.DataFrame({"Vp": 300 + ramp / 1e3}, times), {"Vp": "km/s"})
    )
    return store


@pytest.fixture
def plot(store: DataStore, tmp_path: Path) -> PlotState:
    state = PlotState(store, tmp_path / "exports")
    state.render({"data": [{"data_label": "AC_H2_MFI.BGSEc"}]})
    return state


def test_actions_before_any_render_say_so(store: DataStore, tmp_path: Path) -> None:
    state = PlotState(store, tmp_path / "exports")
    for action in ("export", "zoom", "get_state", "remove_trace"):
        with pytest.raises(UserError, match="No plot yet; render one first"):
            state.manage_plot(action)
    assert "render one first" in NO_PLOT_MESSAGE


def test_get_state_returns_browser_figure_as_json(plot: PlotState) -> None:
    state = plot.manage_plot("get_state")
    assert state["status"] == "ok"
    figure = state["figure"]
    assert [t["name"] for t in figure["data"]] == ["Bx", "By", "Bz"]
    assert len(figure["data"][2]["y"]) == len(figure["data"][2]["x"]) > 1_000
    assert state["points_sent"] <= 50_000
    json.dumps(state, allow_nan=False)
    figure["data"].clear()  # the caller's copy must not alter the session's figure
    current = plot.current
    assert current is not None and len(current.figure["data"]) == 3


def test_zoom_resolves_the_window_at_full_resolution(plot: PlotState) -> None:
    result = plot.manage_plot("zoom", start="2024-03-02T00:00", end="2024-03-02T03:00")
    assert result["time_range"] == "2024-03-02T00:00:00Z to 2024-03-02T03:00:00Z"
    bz = plot.get_state()["figure"]["data"][2]
    assert len(bz["y"]) == 3 * 3600  # all samples, not a stretched overview
    assert bz["y"][0] == 86_400.0
    layout = plot.get_state()["figure"]["layout"]
    assert layout["xaxis"]["range"] == ["2024-03-02T00:00:00", "2024-03-02T03:00:00"]
    plot.manage_plot("zoom", time_range="full")
    current = plot.current
    assert current is not None and current.time_range is None
    assert current.traces[2].points_total == N


def test_zoom_argument_errors(plot: PlotState) -> None:
    with pytest.raises(UserError, match="needs 'time_range'"):
        plot.manage_plot("zoom")
    with pytest.raises(UserError, match="not both"):
        plot.manage_plot("zoom", time_range="x", start="2024-03-01")
    with pytest.raises(BadTimeRangeError, match="zoom start"):
        plot.manage_plot("zoom", start="yesterday-ish", end="2024-03-02")
    with pytest.raises(BadTimeRangeError):
        plot.manage_plot("zoom", start="2024-03-03", end="2024-03-02")


def test_add_trace_and_failed_add_keeps_figure(plot: PlotState) -> None:
    result = plot.manage_plot("add_trace", trace={"data_label": "AC_H0_SWE.Vp", "yaxis": "y2"})
    assert [t["name"] for t in result["traces"]][-1] == "AC_H0_SWE.Vp"
    assert result["panels"] == 2
    with pytest.raises(UnknownLabelError):
        plot.manage_plot("add_trace", trace={"data_label": "NOPE.x"})
    current = plot.current
    assert current is not None and len(current.traces) == 4
    with pytest.raises(UserError, match="needs 'trace'"):
        plot.manage_plot("add_trace")


def test_remove_one_vector_component_keeps_the_others_as_they_were(plot: PlotState) -> None:
    before = plot.get_state()["figure"]["data"]
    colours = {t["name"]: t["line"]["color"] for t in before}
    result = plot.manage_plot("remove_trace", name="By")
    assert [t["name"] for t in result["traces"]] == ["Bx", "Bz"]
    after = plot.get_state()["figure"]["data"]
    assert {t["name"]: t["line"]["color"] for t in after} == {
        "Bx": colours["Bx"],
        "Bz": colours["Bz"],
    }
    plot.manage_plot("remove_trace", index=0)
    current = plot.current
    assert current is not None and [t.name for t in current.traces] == ["Bz"]
    with pytest.raises(UserError, match=r"No trace named 'Bq'\. Traces: 'Bz'"):
        plot.manage_plot("remove_trace", name="Bq")
    with pytest.raises(UserError, match="No trace at index 5"):
        plot.manage_plot("remove_trace", index=5)


def test_reset_clears_the_plot(plot: PlotState) -> None:
    assert plot.manage_plot("reset")["status"] == "ok"
    with pytest.raises(UserError, match="No plot yet"):
        plot.manage_plot("get_state")


def test_unknown_action_and_argument_are_named(plot: PlotState) -> None:
    with pytest.raises(UserError, match=r"Unknown plot action 'explode'.*export, reset, zoom"):
        plot.manage_plot("explode")
    with pytest.raises(UserError, match="does not take colour; it takes name, index"):
        plot.manage_plot("remove_trace", colour="red")


def test_html_export_is_self_contained(plot: PlotState, tmp_path: Path) -> None:
    result = plot.manage_plot("export", format="html", filename="field")
    path = Path(result["path"])
    assert path == (tmp_path / "exports" / "field.html").resolve()
    html = path.read_text(encoding="utf-8")
    assert '<script src="http' not in html and "<script src='http" not in html
    assert "Plotly.newPlot" in html
    assert result["bytes"] > 1_000_000  # plotly.js itself is embedded, so it works offline


@pytest.mark.parametrize(
    "filename", ["../escape.html", "sub/../../escape.html", "/tmp/escape.html", "."]
)
def test_export_refuses_paths_outside_the_export_folder(
    plot: PlotState, tmp_path: Path, filename: str
) -> None:
    with pytest.raises(UserError, match="outside the export folder"):
        plot.manage_plot("export", format="html", filename=filename)
    assert not (tmp_path / "escape.html").exists()


def test_export_refuses_symlink_escape(plot: PlotState, tmp_path: Path) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (exports / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UserError, match="outside the export folder"):
        plot.manage_plot("export", format="html", filename="link/plot.html")
    assert list(outside.iterdir()) == []


def test_export_subfolder_default_name_and_format_checks(plot: PlotState, tmp_path: Path) -> None:
    inside = plot.manage_plot("export", filename="runs/a.html")
    assert Path(inside["path"]).parent == (tmp_path / "exports" / "runs").resolve()
    default = Path(plot.manage_plot("export", format="html")["path"])
    assert default.name.startswith("xhelio_plot_") and default.suffix == ".html"
    with pytest.raises(UserError, match=r"ends in \.png but the format is pdf"):
        plot.manage_plot("export", format="pdf", filename="a.png")
    with pytest.raises(UserError, match="Cannot export as 'svg'"):
        plot.manage_plot("export", format="svg")
