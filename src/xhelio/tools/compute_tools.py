"""Compute tools: custom_operation in the sandbox, and scientific function docs."""

from __future__ import annotations

from typing import Any

import pandas as pd
import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.errors import SandboxError, UserError
from xhelio.sandbox.function_docs import get_function_docs as lookup_function_docs
from xhelio.sandbox.function_docs import search_function_docs as rank_function_docs
from xhelio.sandbox.ops_library import ProvingRun
from xhelio.tools.context import ToolContext
from xhelio.tools.data_tools import entry_summary
from xhelio.tools.registry import Produces, tool
from xhelio.tools.results import EntrySummary

__all__ = ["COMPUTE_TOOLS", "adopt_result"]


def _restore_time_index(
    frame: pd.DataFrame, first: pd.DataFrame | xr.DataArray, notes: list[str]
) -> pd.DataFrame:
    """Give a result computed from timeseries back its UTC DatetimeIndex where possible.

    Never parses text: a time column was already made the index in the sandbox child
    (`sandbox.prepare`), under the call's limits; here only cheap, vectorised steps run.
    """
    if isinstance(frame.index, pd.DatetimeIndex):
        return frame if frame.index.tz is not None else frame.tz_localize("UTC")
    source_index = first.index if isinstance(first, pd.DataFrame) else None
    if source_index is not None and len(source_index) == len(frame):
        notes.append("The result lost its time index; the source's time index was reattached.")
        return frame.set_axis(source_index, axis=0)
    return frame


def _carried_units(
    columns: list[str], sources: list[DataEntry], declared: dict[str, str] | str | None
) -> dict[str, str]:
    if isinstance(declared, str):
        return dict.fromkeys(columns, declared)
    known: dict[str, str] = {}
    for entry in sources:
        known.update(entry.units)
    declared = declared or {}
    return {c: declared.get(c, known.get(c, "")) for c in columns}


def adopt_result(
    value: Any,
    output_label: str,
    sources: list[DataEntry],
    description: str,
    units: dict[str, str] | str | None = None,
) -> tuple[DataEntry, list[str]]:
    """Turn a sandbox result into a DataEntry: time index, is_timeseries, units, citations."""
    entry, notes = _adopt(value, output_label, sources, description, units)
    cited = [c for s in sources for c in s.citations]
    if cited:
        entry.meta["citations"] = list({repr(sorted(c.items())): c for c in cited}.values())
    return entry, notes


def _adopt(
    value: Any,
    output_label: str,
    sources: list[DataEntry],
    description: str,
    units: dict[str, str] | str | None,
) -> tuple[DataEntry, list[str]]:
    notes: list[str] = []
    all_timeseries = all(s.is_timeseries for s in sources)
    if isinstance(value, xr.DataArray):
        name = str(value.name or output_label)
        unit = units if isinstance(units, str) else (units or {}).get(name, "")
        if not unit and len(sources) == 1:
            unit = next(iter(sources[0].units.values()), "")
        entry = DataEntry(
            output_label, value, {name: unit}, description, None, None, "time" in value.dims
        )
        return entry, notes
    if isinstance(value, pd.DataFrame):
        frame = value
    else:
        frame = pd.DataFrame({output_label.rsplit(".", 1)[-1]: [value]}, index=pd.Index(["value"]))
    if all_timeseries and not isinstance(value, int | float | str | bool):
        frame = _restore_time_index(frame, sources[0].data, notes)
    frame.columns = [str(c) for c in frame.columns]
    is_timeseries = isinstance(frame.index, pd.DatetimeIndex)
    carried = _carried_units(list(frame.columns), sources, units)
    unknown = [c for c, u in carried.items() if not u]
    if unknown and any(u for s in sources for u in s.units.values()):
        notes.append(
            f"Units of {', '.join(unknown[:5])} are unknown (only columns keeping a source "
            "column's name keep its unit); call again with units= to label the axis."
        )
    entry = DataEntry(
        output_label,
        frame,
        carried,
        description,
        None,
        None,
        is_timeseries,
    )
    return entry, notes


def _proving_run(
    sources: list[DataEntry], entry: DataEntry, warnings: tuple[str, ...]
) -> ProvingRun:
    """What this run proves about its code (the ops library keeps clean runs on real data)."""
    return ProvingRun(
        real_data=any(s.source_dataset is not None for s in sources),
        clean=not warnings and entry.points > 0,
        input_columns=tuple(c for s in sources for c in s.columns),
        output_kind=type(entry.data).__name__,
        units=tuple(u for u in entry.units.values() if u),
    )


def _held_bytes(data: pd.DataFrame | xr.DataArray) -> int:
    if isinstance(data, xr.DataArray):
        return int(data.nbytes)
    return int(data.memory_usage(index=True, deep=False).sum())


def _check_session_results(ctx: ToolContext, entry: DataEntry) -> None:
    """Refuse a result that would take the session's computed data past its cap.

    Computed entries are those without a source dataset; a result replacing one of
    the same label frees its size.
    """
    cap_mb = ctx.settings.sandbox_session_result_mb
    held = sum(
        _held_bytes(e.data)
        for e in ctx.store
        if e.source_dataset is None and e.label != entry.label
    )
    total = held + _held_bytes(entry.data)
    if total > cap_mb * 2**20:
        raise SandboxError(
            f"The result '{entry.label}' would bring this session's computed data to "
            f"{total / 2**20:.0f} MB, over its {cap_mb} MB cap (sandbox_session_result_mb). "
            "Return less data (resample, select columns or a time range), or reuse the "
            "output_label of a result no longer needed.",
            "output",
        )


@tool(
    "data_ops_compute",
    produces=Produces(argument="output_label"),
    reads=("source_labels",),
    result=EntrySummary,
    runs_code=True,
)
def custom_operation(
    ctx: ToolContext,
    source_labels: list[str],
    code: str,
    output_label: str,
    description: str = "",
    units: dict[str, str] | str | None = None,
) -> dict[str, Any]:
    """Run pandas/numpy/scipy/pywt code on stored data in the sandbox and store `result`.

    The code sees `df` (the first source), `sources` (label -> DataFrame/DataArray),
    `pd`, `np`, `xr`, `scipy`, `pywt` and `analysis` (standard methods with their
    references, e.g. `analysis.minimum_variance(df[['bx', 'by', 'bz']])['normal']`,
    `analysis.welch_psd(df['bx'])`; see search_function_docs), and must assign `result`
    (DataFrame, Series, DataArray or scalar). No imports, no file or network access.

    Args:
        source_labels: Labels of the inputs; the first is `df`.
        code: Python code assigning `result`, e.g.
            "result = df.pow(2).sum(axis=1).pow(0.5).to_frame('Bmag')".
        output_label: Label for the result, e.g. 'ACE_Bmag'.
        description: What the operation computes (kept with the result).
        units: Units of the result: one string for all columns, or column -> unit.
    """
    if not source_labels:
        raise UserError("custom_operation needs at least one source label.")
    if not output_label.strip():
        raise UserError("custom_operation needs a non-empty output_label.")
    entries = [ctx.store.get(label) for label in source_labels]
    outcome = ctx.sandbox.run(code, {e.label: e.data for e in entries})
    entry, notes = adopt_result(outcome.value, output_label, entries, description, units)
    _check_session_results(ctx, entry)
    ctx.store.put(entry)
    library_entry = ctx.ops_library.record(
        code, description, list(source_labels), _proving_run(entries, entry, outcome.warnings)
    )
    ctx.session.events.publish(
        "data_computed", tool="custom_operation", summary=f"{output_label} ({entry.points} points)"
    )
    result: dict[str, Any] = {**entry_summary(entry), "notes": notes + list(outcome.warnings)}
    if outcome.kind == "scalar":
        result["value"] = outcome.value
    if outcome.stdout:
        result["stdout"] = outcome.stdout
    if library_entry is not None:
        result["saved_to_library"] = library_entry.id
    return result


@tool("function_docs")
def search_function_docs(ctx: ToolContext, query: str, limit: int = 10) -> dict[str, Any]:
    """Search scipy.signal/fft/interpolate/stats/integrate and pywt functions by keywords.

    Args:
        query: Words such as 'bandpass filter' or 'continuous wavelet'.
        limit: Maximum results.
    """
    return {"results": rank_function_docs(query, max(1, min(limit, 50)), settings=ctx.settings)}


@tool("function_docs")
def get_function_docs(ctx: ToolContext, name: str) -> dict[str, Any]:
    """Full signature and docstring of one function, e.g. scipy.signal.butter.

    Args:
        name: Full or short function name.
    """
    return dict(lookup_function_docs(name, settings=ctx.settings))


COMPUTE_TOOLS = [custom_operation, search_function_docs, get_function_docs]
