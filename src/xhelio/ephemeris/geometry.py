"""Geometry between bodies: separation angles, alignment periods, Parker-spiral connectivity.

Angles are computed from heliocentric J2000 positions. The Parker spiral is the
closed form for a radial wind of constant speed v from a Sun rotating at the sidereal
Carrington rate Omega: a field line through a point at distance r and (inertial or
Stonyhurst) longitude phi left the source surface at r0 from longitude
phi + Omega * (r - r0) / v.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd

__all__ = [
    "SOLAR_ROTATION_RAD_S",
    "SOURCE_SURFACE_KM",
    "Period",
    "angle_between",
    "footpoint_longitude",
    "periods_within",
    "spiral_line",
    "wrap_degrees",
]

SOLAR_ROTATION_RAD_S = 2 * np.pi / (25.38 * 86_400)
"""Sidereal Carrington rotation rate of the Sun."""
SOURCE_SURFACE_KM = 2.5 * 695_700.0
"""Where the spiral starts: the usual potential-field source surface, 2.5 solar radii."""


def angle_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angles in degrees between the rows of `a` and `b` (n, 3); NaN for a zero vector."""
    dot = np.einsum("ij,ij->i", a, b)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = np.clip(dot / norms, -1.0, 1.0)
    return np.degrees(np.arccos(cosine))


def wrap_degrees(angle: np.ndarray) -> np.ndarray:
    """Angles wrapped into [-180, 180)."""
    return (np.asarray(angle) + 180.0) % 360.0 - 180.0


def footpoint_longitude(
    longitude_deg: np.ndarray, distance_km: np.ndarray, speed_km_s: np.ndarray | float
) -> np.ndarray:
    """Source-surface longitude (deg) of the Parker spiral through each point.

    The longitude is in the system of `longitude_deg`; the wind blows at `speed_km_s`.
    """
    lag = np.degrees(SOLAR_ROTATION_RAD_S * (distance_km - SOURCE_SURFACE_KM) / speed_km_s)
    return wrap_degrees(np.asarray(longitude_deg) + lag)


def spiral_line(
    footpoint_deg: float, speed_km_s: float, out_to_km: float, points: int = 200
) -> tuple[np.ndarray, np.ndarray]:
    """(distances km, longitudes deg) of the Parker spiral leaving `footpoint_deg`."""
    radius = np.linspace(SOURCE_SURFACE_KM, out_to_km, points)
    longitude = footpoint_deg - np.degrees(
        SOLAR_ROTATION_RAD_S * (radius - SOURCE_SURFACE_KM) / speed_km_s
    )
    return radius, wrap_degrees(longitude)


@dataclass(frozen=True)
class Period:
    """A stretch of time when an angle stayed within a threshold."""

    start: datetime
    end: datetime
    smallest: float
    at: datetime

    def to_dict(self) -> dict[str, str | float]:
        """As JSON: ISO times and the smallest angle (deg)."""
        return {
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "smallest_angle_deg": round(self.smallest, 3),
            "at": self.at.isoformat(),
        }


def periods_within(
    times: pd.DatetimeIndex, angle: np.ndarray, threshold_deg: float
) -> list[Period]:
    """The periods when `angle` (deg, at `times`) is at most `threshold_deg`."""
    stamps: list[datetime] = list(times.to_pydatetime())
    inside = angle <= threshold_deg
    periods: list[Period] = []
    edges = np.flatnonzero(np.diff(np.concatenate([[0], inside.astype(int), [0]])))
    for first, after in zip(edges[::2], edges[1::2], strict=True):
        lowest = first + int(np.argmin(angle[first:after]))
        periods.append(
            Period(stamps[first], stamps[after - 1], float(angle[lowest]), stamps[lowest])
        )
    return periods
