"""The current figure of one session and the `manage_plot` actions on it.

`PlotState.render` resolves a figure spec and keeps both the spec (what the model wrote)
and the resolved figure (what the browser gets). `manage_plot(action, **kwargs)` carries
out export, reset, zoom, get_state, add_trace and remove_trace, always re-resolving from
the spec, so a zoom fetches full-resolution samples for the window from the store rather
than stretching the downsampled overview. Exports go only into the session's export folder.

Imports only `data`, `errors`, `timerange` and `render` modules from xhelio.
"""

from __future__ import annotations

import copy
import inspect
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from xhelio.data.store import DataStore
from xhelio.errors import BadTimeRangeError, UserError
from xhelio.render.export import FigureExporter, shared_exporter, write_html
from xhelio.render.figure import (
    DEFAULT_POINT_BUDGET,
    WEBGL_THRESHOLD,
    RenderResult,
    render_plotly_json,
)
from xhelio.timerange import TimeRange, parse_time_range

__all__ = ["EXPORT_FORMATS", "NO_PLOT_MESSAGE", "PLOT_ACTIONS", "PlotState"]

PLOT_ACTIONS = ("export", "reset", "zoom", "get_state", "add_trace", "remove_trace")
EXPORT_FORMATS = ("png", "pdf", "html")
NO_PLOT_MESSAGE = "No plot yet; render one first with render_plotly_json."
_FULL_RANGE_WORDS = frozenset({"full", "all", "reset", "none"})


class PlotState:
    """A session's current figure: render it, then export, zoom or edit it."""

    def __init__(
        self,
        store: DataStore,
        export_dir: Path,
        *,
        exporter: FigureExporter | None = None,
        point_budget: int = DEFAULT_POINT_BUDGET,
        webgl_threshold: int = WEBGL_THRESHOLD,
    ) -> None:
        self.store = store
        self.export_dir = Path(export_dir)
        self._exporter = exporter
        self._point_budget = point_budget
        self._webgl_threshold = webgl_threshold
        self._result: RenderResult | None = None
        self._lock = threading.RLock()

    @property
    def current(self) -> RenderResult | None:
        """The last resolved figure, or None before the first render or after reset."""
        return self._result

    def render(self, figure_json: Mapping[str, Any] | str) -> RenderResult:
        """Resolve `figure_json` against the store and make it the current figure."""
        with self._lock:
            self._result = self._resolve(figure_json, None)
            return self._result

    def _resolve(self, spec: Mapping[str, Any] | str, window: TimeRange | None) -> RenderResult:
        return render_plotly_json(
            spec,
            self.store,
            time_range=window,
            point_budget=self._point_budget,
            webgl_threshold=self._webgl_threshold,
        )

    def saved(self) -> dict[str, Any] | None:
        """What to persist: the spec and zoom window (data is re-resolved on restore)."""
        result = self._result
        if result is None:
            return None
        window = result.time_range
        return {
            "spec": result.spec,
            "time_range": None
            if window is None
            else [window.start.isoformat(), window.end.isoformat()],
        }

    def restore(self, saved: Mapping[str, Any]) -> str | None:
        """Re-resolve a persisted figure; return a note instead of failing if data is gone."""
        window_text = saved.get("time_range")
        window = None
        if isinstance(window_text, list) and len(window_text) == 2:  # type: ignore[arg-type]
            start, end = (datetime.fromisoformat(str(t)) for t in window_text)  # type: ignore[misc]
            window = TimeRange(start, end)
        try:
            with self._lock:
                self._result = self._resolve(saved["spec"], window)
        except (UserError, KeyError) as exc:
            self._result = None
            return f"The saved figure could not be restored: {exc}"
        return None

    def _require(self) -> RenderResult:
        if self._result is None:
            raise UserError(NO_PLOT_MESSAGE)
        return self._result

    def manage_plot(self, action: str, **kwargs: Any) -> dict[str, Any]:
        """Run one plot action by name and return a JSON-able result for the model."""
        handlers: dict[str, Callable[..., dict[str, Any]]] = {
            "export": self._export_action,
            "reset": self._reset_action,
            "zoom": self._zoom_action,
            "get_state": self._state_action,
            "add_trace": self._add_trace_action,
            "remove_trace": self._remove_trace_action,
        }
        name = str(action).strip().lower()
        handler = handlers.get(name)
        if handler is None:
            raise UserError(f"Unknown plot action '{action}'. Actions: {', '.join(PLOT_ACTIONS)}.")
        accepted = list(inspect.signature(handler).parameters)
        unexpected = sorted(set(kwargs) - set(accepted))
        if unexpected:
            allowed = ", ".join(accepted) or "no arguments"
            raise UserError(
                f"Plot action '{name}' does not take {', '.join(unexpected)}; it takes {allowed}."
            )
        with self._lock:
            return {"status": "ok", "action": name, **handler(**kwargs)}

    def _export_action(
        self,
        format: str | None = None,
        filename: str | None = None,
        width: int | None = None,
        height: int | None = None,
        scale: float = 1.0,
    ) -> dict[str, Any]:
        path = self.export(format, filename, width=width, height=height, scale=scale)
        return {"path": str(path), "format": path.suffix.lstrip("."), "bytes": path.stat().st_size}

    def _reset_action(self) -> dict[str, Any]:
        self.reset()
        return {"message": "Plot cleared."}

    def _zoom_action(
        self, time_range: str | None = None, start: str | None = None, end: str | None = None
    ) -> dict[str, Any]:
        return self.zoom(time_range, start=start, end=end).summary()

    def _state_action(self) -> dict[str, Any]:
        return self.get_state()

    def _add_trace_action(self, trace: Any = None) -> dict[str, Any]:
        if trace is None:
            raise UserError("add_trace needs 'trace': a trace object with a data_label.")
        return self.add_trace(trace).summary()

    def _remove_trace_action(
        self, name: str | None = None, index: int | None = None
    ) -> dict[str, Any]:
        return self.remove_trace(name=name, index=index).summary()

    def export(
        self,
        fmt: str | None = None,
        filename: str | None = None,
        *,
        width: int | None = None,
        height: int | None = None,
        scale: float = 1.0,
    ) -> Path:
        """Write the current figure as png, pdf or html inside the export folder."""
        with self._lock:
            result = self._require()
            fmt = _export_format(fmt, filename)
            path = self._export_path(filename, fmt)
            if fmt == "html":
                return write_html(result.figure, path)
            exporter = self._exporter or shared_exporter()
            image_format = "pdf" if fmt == "pdf" else "png"
            return exporter.write(
                result.figure, path, image_format, width=width, height=height, scale=scale
            )

    def _export_path(self, filename: str | None, fmt: str) -> Path:
        """Resolve `filename` inside the export folder; refuse anything escaping it."""
        if not filename:
            stamp = datetime.now(UTC).strftime("%Y%m%d_%H%M%S")
            filename = f"xhelio_plot_{stamp}.{fmt}"
        if "\x00" in filename:
            raise UserError("The export filename contains a NUL character; use a plain name.")
        candidate = Path(filename)
        if candidate.name and not candidate.suffix:
            candidate = candidate.with_name(f"{candidate.name}.{fmt}")
        root = self.export_dir.resolve()
        target = (root / candidate).resolve()
        if not target.is_relative_to(root) or target == root:
            raise UserError(
                f"Export filename '{filename}' points outside the export folder {root}; give "
                "a plain file name such as 'ace_field.png'."
            )
        root.mkdir(parents=True, exist_ok=True)
        return target

    def reset(self) -> None:
        """Forget the current figure."""
        with self._lock:
            self._result = None

    def zoom(
        self,
        time_range: str | TimeRange | None = None,
        *,
        start: str | None = None,
        end: str | None = None,
    ) -> RenderResult:
        """Re-resolve the figure for a time window ('full' restores the whole range)."""
        with self._lock:
            result = self._require()
            window = _zoom_window(time_range, start, end)
            self._result = self._resolve(result.spec, window)
            return self._result

    def get_state(self) -> dict[str, Any]:
        """The figure exactly as sent to the browser (data included) and what it holds."""
        with self._lock:
            result = self._require()
            summary = result.summary()
            return {
                "figure": copy.deepcopy(result.figure),
                "panels": summary["panels"],
                "points_sent": summary["points_sent"],
                "time_range": summary["time_range"],
                "traces": summary["traces"],
                "notes": summary["notes"],
            }

    def add_trace(self, trace: Any) -> RenderResult:
        """Append a trace spec (usually with a data_label) and re-resolve the figure."""
        with self._lock:
            result = self._require()
            if not isinstance(trace, Mapping):
                raise UserError("add_trace needs a trace object, e.g. {'data_label': 'ACE.Bmag'}.")
            spec = copy.deepcopy(result.spec)
            spec["data"].append(copy.deepcopy(dict(trace)))
            self._result = self._resolve(spec, result.time_range)
            return self._result

    def remove_trace(self, name: str | None = None, index: int | None = None) -> RenderResult:
        """Remove traces by displayed name or by position in the figure, then re-resolve."""
        with self._lock:
            result = self._require()
            doomed = _traces_to_remove(result, name, index)
            spec = copy.deepcopy(result.spec)
            spec["data"] = _spec_without(result, doomed)
            self._result = self._resolve(spec, result.time_range)
            return self._result


def _export_format(fmt: str | None, filename: str | None) -> str:
    suffix = Path(filename).suffix.lstrip(".").lower() if filename else ""
    chosen = (fmt or suffix or "png").lower().lstrip(".")
    if chosen not in EXPORT_FORMATS:
        raise UserError(f"Cannot export as '{chosen}'; choose one of {', '.join(EXPORT_FORMATS)}.")
    if suffix and suffix != chosen:
        raise UserError(
            f"Filename '{filename}' ends in .{suffix} but the format is {chosen}; make them agree."
        )
    return chosen


def _zoom_window(
    time_range: str | TimeRange | None, start: str | None, end: str | None
) -> TimeRange | None:
    if isinstance(time_range, TimeRange):
        return time_range
    if time_range is not None and (start is not None or end is not None):
        raise UserError("Give zoom either 'time_range' or 'start' and 'end', not both.")
    if time_range is not None:
        if time_range.strip().lower() in _FULL_RANGE_WORDS:
            return None
        return parse_time_range(time_range)
    if start is None or end is None:
        raise UserError(
            "zoom needs 'time_range' (e.g. '2024-01-01 to 2024-01-02'), or both 'start' and "
            "'end' as ISO times, or time_range='full' to show everything."
        )
    return TimeRange(_utc_moment(start, "start"), _utc_moment(end, "end"))


def _utc_moment(text: str, which: str) -> datetime:
    try:
        stamp = pd.Timestamp(text)
    except (ValueError, TypeError) as exc:
        raise BadTimeRangeError(
            f"Could not read zoom {which} {text!r} as a time; use ISO 8601 such as "
            "'2024-01-01T06:00'."
        ) from exc
    if not isinstance(stamp, pd.Timestamp):
        raise BadTimeRangeError(f"Zoom {which} {text!r} is not a time.")
    if stamp.tzinfo is None:
        stamp = stamp.tz_localize("UTC")
    moment: datetime = stamp.tz_convert("UTC").to_pydatetime()
    return moment


def _traces_to_remove(result: RenderResult, name: str | None, index: int | None) -> set[int]:
    """Positions (in the resolved figure) of the traces to remove."""
    count = len(result.traces)
    if index is not None:
        if isinstance(index, bool) or not 0 <= index < count:
            raise UserError(f"No trace at index {index!r}; the figure has {count} (0-{count - 1}).")
        return {index}
    if not name:
        raise UserError("remove_trace needs a trace 'name' or an 'index'.")
    matches = {i for i, t in enumerate(result.traces) if t.name == name}
    if not matches:
        names = ", ".join(repr(t.name) for t in result.traces) or "none"
        raise UserError(f"No trace named {name!r}. Traces: {names}.")
    return matches


def _spec_without(result: RenderResult, doomed: set[int]) -> list[dict[str, Any]]:
    """The spec's traces minus the doomed ones; a partly removed vector is split up."""
    kept: list[dict[str, Any]] = []
    for spec_index, spec_trace in enumerate(result.spec["data"]):
        produced = [i for i, t in enumerate(result.traces) if t.spec_index == spec_index]
        survivors = [i for i in produced if i not in doomed]
        if len(survivors) == len(produced):
            kept.append(spec_trace)
            continue
        for i in survivors:
            kept.append(_component_spec(result, spec_trace, i))
    return kept


def _component_spec(result: RenderResult, spec_trace: dict[str, Any], i: int) -> dict[str, Any]:
    """One surviving component as its own trace, keeping its name and colour."""
    summary = result.traces[i]
    drawn = result.figure["data"][i]
    component: dict[str, Any] = copy.deepcopy(spec_trace)
    component["data_label"] = f"{summary.data_label}.{summary.column}"
    component["name"] = summary.name
    colour = drawn.get("line", {}).get("color")
    if colour:
        component["line"] = {**component.get("line", {}), "color": colour}
    return component
