"""Pitch-angle distributions from angle-resolved particle data.

Two cases: a product that is already binned in pitch angle (a dimension named like
"pitch" or "PA"): the other dimensions (energy) are averaged over a chosen range; or
fluxes per look direction with the field: each direction's pitch angle
α = arccos(−d·B/|B|) (particles move opposite to the look direction) is binned.
Reference: e.g. Lin, R. P. et al. (1995), Space Sci. Rev. 71, 125 (Wind 3DP pitch-angle
distributions); the anisotropy is (field-aligned − perpendicular)/(sum).
"""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt
import xarray as xr
from pydantic import Field

from xhelio.analysis.look_directions import Polar, angle_dims, angle_grid
from xhelio.analysis.report import AnalysisResult, Check
from xhelio.errors import UserError

__all__ = [
    "REFERENCE",
    "PadResult",
    "bin_pitch_angles",
    "pad_from_look_directions",
    "pitch_angle_dimension",
    "reduce_pad",
]

REFERENCE = (
    "pitch angle α = arccos(−d·B/|B|) of each look direction d, averaged per α bin; "
    "cf. Lin, R. P. et al. (1995), Space Sci. Rev. 71, 125-153 (Wind 3DP)"
)
_PITCH = re.compile(r"pitch|^pa$|^pa_|_pa$|pangle", re.IGNORECASE)
_ENERGY = re.compile(r"energ|^e$|ebin", re.IGNORECASE)


class PadResult(AnalysisResult):
    """Pitch-angle bins (degrees), the time-mean distribution and its anisotropy."""

    pitch_angle_deg: list[float] = Field(default_factory=list[float])
    mean_distribution: list[float] = Field(default_factory=list[float])
    anisotropy: float
    energy_range: list[float] | None = None


def pitch_angle_dimension(data: xr.DataArray) -> str | None:
    """The dimension of `data` holding pitch angles, if it has one."""
    return next((str(d) for d in data.dims if _PITCH.search(str(d))), None)


def _anisotropy(pitch: npt.NDArray[np.float64], mean: npt.NDArray[np.float64]) -> float:
    aligned = mean[(pitch < 45) | (pitch > 135)]
    perpendicular = mean[(pitch >= 45) & (pitch <= 135)]
    if not aligned.size or not perpendicular.size:
        return float("nan")
    a, p = float(np.nanmean(aligned)), float(np.nanmean(perpendicular))
    return (a - p) / (a + p) if a + p else float("nan")


def _result(
    pitch: npt.NDArray[np.float64],
    pad: xr.DataArray,
    checks: list[Check],
    energy: list[float] | None,
    how: str,
) -> PadResult:
    mean = np.asarray(pad.mean("time", skipna=True).values, dtype=np.float64)
    anisotropy = _anisotropy(pitch, mean)
    shape = (
        "field-aligned"
        if anisotropy > 0.2
        else "perpendicular"
        if anisotropy < -0.2
        else "near isotropic"
    )
    return PadResult(
        method="pitch-angle distribution",
        reference=REFERENCE,
        assumptions=[how],
        checks=checks,
        answer=(
            f"Pitch-angle distribution in {len(pitch)} bins; anisotropy "
            f"{anisotropy:+.2f} ({shape}). Method: {REFERENCE}."
        ),
        pitch_angle_deg=pitch.tolist(),
        mean_distribution=mean.tolist(),
        anisotropy=anisotropy,
        energy_range=energy,
    )


def _average_others(
    data: xr.DataArray, keep: set[str], energy_range: tuple[float, float] | None
) -> tuple[xr.DataArray, list[Check], list[float] | None]:
    """`data` averaged over its dims not in `keep`; energies within `energy_range` only."""
    checks: list[Check] = []
    reduced = data
    energy: list[float] | None = None
    for other in [d for d in data.dims if d not in keep]:
        if energy_range is not None and _ENERGY.search(str(other)) and other in data.coords:
            values = np.asarray(data[other].values, dtype=np.float64)
            chosen = (values >= energy_range[0]) & (values <= energy_range[1])
            if not chosen.any():
                raise UserError(
                    f"No {other} channel between {energy_range[0]:g} and {energy_range[1]:g}; "
                    f"channels span {values.min():g}-{values.max():g}."
                )
            reduced = reduced.isel({other: np.flatnonzero(chosen)})
            energy = [float(values[chosen].min()), float(values[chosen].max())]
        checks.append(Check(name=str(other), ok=True, detail=f"averaged over {other}"))
        reduced = reduced.mean(str(other), skipna=True)
    return reduced, checks, energy


def reduce_pad(
    data: xr.DataArray, energy_range: tuple[float, float] | None = None
) -> tuple[xr.DataArray, PadResult]:
    """A (time, pitch angle) distribution from a product binned in pitch angle.

    Args:
        data: DataArray with a time and a pitch-angle dimension (and maybe energy).
        energy_range: Energies averaged (inclusive, the product's unit); default all.
    """
    dim = pitch_angle_dimension(data)
    if dim is None or "time" not in data.dims:
        raise UserError(
            "This product has no pitch-angle dimension (dimensions: "
            f"{', '.join(map(str, data.dims))}); "
            "a pitch-angle distribution needs angle-resolved data."
        )
    reduced, checks, energy = _average_others(data, {"time", dim}, energy_range)
    reduced = reduced.transpose("time", dim)
    pitch = (
        np.asarray(reduced[dim].values, dtype=np.float64)
        if dim in reduced.coords
        else np.linspace(0, 180, reduced.sizes[dim] * 2 + 1)[1::2]
    )
    return reduced, _result(pitch, reduced, checks, energy, "the product's own pitch-angle bins")


def bin_pitch_angles(
    times: npt.ArrayLike,
    flux: npt.ArrayLike,
    directions: npt.ArrayLike,
    field: npt.ArrayLike,
    bins: int = 12,
) -> tuple[xr.DataArray, PadResult]:
    """Bin fluxes per look direction into pitch angle with the field at each time.

    Args:
        times: (t,) sample times.
        flux: (t, d) flux per look direction.
        directions: (d, 3) or (t, d, 3) unit look directions in the field's frame.
        field: (t, 3) magnetic field at the same times.
        bins: Number of pitch-angle bins over 0-180°.
    """
    f = np.asarray(flux, dtype=np.float64)
    b = np.asarray(field, dtype=np.float64)
    d = np.asarray(directions, dtype=np.float64)
    if d.ndim == 2:
        d = np.broadcast_to(d, (f.shape[0], *d.shape))
    if f.ndim != 2 or b.shape != (f.shape[0], 3) or d.shape != (*f.shape, 3):
        raise UserError("Flux (t, d), directions (d, 3) and field (t, 3) do not match.")
    with np.errstate(invalid="ignore", divide="ignore"):
        unit_b = b / np.linalg.norm(b, axis=1, keepdims=True)
    cosine = -np.einsum("tdk,tk->td", d / np.linalg.norm(d, axis=2, keepdims=True), unit_b)
    alpha = np.degrees(np.arccos(np.clip(cosine, -1, 1)))
    edges = np.linspace(0, 180, bins + 1)
    index = np.clip(np.digitize(alpha, edges) - 1, 0, bins - 1)
    sums = np.zeros((f.shape[0], bins))
    counts = np.zeros((f.shape[0], bins))
    valid = np.isfinite(f) & np.isfinite(alpha)
    rows = np.broadcast_to(np.arange(f.shape[0])[:, None], f.shape)
    np.add.at(sums, (rows[valid], index[valid]), f[valid])
    np.add.at(counts, (rows[valid], index[valid]), 1)
    with np.errstate(invalid="ignore"):
        pad = sums / counts
    centres = (edges[:-1] + edges[1:]) / 2
    array = xr.DataArray(
        pad,
        dims=("time", "pitch_angle"),
        coords={"time": np.asarray(times), "pitch_angle": centres},
    )
    empty = float(np.mean(counts == 0))
    checks = [
        Check(
            name="coverage",
            ok=empty < 0.2,
            detail=f"{empty:.0%} of time × pitch-angle cells have no look direction",
        )
    ]
    return array, _result(
        centres, array, checks, None, "particles move opposite to the look direction"
    )


def pad_from_look_directions(
    data: xr.DataArray,
    field: npt.ArrayLike,
    *,
    energy_range: tuple[float, float] | None = None,
    bins: int = 12,
    polar: Polar = "auto",
    velocity: bool = False,
) -> tuple[xr.DataArray, PadResult]:
    """A (time, pitch angle) distribution from a product resolved in azimuth and polar angle.

    Dimensions other than time and the angles' (energy, species) are averaged, energies
    within `energy_range` only; each direction's pitch angle is taken with the field at
    its time and the fluxes are averaged per pitch-angle bin.

    Args:
        data: Flux or phase-space density with time, angle and maybe energy dimensions.
        field: (t, 3) magnetic field on `data`'s times, in the angles' frame.
        energy_range: Energies averaged (inclusive, the product's unit); default all.
        bins: Pitch-angle bins over 0-180°.
        polar: How the polar angle is measured ('auto' decides from its range).
        velocity: The angles give particle velocity directions, not look directions.
    """
    if "time" not in data.dims:
        raise UserError("A pitch-angle distribution needs a product with a time dimension.")
    reduced, checks, energy = _average_others(data, {"time", *angle_dims(data)}, energy_range)
    grid = angle_grid(reduced, polar=polar, velocity=velocity)
    flux = reduced.transpose("time", *grid.dims).values.reshape(reduced.sizes["time"], -1)
    looks = -grid.directions if velocity else grid.directions
    pad, result = bin_pitch_angles(reduced["time"].values, flux, looks, field, bins)
    missing = float(np.mean(~np.isfinite(np.asarray(field, dtype=np.float64)).all(axis=1)))
    checks.append(
        Check(name="field", ok=missing < 0.2, detail=f"{missing:.0%} of the times have no field")
    )
    result.assumptions = grid.assumptions
    result.checks = [*checks, *grid.checks, *result.checks]
    result.energy_range = energy
    return pad, result
