"""Timing of a boundary seen by 2-4 spacecraft, and the cross-correlation lag of two series.

Reference: C. C. Harvey, "Spatial gradients and the volumetric tensor", ch. 12 of
*Analysis Methods for Multi-Spacecraft Data*, ISSI SR-001 (1998), §12.3 (discontinuity
analysis): for a planar boundary moving at constant speed V along n, the crossing times
satisfy (r_α − r_0)·m = t_α − t_0 with the slowness m = n / V (eq. 12.40 ff.). Timing
errors δt propagate to m by the same linear system.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from xhelio.analysis.checks import FloatArray, seconds
from xhelio.analysis.report import AnalysisResult, Check
from xhelio.errors import UserError

__all__ = [
    "LAG_REFERENCE",
    "REFERENCE",
    "LagResult",
    "TimingResult",
    "boundary_timing",
    "cross_correlation_lag",
]

REFERENCE = (
    "Harvey, C. C. (1998), Spatial gradients and the volumetric tensor, ch. 12 in Analysis "
    "Methods for Multi-Spacecraft Data, ISSI SR-001, pp. 307-322 (§12.3, timing of a "
    "planar discontinuity)"
)
LAG_REFERENCE = (
    "Normalised cross-correlation of two uniformly resampled series (e.g. Bendat, J. S. & "
    "Piersol, A. G., Random Data, 4th ed., Wiley 2010, §5.1); the peak is refined by a "
    "parabola through the three highest lags"
)


class TimingResult(AnalysisResult):
    """Boundary normal and speed along it, with their uncertainties."""

    normal: list[float]
    normal_error_deg: float
    speed_km_s: float
    speed_error_km_s: float
    spacecraft: int


class LagResult(AnalysisResult):
    """Lag (s) of the second series behind the first at the correlation peak."""

    lag_s: float
    lag_error_s: float
    correlation: float
    step_s: float


def boundary_timing(
    positions_km: npt.ArrayLike,
    times: npt.ArrayLike,
    *,
    normal: npt.ArrayLike | None = None,
    time_error_s: float = 0.0,
    frame: str | None = None,
) -> TimingResult:
    """Normal and speed of a planar boundary from the times 2-4 spacecraft crossed it.

    Reference: Harvey (1998), ISSI SR-001 ch. 12, §12.3. With four (or more) spacecraft
    the slowness vector m = n/V is solved from (r_α − r_0)·m = t_α − t_0; with three, the
    minimum-norm solution puts n in the spacecraft plane (speed an upper bound) unless
    `normal` is given; with two, `normal` (e.g. from minimum variance) is required and
    only the speed is timed.

    Args:
        positions_km: (N, 3) spacecraft positions at the crossing, km, one frame.
        times: N crossing times (datetime64 or seconds).
        normal: A known normal (only the speed is then timed).
        time_error_s: The uncertainty of each crossing time (e.g. the sampling step).
        frame: The frame of the positions (reported).
    """
    r = np.asarray(positions_km, dtype=np.float64)
    t = seconds(times)
    if r.ndim != 2 or r.shape[1] != 3 or len(r) != len(t) or len(r) < 2:
        raise UserError(
            "Timing needs one (x, y, z) position and one crossing time per spacecraft, 2 or more."
        )
    dr = r[1:] - r[0]
    dt = t[1:] - t[0]
    assumptions = ["a planar boundary moving at constant velocity along its normal"]
    checks = [
        Check(
            name="frame",
            ok=True,
            detail=f"positions in {frame}"
            if frame
            else "frame not stated: all positions assumed in one frame",
        )
    ]
    if normal is not None:
        n = np.asarray(normal, dtype=np.float64)
        n = n / np.linalg.norm(n)
        along = dr @ n
        if np.allclose(dt, 0):
            raise UserError("All crossing times are equal: the speed is undefined.")
        speed = float((along @ dt) / (dt @ dt))
        residual = along - speed * dt
        spread = float(np.sqrt(np.sum(residual**2) / max(1, len(dt) - 1))) if len(dt) > 1 else 0.0
        speed_error = float(np.hypot(spread, abs(speed) * time_error_s) / np.sqrt(dt @ dt))
        assumptions.append("the normal is given; only the speed is timed")
        m = n / speed if speed else n
        normal_error = 0.0
    else:
        if len(r) == 2:
            raise UserError(
                "Two spacecraft time only the speed: give the normal (e.g. from minimum variance)."
            )
        m, *_ = np.linalg.lstsq(dr, dt, rcond=None)
        if len(r) == 3:
            assumptions.append(
                "three spacecraft: the normal is taken in their plane (minimum-norm "
                "solution), so the speed is an upper bound"
            )
        if not np.any(m):
            raise UserError("All crossing times are equal: the boundary's speed is undefined.")
        size = float(np.linalg.norm(m))
        n = m / size
        speed = 1.0 / size
        cov = time_error_s**2 * 2 * np.linalg.pinv(dr.T @ dr)
        along_var = float(n @ cov @ n)
        speed_error = float(np.sqrt(along_var)) * speed**2
        across = cov - np.outer(cov @ n, n) - np.outer(n, n @ cov) + along_var * np.outer(n, n)
        normal_error = float(np.degrees(np.sqrt(max(0.0, float(np.trace(across)))) / size))
        tetra = np.linalg.svd(dr, compute_uv=False)
        flat = float(tetra[-1] / tetra[0]) if len(tetra) == 3 else 0.0
        if len(r) >= 4:
            checks.append(
                Check(
                    name="configuration",
                    ok=flat > 0.1,
                    detail=(
                        "spacecraft configuration "
                        f"{'regular enough' if flat > 0.1 else 'nearly flat or linear'} "
                        f"(smallest/largest extent {flat:.2f})"
                    ),
                )
            )
    if speed < 0:
        n, speed = -n, -speed
    text = (
        f"Boundary normal n = ({n[0]:.3f}, {n[1]:.3f}, {n[2]:.3f})"
        f"{' in ' + frame if frame else ''} ± {normal_error:.1f}°, speed {speed:.1f} ± "
        f"{speed_error:.1f} km/s along n, from {len(r)} spacecraft. Method: {REFERENCE}."
    )
    return TimingResult(
        method="multi-spacecraft timing",
        reference=REFERENCE,
        assumptions=assumptions,
        checks=checks,
        answer=text,
        normal=[float(c) for c in n],
        normal_error_deg=normal_error,
        speed_km_s=speed,
        speed_error_km_s=speed_error,
        spacecraft=len(r),
    )


def _uniform(t: FloatArray, x: FloatArray, grid: FloatArray) -> FloatArray:
    keep = np.isfinite(x)
    return np.interp(grid, t[keep], x[keep], left=np.nan, right=np.nan)


def cross_correlation_lag(
    times_a: npt.ArrayLike,
    a: npt.ArrayLike,
    times_b: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    max_lag_s: float | None = None,
) -> LagResult:
    """The lag of series b behind series a at their peak normalised cross-correlation.

    A positive lag means b repeats a later: b(t) ≈ a(t − lag). Both are resampled to the
    coarser median cadence on their common interval before correlating.

    Args:
        times_a: Times of a (datetime64).
        a: Values of a.
        times_b: Times of b (datetime64).
        b: Values of b.
        max_lag_s: Largest lag searched (default: a quarter of the common interval).
    """
    ta = np.asarray(times_a).astype("datetime64[ns]").astype(np.int64) / 1e9
    tb = np.asarray(times_b).astype("datetime64[ns]").astype(np.int64) / 1e9
    xa, xb = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if len(ta) < 8 or len(tb) < 8:
        raise UserError("Cross-correlation needs at least 8 samples of each series.")
    step = max(float(np.median(np.diff(ta))), float(np.median(np.diff(tb))))
    start, stop = max(ta[0], tb[0]), min(ta[-1], tb[-1])
    if stop - start < 8 * step:
        raise UserError("The two series overlap too little in time to correlate.")
    grid = np.arange(start, stop, step)
    ya, yb = _uniform(ta, xa, grid), _uniform(tb, xb, grid)
    missing = float(np.mean(~np.isfinite(ya) | ~np.isfinite(yb)))
    ya, yb = np.nan_to_num(ya - np.nanmean(ya)), np.nan_to_num(yb - np.nanmean(yb))
    limit = int((max_lag_s if max_lag_s else (stop - start) / 4) / step)
    limit = max(1, min(limit, len(grid) - 2))
    lags = np.arange(-limit, limit + 1)
    values = np.array(
        [
            float(
                np.sum(ya[max(0, -k) : len(ya) - max(0, k)] * yb[max(0, k) : len(yb) - max(0, -k)])
            )
            for k in lags
        ]
    )
    norm = float(np.sqrt(np.sum(ya**2) * np.sum(yb**2)))
    if norm == 0:
        raise UserError("A series is constant: its correlation is undefined.")
    values = values / norm
    best = int(np.argmax(values))
    shift = 0.0
    if 0 < best < len(values) - 1:
        y0, y1, y2 = values[best - 1 : best + 2]
        curve = y0 - 2 * y1 + y2
        shift = 0.5 * (y0 - y2) / curve if curve else 0.0
    lag = float((lags[best] + shift) * step)
    checks = [
        Check(
            name="gaps",
            ok=missing < 0.05,
            detail=f"{missing:.0%} of the common grid missing (set to the mean)",
        ),
        Check(name="cadence", ok=True, detail=f"both resampled to {step:g} s"),
    ]
    if best in (0, len(values) - 1):
        checks.append(
            Check(
                name="lag range",
                ok=False,
                detail="the peak is at the edge of the lags searched: widen max_lag_s",
            )
        )
    text = (
        f"Lag of the second series behind the first: {lag:.1f} ± {step / 2:.1f} s, "
        f"correlation {values[best]:.3f}. Method: {LAG_REFERENCE}."
    )
    return LagResult(
        method="cross-correlation lag",
        reference=LAG_REFERENCE,
        assumptions=[
            "the two series see the same structure, shifted in time; linear "
            "interpolation to a common grid"
        ],
        checks=checks,
        answer=text,
        lag_s=lag,
        lag_error_s=step / 2,
        correlation=float(values[best]),
        step_s=step,
    )
