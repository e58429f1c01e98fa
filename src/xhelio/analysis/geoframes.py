"""Vectors rotated between the geophysical frames GEI, GEO, GSE, GSM and SM.

Reference: M. A. Hapgood, "Space physics coordinate transformations: a user guide",
Planet. Space Sci. 40, 711-717 (1992): the Greenwich mean sidereal time, the obliquity
and the Sun's ecliptic longitude as polynomials of the time (eqs. 2-5, accurate to
~0.01°), the dipole axis from the first IGRF-13 coefficients g10, g11, h11 (interpolated
between the 5-year epochs, the secular variation after 2020), as Fränz & Harper (2002)
and sunpy use them. GSM keeps GSE's X (Earth to Sun) and puts the dipole axis in its X-Z
plane (a rotation about X by the angle ψ); SM turns GSM about Y by the dipole tilt μ so
its Z is the dipole axis. Pure numpy, so sandboxed code can call it (`analysis.rotate_frame`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from xhelio.errors import UserError

__all__ = ["GEOPHYSICAL_FRAMES", "REFERENCE", "dipole_tilt_deg", "rotate_frame", "rotation"]

REFERENCE = (
    "Hapgood, M. A. (1992), Space physics coordinate transformations: a user guide, "
    "Planet. Space Sci. 40, 711-717; dipole axis from IGRF-13 (g10, g11, h11)"
)
GEOPHYSICAL_FRAMES = ("GEI", "GEO", "GSE", "GSM", "SM")

# IGRF-13 dipole coefficients (nT) at the 5-year epochs, and their secular variation
# (nT/yr) after the last one.
_EPOCHS = (1965.0, 1970.0, 1975.0, 1980.0, 1985.0, 1990.0, 1995.0, 2000.0, 2005.0,
           2010.0, 2015.0, 2020.0)  # fmt: skip
_G10 = (-30334.0, -30220.0, -30100.0, -29992.0, -29873.0, -29775.0, -29692.0, -29619.4,
        -29554.63, -29496.57, -29441.46, -29404.8)  # fmt: skip
_G11 = (-2119.0, -2068.0, -2013.0, -1956.0, -1905.0, -1848.0, -1784.0, -1728.2, -1669.05,
        -1586.42, -1501.77, -1450.9)  # fmt: skip
_H11 = (5776.0, 5737.0, 5675.0, 5604.0, 5500.0, 5406.0, 5306.0, 5186.1, 5077.99, 4944.26,
        4795.99, 4652.5)  # fmt: skip
_SECULAR = (5.7, 7.4, -25.9)


def _about_x(angle: np.ndarray) -> np.ndarray:
    """Hapgood's <angle, X>: components in axes turned by `angle` about X."""
    c, s = np.cos(angle), np.sin(angle)
    one, zero = np.ones_like(c), np.zeros_like(c)
    return np.stack([np.stack([one, zero, zero], -1), np.stack([zero, c, s], -1),
                     np.stack([zero, -s, c], -1)], -2)  # fmt: skip


def _about_z(angle: np.ndarray) -> np.ndarray:
    """Hapgood's <angle, Z>."""
    c, s = np.cos(angle), np.sin(angle)
    one, zero = np.ones_like(c), np.zeros_like(c)
    return np.stack([np.stack([c, s, zero], -1), np.stack([-s, c, zero], -1),
                     np.stack([zero, zero, one], -1)], -2)  # fmt: skip


def _times(times: npt.ArrayLike) -> pd.DatetimeIndex:
    index = pd.DatetimeIndex(times)
    return index.tz_convert(None) if index.tz is not None else index


def _dipole_geo(years: np.ndarray) -> np.ndarray:
    """(n, 3) unit vectors of the northern dipole axis in GEO (−(g11, h11, g10))."""
    if np.any(years < _EPOCHS[0]):
        raise UserError(f"The IGRF dipole here starts in {_EPOCHS[0]:.0f}.")
    coefficients = []
    for table, secular in zip((_G11, _H11, _G10), _SECULAR[1:] + _SECULAR[:1], strict=True):
        value = np.interp(years, _EPOCHS, table)
        after = years > _EPOCHS[-1]
        value[after] = table[-1] + (years[after] - _EPOCHS[-1]) * secular
        coefficients.append(value)
    axis = -np.stack(coefficients, axis=1)
    return axis / np.linalg.norm(axis, axis=1, keepdims=True)


def _gei_to_geo_and_gse(times: pd.DatetimeIndex) -> tuple[np.ndarray, np.ndarray]:
    """Hapgood's T1 (GEI to GEO) and T2 (GEI to GSE) at `times`, (n, 3, 3) each."""
    mjd = times.to_julian_date().to_numpy() - 2400000.5
    day = np.floor(mjd)
    hours = (mjd - day) * 24.0
    t0 = (day - 51544.5) / 36525.0
    gmst = np.radians(100.461 + 36000.770 * t0 + 15.04107 * hours)
    obliquity = np.radians(23.439 - 0.013 * t0)
    anomaly = np.radians(357.528 + 35999.050 * t0 + 0.04107 * hours)
    mean_longitude = 280.460 + 36000.772 * t0 + 0.04107 * hours
    sun_longitude = np.radians(
        mean_longitude + (1.915 - 0.0048 * t0) * np.sin(anomaly) + 0.020 * np.sin(2 * anomaly)
    )
    return _about_z(gmst), _about_z(sun_longitude) @ _about_x(obliquity)


def _from_gse(times: pd.DatetimeIndex) -> dict[str, np.ndarray]:
    """For each frame, the (n, 3, 3) matrices taking GSE components into it."""
    t1, t2 = _gei_to_geo_and_gse(times)
    gse_to_gei = np.transpose(t2, (0, 2, 1))
    years = (times.to_julian_date().to_numpy() - 2451544.5) / 365.25 + 2000.0
    dipole_gse = np.einsum("nij,nkj,nk->ni", t2, t1, _dipole_geo(years))  # T2 T1ᵀ Q
    z_gsm = dipole_gse.copy()
    z_gsm[:, 0] = 0.0
    z_gsm /= np.linalg.norm(z_gsm, axis=1, keepdims=True)
    x_axis = np.broadcast_to([1.0, 0.0, 0.0], z_gsm.shape)
    to_gsm = np.stack([x_axis, np.cross(z_gsm, x_axis), z_gsm], axis=1)
    dipole_gsm = np.einsum("nij,nj->ni", to_gsm, dipole_gse)
    y_axis = np.broadcast_to([0.0, 1.0, 0.0], dipole_gsm.shape)
    gsm_to_sm = np.stack([np.cross(y_axis, dipole_gsm), y_axis, dipole_gsm], axis=1)
    return {
        "GSE": np.broadcast_to(np.eye(3), (len(times), 3, 3)),
        "GSM": to_gsm,
        "SM": gsm_to_sm @ to_gsm,
        "GEI": gse_to_gei,
        "GEO": t1 @ gse_to_gei,
    }


def _frame(name: str) -> str:
    frame = name.strip().upper()
    if frame not in GEOPHYSICAL_FRAMES:
        raise UserError(
            f"No rotation for the frame {name!r} here: {', '.join(GEOPHYSICAL_FRAMES)} only "
            "(RTN and the spacecraft frames need the spacecraft's position or attitude)."
        )
    return frame


def rotation(times: npt.ArrayLike, source: str, target: str) -> np.ndarray:
    """(n, 3, 3) matrices taking `source` components into `target` at each time (UTC)."""
    index = _times(times)
    matrices = _from_gse(index)
    into = matrices[_frame(target)]
    return into @ np.transpose(matrices[_frame(source)], (0, 2, 1))


def dipole_tilt_deg(times: npt.ArrayLike) -> np.ndarray:
    """The dipole tilt μ (degrees, positive when the north pole leans to the Sun)."""
    index = _times(times)
    gsm_to_sm = _from_gse(index)["SM"] @ np.transpose(_from_gse(index)["GSM"], (0, 2, 1))
    return np.degrees(np.arcsin(gsm_to_sm[:, 2, 0]))


def rotate_frame(vectors: pd.DataFrame, source: str, target: str) -> pd.DataFrame:
    """The first three columns of `vectors` (time index) rotated from `source` to `target`.

    A fourth column (a magnitude, as MMS FGM stores it) is left out: the rotation keeps it.
    """
    if vectors.shape[1] < 3 or not isinstance(vectors.index, pd.DatetimeIndex):
        raise UserError("A rotation needs a vector of 3 columns on a time index.")
    source, target = _frame(source), _frame(target)
    values = vectors.iloc[:, :3].to_numpy(np.float64)
    rotated = np.einsum("nij,nj->ni", rotation(vectors.index, source, target), values)
    names = [str(c) for c in vectors.columns[:3]]
    renamed = [
        n.replace(source, target).replace(source.lower(), target.lower())
        if source.lower() in n.lower()
        else f"{n} ({target})"
        for n in names
    ]
    return pd.DataFrame(rotated, index=vectors.index, columns=renamed)
