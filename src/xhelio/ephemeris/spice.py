"""Evaluate loaded SPICE kernels: heliocentric states and body-fixed rotations.

Call these only inside `KernelManager.loaded` (the pool lock is held there). States are
geometric (no light-time or aberration correction), in J2000 axes, km and km/s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xhelio.errors import UserError

__all__ = ["NoCoverageError", "body_fixed_rotation", "ephemeris_times", "states"]

_NO_COVERAGE = {
    "SPICE(SPKINSUFFDATA)",
    "SPICE(NOLOADEDFILES)",
    "SPICE(IDCODENOTFOUND)",
    "SPICE(NOTRANSLATION)",
    "SPICE(NOFRAMECONNECT)",
    "SPICE(FRAMEDATANOTFOUND)",
    "SPICE(NOSUCHFRAME)",
    "SPICE(UNKNOWNFRAME)",
}


class NoCoverageError(UserError):
    """The loaded kernels do not cover a body, frame or time."""


def ephemeris_times(times: pd.DatetimeIndex) -> np.ndarray:
    """SPICE ephemeris times (TDB seconds past J2000) of UTC `times` (needs leapseconds)."""
    import spiceypy

    stamps = [t.strftime("%Y-%m-%dT%H:%M:%S.%f") for t in times.tz_convert("UTC")]
    return np.asarray([spiceypy.str2et(s) for s in stamps], dtype=float)


def states(naif_id: int, observer_id: int, ets: np.ndarray) -> np.ndarray:
    """(n, 6) geometric states of `naif_id` seen from `observer_id` in J2000 (km, km/s).

    Raises:
        NoCoverageError: a body or time the loaded kernels do not cover.
    """
    import spiceypy

    if naif_id == observer_id:
        return np.zeros((len(ets), 6))
    try:
        found, _ = spiceypy.spkezr(str(naif_id), ets, "J2000", "NONE", str(observer_id))
    except spiceypy.utils.exceptions.SpiceyError as exc:
        if exc.short in _NO_COVERAGE:
            raise NoCoverageError(
                f"No loaded kernel covers body {naif_id} from {observer_id}: {exc.short}"
            ) from exc
        raise
    return np.asarray(found, dtype=float).reshape(len(ets), 6)


def body_fixed_rotation(frame: str, ets: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotations from J2000 into the body-fixed `frame` (e.g. IAU_MARS).

    Raises:
        NoCoverageError: the planetary constants kernel does not define that frame.
    """
    import spiceypy

    try:
        return np.asarray([spiceypy.pxform("J2000", frame, et) for et in ets], dtype=float)
    except spiceypy.utils.exceptions.SpiceyError as exc:
        raise NoCoverageError(f"Frame {frame} is not defined by the kernels: {exc.short}") from exc
