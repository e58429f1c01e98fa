"""Write resolved figures to PNG/PDF (kaleido + one persistent headless browser) and HTML.

Starting Chromium costs seconds, so `FigureExporter` starts it once and keeps it: a
private asyncio loop on a daemon thread owns one `kaleido.Kaleido` browser, and each
export is a coroutine submitted to that loop. (kaleido's own `start_sync_server` would
also keep one browser, but it hangs forever if the browser fails to start and gives no
per-call timeout; this wrapper turns both into clear errors.) The browser runs headless
without sandbox (needed as root), without MathJax (a CDN fetch) and with background
networking off, so it works on machines without internet.

For static images, WebGL (`scattergl`) traces are drawn as SVG `scatter`: headless
Chromium renders WebGL in software, ten times slower at these sizes, and SVG keeps PDF
output vector. PNG lines are further thinned to four points per pixel column, which an
image cannot tell apart from the full line. HTML export embeds plotly.js so the file
opens offline.

Imports nothing from xhelio but `errors` and `render.downsample`.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

import kaleido
import numpy as np
import plotly.io as pio
from choreographer.browsers.chromium import Chromium
from choreographer.errors import ChromeNotFoundError
from plotly.offline.offline import get_plotlyjs

from xhelio.errors import ServerError, UserError
from xhelio.render.downsample import downsample_line

__all__ = [
    "NO_BROWSER_HELP",
    "FigureExporter",
    "ImageFormat",
    "find_browser",
    "shared_exporter",
    "static_figure",
    "write_html",
]

ImageFormat = Literal["png", "pdf"]
NO_BROWSER_HELP = (
    "PNG/PDF export needs Chrome or Chromium and none was found. Install one with "
    "`apt-get install chromium` (Debian/Ubuntu) or `plotly_get_chrome`, or set "
    "BROWSER_PATH to its executable. HTML export works without a browser."
)
# Min-max with two buckets per pixel column (four points) draws a line pixel-exactly.
RASTER_POINTS_PER_COLUMN = 4
# Per-point arrays other than x/y: a trace carrying them is never thinned (misalignment).
_PER_POINT_KEYS = ("text", "hovertext", "customdata", "ids", "error_x", "error_y")
_BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_START_TIMEOUT_S = 60.0


class _OfflineChromium(Chromium):
    """choreographer's Chromium launcher with background networking switched off."""

    def get_cli(self) -> Sequence[str]:
        """Return the launch command with offline-friendly flags appended."""
        return [
            *super().get_cli(),
            "--disable-background-networking",
            "--disable-default-apps",
            "--mute-audio",
        ]


def find_browser() -> Path | None:
    """Return the Chrome/Chromium executable to use, or None when there is none.

    Order: `BROWSER_PATH`, then the usual names on PATH, then a browser downloaded by
    `plotly_get_chrome`/`kaleido_get_chrome`.
    """
    env = os.environ.get("BROWSER_PATH")
    if env:
        return Path(env) if Path(env).is_file() else None
    for name in _BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return Path(found)
    downloaded = Chromium.find_browser(skip_local=False, skip_typical=True)
    return Path(downloaded) if downloaded else None


def static_figure(figure: Mapping[str, Any], raster_columns: int | None = None) -> dict[str, Any]:
    """Copy `figure` for static export: WebGL scatter drawn as SVG scatter.

    With `raster_columns` (the image width in pixels), line traces longer than
    `RASTER_POINTS_PER_COLUMN` points per column are thinned again with min-max: an image
    cannot show more, extrema and gaps survive, and the browser draws far fewer points.
    """
    data: list[dict[str, Any]] = []
    for trace in figure.get("data", []):
        copied = dict(trace)
        if copied.get("type") == "scattergl":
            copied["type"] = "scatter"
        if raster_columns:
            copied = _thinned(copied, RASTER_POINTS_PER_COLUMN * raster_columns)
        data.append(copied)
    return {**figure, "data": data}


def _thinned(trace: dict[str, Any], max_points: int) -> dict[str, Any]:
    """Min-max thin a line-only scatter trace whose arrays are plain x/y lists."""
    x, y = trace.get("x"), trace.get("y")
    if (
        trace.get("type", "scatter") != "scatter"
        or trace.get("mode", "lines") != "lines"
        or not isinstance(x, list)
        or not isinstance(y, list)
        or len(y) != len(x)
        or len(y) <= max_points
        or any(key in trace for key in _PER_POINT_KEYS)
    ):
        return trace
    try:
        values = np.asarray([np.nan if v is None else v for v in y], dtype=np.float64)
    except (TypeError, ValueError):
        return trace
    positions, is_marker = downsample_line(values, max_points).positions()
    kept = values[positions]
    kept[is_marker] = np.nan
    return {
        **trace,
        "x": [x[i] for i in positions.tolist()],
        "y": [None if np.isnan(v) else v for v in kept.tolist()],
    }


class FigureExporter:
    """PNG/PDF export through one long-lived headless browser (started on first use)."""

    def __init__(self, browser_path: Path | str | None = None, *, timeout_s: float = 60.0) -> None:
        self._browser_path = Path(browser_path) if browser_path else None
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._kaleido: Any = None

    @property
    def is_running(self) -> bool:
        """Whether the browser process is up."""
        return self._kaleido is not None

    def start(self) -> None:
        """Start the browser now (idempotent); raises `UserError` if none is installed."""
        with self._lock:
            self._start_locked()

    def start_in_background(self) -> threading.Thread:
        """Start the browser and render a tiny figure on a thread, so a later export is fast."""

        def warm_up() -> None:
            # Failures are not lost: the next real export raises them with a clear message.
            with contextlib.suppress(Exception):
                self.to_bytes({"data": [], "layout": {"width": 64, "height": 64}}, "png")

        thread = threading.Thread(target=warm_up, name="xhelio-export-warm-up", daemon=True)
        thread.start()
        return thread

    def _start_locked(self) -> None:
        if self._kaleido is not None:
            return
        path = self._browser_path or find_browser()
        if path is None or not path.is_file():
            raise UserError(NO_BROWSER_HELP)
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="xhelio-export", daemon=True)
        thread.start()
        try:
            future = asyncio.run_coroutine_threadsafe(self._open_browser(path), loop)
            self._kaleido = future.result(timeout=_START_TIMEOUT_S)
        except ChromeNotFoundError as exc:
            _stop_loop(loop, thread)
            raise UserError(NO_BROWSER_HELP) from exc
        except Exception as exc:
            _stop_loop(loop, thread)
            raise ServerError(
                f"Could not start the headless browser {path}: {exc or type(exc).__name__}. "
                "Check that it runs (`chromium --headless --version`), or set BROWSER_PATH "
                "to another Chrome/Chromium."
            ) from exc
        self._loop, self._thread = loop, thread

    async def _open_browser(self, path: Path) -> Any:
        browser = kaleido.Kaleido(
            path=str(path),
            mathjax=False,
            timeout=self._timeout_s,
            browser_cls=_OfflineChromium,
        )
        await browser.open()
        return browser

    def to_bytes(
        self,
        figure: Mapping[str, Any],
        fmt: ImageFormat = "png",
        *,
        width: int | None = None,
        height: int | None = None,
        scale: float = 1.0,
    ) -> bytes:
        """Render `figure` to PNG or PDF bytes (size from the layout unless given)."""
        if fmt not in ("png", "pdf"):
            raise UserError(f"Cannot export format '{fmt}'; choose png, pdf or html.")
        opts: dict[str, Any] = {"format": fmt, "scale": scale}
        if width:
            opts["width"] = width
        if height:
            opts["height"] = height
        prepared = static_figure(
            figure, _raster_columns(figure, width, scale) if fmt == "png" else None
        )
        with self._lock:
            self._start_locked()
            loop, browser = self._loop, self._kaleido
            assert loop is not None
            future = asyncio.run_coroutine_threadsafe(browser.calc_fig(prepared, opts=opts), loop)
            try:
                image: bytes = future.result(timeout=self._timeout_s + 5)
            except Exception as exc:
                # A browser that failed once may be wedged: start a fresh one next time.
                self._close_locked()
                raise ServerError(
                    f"The headless browser failed to export the figure as {fmt}: "
                    f"{exc or type(exc).__name__}. Retry; the browser is restarted."
                ) from exc
        return image

    def write(
        self,
        figure: Mapping[str, Any],
        path: Path,
        fmt: ImageFormat = "png",
        *,
        width: int | None = None,
        height: int | None = None,
        scale: float = 1.0,
    ) -> Path:
        """Render `figure` and write it atomically to `path`; return the path."""
        image = self.to_bytes(figure, fmt, width=width, height=height, scale=scale)
        _atomic_write(path, image)
        return path

    def close(self) -> None:
        """Stop the browser and its loop thread (safe to call twice)."""
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        loop, thread, browser = self._loop, self._thread, self._kaleido
        self._loop, self._thread, self._kaleido = None, None, None
        if loop is None or thread is None:
            return
        if browser is not None:
            future = asyncio.run_coroutine_threadsafe(browser.close(), loop)
            # A crashed browser cannot be closed more politely; the loop still stops.
            with contextlib.suppress(Exception):
                future.result(timeout=15)
        _stop_loop(loop, thread)

    def __enter__(self) -> FigureExporter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _raster_columns(figure: Mapping[str, Any], width: int | None, scale: float) -> int:
    """Pixel columns of the PNG: explicit width, else the layout's, else kaleido's 700."""
    layout = figure.get("layout") or {}
    pixels = width or layout.get("width") or 700
    return max(1, int(float(pixels) * max(scale, 1.0)))


def _stop_loop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=15)
    if not thread.is_alive():
        loop.close()


_shared: FigureExporter | None = None
_shared_lock = threading.Lock()


def shared_exporter() -> FigureExporter:
    """The process-wide exporter, so every session reuses one browser; closed at exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = FigureExporter()
            atexit.register(_shared.close)
        return _shared


# Plotly's modebar without cloud, share and edit buttons: exported data stays local.
# (plotly.js 4 has no link or Chart Studio options left; the buttons are removed by name.)
PLOT_CONFIG: Mapping[str, Any] = {
    "displaylogo": False,
    "showSendToCloud": False,
    "modeBarButtonsToRemove": ["sendDataToCloud", "editInChartStudio"],
}


# The page is written around a placeholder script tag, replaced by plotly.js itself: the
# 3.5 MB bundle is read and encoded once per process instead of copied through every page.
_BUNDLE_URL = "xhelio-plotly-bundle.js"
_BUNDLE_TAG = f'<script charset="utf-8" src="{_BUNDLE_URL}"></script>'


@cache
def _bundle_script() -> bytes:
    """plotly.js in a script tag, as `pio.to_html(include_plotlyjs=True)` embeds it."""
    return f"<script>{get_plotlyjs()}</script>".encode()


def write_html(figure: Mapping[str, Any], path: Path) -> Path:
    """Write an interactive, self-contained HTML file (plotly.js embedded); return path."""
    html = pio.to_html(
        dict(figure),
        include_plotlyjs=_BUNDLE_URL,  # pyright: ignore[reportArgumentType]  (a .js URL: documented)
        full_html=True,
        validate=False,
        config=dict(PLOT_CONFIG),
    )
    head, tail = html.split(_BUNDLE_TAG, 1)
    _atomic_write(path, head.encode("utf-8"), _bundle_script(), tail.encode("utf-8"))
    return path


def _atomic_write(path: Path, *payload: bytes) -> None:
    """Write via a temp file in the same folder, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.writelines(payload)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
