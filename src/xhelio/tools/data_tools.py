"""Data tools: fetch into the store, list, preview, describe and save entries."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.data.outputs import flat_frame, write_output
from xhelio.errors import UserError
from xhelio.sources.registry import SourceName
from xhelio.tools.context import ToolContext
from xhelio.tools.registry import Produces, tool
from xhelio.tools.results import FetchReport, SavedFile
from xhelio.tools.unknown_ids import nearest_ids_named

__all__ = ["DATA_TOOLS", "entry_summary", "frame_of", "write_entry"]


def frame_of(entry: DataEntry) -> pd.DataFrame:
    """The entry as a DataFrame (a 2-D DataArray becomes one column per bin)."""
    if isinstance(entry.data, pd.DataFrame):
        return entry.data
    array = entry.data
    if array.ndim == 1:
        name = str(array.name or entry.label)
        first_coord = array.coords.get(array.dims[0], None)
        index = pd.Index(first_coord.values if first_coord is not None else np.arange(array.size))
        return pd.DataFrame({name: array.values}, index=index)
    if array.ndim > 2 or any(str(c).endswith("_centers") for c in array.coords):
        # Rank-2+ or per-record bins: one column per element, named by label or bin.
        return flat_frame(entry)
    first, second = array.dims[0], array.dims[1]
    bins = array.coords[second].values if second in array.coords else np.arange(array.shape[1])
    index = pd.Index(
        array.coords[first].values if first in array.coords else np.arange(array.shape[0])
    )
    if entry.is_timeseries:
        index = pd.DatetimeIndex(index).tz_localize("UTC")
    name = array.name or "value"
    # bins may be labels ('x', 'y', 'z') as well as numbers
    columns = [
        f"{name}[{b:g}]" if isinstance(b, int | float | np.number) else f"{name}[{b}]" for b in bins
    ]
    return pd.DataFrame(array.values.reshape(array.shape[0], -1), index=index, columns=columns)


def _time_span(frame: pd.DataFrame, entry: DataEntry) -> dict[str, Any]:
    if not len(frame):
        return {"start": None, "stop": None}
    index = frame.index
    if entry.is_timeseries and isinstance(index, pd.DatetimeIndex):
        ends = index[[0, -1]].to_series()
        return {"start": ends.iloc[0].isoformat(), "stop": ends.iloc[1].isoformat()}
    return {"index_start": index[0], "index_stop": index[-1]}


def entry_summary(entry: DataEntry) -> dict[str, Any]:
    """A short description of an entry for listings."""
    frame = frame_of(entry)
    return {
        "label": entry.label,
        "columns": entry.columns,
        "units": entry.units,
        "points": entry.points,
        "shape": list(entry.data.shape),
        "is_timeseries": entry.is_timeseries,
        "kind": "array" if isinstance(entry.data, xr.DataArray) else "frame",
        "dataset": entry.source_dataset,
        "parameter": entry.source_parameter,
        "description": entry.description,
        **_meaning(entry),
        **_time_span(frame, entry),
    }


def _meaning(entry: DataEntry) -> dict[str, Any]:
    """Display units, dimensions (to choose a slice or reduction) and citation."""
    meaning: dict[str, Any] = {}
    if entry.meta.get("display_units"):
        meaning["display_units"] = entry.meta["display_units"]
    if isinstance(entry.data, xr.DataArray) and entry.data.ndim > 1:
        meaning["dims"] = {str(d): int(entry.data.sizes[d]) for d in entry.data.dims}
    if entry.citation:
        meaning["citation"] = entry.citation
    if entry.citations:
        meaning["citations"] = entry.citations
    return meaning


@tool(
    "data_ops_fetch",
    produces=Produces(result_field="label"),
    time_args=("time_range",),
    result=FetchReport,
)
def fetch_data(
    ctx: ToolContext,
    dataset_id: str,
    parameter_id: str,
    time_range: str,
    source: SourceName | None = None,
    valid_range: bool = False,
) -> dict[str, Any]:
    """Fetch one parameter of a dataset into memory, labelled DATASET.PARAM.

    Fill values become NaN. VALIDMIN/VALIDMAX are not applied unless valid_range is true
    (they can hide real data); the answer's notes then say how many values were masked.
    Over CDF every variable of the files is fetchable by name (support data too).

    Args:
        dataset_id: Dataset id, e.g. AC_H2_MFI.
        parameter_id: Parameter name, e.g. Magnitude or BGSEc.
        time_range: Time range as people write it, e.g. '2024-01-15 to 2024-01-20' or 'last week'.
        source: The data source serving the dataset (the 'source' of a search result);
            default from settings ('hapi': CDAWeb's HAPI server, 'cdf': CDAWeb's files).
        valid_range: Also mask values outside VALIDMIN/VALIDMAX (counted in the notes).
    """
    with nearest_ids_named(ctx.catalog):
        reports = ctx.fetcher(source).fetch(
            dataset_id, [parameter_id], time_range, valid_range=valid_range
        )
    return reports[0].to_dict()


@tool("data_ops_fetch", phase="discover")
def list_fetched_data(ctx: ToolContext) -> dict[str, Any]:
    """List every labelled entry in memory with columns, units, points and time span."""
    return {"entries": [entry_summary(e) for e in ctx.store]}


@tool("data_ops_compute", phase="discover", reads=("label",))
def preview_data(ctx: ToolContext, label: str, n: int = 5) -> dict[str, Any]:
    """Show the first and last n rows of an entry.

    Args:
        label: Label of the entry, e.g. AC_H2_MFI.BGSEc.
        n: Rows to show from each end (1-50).
    """
    n = max(1, min(n, 50))
    entry = ctx.store.get(label)
    frame = frame_of(entry)

    def rows(part: pd.DataFrame) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for index, values in part.iterrows():
            stamp = index.isoformat() if isinstance(index, pd.Timestamp) else index
            # Missing values (fill) show as null, never as a raw fill number.
            cells = {str(k): None if pd.isna(v) else v for k, v in values.items()}
            out.append({"index": stamp, **cells})
        return out

    return {
        "label": label,
        "points": len(frame),
        "head": rows(frame.head(n)),
        "tail": rows(frame.tail(n)),
    }


@tool("data_ops_compute", phase="discover", reads=("label",))
def describe_data(ctx: ToolContext, label: str) -> dict[str, Any]:
    """Statistics of an entry: min, max, mean, std, percentiles, NaN share, cadence, coverage.

    Args:
        label: Label of the entry.
    """
    entry = ctx.store.get(label)
    frame = frame_of(entry)
    stats: dict[str, Any] = {}
    for column in frame.columns:
        values = np.asarray(pd.to_numeric(frame[column], errors="coerce"), dtype=float)
        valid = values[~np.isnan(values)]
        quantiles = (0.05, 0.25, 0.5, 0.75, 0.95)
        std = float(valid.std(ddof=1)) if valid.size > 1 else None
        # Statistics to the digits the data's spread makes meaningful, not float noise.
        resolution = _resolution(valid, std)
        stats[str(column)] = {
            "units": entry.units.get(str(column), entry.units.get(str(entry.columns[0]), "")),
            "min": _rounded(float(valid.min()), resolution) if valid.size else None,
            "max": _rounded(float(valid.max()), resolution) if valid.size else None,
            "mean": _rounded(float(valid.mean()), resolution) if valid.size else None,
            "std": _rounded(std, resolution) if std is not None else None,
            "percentiles": {
                f"p{round(q * 100)}": _rounded(float(np.quantile(valid, q)), resolution)
                for q in quantiles
            }
            if valid.size
            else {},
            "nan_fraction": round(float(1 - valid.size / values.size), 4) if values.size else 1.0,
        }
    result: dict[str, Any] = {"label": label, "points": len(frame), "columns": stats}
    result.update(_time_span(frame, entry))
    if entry.is_timeseries and isinstance(frame.index, pd.DatetimeIndex) and len(frame) > 1:
        steps = np.diff(frame.index.asi8) / 1e9
        result["cadence_s"] = float(np.median(steps))
        result["largest_gap_s"] = float(steps.max())
    return result


def _resolution(valid: np.ndarray, std: float | None) -> float:
    """The smallest step worth showing: a hundredth of the spread, else 4 significant figures."""
    if std is not None and np.isfinite(std) and std > 0:
        return std / 100
    largest = float(np.abs(valid).max()) if valid.size else 0.0
    return largest * 1e-4 if np.isfinite(largest) and largest > 0 else 0.0


def _rounded(value: float, resolution: float) -> float:
    """`value` to the decade of `resolution`, and never to more than 6 significant figures."""
    if not np.isfinite(value) or value == 0:
        return value
    value = float(f"{value:.6g}")
    if resolution <= 0 or not np.isfinite(resolution):
        return value
    return round(value, max(0, -math.floor(math.log10(resolution))))


_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def write_entry(entry: DataEntry, folder: Path, fmt: str, filename: str | None = None) -> Path:
    """Write `entry` as csv/parquet/nc into `folder`; refuse names escaping it.

    The file itself is written by `xhelio.data.outputs.write_output`, the one writer of
    data files: units in the CSV header, a ``.meta.json`` sidecar, parquet field
    metadata, netCDF attributes, atomic writes.

    Raises:
        UserError: unknown format, a name outside `folder`, or data the format cannot hold.
    """
    suffix = {"csv": ".csv", "parquet": ".parquet", "netcdf": ".nc", "nc": ".nc"}.get(fmt)
    if suffix is None:
        raise UserError(f"Unknown format '{fmt}'. Use csv, parquet or netcdf.")
    name = filename or _SAFE_NAME.sub("_", entry.label) + suffix
    folder = folder.resolve()
    target = (folder / name).resolve()
    if folder not in target.parents:
        raise UserError(
            f"Refusing to write '{name}': files can only be saved inside {folder}. "
            "Give a plain file name."
        )
    if target.suffix != suffix:
        target = target.with_suffix(suffix)
    try:
        write_output([entry], target)
    except (ValueError, TypeError, pa.ArrowException) as exc:
        # e.g. a column mixing numbers and text, which parquet and netCDF cannot type
        raise UserError(f"Could not save {entry.label} as {fmt}: {exc}") from exc
    return target


@tool("data_ops_compute", phase="export", reads=("label",), result=SavedFile)
def save_data(
    ctx: ToolContext,
    label: str,
    format: Literal["csv", "parquet", "netcdf"] = "csv",
    filename: str | None = None,
) -> dict[str, Any]:
    """Save an entry to a file in the session's export folder (CSV, parquet or netCDF).

    Args:
        label: Label of the entry.
        format: csv (index column first: time, UTC, for timeseries), parquet or netcdf.
        filename: Optional plain file name inside the export folder.
    """
    path = write_entry(ctx.store.get(label), ctx.export_dir, format, filename)
    return {"path": str(path), "bytes": path.stat().st_size}


DATA_TOOLS = [fetch_data, list_fetched_data, preview_data, describe_data, save_data]
