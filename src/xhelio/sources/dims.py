"""The shape of multi-dimensional parameters, shared by the CDF and HAPI readers.

A source returns a flat table (one column per value of a record, C order) plus, in
`ParameterData.meta["dims"]`, one JSON-able record per non-time dimension:

``name`` (from DEPEND_i, a HAPI bins name, or ``PARAM_dimN``), ``size``, ``units``,
``is_bins`` (numeric bin axis, drawn as y of a spectrogram, vs. labels/components),
``centers`` / ``low`` / ``high`` (constant values), ``centers_column`` /
``low_column`` / ``high_column`` (prefix of per-record columns ``{prefix}{i}`` in the
frame, for bins that change from record to record), ``labels`` and ``source`` (where the
values came from, e.g. ``DEPEND_1 energy``; ``edges from DELTA_PLUS_VAR``).

Per-record bin columns ride in the same frame as the data so the time cache slices them
with the data; `split_support_columns` separates them again. Imports nothing from xhelio.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = [
    "SUPPORT_PREFIX",
    "edges_from_centres",
    "split_support_columns",
    "support_column_prefix",
]

SUPPORT_PREFIX = "__bins__"
"""Frame columns starting with this hold per-record bin values, not data."""


def support_column_prefix(dim: str, kind: str) -> str:
    """Prefix of the per-record columns of `kind` (centers, low, high) of dimension `dim`."""
    return f"{SUPPORT_PREFIX}{dim}__{kind}__"


def split_support_columns(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split `frame` into (data columns, per-record bin columns)."""
    support = [c for c in frame.columns if str(c).startswith(SUPPORT_PREFIX)]
    if not support:
        return frame, frame.iloc[:, :0]
    data = [c for c in frame.columns if not str(c).startswith(SUPPORT_PREFIX)]
    return cast(pd.DataFrame, frame[data]), cast(pd.DataFrame, frame[support])


def per_record(
    support: pd.DataFrame, prefix: str | None, size: int
) -> npt.NDArray[np.float64] | None:
    """The (records, size) array of per-record values stored under `prefix`, if present."""
    if not prefix:
        return None
    names = [f"{prefix}{i}" for i in range(size)]
    if not all(n in support.columns for n in names):
        return None
    return support[names].to_numpy(dtype=np.float64)


def edges_from_centres(
    centres: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(low, high) cell edges of bins known only by centres, along the last axis.

    Geometric midpoints when every centre is positive and they span more than a decade
    (energy and frequency tables are logarithmic), arithmetic midpoints otherwise; the
    outer edges mirror the nearest inner one.
    """
    c = np.asarray(centres, dtype=np.float64)
    n = c.shape[-1]
    if n == 0:
        return c.copy(), c.copy()
    if n == 1:
        half = np.where(np.isfinite(c) & (c != 0), np.abs(c) * 0.5, 0.5)
        return c - half, c + half
    with np.errstate(all="ignore"):
        finite = c[np.isfinite(c)]
        logarithmic = (
            finite.size > 0 and bool(np.all(finite > 0)) and (finite.max() / finite.min() > 10)
        )
        work = np.log10(c) if logarithmic else c
        mids = (work[..., 1:] + work[..., :-1]) / 2
        first = work[..., :1] - (mids[..., :1] - work[..., :1])
        last = work[..., -1:] + (work[..., -1:] - mids[..., -1:])
        edges = np.concatenate([first, mids, last], axis=-1)
        if logarithmic:
            edges = 10.0**edges
    low, high = edges[..., :-1], edges[..., 1:]
    # Bins listed high to low: each cell still spans from its lower to its upper edge.
    return np.minimum(low, high), np.maximum(low, high)


def jsonable(values: Any) -> list[Any]:
    """Numbers for JSON metadata (NaN becomes None)."""
    array = np.asarray(values, dtype=np.float64).ravel()
    return [None if not np.isfinite(v) else float(v) for v in array]


def _same(a: Any, b: Any) -> bool:
    return np.array_equal(
        np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True
    )


def to_per_record(
    frames: list[pd.DataFrame], dims_per_piece: list[list[dict[str, Any]]]
) -> tuple[list[pd.DataFrame], list[dict[str, Any]]]:
    """Join the dims of several pieces (files) of one parameter.

    Bins constant within each file but different between files (an instrument mode
    change) become per-record columns, so every record keeps its own bins.
    """
    if not dims_per_piece or not dims_per_piece[0]:
        return frames, dims_per_piece[0] if dims_per_piece else []
    merged = [dict(d) for d in dims_per_piece[0]]
    frames = list(frames)
    for position, dim in enumerate(merged):
        for kind in ("centers", "low", "high"):
            values = [d[position].get(kind) if position < len(d) else None for d in dims_per_piece]
            if all(v is None for v in values) or all(
                v is not None and _same(v, values[0]) for v in values
            ):
                continue
            if any(
                v is None and not (position < len(d) and d[position].get(f"{kind}_column"))
                for v, d in zip(values, dims_per_piece, strict=True)
            ):
                continue
            prefix = support_column_prefix(str(dim["name"]), kind)
            size = int(dim["size"])
            names = [f"{prefix}{i}" for i in range(size)]
            for k, (frame, value) in enumerate(zip(frames, values, strict=True)):
                if value is None:
                    continue
                row = np.asarray([np.nan if v is None else v for v in value], dtype=np.float64)
                block = np.broadcast_to(row, (len(frame), size))
                frames[k] = frame.assign(**dict(zip(names, block.T, strict=True)))
            dim.pop(kind, None)
            dim[f"{kind}_column"] = prefix
    return frames, merged
