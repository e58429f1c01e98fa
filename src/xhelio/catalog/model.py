"""Plain data records of the catalog: parameters, datasets, missions.

These are the shapes every layer above the catalog speaks. Imports nothing from xhelio.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property

__all__ = ["ONGOING_WINDOW", "BinsAxis", "DatasetInfo", "Mission", "ParameterInfo"]

ONGOING_WINDOW = timedelta(days=400)
"""Catalog snapshots lag the archive: a dataset whose listed stop is this recent is treated
as still producing data, and its end is left for the server to decide."""


@dataclass(frozen=True)
class BinsAxis:
    """One dimension's bins of a parameter (HAPI `bins`, CDF DEPEND_i).

    Values are constant (`centers`, `low`/`high` edges) or, for bins that change with
    time, the name of the parameter that holds them per record (`centers_param`,
    `ranges_param`).
    """

    name: str
    units: str = ""
    centers: tuple[float, ...] | None = None
    centers_param: str | None = None
    low: tuple[float, ...] | None = None
    high: tuple[float, ...] | None = None
    ranges_param: str | None = None
    labels: tuple[str, ...] | None = None
    description: str = ""


@dataclass(frozen=True)
class ParameterInfo:
    """One parameter of a dataset, as HAPI `/info` or a CDF describes it."""

    name: str
    type: str = "double"
    units: str = ""
    size: tuple[int, ...] | None = None
    fill: str | None = None
    description: str = ""
    labels: tuple[str, ...] | None = None
    bins: tuple[float, ...] | None = None
    bins_name: str | None = None
    bins_units: str | None = None
    bins_axes: tuple[BinsAxis, ...] = ()
    """Bins per dimension (HAPI `bins` list); `bins` above is the first one's centres."""

    @property
    def components(self) -> int:
        """Number of columns this parameter occupies (product of `size`, 1 for scalars)."""
        if not self.size:
            return 1
        n = 1
        for s in self.size:
            n *= s
        return n

    @property
    def is_time(self) -> bool:
        """Whether this is the time parameter."""
        return self.type == "isotime"


@dataclass(frozen=True)
class DatasetInfo:
    """One dataset: identity, coverage, cadence and parameters."""

    id: str
    title: str = ""
    mission_id: str | None = None
    instrument: str | None = None
    start: datetime | None = None
    stop: datetime | None = None
    cadence: str | None = None
    max_request_duration: str | None = None
    pi_name: str | None = None
    doi: str | None = None
    parameters: tuple[ParameterInfo, ...] = ()

    def parameter(self, name: str) -> ParameterInfo | None:
        """Return the parameter called `name` (case-insensitive), or None."""
        for p in self.parameters:
            if p.name == name:
                return p
        lowered = name.lower()
        for p in self.parameters:
            if p.name.lower() == lowered:
                return p
        return None

    # The record is frozen, so what is derived from its parameters is computed once: the
    # offline resolver asks for it per parameter of every candidate dataset.

    @cached_property
    def data_parameters(self) -> tuple[ParameterInfo, ...]:
        """All parameters except the time column."""
        return tuple(p for p in self.parameters if not p.is_time)

    @cached_property
    def bins_owners(self) -> dict[str, tuple[ParameterInfo, ...]]:
        """Per parameter name: the data parameters that name it as their bins.

        A name counts when it is a parameter's `bins_name`, or the `name`, `centers_param`
        or `ranges_param` of one of its `bins_axes` (an energy table, a DEPEND_1).
        """
        owners: dict[str, list[ParameterInfo]] = {}
        for other in self.data_parameters:
            names = {other.bins_name} | {
                n for a in other.bins_axes for n in (a.name, a.centers_param, a.ranges_param)
            }
            for name in names:
                if name is not None:
                    owners.setdefault(name, []).append(other)
        return {name: tuple(found) for name, found in owners.items()}


@dataclass(frozen=True)
class Mission:
    """A spacecraft or data collection, with the names people use for it."""

    id: str
    name: str
    aliases: tuple[str, ...] = ()
    dataset_ids: tuple[str, ...] = field(default=())
