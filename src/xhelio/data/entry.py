"""`DataEntry`: one labelled piece of data in the store.

Imports nothing from xhelio.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    meta: dict[str, Any] = field(default_factory=dict[str, Any])
    """JSON-able meaning of the data, carried into figures and output files: ``units``
    (as the source wrote them), ``display_units``, ``description``, ``labels``,
    ``dims`` (bins: centres, edges, units, per dimension), ``fill``,
    ``valid_min``/``valid_max``, ``scale`` (e.g. 10 for Kp x10), ``citation``
    (``dataset``, ``doi``, ``pi``, ``acknowledgement``), ``citations`` (a computed
    entry's list of its inputs' citations), ``dataset_title``,
    ``mission``, ``instrument`` and ``notes`` (what was done to the data)."""

    @property
    def citation(self) -> dict[str, str]:
        """The dataset's citation (dataset, doi, pi, acknowledgement), empty if unknown."""
        value = self.meta.get("citation")
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

    @property
    def citations(self) -> list[dict[str, str]]:
        """Every dataset to cite for this entry: its own, or those of a computation's inputs."""
        inherited = self.meta.get("citations")
        if isinstance(inherited, list):
            return [
                {str(k): str(v) for k, v in c.items()}
                for c in inherited  # pyright: ignore[reportUnknownVariableType]
                if isinstance(c, dict)
            ]
        return [self.citation] if self.citation else []

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
