"""Minimum and maximum variance analysis (MVA) of a vector series.

Reference: B. U. Ö. Sonnerup and M. Scheible, "Minimum and maximum variance analysis",
ch. 8 of *Analysis Methods for Multi-Spacecraft Data*, ISSI Scientific Report SR-001
(1998): the variance matrix (eq. 8.8), the constraint ⟨B·n⟩ = 0 (§8.2.6, eq. 8.17), and
the statistical error estimates (§8.3, eqs. 8.23-8.24).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from pydantic import Field

from xhelio.analysis.checks import FloatArray, as_vectors, frame_check, sampling_checks
from xhelio.analysis.report import AnalysisResult, Check

__all__ = ["REFERENCE", "VarianceResult", "minimum_variance", "normal_quality"]

REFERENCE = (
    "Sonnerup, B. U. Ö. & Scheible, M. (1998), Minimum and maximum variance analysis, "
    "ch. 8 in Analysis Methods for Multi-Spacecraft Data, ISSI SR-001, pp. 185-220 "
    "(eq. 8.8; constraint eq. 8.17; errors eqs. 8.23-8.24)"
)


class VarianceResult(AnalysisResult):
    """Eigenvalues (largest first), eigenvectors and the normal with its error cone.

    Attributes:
        eigenvalues: λ1 ≥ λ2 ≥ λ3 (the field's unit squared).
        eigenvectors: x1, x2, x3 (maximum, intermediate, minimum variance), right-handed.
        normal: The normal estimate (x3 for minimum, x1 for maximum variance).
        ratio: λ2/λ3 for minimum variance (λ1/λ2 for maximum): how well separated the
            normal's eigenvalue is.
        cone_deg: Statistical half-angle uncertainty of the normal (degrees): its
            rotation toward the intermediate (first) and maximum (second) directions.
        mean_normal_component: ⟨B⟩·n and its statistical uncertainty.
        quality: What the ratio means for trusting the normal.
    """

    eigenvalues: list[float]
    eigenvectors: list[list[float]]
    normal: list[float]
    ratio: float
    cone_deg: list[float] | None = None
    mean_normal_component: float
    mean_normal_component_error: float | None = None
    constrained: bool = False
    samples: int
    quality: str = ""
    unit: str = ""
    frame: str | None = None
    angle_errors_deg: dict[str, float] = Field(default_factory=dict[str, float])


def normal_quality(ratio: float) -> str:
    """What an eigenvalue ratio means for the normal (Sonnerup & Scheible §8.3, §8.6)."""
    if not np.isfinite(ratio) or ratio < 2:
        return (
            "degenerate: the two smallest eigenvalues are nearly equal, so the normal is "
            "not determined (any direction in their plane fits)"
        )
    if ratio < 10:
        return (
            "usable with caution: the eigenvalues are separated, but the normal may be off "
            "by the error cone or more; check it against other methods or intervals"
        )
    return "well determined: the eigenvalues are well separated"


def _ordered(matrix: FloatArray) -> tuple[FloatArray, FloatArray]:
    values, vectors = np.linalg.eigh(matrix)
    values = np.clip(values, 0.0, None)  # a variance matrix: rounding may leave -1e-15
    order = np.argsort(values)[::-1]
    return values[order], vectors[:, order].T.copy()


def _orient(vectors: FloatArray, normal_index: int) -> FloatArray:
    """Normal with a non-negative x component; the triad made right-handed."""
    x = vectors.copy()
    if x[normal_index][0] < 0:
        x[normal_index] = -x[normal_index]
    other = 2 - normal_index  # the maximum (or minimum) direction that is not the normal
    if x[other][int(np.argmax(np.abs(x[other])))] < 0:
        x[other] = -x[other]
    x[1] = np.cross(x[2], x[0])
    return x


def _constrained(matrix: FloatArray, mean: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Variance matrix projected off ⟨B⟩ (eq. 8.17): its null direction is ⟨B⟩ itself."""
    e = mean / np.linalg.norm(mean)
    projector = np.eye(3) - np.outer(e, e)
    values, vectors = _ordered(projector @ matrix @ projector)
    # The eigenvalue ~0 belongs to e: the normal is the smaller of the other two.
    null = int(np.argmax(np.abs(vectors @ e)))
    keep = [i for i in range(3) if i != null]
    # Ordered as the directions: maximum variance, ⟨B⟩ (no variance left), the normal.
    values = np.array([values[keep[0]], 0.0, values[keep[1]]])
    vectors = np.array([vectors[keep[0]], e, vectors[keep[1]]])
    return values, vectors


def _ratio(top: float, bottom: float) -> float:
    """λ2/λ3 (or λ1/λ2); a huge finite number when the smaller is exactly 0."""
    return float(top / bottom) if bottom > 0 else 1e12


def _errors(values: FloatArray, samples: int) -> dict[str, float]:
    """Angular uncertainties Δφ_ij (radians) of eq. 8.23."""
    l1, l2, l3 = (float(v) for v in values)
    out: dict[str, float] = {}
    for (i, j), (li, lj) in {(1, 2): (l1, l2), (1, 3): (l1, l3), (2, 3): (l2, l3)}.items():
        gap = li - lj
        out[f"{i}{j}"] = (
            float(np.sqrt(l3 / (samples - 1) * (li + lj - l3) / gap**2)) if gap > 0 else np.pi
        )
    return out


def minimum_variance(
    vectors: npt.ArrayLike,
    times: npt.ArrayLike | None = None,
    *,
    constrained: bool = False,
    maximum: bool = False,
    unit: str = "",
    frame: str | None = None,
) -> VarianceResult:
    """Minimum (or maximum) variance analysis of a vector series (MVAB / MVAE).

    Reference: Sonnerup & Scheible (1998), ISSI SR-001 ch. 8: variance matrix eq. 8.8,
    constraint ⟨B·n⟩ = 0 eq. 8.17, error cones eqs. 8.23-8.24.

    Args:
        vectors: (n, 3) samples, e.g. the magnetic field across a current sheet.
        times: Their times (datetime64 or seconds), to check cadence and gaps.
        constrained: Impose ⟨B·n⟩ = 0 (a tangential discontinuity), eq. 8.17.
        maximum: Maximum variance (the normal is x1), e.g. of the electric field.
        unit: The vectors' unit (reported with the eigenvalues).
        frame: Their coordinate frame (reported; the normal is in it).

    Returns:
        The eigen-system, the normal, λ2/λ3 with what it means, and the error cone.
    """
    data = as_vectors(vectors, "The vector series", minimum=4)
    checks: list[Check] = sampling_checks(times, data)
    checks.append(frame_check([frame]))
    data = data[np.isfinite(data).all(axis=1)]
    samples = len(data)
    mean = data.mean(axis=0)
    matrix = (data.T @ data) / samples - np.outer(mean, mean)
    values, axes = _ordered(matrix)
    ratio = float(values[0] / values[1]) if maximum else _ratio(values[1], values[2])
    if constrained and np.linalg.norm(mean) > 0:
        values, axes = _constrained(matrix, mean)
    normal_index = 0 if maximum else 2
    axes = _orient(axes, normal_index)
    normal = axes[normal_index]
    errors = {} if constrained else _errors(values, samples)
    cone: list[float] | None = None
    bn_error: float | None = None
    if errors:
        cone = [float(np.degrees(errors["23"])), float(np.degrees(errors["13"]))]
        if maximum:
            cone = [float(np.degrees(errors["12"])), float(np.degrees(errors["13"]))]
        else:
            bn_error = float(
                np.sqrt(
                    values[2] / (samples - 1)
                    + (errors["23"] * float(mean @ axes[1])) ** 2
                    + (errors["13"] * float(mean @ axes[0])) ** 2
                )
            )
    quality = normal_quality(ratio)
    assumptions = [
        "the structure is one-dimensional and time-stationary during the interval",
        "the sign of the normal is arbitrary; it is given with a non-negative x component",
    ]
    if constrained:
        assumptions.append(
            "⟨B·n⟩ = 0 imposed (a tangential discontinuity): eigenvalues are those of the "
            "projected matrix (x2 is along ⟨B⟩), the ratio and its meaning are those of the "
            "unconstrained analysis, and no error cone is given"
        )
    if samples < 10:
        checks.append(
            Check(name="samples", ok=False, detail=f"only {samples} samples: errors are rough")
        )
    bn = float(mean @ normal)
    name = "maximum" if maximum else "minimum"
    ratio_name = "λ1/λ2" if maximum else "λ2/λ3"
    text = (
        f"{name.capitalize()} variance normal n = ({normal[0]:.3f}, {normal[1]:.3f}, "
        f"{normal[2]:.3f}){' in ' + frame if frame else ''}; eigenvalues "
        f"{values[0]:.3g}, {values[1]:.3g}, {values[2]:.3g} {unit + '²' if unit else ''}; "
        f"{ratio_name} = {ratio:.2f}: {quality.split(':')[0]}."
    )
    if cone:
        text += f" Error cone ±{cone[0]:.1f}° / ±{cone[1]:.1f}°."
    text += f" ⟨B·n⟩ = {bn:.2f}" + (f" ± {bn_error:.2f}" if bn_error is not None else "")
    text += f" {unit}".rstrip() + f" from {samples} samples. Method: {REFERENCE}."
    return VarianceResult(
        method=f"{name} variance analysis" + (" with ⟨B·n⟩ = 0" if constrained else ""),
        reference=REFERENCE,
        assumptions=assumptions,
        checks=checks,
        answer=text,
        eigenvalues=[float(v) for v in values],
        eigenvectors=[[float(c) for c in row] for row in axes],
        normal=[float(c) for c in normal],
        ratio=ratio,
        cone_deg=cone,
        mean_normal_component=bn,
        mean_normal_component_error=bn_error,
        constrained=constrained,
        samples=samples,
        quality=quality,
        unit=unit,
        frame=frame,
        angle_errors_deg={k: float(np.degrees(v)) for k, v in errors.items()},
    )
