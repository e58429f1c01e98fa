"""Preconditions every method checks: enough samples, cadence, gaps, units and frame.

Each check returns a `Check` saying what was found, so a result states what it assumed
instead of failing silently. Unit strings are read against a small table of the units
heliophysics datasets write (nT, km/s, cm^-3, K, eV, km, s), scaled to the unit a
method expects; an unknown unit is reported, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from xhelio.analysis.report import Check
from xhelio.errors import UserError

__all__ = [
    "FloatArray",
    "as_vectors",
    "frame_check",
    "sampling_checks",
    "seconds",
    "unit_scale",
]

FloatArray = npt.NDArray[np.float64]
GAP_FACTOR = 3.0
"""A step longer than this many median steps counts as a gap."""

_UNITS: dict[str, dict[str, float]] = {
    "magnetic field": {"nt": 1.0, "nanotesla": 1.0, "gamma": 1.0, "t": 1e9, "ut": 1e3, "g": 1e5},
    "velocity": {"km/s": 1.0, "kms-1": 1.0, "km s-1": 1.0, "km/sec": 1.0, "m/s": 1e-3},
    "density": {
        "cm^-3": 1.0, "cm-3": 1.0, "/cm3": 1.0, "/cm^3": 1.0, "#/cm3": 1.0, "#/cm^3": 1.0,
        "/cc": 1.0, "#/cc": 1.0, "n/cc": 1.0, "n/cm^3": 1.0, "n/cm3": 1.0, "1/cm3": 1.0,
        "1/cm^3": 1.0, "cm**-3": 1.0, "m^-3": 1e-6, "m-3": 1e-6, "per cc": 1.0,
    },
    "temperature": {"k": 1.0, "deg k": 1.0, "kelvin": 1.0, "ev": 11604.518, "kev": 11604518.0},
    "length": {"km": 1.0, "m": 1e-3, "re": 6371.2, "earth radii": 6371.2},
    "electric field": {"mv/m": 1.0, "v/m": 1e3, "uv/m": 1e-3},
}  # fmt: skip
_EXPECTED = {
    "magnetic field": "nT",
    "velocity": "km/s",
    "density": "cm^-3",
    "temperature": "K",
    "length": "km",
    "electric field": "mV/m",
}


def seconds(times: npt.ArrayLike) -> FloatArray:
    """Times (datetime64 or seconds) as float seconds from the first sample."""
    values = np.asarray(times)
    if np.issubdtype(values.dtype, np.datetime64):
        ns = values.astype("datetime64[ns]").astype(np.int64)
        return (ns - ns[0]).astype(np.float64) / 1e9 if ns.size else ns.astype(np.float64)
    return np.asarray(values, dtype=np.float64)


def as_vectors(values: npt.ArrayLike, what: str, minimum: int = 3) -> FloatArray:
    """An (n, 3) float array of vectors; refuses another shape or too few finite rows."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] != 3:
        raise UserError(
            f"{what} must be three components per sample (n x 3); got shape {array.shape}."
        )
    finite = array[np.isfinite(array).all(axis=1)]
    if len(finite) < minimum:
        raise UserError(
            f"{what} has {len(finite)} complete samples; the method needs at least {minimum}."
        )
    return array


def sampling_checks(times: npt.ArrayLike | None, values: FloatArray) -> list[Check]:
    """Samples used, missing values, cadence regularity and gaps of one series."""
    rows = values.reshape(len(values), -1)
    finite = np.isfinite(rows).all(axis=1)
    missing = int((~finite).sum())
    checks = [
        Check(
            name="gaps",
            ok=missing == 0,
            detail=f"{int(finite.sum())} complete samples"
            + (f"; {missing} with missing values were left out" if missing else ", none missing"),
        )
    ]
    if times is None:
        checks.append(Check(name="cadence", ok=True, detail="no times given: cadence unchecked"))
        return checks
    t = seconds(times)[finite]
    if len(t) < 2:
        return checks
    steps = np.diff(t)
    median = float(np.median(steps))
    if median <= 0:
        checks.append(Check(name="cadence", ok=False, detail="times are not increasing"))
        return checks
    gaps = int((steps > GAP_FACTOR * median).sum())
    irregular = float(np.std(steps) / median)
    detail = f"median step {median:g} s"
    if gaps:
        detail += f"; {gaps} gap(s) longer than {GAP_FACTOR:g} steps (largest {steps.max():g} s)"
    elif irregular > 0.1:
        detail += f"; irregular sampling (step spread {irregular:.0%})"
    else:
        detail += ", regular"
    checks.append(Check(name="cadence", ok=gaps == 0 and irregular <= 0.1, detail=detail))
    return checks


def unit_scale(unit: str | None, kind: str) -> tuple[float, Check]:
    """The factor taking values in `unit` to the unit the methods use for `kind`.

    Raises:
        UserError: a unit that is not one of `kind`'s (e.g. km/s given as a field).
    """
    expected = _EXPECTED[kind]
    if not unit or not unit.strip():
        return 1.0, Check(
            name=f"units of {kind}",
            ok=False,
            detail=f"no unit given for the {kind}: assumed {expected}",
        )
    bare = re.sub(r"\(.*?\)", "", unit)  # "nT (1min)": a remark, not part of the unit
    key = re.sub(r"\s+", " ", bare.strip().lower().replace("**", "^"))
    table = _UNITS[kind]
    if key in table:
        factor = table[key]
        detail = f"{kind} in {unit}" + ("" if factor == 1.0 else f", scaled to {expected}")
        return factor, Check(name=f"units of {kind}", ok=True, detail=detail)
    for other, units in _UNITS.items():
        if other != kind and key in units:
            raise UserError(
                f"The {kind} is given in {unit}, a unit of {other}: pick the {kind} ({expected})."
            )
    return 1.0, Check(
        name=f"units of {kind}",
        ok=False,
        detail=f"unit {unit!r} of the {kind} not recognised: assumed {expected}",
    )


def frame_check(frames: Sequence[str | None]) -> Check:
    """Whether every vector input is in the same coordinate frame (when they say so)."""
    known = sorted({f.upper() for f in frames if f})
    if len(known) > 1:
        raise UserError(
            f"The inputs are in different frames ({', '.join(known)}); transform them to "
            "one frame first."
        )
    if not known:
        return Check(
            name="frame",
            ok=True,
            detail="frame not stated: all vectors assumed to be in one orthogonal frame",
        )
    return Check(name="frame", ok=True, detail=f"all vectors in {known[0]}")
