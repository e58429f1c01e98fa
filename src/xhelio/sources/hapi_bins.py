"""HAPI bins on fetched data: constant or time-varying, one axis per dimension.

A HAPI parameter's `bins` give, per dimension, `centers` and `ranges` either as numbers
or as the *name of another parameter* holding them per record (time-varying bins).
`with_bins_parameters` adds those parameters to a request; `attach_bins` turns the
answer into `ParameterData` whose `meta["dims"]` describe every dimension and whose
frame carries per-record bins as support columns (see `sources.dims`).
Imports only `catalog.model` and `sources.base` / `sources.dims`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from xhelio.catalog.model import BinsAxis, DatasetInfo, ParameterInfo
from xhelio.sources.base import ParameterData
from xhelio.sources.dims import support_column_prefix

__all__ = ["attach_bins", "with_bins_parameters"]


def _referenced(p: ParameterInfo) -> list[str]:
    names: list[str] = []
    for axis in p.bins_axes:
        names += [n for n in (axis.centers_param, axis.ranges_param) if n]
    return names


def with_bins_parameters(info: DatasetInfo, wanted: Sequence[ParameterInfo]) -> list[ParameterInfo]:
    """`wanted` plus the parameters its time-varying bins name, in /info order."""
    names = {p.name for p in wanted}
    for p in wanted:
        names.update(_referenced(p))
    return [p for p in info.data_parameters if p.name in names]


def _dim(axis: BinsAxis, size: int) -> dict[str, Any]:
    dim: dict[str, Any] = {"name": axis.name, "size": size, "units": axis.units}
    dim["is_bins"] = bool(axis.centers or axis.centers_param or axis.low or axis.ranges_param)
    if axis.centers is not None and len(axis.centers) == size:
        dim["centers"] = [None if np.isnan(v) else v for v in axis.centers]
    if axis.low is not None and axis.high is not None and len(axis.low) == size:
        dim["low"] = [None if np.isnan(v) else v for v in axis.low]
        dim["high"] = [None if np.isnan(v) else v for v in axis.high]
    if axis.labels is not None:
        dim["labels"] = list(axis.labels)
    dim["source"] = "HAPI bins"
    return dim


def attach_bins(
    wanted: Sequence[ParameterInfo], fetched: dict[str, ParameterData], notes: list[str]
) -> dict[str, ParameterData]:
    """Return the wanted parameters with their dims (and per-record bins) attached."""
    result: dict[str, ParameterData] = {}
    for p in wanted:
        data = fetched[p.name]
        meta: dict[str, Any] = dict(data.meta)
        if notes:
            meta["notes"] = list(notes)
        if p.fill is not None:
            meta["fill"] = p.fill
        sizes = list(p.size or ())
        # A distribution (every dimension channels: pitch angle x energy) keeps its shape
        # without bins, so a spectrogram draws one dimension and reduces the others; a
        # 3 x 3 tensor or a plain vector stays columns.
        shaped = len(sizes) > 1 and min(sizes) >= 4
        if not sizes or not (p.bins_axes or shaped):
            result[p.name] = replace(data, meta=meta)
            continue
        dims: list[dict[str, Any]] = []
        frame = data.frame
        for k, size in enumerate(sizes):
            axis = p.bins_axes[k] if k < len(p.bins_axes) else BinsAxis(name=f"{p.name}_dim{k + 1}")
            dim = _dim(axis, size)
            if axis.centers_param and axis.centers_param in fetched:
                block = fetched[axis.centers_param].frame.to_numpy(dtype=np.float64)
                if block.shape[1] == size:
                    prefix = support_column_prefix(axis.name, "centers")
                    frame = frame.assign(**{f"{prefix}{i}": block[:, i] for i in range(size)})
                    dim["centers_column"] = prefix
                    dim["is_bins"] = True
                    dim["source"] = f"HAPI bins, centers from parameter {axis.centers_param}"
            if axis.ranges_param and axis.ranges_param in fetched:
                block = fetched[axis.ranges_param].frame.to_numpy(dtype=np.float64)
                if block.shape[1] == 2 * size:
                    pairs = block.reshape(-1, size, 2)
                    for kind, j in (("low", 0), ("high", 1)):
                        prefix = support_column_prefix(axis.name, kind)
                        columns = {f"{prefix}{i}": pairs[:, i, j] for i in range(size)}
                        frame = frame.assign(**columns)
                        dim[f"{kind}_column"] = prefix
                    dim["is_bins"] = True
            dims.append(dim)
        meta["dims"] = dims
        time_varying = any(k.endswith("_column") for d in dims for k in d)
        result[p.name] = replace(
            data,
            frame=frame,
            meta=meta,
            bins=None if (time_varying or len(sizes) > 1) else data.bins,
        )
    return result
