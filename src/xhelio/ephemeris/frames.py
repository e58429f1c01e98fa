"""Reference frames: rotations from J2000 axes into HCI, HEE, HAE, HEEQ, GSE, GSM and RTN.

The frame definitions are those of Hapgood (1992) and Fränz & Harper (2002), as sunpy and
astropy implement them (sunpy's `HeliocentricInertial`, `HeliocentricEarthEcliptic`,
`HeliographicStonyhurst` for HEEQ, `GeocentricSolarEcliptic`, `GeocentricSolarMagnetospheric`
with its IGRF dipole axis; astropy's `HeliocentricMeanEcliptic` of date for HAE). A frame's
axes are read off sunpy as a rotation matrix (the images of the J2000 unit vectors, less the
image of the origin: every one of these transforms is a rotation plus a shift), at knots no
further apart than the frame changes (10 minutes for GSM, whose dipole axis turns with the
Earth; 6 hours for the others) and interpolated between them, so a year of minutes costs a
few hundred transforms. RTN is built here from the spacecraft's heliocentric position and
the Sun's rotation axis (HCI's Z). Only directions are rotated: a position keeps its origin
(the observer), a velocity is the inertial one expressed in the frame's axes.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from xhelio.ephemeris.archive import seconds_since_epoch
from xhelio.errors import UserError

__all__ = ["FRAMES", "FRAME_HELP", "UnknownFrameError", "check_frame", "rotate", "rotation"]

FRAME_HELP: dict[str, str] = {
    "J2000": "Earth mean equator and equinox of J2000 (ICRF axes)",
    "HCI": "heliocentric inertial: solar equator, X to its ascending node on the J2000 ecliptic",
    "HEE": "heliocentric Earth ecliptic: X Sun to Earth, Z ecliptic north",
    "HAE": "heliocentric Aries ecliptic: mean ecliptic and equinox of date",
    "HEEQ": "heliocentric Earth equatorial (Stonyhurst): Z solar north, X the Earth's meridian",
    "GSE": "geocentric solar ecliptic: X Earth to Sun, Z ecliptic north",
    "GSM": "geocentric solar magnetospheric: X Earth to Sun, dipole axis in the X-Z plane",
    "RTN": "radial-tangential-normal of a spacecraft: R Sun to spacecraft, T along solar "
    "rotation, N completes",
}
"""The frames (besides body-fixed IAU_<BODY> frames, which need SPICE kernels)."""

FRAMES = tuple(FRAME_HELP)

_KNOT_SPACING_S = {"GSM": 600.0}
_DEFAULT_SPACING_S = 6 * 3600.0


class UnknownFrameError(UserError):
    """A frame name that is none of the known frames."""


def check_frame(name: str) -> str:
    """`name` as a canonical frame name (upper case).

    Raises:
        UnknownFrameError: an unknown frame (the message lists the known ones).
    """
    frame = name.strip().upper().replace("-", "_")
    aliases = {"HGI": "HCI", "EME2000": "J2000", "ICRF": "J2000", "HGS": "HEEQ", "SE": "HAE"}
    frame = aliases.get(frame, frame)
    if frame in FRAMES or (frame.startswith("IAU_") and len(frame) > 4):
        return frame
    raise UnknownFrameError(
        f"Unknown frame {name!r}. Known: {', '.join(FRAMES)}, or a body-fixed IAU_<BODY> "
        "frame such as IAU_EARTH or IAU_MARS."
    )


def _sunpy_frame(frame: str, times: Any) -> Any:
    from astropy.coordinates import HCRS, HeliocentricMeanEcliptic
    from sunpy.coordinates import frames as sunpy_frames

    makers: dict[str, Any] = {
        "J2000": lambda: HCRS(obstime=times),
        "HCI": lambda: sunpy_frames.HeliocentricInertial(obstime=times),
        "HEE": lambda: sunpy_frames.HeliocentricEarthEcliptic(obstime=times),
        "HAE": lambda: HeliocentricMeanEcliptic(equinox=times, obstime=times),
        "HEEQ": lambda: sunpy_frames.HeliographicStonyhurst(obstime=times),
        "GSE": lambda: sunpy_frames.GeocentricSolarEcliptic(obstime=times),
        "GSM": lambda: sunpy_frames.GeocentricSolarMagnetospheric(obstime=times),
    }
    return makers[frame]()


def _exact_rotation(frame: str, knots: pd.DatetimeIndex) -> np.ndarray:
    """(n, 3, 3) matrices taking J2000 components to `frame` components at `knots`.

    sunpy reaches GSM through the Earth's orientation with aberration, which bends the
    axes by ~1e-4: GSM is built here from GSE (same X) and the direction sunpy gives its Z.
    """
    if frame != "GSM":
        return _sunpy_rotation("J2000", frame, knots)
    gse = _sunpy_rotation("J2000", "GSE", knots)
    z_axis = _sunpy_rotation("GSE", "GSM", knots)[:, 2].copy()
    z_axis[:, 0] = 0.0
    z_axis /= np.linalg.norm(z_axis, axis=1, keepdims=True)
    x_axis = np.broadcast_to([1.0, 0.0, 0.0], z_axis.shape)
    gse_to_gsm = np.stack([x_axis, np.cross(z_axis, x_axis), z_axis], axis=1)
    return gse_to_gsm @ gse


def _sunpy_rotation(source: str, frame: str, knots: pd.DatetimeIndex) -> np.ndarray:
    """(n, 3, 3) matrices sunpy's transform from `source` to `frame` applies at `knots`."""
    import astropy.units as u
    from astropy.coordinates import CartesianRepresentation
    from astropy.time import Time

    n = len(knots)
    times = Time(np.tile(knots.tz_convert(None).to_numpy(), 4))
    scale = 1e6  # km: far above float noise at 1 AU, well inside every frame's validity
    xyz = np.zeros((3, 4 * n))
    for axis in range(3):
        xyz[axis, (axis + 1) * n : (axis + 2) * n] = scale
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # astropy/erfa "dubious year" far from today
        points = _sunpy_frame(source, times).realize_frame(CartesianRepresentation(xyz * u.km))
        image = points.transform_to(_sunpy_frame(frame, times)).cartesian.xyz.to_value(u.km)
    origin = image[:, :n]
    columns = [(image[:, (k + 1) * n : (k + 2) * n] - origin) / scale for k in range(3)]
    return np.stack(columns, axis=1).transpose(2, 0, 1)


def _orthonormal(matrices: np.ndarray) -> np.ndarray:
    """The nearest rotation to each (interpolated) matrix."""
    u_part, _, v_part = np.linalg.svd(matrices)
    return u_part @ v_part


def rotation(frame: str, times: pd.DatetimeIndex, center: np.ndarray | None = None) -> np.ndarray:
    """(n, 3, 3) matrices taking J2000 components into `frame` at each of `times`.

    Args:
        frame: A frame of `FRAMES` (body-fixed frames are SPICE's, see `spice`).
        times: UTC times.
        center: For RTN, the spacecraft's heliocentric J2000 position at `times` (n, 3).

    Raises:
        UserError: RTN without a spacecraft position.
    """
    frame = check_frame(frame)
    if frame == "J2000":
        return np.broadcast_to(np.eye(3), (len(times), 3, 3)).copy()
    if frame == "RTN":
        if center is None:
            raise UserError("RTN needs a spacecraft: name the spacecraft whose RTN frame to use.")
        return _rtn(times, center)
    spacing_s = _KNOT_SPACING_S.get(frame, _DEFAULT_SPACING_S)
    seconds = seconds_since_epoch(times)
    span_s = float(seconds[-1] - seconds[0]) if len(times) else 0.0
    count = int(np.ceil(span_s / spacing_s)) + 1
    if count >= len(times) or not times.is_monotonic_increasing:
        return _exact_rotation(frame, times)
    knots = pd.date_range(times[0], times[-1], periods=count)
    at_knots = _exact_rotation(frame, knots)
    knot_seconds = seconds_since_epoch(knots)
    flat = at_knots.reshape(len(knots), 9)
    interpolated = np.stack(
        [np.interp(seconds, knot_seconds, flat[:, k]) for k in range(9)], axis=1
    ).reshape(len(times), 3, 3)
    return _orthonormal(interpolated)


def _rtn(times: pd.DatetimeIndex, center: np.ndarray) -> np.ndarray:
    solar_axis = _exact_rotation("HCI", times[:1])[0][2]  # HCI Z in J2000: fixed in time
    radial = center / np.linalg.norm(center, axis=1, keepdims=True)
    tangential = np.cross(solar_axis, radial)
    tangential /= np.linalg.norm(tangential, axis=1, keepdims=True)
    normal = np.cross(radial, tangential)
    return np.stack([radial, tangential, normal], axis=1)


def rotate(vectors: np.ndarray, matrices: np.ndarray) -> np.ndarray:
    """Each row of `vectors` (n, 3) through its matrix (n, 3, 3)."""
    return np.einsum("nij,nj->ni", matrices, vectors)
