"""Shared helpers of the detectors: one clean numeric series from a stored entry."""

from __future__ import annotations

import numpy as np
import pandas as pd

from xhelio.errors import UserError

__all__ = ["magnitude", "numeric_series"]


def numeric_series(frame: pd.DataFrame, what: str, column: str | None = None) -> pd.Series:
    """One column of a time-indexed table as float, sorted, NaNs dropped.

    Raises:
        UserError: no time index, an unknown column, or nothing but NaN.
    """
    if not isinstance(frame.index, pd.DatetimeIndex):
        raise UserError(f"The {what} data has no time index; detection needs a timeseries.")
    if column is None:
        if frame.shape[1] != 1:
            raise UserError(
                f"The {what} data has columns {list(frame.columns)}; say which one to use."
            )
        column = str(frame.columns[0])
    if column not in frame.columns:
        raise UserError(f"No column '{column}' in the {what} data ({list(frame.columns)}).")
    values = np.asarray(pd.to_numeric(frame[column].to_numpy(), errors="coerce"), dtype=float)
    series = pd.Series(values, index=frame.index, name=column).dropna().sort_index()
    if series.empty:
        raise UserError(f"The {what} data holds no valid values.")
    return series


def magnitude(frame: pd.DataFrame, what: str) -> pd.Series:
    """The value of a one-column table, or the vector magnitude of a 3-column one."""
    if frame.shape[1] == 1:
        return numeric_series(frame, what)
    if frame.shape[1] == 3:
        values = frame.apply(pd.to_numeric, errors="coerce").astype(float)  # pyright: ignore[reportUnknownMemberType]
        norm = pd.Series(np.sqrt((values**2).sum(axis=1, min_count=3)), index=frame.index)
        return numeric_series(norm.to_frame(what), what)
    raise UserError(
        f"The {what} data has {frame.shape[1]} columns; give a magnitude or a 3-component vector."
    )
