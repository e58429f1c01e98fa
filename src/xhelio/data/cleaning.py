"""The one cleaning rule for every source, and the explicit valid-range option.

Fill values are NaN already when data leaves a source (CDF FILLVAL and HAPI `fill`
alike). VALIDMIN/VALIDMAX are *not* applied by default: they mask real data too often
(DE-2's VALIDMIN=0 on a signed longitude hides hundreds of genuine negative values).
`apply_valid_range` applies them on request, the same way whichever source the data
came from, and says how many values it masked. Imports only `sources.base`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from xhelio.sources.base import ParameterData
from xhelio.sources.dims import split_support_columns

__all__ = ["apply_valid_range"]


def _bound(value: Any, count: int) -> npt.NDArray[np.float64] | None:
    if value is None:
        return None
    try:
        array = np.asarray(value, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return None
    if array.size == 1:
        return np.full(count, array[0])
    return array if array.size == count else None


def apply_valid_range(data: ParameterData) -> tuple[ParameterData, int, str]:
    """Mask values outside the parameter's VALIDMIN/VALIDMAX; return (data, masked, note)."""
    values, support = split_support_columns(data.frame)
    count = values.shape[1]
    low = _bound(data.meta.get("valid_min"), count)
    high = _bound(data.meta.get("valid_max"), count)
    if low is None and high is None:
        return (
            data,
            0,
            (f"{data.name}: the source gives no VALIDMIN/VALIDMAX, so no value was masked."),
        )
    block = values.to_numpy(dtype=np.float64, copy=True)
    bad = np.zeros(block.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        if low is not None:
            bad |= block < low
        if high is not None:
            bad |= block > high
    masked = int(np.count_nonzero(bad))
    block[bad] = np.nan
    frame = values.copy()
    frame[:] = block
    if support.shape[1]:
        frame = frame.join(support)
    span = f"[{_text(data.meta.get('valid_min'))}, {_text(data.meta.get('valid_max'))}]"
    note = f"{data.name}: masked {masked} value(s) outside VALIDMIN/VALIDMAX {span}."
    meta = {**data.meta, "valid_range_applied": True, "valid_range_masked": masked}
    return replace(data, frame=frame, meta=meta), masked, note


def _text(value: Any) -> str:
    if isinstance(value, list):
        items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        distinct = sorted({float(v) for v in items})
        return f"{distinct[0]:g}" if len(distinct) == 1 else "per component"
    return "-" if value is None else f"{float(value):g}"
