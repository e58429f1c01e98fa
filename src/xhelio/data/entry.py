"""`DataEntry`: one labelled piece of data in the store.

Imports nothing from xhelio.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import xarray as xr

__all__ = ["DataEntry"]


@dataclass
class DataEntry:
    """A labelled DataFrame (or DataArray for 2-D+ data) with units and provenance.

    Timeseries entries have a UTC DatetimeIndex (DataFrame) or a ``time`` dimension
    (DataArray). `units` maps each column (or the DataArray's name) to its unit string.
    Fetched data has `source_dataset`/`source_parameter`; derived data has them None.
    """

    label: str
    data: pd.DataFrame | xr.DataArray
    units: dict[str, str] = field(default_factory=dict[str, str])
    description: str = ""
    source_dataset: str | None = None
    source_parameter: str | None = None
    is_timeseries: bool = True
    fetched_range: tuple[str, str] | None = None
    """For fetched data: the (start, end) ISO range that was requested, to spot repeats."""

    @property
    def columns(self) -> list[str]:
        """Column names (DataFrame) or the single array name (DataArray)."""
        if isinstance(self.data, pd.DataFrame):
            return [str(c) for c in self.data.columns]
        return [str(self.data.name or self.label)]

    @property
    def points(self) -> int:
        """Number of samples along the first axis."""
        return int(self.data.shape[0])
