"""Look directions of an angle-resolved particle product, from its angle support variables.

A 3-D distribution or angle-resolved flux names its directions by an azimuth (φ, "phi",
"azimuth", "lon") and a polar angle ("theta", "polar", "elevation", "colat", "lat"):
either as two dimensions with their centres (MMS FPI, Cluster PEACE) or as coordinates
along one direction dimension, constant or per record (Wind 3DP). Conventions differ
between products, so each is decided from the data where possible and stated:
* the polar angle is a colatitude (0-180°, from +z) or an elevation (−90-90°, from the
  x-y plane): values below 0 mean elevation, above 90 colatitude; 0-90 is ambiguous;
* angles are in degrees unless their unit says radians;
* the directions are where the detector looks (particles move the opposite way) unless
  the caller says they are particle velocity directions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
import xarray as xr

from xhelio.analysis.report import Check
from xhelio.errors import UserError

__all__ = ["AngleGrid", "Polar", "angle_dims", "angle_grid"]

Polar = Literal["auto", "colatitude", "elevation"]

_AZIMUTH = re.compile(r"phi|azim|(?:^|_)lon", re.IGNORECASE)
_POLAR = re.compile(r"theta|polar|elev|colat|(?:^|_)lat", re.IGNORECASE)
_EDGE = re.compile(r"_(?:low|high|label|delta\w*)$", re.IGNORECASE)


@dataclass
class AngleGrid:
    """Unit directions (t, d, 3) for the product's flattened angle dimensions.

    Attributes:
        dims: The product's dimensions the directions run over (flattened in this order).
        directions: (t, d, 3) unit vectors, as the angles describe them (look or velocity).
        assumptions: The conventions used, in words.
        checks: What could not be decided from the data.
    """

    dims: list[str]
    directions: npt.NDArray[np.float64]
    assumptions: list[str] = field(default_factory=list[str])
    checks: list[Check] = field(default_factory=list[Check])


def _coordinate(data: xr.DataArray, pattern: re.Pattern[str], what: str) -> xr.DataArray:
    names = [
        str(n)
        for n in data.coords
        if pattern.search(str(n))
        and not _EDGE.search(str(n))
        and np.issubdtype(data.coords[n].dtype, np.number)
        and any(d != "time" for d in data.coords[n].dims)
    ]
    if not names:
        raise UserError(
            f"'{data.name or 'this product'}' has no {what} angle among its dimensions and "
            f"coordinates ({', '.join(map(str, data.coords))}); a pitch-angle distribution "
            "from look directions needs an azimuth and a polar angle per direction."
        )
    return data.coords[names[0]]


def angle_dims(data: xr.DataArray) -> set[str]:
    """The dimensions the product's azimuth and polar angles run over (besides time)."""
    azimuth = _coordinate(data, _AZIMUTH, "azimuth")
    polar_angle = _coordinate(data, _POLAR, "polar")
    return {str(d) for d in (*azimuth.dims, *polar_angle.dims)} - {"time"}


def _radians(angle: xr.DataArray) -> tuple[npt.NDArray[np.float64], str]:
    values = np.asarray(angle.values, dtype=np.float64)
    if "rad" in str(angle.attrs.get("units", "")).lower():
        return values, f"{angle.name} in radians (its unit says so)"
    return np.radians(values), f"{angle.name} in degrees"


def _polar_kind(values_deg: npt.NDArray[np.float64], polar: Polar, name: str) -> tuple[str, Check]:
    finite = values_deg[np.isfinite(values_deg)]
    if polar != "auto":
        return polar, Check(name="polar angle", ok=True, detail=f"{name} taken as {polar} (given)")
    if finite.size and finite.min() < 0:
        return "elevation", Check(
            name="polar angle", ok=True, detail=f"{name} has values below 0°: an elevation"
        )
    if finite.size and finite.max() > 90:
        return "colatitude", Check(
            name="polar angle", ok=True, detail=f"{name} has values above 90°: a colatitude"
        )
    return "colatitude", Check(
        name="polar angle",
        ok=False,
        detail=f"{name} lies within 0-90°: taken as a colatitude from +z; "
        "pass polar='elevation' if it is measured from the x-y plane",
    )


def angle_grid(data: xr.DataArray, *, polar: Polar = "auto", velocity: bool = False) -> AngleGrid:
    """The directions of `data` (dims: time and angle dims; other dims already reduced).

    Args:
        data: The product with an azimuth and a polar angle as coordinates.
        polar: How the polar angle is measured ('auto' decides from its range).
        velocity: The angles give particle velocity directions, not look directions.
    """
    azimuth = _coordinate(data, _AZIMUTH, "azimuth")
    polar_angle = _coordinate(data, _POLAR, "polar")
    dims = [str(d) for d in data.dims if d != "time"]
    extra = {str(d) for d in (*azimuth.dims, *polar_angle.dims)} - {*dims, "time"}
    if extra:
        raise UserError(f"The angles depend on {', '.join(sorted(extra))}, not on the flux's dims.")
    order = ("time", *dims)
    template = xr.DataArray(np.zeros([data.sizes[d] for d in order]), dims=order)
    az, pol, _ = xr.broadcast(azimuth.reset_coords(drop=True),
                              polar_angle.reset_coords(drop=True), template)  # fmt: skip
    phi, phi_note = _radians(az.transpose(*order).rename(azimuth.name))
    theta, theta_note = _radians(pol.transpose(*order).rename(polar_angle.name))
    kind, check = _polar_kind(np.degrees(theta), polar, str(polar_angle.name))
    if kind == "elevation":
        xyz = [np.cos(theta) * np.cos(phi), np.cos(theta) * np.sin(phi), np.sin(theta)]
    else:
        xyz = [np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)]
    directions = np.stack(xyz, axis=-1).reshape(data.sizes["time"], -1, 3)
    meaning = (
        "particle velocity directions"
        if velocity
        else "look directions (particles move the opposite way)"
    )
    return AngleGrid(
        dims=dims,
        directions=directions,
        assumptions=[
            f"the angles {azimuth.name} (azimuth from +x toward +y) and {polar_angle.name} "
            f"({kind}) are {meaning}; {phi_note}, {theta_note}",
        ],
        checks=[check],
    )
