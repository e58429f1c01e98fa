"""Spectrograms: which dimension is drawn, how cells are placed, where gaps are.

- `reduce_to_bins` picks the bin dimension of a multi-dimensional DataArray (energy or
  frequency first) and reduces the others (mean by default, or a chosen index/value or
  sum), saying what it did.
- `bin_cells` gives each record's cell edges along that dimension: explicit edges
  (DELTA_PLUS/MINUS, low/high pairs, HAPI ranges) when the data has them, otherwise
  edges between centres; per-record bins stay per record.
- `raster` places every record's cells at their own bins on one y grid (the union of
  all edges), so records with other bins are drawn at their own energies.
- `time_columns` groups records into columns that never cross a data gap and returns
  contiguous time edges with an empty column inside every gap: nothing is painted where
  there were no records.

Imports only `errors` and `sources.dims` from xhelio.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import xarray as xr

from xhelio.errors import UserError
from xhelio.sources.dims import edges_from_centres

__all__ = [
    "GAP_FACTOR",
    "BinCells",
    "bin_cells",
    "raster",
    "reduce_to_bins",
    "time_columns",
]

FloatArray = npt.NDArray[np.float64]
GAP_FACTOR = 10
"""A step longer than this many median steps is a gap (the line-trace rule)."""
_MAX_Y_EDGES = 400
_PREFERRED = re.compile(r"energ|freq|channel|mass|ebin|e_bin|wave|\bk\b|rigidity", re.I)
_PREFERRED_UNITS = re.compile(r"ev\b|hz\b|nuc|/q\b", re.I)


@dataclass(frozen=True)
class BinCells:
    """Cell edges along the bin dimension: `low`/`high` are (1 or records, bins)."""

    low: FloatArray
    high: FloatArray
    name: str
    units: str
    title: str = ""


def _bins_score(array: xr.DataArray, dim: str) -> tuple[int, int, int]:
    coord_names = [dim, f"{dim}_centers", f"{dim}_low"]
    numeric = any(
        c in array.coords and np.issubdtype(array.coords[c].dtype, np.number) for c in coord_names
    )
    units = next(
        (str(array.coords[c].attrs.get("units", "")) for c in coord_names if c in array.coords), ""
    )
    preferred = bool(_PREFERRED.search(dim)) or bool(_PREFERRED_UNITS.search(units))
    return (int(numeric), int(preferred), array.sizes[dim])


def reduce_to_bins(
    array: xr.DataArray,
    bins_dim: str | None = None,
    select: dict[str, Any] | None = None,
    reduce: str = "mean",
) -> tuple[xr.DataArray, str, list[str]]:
    """Reduce `array` to (time, bins): returns the array, the bin dim and notes.

    `select` maps other dims to an index (int) or a label/value to take; every other
    non-bin dim is reduced with `reduce` ("mean", "sum", "max", "min"), NaN-aware.
    """
    time_dim = "time" if "time" in array.dims else str(array.dims[0])
    others = [str(d) for d in array.dims if d != time_dim]
    if not others:
        raise UserError(f"'{array.name}' has only a time dimension; draw it as a line.")
    if bins_dim is None:
        bins_dim = max(others, key=lambda d: _bins_score(array, d))
    elif bins_dim not in others:
        raise UserError(
            f"'{array.name}' has no dimension '{bins_dim}'; its dimensions: {', '.join(others)}."
        )
    notes: list[str] = []
    for dim, choice in (select or {}).items():
        if dim not in others or dim == bins_dim:
            raise UserError(
                f"Cannot select on '{dim}': '{array.name}' has dimensions {', '.join(others)} "
                f"and '{bins_dim}' is drawn on y."
            )
        array = _select(array, dim, choice)
        notes.append(f"{array.name}: took {dim} = {choice!r}.")
    if reduce not in {"mean", "sum", "max", "min"}:
        raise UserError(f"Unknown reduction '{reduce}': use mean, sum, max or min.")
    for dim in [str(d) for d in array.dims if d not in (time_dim, bins_dim)]:
        size = array.sizes[dim]
        keep = {c for c in array.coords if dim not in array.coords[c].dims}
        with np.errstate(all="ignore"), warnings.catch_warnings():
            # An all-NaN slice reduces to NaN: the right answer, not a warning.
            warnings.simplefilter("ignore", RuntimeWarning)
            array = getattr(array, reduce)(dim=dim, skipna=True, keep_attrs=True)
        array = array.drop_vars([c for c in array.coords if c not in keep and c not in array.dims])
        notes.append(
            f"{array.name}: {reduce} over {dim} ({size} values) to draw one spectrogram over "
            f"{bins_dim}; choose a slice with select={{'{dim}': index}} or another reduction."
        )
    return array.transpose(time_dim, bins_dim), bins_dim, notes


def _select(array: xr.DataArray, dim: str, choice: Any) -> xr.DataArray:
    label = f"{dim}_label"
    if isinstance(choice, str) and label in array.coords:
        labels = [str(v) for v in array.coords[label].values]
        if choice in labels:
            return array.isel({dim: labels.index(choice)})
    if isinstance(choice, int) and not isinstance(choice, bool):
        if not 0 <= choice < array.sizes[dim]:
            raise UserError(f"{dim} index {choice} is outside 0..{array.sizes[dim] - 1}.")
        return array.isel({dim: choice})
    if dim in array.coords:
        return array.sel({dim: choice}, method="nearest")
    raise UserError(f"Cannot take {dim} = {choice!r}: give an index (0..{array.sizes[dim] - 1}).")


def bin_cells(array: xr.DataArray, bins_dim: str) -> BinCells:
    """Each record's cell edges along `bins_dim` of a (time, bins) array."""
    n = array.sizes[bins_dim]
    units = ""
    low = high = None
    for suffix in ("_low", "_high"):
        key = f"{bins_dim}{suffix}"
        if key in array.coords:
            units = units or str(array.coords[key].attrs.get("units", ""))
    if f"{bins_dim}_low" in array.coords and f"{bins_dim}_high" in array.coords:
        low = _as_rows(array.coords[f"{bins_dim}_low"], n)
        high = _as_rows(array.coords[f"{bins_dim}_high"], n)
    else:
        centres = None
        for key in (f"{bins_dim}_centers", bins_dim):
            if key in array.coords and np.issubdtype(array.coords[key].dtype, np.number):
                centres = _as_rows(array.coords[key], n)
                units = units or str(array.coords[key].attrs.get("units", ""))
                break
        if centres is None:
            centres = np.arange(n, dtype=np.float64)[None, :]
        low, high = edges_from_centres(centres)
    if low.shape[0] != high.shape[0]:
        rows = max(low.shape[0], high.shape[0])
        low, high = np.broadcast_to(low, (rows, n)), np.broadcast_to(high, (rows, n))
    if low.shape[0] > 1 and _all_rows_equal(low) and _all_rows_equal(high):
        low, high = low[:1], high[:1]
    title = ""
    for key in (bins_dim, f"{bins_dim}_centers", f"{bins_dim}_low"):
        if key in array.coords and array.coords[key].attrs.get("long_name"):
            title = str(array.coords[key].attrs["long_name"])
            break
    return BinCells(np.minimum(low, high), np.maximum(low, high), bins_dim, units, title)


def _as_rows(coord: xr.DataArray, n: int) -> FloatArray:
    values = np.asarray(coord.to_numpy(), dtype=np.float64)
    return values.reshape(-1, n)


def _all_rows_equal(rows: FloatArray) -> bool:
    return bool(np.all((rows == rows[0]) | (np.isnan(rows) & np.isnan(rows[0]))))


def raster(values: FloatArray, cells: BinCells, log_y: bool) -> tuple[FloatArray, FloatArray]:
    """Place (columns, bins) `values` on one y grid: returns (y edges, z of (rows, columns)).

    `cells.low/high` have one row, or one row per column (per-record bins). A grid row is
    coloured by the cell of that column containing it; rows no cell covers stay empty.
    """
    low, high = cells.low, cells.high
    edges = np.unique(np.concatenate([low[np.isfinite(low)], high[np.isfinite(high)]]))
    if log_y:
        edges = edges[edges > 0]
    if edges.size < 2:
        edges = np.array([0.0, 1.0])
    if edges.size > _MAX_Y_EDGES:
        lo, hi = float(edges[0]), float(edges[-1])
        edges = (
            np.geomspace(lo, hi, _MAX_Y_EDGES)
            if log_y and lo > 0
            else np.linspace(lo, hi, _MAX_Y_EDGES)
        )
    mids = np.sqrt(edges[:-1] * edges[1:]) if log_y else (edges[:-1] + edges[1:]) / 2
    z = np.full((mids.size, values.shape[0]), np.nan)
    if low.shape[0] == 1:
        groups = np.zeros(values.shape[0], dtype=np.int64)
        sets_low, sets_high = low, high
    else:
        stacked = np.concatenate([low, high], axis=1)
        filled = np.where(np.isnan(stacked), -np.inf, stacked)
        unique, groups = np.unique(filled, axis=0, return_inverse=True)
        groups = groups.ravel()
        n = low.shape[1]
        sets_low = np.where(np.isinf(unique[:, :n]), np.nan, unique[:, :n])
        sets_high = np.where(np.isinf(unique[:, n:]), np.nan, unique[:, n:])
    for g in range(sets_low.shape[0]):
        inside = (sets_low[g][None, :] <= mids[:, None]) & (mids[:, None] < sets_high[g][None, :])
        has = inside.any(axis=1)
        which = inside.argmax(axis=1)
        columns = np.flatnonzero(groups == g)
        if columns.size == 0 or not has.any():
            continue
        z[np.ix_(np.flatnonzero(has), columns)] = values[np.ix_(columns, which[has])].T
    return edges, z


def time_columns(
    times: pd.DatetimeIndex, max_columns: int
) -> tuple[list[tuple[int, int]], npt.NDArray[np.int64], list[int]]:
    """Group records into at most about `max_columns` columns that never span a gap.

    Returns (first, last) record positions per column, the column edges as int64 ns
    (one more than the number of drawn columns, gap columns included) and the positions
    (in the drawn sequence) of the empty columns that fill gaps.
    """
    stamps = np.asarray(times.as_unit("ns").asi8, dtype=np.int64)
    n = stamps.size
    if n == 0:
        return [], np.empty(0, dtype=np.int64), []
    steps = np.diff(stamps)
    typical = int(np.median(steps)) if steps.size else 1_000_000_000
    typical = max(typical, 1)
    breaks = np.flatnonzero(steps > GAP_FACTOR * typical) + 1 if steps.size else np.empty(0, int)
    bounds = [0, *breaks.tolist(), n]
    segments = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
    columns: list[tuple[int, int]] = []
    edges: list[int] = []
    gap_positions: list[int] = []
    per_column = max(1, -(-n // max(1, max_columns)))
    for k, (start, stop) in enumerate(segments):
        if k:
            gap_positions.append(len(columns) + len(gap_positions))
        seg_edges = _segment_edges(stamps[start:stop], typical)
        for first in range(start, stop, per_column):
            last = min(first + per_column, stop) - 1
            columns.append((first, last))
            edges.append(int(seg_edges[first - start]))
        edges.append(int(seg_edges[stop - start]))
    # Consecutive segments: the end of one and the start of the next bound the gap column.
    return columns, np.asarray(edges, dtype=np.int64), gap_positions


def _segment_edges(stamps: npt.NDArray[np.int64], typical: int) -> npt.NDArray[np.int64]:
    """Record boundaries of one gap-free segment: midpoints, half a step outside the ends."""
    if stamps.size == 1:
        return np.array([stamps[0] - typical // 2, stamps[0] + typical // 2], dtype=np.int64)
    mids = stamps[:-1] + np.diff(stamps) // 2
    first = stamps[0] - (mids[0] - stamps[0])
    last = stamps[-1] + (stamps[-1] - mids[-1])
    return np.concatenate([[first], mids, [last]]).astype(np.int64)
