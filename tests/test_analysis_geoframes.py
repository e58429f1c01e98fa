"""Rotations between GEI, GEO, GSE, GSM and SM (Hapgood 1992) against sunpy and known values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from xhelio.analysis.geoframes import dipole_tilt_deg, rotate_frame, rotation
from xhelio.errors import UserError

TIMES = pd.DatetimeIndex(
    ["2015-03-17T06:00", "2012-07-01T18:30", "2019-01-01T00:00", "2024-06-21T12:00"]
)


def _sunpy_matrices(source: str, target: str) -> np.ndarray:
    """Sunpy's own transform of the three unit vectors (its GSM uses IGRF-13 too)."""
    pytest.importorskip("sunpy")
    import astropy.units as u
    from astropy.coordinates import CartesianRepresentation
    from astropy.time import Time
    from sunpy.coordinates import frames

    make = {
        "GSE": frames.GeocentricSolarEcliptic,
        "GSM": frames.GeocentricSolarMagnetospheric,
        "SM": frames.SolarMagnetic,
    }
    out = []
    for when in TIMES:
        obstime = Time(when.to_pydatetime())
        columns = []
        for axis in np.eye(3):
            point = make[source](CartesianRepresentation(axis * u.km), obstime=obstime)
            moved: Any = point.transform_to(make[target](obstime=obstime))
            image = moved.cartesian.xyz.to_value(u.km)
            columns.append(image)
        out.append(np.stack(columns, axis=1))
    return np.array(out)


@pytest.mark.parametrize(("source", "target"), [("GSE", "GSM"), ("GSM", "SM"), ("GSE", "SM")])
def test_rotation_agrees_with_sunpy(source: str, target: str) -> None:
    ours = rotation(TIMES, source, target)
    theirs = _sunpy_matrices(source, target)
    # Hapgood's polynomials are good to ~0.01°: 1e-3 rad is a generous bound
    assert np.abs(ours - theirs).max() < 1e-3


def test_dipole_tilt_at_june_solstice_is_near_its_maximum() -> None:
    # The tilt peaks near +34° at the June solstice around 16-17 UT (the geomagnetic pole
    # at ~72°W faces the Sun), and is near -34° at the December solstice around 04-05 UT.
    june = dipole_tilt_deg(pd.DatetimeIndex(["2015-06-21T16:30"]))[0]
    december = dipole_tilt_deg(pd.DatetimeIndex(["2015-12-21T04:30"]))[0]
    assert 32.0 < june < 36.0
    assert -36.0 < december < -32.0


def test_rotate_frame_keeps_the_length_and_renames_the_frame() -> None:
    index = pd.date_range("2015-03-17", periods=5, freq="1h")
    b = pd.DataFrame(
        {"Bx GSE": [1.0, 2, 3, 4, 5], "By GSE": [0.0, -1, 2, 5, 1], "Bz GSE": [-5.0, 3, 1, 0, 2]},
        index=index,
    )
    rotated = rotate_frame(b, "GSE", "GSM")
    assert list(rotated.columns) == ["Bx GSM", "By GSM", "Bz GSM"]
    np.testing.assert_allclose(rotated.iloc[:, 0], b.iloc[:, 0])  # X is shared
    np.testing.assert_allclose(np.linalg.norm(rotated, axis=1), np.linalg.norm(b, axis=1))
    back = rotate_frame(rotated, "GSM", "GSE")
    np.testing.assert_allclose(back.to_numpy(), b.to_numpy(), atol=1e-12)


def test_rtn_is_refused_in_words() -> None:
    b = pd.DataFrame(np.ones((2, 3)), index=pd.date_range("2015-03-17", periods=2, freq="1h"))
    with pytest.raises(UserError, match="RTN"):
        rotate_frame(b, "RTN", "GSE")
