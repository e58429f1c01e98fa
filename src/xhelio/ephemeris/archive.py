"""Positions without kernels: the heliocentric position datasets the archives serve.

CDAWeb serves hourly heliocentric positions of planets and many spacecraft as
``<PREFIX>_HELIO1HR_POSITION`` (distance ``RAD_AU`` and the HGI, i.e. HCI, latitude and
longitude ``HGI_LAT``/``HGI_LON``; daily ``HELIO1DAY`` versions for some). Any registered
source that serves them under those names (CDAWeb's HAPI or CDF source) can be asked.
Positions are interpolated linearly onto the requested times, velocities are the time
derivative of the interpolated track.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import pandas as pd

from xhelio.ephemeris.bodies import Body
from xhelio.errors import DataUnavailableError, UnknownDatasetError, UserError
from xhelio.sources.base import DataSource
from xhelio.timerange import TimeRange

__all__ = [
    "AU_KM",
    "ArchivePositions",
    "NoArchivePositionError",
    "interpolated",
    "seconds_since_epoch",
]

AU_KM = 149_597_870.7
_PARAMETERS = ("RAD_AU", "HGI_LAT", "HGI_LON")
_CADENCES = ("HELIO1HR", "HELIO1DAY")


class NoArchivePositionError(UserError):
    """No registered source serves positions of a body over a time range."""


@dataclass(frozen=True)
class ArchiveTrack:
    """Heliocentric HCI positions (km) from an archive dataset, and where they came from."""

    position: np.ndarray
    dataset: str
    source: str


class ArchivePositions:
    """Reads heliocentric positions of bodies from the position datasets of `sources`."""

    def __init__(self, sources: list[DataSource]) -> None:
        self.sources = sources

    def heliocentric_hci(self, body: Body, times: pd.DatetimeIndex) -> ArchiveTrack:
        """(n, 3) HCI positions of `body` at `times`, in km.

        Raises:
            NoArchivePositionError: no source serves the body's positions over the times.
        """
        if body.key == "SUN":
            return ArchiveTrack(np.zeros((len(times), 3)), "", "")
        if body.position_prefix is None:
            raise NoArchivePositionError(f"No archive serves positions of {body.key}.")
        stamps: list[datetime] = list(times.to_pydatetime())
        margin = timedelta(days=1)
        span = TimeRange(stamps[0] - margin, stamps[-1] + margin)
        problems: list[str] = []
        for source in self.sources:
            for cadence in _CADENCES:
                dataset = f"{body.position_prefix}_{cadence}_POSITION"
                try:
                    found = source.fetch(dataset, list(_PARAMETERS), span)
                except (UnknownDatasetError, DataUnavailableError) as exc:
                    problems.append(f"{source.name}:{dataset}: {exc}")
                    continue
                frame = pd.concat([found[p].frame.iloc[:, :1] for p in _PARAMETERS], axis=1)
                frame.columns = list(_PARAMETERS)
                position = interpolated(_cartesian(frame.dropna()), times)
                if position is not None:
                    return ArchiveTrack(position, dataset, source.name)
                problems.append(f"{source.name}:{dataset}: does not span the times asked")
        raise NoArchivePositionError(
            f"No kernel and no archive position covers {body.key} from "
            f"{stamps[0].isoformat()} to {stamps[-1].isoformat()} ({'; '.join(problems)})."
        )


def seconds_since_epoch(times: pd.DatetimeIndex) -> np.ndarray:
    """UTC `times` (naive ones read as UTC) as float seconds since 1970."""
    utc = times.tz_localize("UTC") if times.tz is None else times.tz_convert("UTC")
    return utc.as_unit("ns").asi8.astype(float) / 1e9


def _cartesian(frame: pd.DataFrame) -> pd.DataFrame:
    radius = frame["RAD_AU"].to_numpy(float) * AU_KM
    lat = np.radians(frame["HGI_LAT"].to_numpy(float))
    lon = np.radians(frame["HGI_LON"].to_numpy(float))
    xyz = np.stack(
        [
            radius * np.cos(lat) * np.cos(lon),
            radius * np.cos(lat) * np.sin(lon),
            radius * np.sin(lat),
        ],
        axis=1,
    )
    return pd.DataFrame(xyz, index=frame.index, columns=["x", "y", "z"])


def interpolated(track: pd.DataFrame, times: pd.DatetimeIndex) -> np.ndarray | None:
    """`track` at `times` (linear), or None when it does not span them."""
    if len(track) < 2:
        return None
    known = seconds_since_epoch(pd.DatetimeIndex(track.index))
    wanted = seconds_since_epoch(times)
    if known[0] > wanted[0] or known[-1] < wanted[-1]:
        return None
    values = track.to_numpy(float)
    return np.stack([np.interp(wanted, known, values[:, k]) for k in range(3)], axis=1)
