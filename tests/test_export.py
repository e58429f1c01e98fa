"""PNG/PDF export through a real headless Chromium (kaleido), and browser discovery."""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest

from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore
from xhelio.errors import UserError
from xhelio.render.export import (
    PLOT_CONFIG,
    FigureExporter,
    find_browser,
    static_figure,
    write_html,
)
from xhelio.render.figure import render_plotly_json
from xhelio.render.plot_state import PlotState

BROWSER = find_browser()
needs_browser = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chrome/Chromium found (install with `apt-get install chromium` or "
    "`plotly_get_chrome`, or set BROWSER_PATH)",
)


def _png_size(image: bytes) -> tuple[int, int]:
    assert image[:8] == b"\x89PNG\r\n\x1a\n"
    assert image[12:16] == b"IHDR"
    width, height = struct.unpack(">II", image[16:24])
    return width, height


@pytest.fixture(scope="module")
def exporter() -> Iterator[FigureExporter]:
    if BROWSER is None:
        pytest.skip("no Chrome/Chromium found")
    with FigureExporter(BROWSER) as shared:
        yield shared


@pytest.fixture
def figure() -> dict[str, Any]:
    n = 50_000
    times = pd.date_range("2024-01-01", periods=n, freq="2s", tz="UTC")
    store = DataStore()
    store.put(
        DataEntry(
            "AC_H2_MFI.BGSEc",
            pd.DataFrame(
                {"Bx": np.sin(np.arange(n) / 500), "By": np.cos(np.arange(n) / 700)}, times
            ),
            {"Bx": "nT", "By": "nT"},
        )
    )
    result = render_plotly_json(
        {"data": [{"data_label": "AC_H2_MFI.BGSEc"}], "layout": {"width": 640, "height": 360}},
        store,
    )
    assert any(t["type"] == "scattergl" for t in result.figure["data"])
    return result.figure


@needs_browser
def test_png_has_requested_pixel_size(exporter: FigureExporter, figure: dict[str, Any]) -> None:
    assert _png_size(exporter.to_bytes(figure, "png")) == (640, 360)
    assert _png_size(exporter.to_bytes(figure, "png", width=300, height=200, scale=2)) == (
        600,
        400,
    )
    assert exporter.is_running  # the same browser served every call


@needs_browser
def test_pdf_is_written(exporter: FigureExporter, figure: dict[str, Any], tmp_path: Path) -> None:
    path = exporter.write(figure, tmp_path / "out" / "field.pdf", "pdf")
    payload = path.read_bytes()
    assert payload.startswith(b"%PDF-")
    assert b"%%EOF" in payload[-1024:]
    assert [p.name for p in path.parent.iterdir()] == ["field.pdf"]  # no temp file left


@needs_browser
def test_plot_state_exports_png_and_pdf(
    exporter: FigureExporter, figure: dict[str, Any], tmp_path: Path
) -> None:
    store = DataStore()
    times = pd.date_range("2024-01-01", periods=100, freq="1min", tz="UTC")
    store.put(DataEntry("X.v", pd.DataFrame({"v": np.arange(100.0)}, times), {"v": "km/s"}))
    state = PlotState(store, tmp_path / "exports", exporter=exporter)
    state.render({"data": [{"data_label": "X.v"}], "panels": [[{"data_label": "X.v"}]]})
    png = state.manage_plot("export", filename="speed.png")
    image = Path(png["path"]).read_bytes()
    assert _png_size(image) == (1100, 300)
    pdf = state.manage_plot("export", format="pdf", filename="speed")
    assert Path(pdf["path"]).name == "speed.pdf"
    assert Path(pdf["path"]).read_bytes().startswith(b"%PDF-")


def test_missing_browser_error_says_how_to_install(tmp_path: Path) -> None:
    exporter = FigureExporter(tmp_path / "no-such-chrome")
    with pytest.raises(UserError) as info:
        exporter.to_bytes({"data": [], "layout": {}}, "png")
    message = str(info.value)
    assert "apt-get install chromium" in message and "plotly_get_chrome" in message
    assert not exporter.is_running


def test_browser_path_env_pointing_nowhere_finds_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "absent"))
    assert find_browser() is None
    fake = tmp_path / "chrome"
    fake.write_text("#!/bin/sh\n")
    monkeypatch.setenv("BROWSER_PATH", str(fake))
    assert find_browser() == fake


def test_unsupported_image_format_is_refused() -> None:
    with pytest.raises(UserError, match="choose png, pdf or html"):
        FigureExporter().to_bytes({"data": []}, "svg")  # type: ignore[arg-type]


def test_static_figure_thins_long_lines_keeping_extrema_and_gaps() -> None:
    n = 40_000
    y: list[float | None] = [float(np.sin(i / 300)) for i in range(n)]
    y[12_345] = 9.0
    y[20_000:20_050] = [None] * 50
    x = list(range(n))
    figure = {
        "data": [
            {"type": "scattergl", "mode": "lines", "x": x, "y": y},
            {"type": "scatter", "mode": "markers", "x": x, "y": y},
            {"type": "scatter", "x": x, "y": y, "text": [str(i) for i in x]},
        ],
        "layout": {"width": 500},
    }
    line, dots, labelled = static_figure(figure, raster_columns=500)["data"]
    assert line["type"] == "scatter"
    assert len(line["y"]) <= 2_000 and len(line["x"]) == len(line["y"])
    kept = [v for v in line["y"] if v is not None]
    assert max(kept) == 9.0 and min(kept) == min(v for v in y if v is not None)
    gap = line["y"].index(None)
    assert 19_950 <= line["x"][gap] < 20_050
    assert len(dots["y"]) == n and len(labelled["y"]) == n  # markers and per-point text kept


def test_static_figure_draws_webgl_as_svg_without_touching_input() -> None:
    figure = {"data": [{"type": "scattergl", "y": [1]}, {"type": "bar", "y": [2]}], "layout": {}}
    static = static_figure(figure)
    assert [t["type"] for t in static["data"]] == ["scatter", "bar"]
    assert figure["data"][0]["type"] == "scattergl"


def test_write_html_needs_no_browser(tmp_path: Path) -> None:
    path = write_html(
        {"data": [{"type": "scatter", "y": [1, 3, 2]}], "layout": {}}, tmp_path / "f.html"
    )
    html = path.read_text(encoding="utf-8")
    assert html.startswith("<html>") or html.lower().startswith("<!doctype html>")
    assert '"y":[1,3,2]' in html.replace(" ", "")


def test_html_export_offers_no_cloud_share_or_edit_button(tmp_path: Path) -> None:
    path = write_html(
        {"data": [{"type": "scatter", "y": [1, 2]}], "layout": {}}, tmp_path / "f.html"
    )
    html = path.read_text(encoding="utf-8").replace(" ", "")
    assert '"displaylogo":false' in html
    assert '"showSendToCloud":false' in html
    assert '"modeBarButtonsToRemove":["sendDataToCloud","editInChartStudio"]' in html


def test_write_html_is_plotly_own_self_contained_page(tmp_path: Path) -> None:
    """plotly.js is spliced in once per process; the page is exactly plotly's own."""
    figure = {
        "data": [{"type": "scatter", "y": [1, 2], "name": "Bz </script> {x}"}],
        "layout": {"title": {"text": "|B| (nT) é"}},
    }
    written = write_html(figure, tmp_path / "f.html").read_text(encoding="utf-8")
    again = write_html(figure, tmp_path / "g.html").read_text(encoding="utf-8")
    plotly_own = pio.to_html(
        figure, include_plotlyjs=True, full_html=True, validate=False, config=dict(PLOT_CONFIG)
    )
    div_id = re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}")
    assert div_id.sub("ID", written) == div_id.sub("ID", plotly_own) == div_id.sub("ID", again)
    assert "src=" not in written.split("<body>", 1)[1].split("</script>", 1)[0]
