"""The de Hoffmann-Teller frame and the Walén test.

Reference: A. V. Khrabrov and B. U. Ö. Sonnerup, "deHoffmann-Teller analysis", ch. 9 of
*Analysis Methods for Multi-Spacecraft Data*, ISSI SR-001 (1998): V_HT minimises
D(V) = ⟨|(v − V) × B|²⟩ (eqs. 9.8-9.13), its quality D/D0 and the correlation coefficient
of −v×B with −V_HT×B, its statistical uncertainty (eq. 9.17); the Walén test (§9.4.2):
the regression slope of the flow in the HT frame on the Alfvén velocity is ±1 for a
rotational discontinuity.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from xhelio.analysis.checks import FloatArray, as_vectors, frame_check, sampling_checks
from xhelio.analysis.report import AnalysisResult
from xhelio.errors import UserError

__all__ = ["REFERENCE", "HTResult", "WalenResult", "de_hoffmann_teller", "walen_test"]

REFERENCE = (
    "Khrabrov, A. V. & Sonnerup, B. U. Ö. (1998), deHoffmann-Teller analysis, ch. 9 in "
    "Analysis Methods for Multi-Spacecraft Data, ISSI SR-001, pp. 221-248 "
    "(eqs. 9.8-9.17; Walén test §9.4.2)"
)
_MU0 = 4e-7 * np.pi
_MP = 1.67262192e-27


class HTResult(AnalysisResult):
    """V_HT (km/s) with its uncertainty, the correlation coefficient and D/D0."""

    velocity_km_s: list[float]
    velocity_error_km_s: list[float]
    correlation: float
    d_ratio: float
    samples: int


class WalenResult(AnalysisResult):
    """Walén regression of the flow in the HT frame on the Alfvén velocity."""

    slope: float
    slope_error: float
    intercept_km_s: float
    correlation: float
    ht_velocity_km_s: list[float]
    verdict: str


def _pairs(b: npt.ArrayLike, v: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    bb = as_vectors(b, "The magnetic field", minimum=3)
    vv = as_vectors(v, "The velocity", minimum=3)
    if len(bb) != len(vv):
        raise UserError(
            f"The field ({len(bb)} samples) and velocity ({len(vv)}) must be on one time base."
        )
    return bb, vv


def _complete(*arrays: FloatArray) -> list[FloatArray]:
    keep = np.all([np.isfinite(a.reshape(len(a), -1)).all(axis=1) for a in arrays], axis=0)
    return [a[keep] for a in arrays]


def _ht(b: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray, float, float]:
    b2 = np.einsum("ij,ij->i", b, b)
    k = b2[:, None, None] * np.eye(3) - b[:, :, None] * b[:, None, :]
    k0 = k.mean(axis=0)
    rhs = np.einsum("mij,mj->i", k, v) / len(b)
    try:
        vht = np.linalg.solve(k0, rhs)
    except np.linalg.LinAlgError:
        raise UserError(
            "The de Hoffmann-Teller frame is undefined: the field keeps one direction."
        ) from None
    d = float(np.mean(np.sum(np.cross(v - vht, b) ** 2, axis=1)))
    d0 = float(np.mean(np.sum(np.cross(v, b) ** 2, axis=1)))
    m = len(b)
    cov = d / (2 * m - 3) * np.linalg.inv(k0) if m > 2 else np.full((3, 3), np.nan)
    return vht, np.sqrt(np.abs(np.diag(cov))), d, d0


def de_hoffmann_teller(
    b: npt.ArrayLike,
    v: npt.ArrayLike,
    times: npt.ArrayLike | None = None,
    *,
    frame: str | None = None,
) -> HTResult:
    """The de Hoffmann-Teller frame velocity from field (nT) and flow (km/s) samples.

    Reference: Khrabrov & Sonnerup (1998), ISSI SR-001 ch. 9, eqs. 9.8-9.17.

    Args:
        b: (n, 3) magnetic field, nT.
        v: (n, 3) plasma velocity on the same times, km/s.
        times: Their times, to check cadence and gaps.
        frame: The frame of the vectors (reported).
    """
    bb, vv = _pairs(b, v)
    checks = [*sampling_checks(times, np.hstack([bb, vv])), frame_check([frame])]
    bb, vv = _complete(bb, vv)
    vht, err, d, d0 = _ht(bb, vv)
    ec = -np.cross(vv, bb).ravel()
    eht = -np.cross(np.broadcast_to(vht, vv.shape), bb).ravel()
    cc = float(np.corrcoef(ec, eht)[0, 1])
    quality = "good" if cc > 0.9 else "fair" if cc > 0.8 else "poor"
    text = (
        f"de Hoffmann-Teller velocity V_HT = ({vht[0]:.0f} ± {err[0]:.0f}, {vht[1]:.0f} ± "
        f"{err[1]:.0f}, {vht[2]:.0f} ± {err[2]:.0f}) km/s{' in ' + frame if frame else ''}; "
        f"correlation coefficient {cc:.3f} ({quality} HT frame), D/D0 = {d / d0:.3f}. "
        f"Method: {REFERENCE}."
    )
    return HTResult(
        method="de Hoffmann-Teller frame",
        reference=REFERENCE,
        assumptions=[
            "a time-stationary structure whose convection electric field vanishes in one "
            "moving frame; E = −v×B (ideal MHD)",
            "field and flow on one time base (the tool interpolates the field to the plasma times)",
        ],
        checks=checks,
        answer=text,
        velocity_km_s=[float(c) for c in vht],
        velocity_error_km_s=[float(c) for c in err],
        correlation=cc,
        d_ratio=d / d0 if d0 else float("nan"),
        samples=len(bb),
    )


def walen_test(
    b: npt.ArrayLike,
    v: npt.ArrayLike,
    density: npt.ArrayLike,
    times: npt.ArrayLike | None = None,
    *,
    frame: str | None = None,
) -> WalenResult:
    """The Walén test: flow in the HT frame against the Alfvén velocity B/√(μ0 ρ).

    Reference: Khrabrov & Sonnerup (1998), ISSI SR-001 ch. 9, §9.4.2 (Walén relation);
    slope ±1 with high correlation marks a rotational discontinuity.

    Args:
        b: (n, 3) magnetic field, nT.
        v: (n, 3) plasma velocity on the same times, km/s.
        density: (n,) proton density, cm^-3.
        times: Their times, to check cadence and gaps.
        frame: The frame of the vectors (reported).
    """
    bb, vv = _pairs(b, v)
    nn = np.asarray(density, dtype=np.float64).ravel()
    if len(nn) != len(bb):
        raise UserError("Field, velocity and density must be on one time base.")
    nn = np.where(nn > 0, nn, np.nan)
    checks = sampling_checks(times, np.hstack([bb, vv, nn[:, None]]))
    bb, vv, nn = _complete(bb, vv, nn)
    ht = de_hoffmann_teller(bb, vv, None, frame=frame)
    vht = np.asarray(ht.velocity_km_s)
    va = bb * 1e-9 / np.sqrt(_MU0 * nn[:, None] * 1e6 * _MP) / 1e3
    x = va.ravel()
    y = (vv - vht).ravel()
    fit = np.polyfit(x, y, 1, cov=True)
    slope, intercept = (float(c) for c in fit[0])
    slope_error = float(np.sqrt(fit[1][0, 0]))
    cc = float(np.corrcoef(x, y)[0, 1])
    if abs(slope) > 0.5 and abs(cc) > 0.8:
        verdict = (
            "Walén relation holds (slope near ±1 with high correlation): consistent with a "
            "rotational discontinuity"
            + (", Alfvénic flow along B" if slope > 0 else ", Alfvénic flow anti-parallel to B")
        )
    elif abs(slope) < 0.3:
        verdict = "no Walén relation (slope near 0): consistent with a tangential discontinuity"
    else:
        verdict = "partial Walén relation: the flow is only partly Alfvénic"
    text = (
        f"Walén test: slope {slope:.2f} ± {slope_error:.2f}, correlation {cc:.3f} "
        f"(V_HT from {ht.samples} samples, HT correlation {ht.correlation:.3f}); {verdict}. "
        f"Method: {REFERENCE}."
    )
    return WalenResult(
        method="Walén test",
        reference=REFERENCE,
        assumptions=[
            *ht.assumptions,
            "isotropic pressure (no anisotropy factor), ρ = n m_p (protons only)",
        ],
        checks=[*checks, *ht.checks[-1:]],
        answer=text,
        slope=slope,
        slope_error=slope_error,
        intercept_km_s=intercept,
        correlation=cc,
        ht_velocity_km_s=ht.velocity_km_s,
        verdict=verdict,
    )
