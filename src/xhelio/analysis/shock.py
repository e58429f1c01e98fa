"""Shock normals, θBn, shock speed and the Rankine-Hugoniot check of the jumps.

Reference: S. J. Schwartz, "Shock and discontinuity normals, Mach numbers, and related
parameters", ch. 10 of *Analysis Methods for Multi-Spacecraft Data*, ISSI SR-001 (1998):
magnetic coplanarity (eq. 10.14), velocity coplanarity (10.18), mixed modes (10.15-10.17),
θBn (10.2), shock speed from mass flux (10.27) and the conservation laws (10.5-10.10).
Inputs are averages over an upstream and a downstream interval; uncertainties come from
the spread of the samples in those intervals, propagated by a seeded Monte Carlo.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from xhelio.analysis.checks import FloatArray, as_vectors
from xhelio.analysis.report import AnalysisResult, Check
from xhelio.errors import UserError

__all__ = [
    "METHODS",
    "REFERENCE",
    "JumpCheck",
    "ShockResult",
    "ShockSide",
    "rankine_hugoniot",
    "shock_normal",
]

REFERENCE = (
    "Schwartz, S. J. (1998), Shock and discontinuity normals, Mach numbers, and related "
    "parameters, ch. 10 in Analysis Methods for Multi-Spacecraft Data, ISSI SR-001, "
    "pp. 249-270 (eqs. 10.2, 10.5-10.18, 10.27)"
)
ShockMethod = Literal["MC", "VC", "MX1", "MX2", "MX3"]
METHODS: tuple[ShockMethod, ...] = ("MC", "VC", "MX1", "MX2", "MX3")
_MU0 = 4e-7 * np.pi
_MP = 1.67262192e-27
_KB = 1.380649e-23
_GAMMA = 5.0 / 3.0
_DRAWS = 400


@dataclass(frozen=True)
class ShockSide:
    """Samples of one side of the shock: B (nT), V (km/s), n (cm^-3), T (K), as (n, 3)/(n,).

    Only `b` is required; a method needing V or n says so.
    """

    b: FloatArray
    v: FloatArray | None = None
    n: FloatArray | None = None
    t: FloatArray | None = None

    @staticmethod
    def of(
        b: npt.ArrayLike,
        v: npt.ArrayLike | None = None,
        n: npt.ArrayLike | None = None,
        t: npt.ArrayLike | None = None,
    ) -> ShockSide:
        """Validated samples of one side (vectors n x 3, scalars n)."""
        return ShockSide(
            as_vectors(b, "The magnetic field", minimum=1),
            None if v is None else as_vectors(v, "The velocity", minimum=1),
            None if n is None else np.asarray(n, dtype=np.float64).ravel(),
            None if t is None else np.asarray(t, dtype=np.float64).ravel(),
        )


class JumpCheck(AnalysisResult):
    """Rankine-Hugoniot check: each conserved flux upstream and downstream, and its mismatch.

    Attributes:
        fluxes: name -> (upstream, downstream, relative mismatch) in the shock frame.
        tolerance: The relative mismatch accepted.
        satisfied: Whether every checked flux is conserved within the tolerance.
    """

    fluxes: dict[str, list[float]]
    tolerance: float
    satisfied: bool


class ShockResult(AnalysisResult):
    """Shock normal (pointing upstream), θBn and shock speed with their uncertainties."""

    normal: list[float]
    normal_error_deg: float
    normals: dict[str, list[float]]
    theta_bn_deg: float
    theta_bn_error_deg: float
    shock_speed_km_s: float | None = None
    shock_speed_error_km_s: float | None = None
    compression_ratio: float | None = None
    alfven_mach: float | None = None
    geometry: str = ""
    rankine_hugoniot: JumpCheck | None = None


def _mean(x: FloatArray) -> FloatArray:
    return np.nanmean(x, axis=0)


def _unit(vector: FloatArray, what: str) -> FloatArray:
    size = float(np.linalg.norm(vector))
    if size == 0 or not np.isfinite(size):
        raise UserError(f"The {what} normal is undefined (a zero vector): {_WHY[what]}")
    return vector / size


_WHY = {
    "MC": "the upstream and downstream fields are parallel or equal (θBn near 0° or 90°, or "
    "no jump in B); use a mixed mode or velocity coplanarity",
    "VC": "the velocity does not change across the shock",
    "MX1": "the field or velocity does not change across the shock",
    "MX2": "the field or velocity does not change across the shock",
    "MX3": "the field or velocity does not change across the shock",
}


def _normal(method: ShockMethod, bu: FloatArray, bd: FloatArray, dv: FloatArray | None):
    db = bd - bu
    if method == "MC":
        return _unit(np.cross(np.cross(bd, bu), db), method)
    if dv is None:
        raise UserError(f"The {method} normal needs the plasma velocity on both sides.")
    if method == "VC":
        return _unit(dv, method)
    base = {"MX1": bu, "MX2": bd, "MX3": db}[method]
    return _unit(np.cross(np.cross(base, dv), db), method)


def _speed(n: FloatArray, up: tuple[FloatArray, float], down: tuple[FloatArray, float]):
    """Shock speed along n from mass flux conservation (eq. 10.27), km/s."""
    (vu, nu), (vd, nd) = up, down
    if nd == nu:
        return None
    return float((nd * (vd @ n) - nu * (vu @ n)) / (nd - nu))


def _solve(method: ShockMethod, up: ShockSide, down: ShockSide, means: dict[str, FloatArray]):
    bu, bd = means["bu"], means["bd"]
    dv = means["vd"] - means["vu"] if "vu" in means else None
    n = _normal(method, bu, bd, dv)
    if dv is not None and float(dv @ n) < 0:
        n = -n  # the normal points upstream: the flow slows along it (Δv·n > 0)
    theta = float(np.degrees(np.arccos(min(1.0, abs(bu @ n) / np.linalg.norm(bu)))))
    speed = None
    if "vu" in means and "nu" in means:
        speed = _speed(n, (means["vu"], float(means["nu"])), (means["vd"], float(means["nd"])))
    return n, theta, speed


def _means(up: ShockSide, down: ShockSide, rng: np.random.Generator | None):
    """Side averages; with `rng`, one draw within their standard errors."""

    def draw(x: FloatArray) -> FloatArray:
        m = _mean(x)
        if rng is None or len(x) < 2:
            return m
        return m + rng.normal(size=m.shape) * np.nanstd(x, axis=0, ddof=1) / np.sqrt(len(x))

    out = {"bu": draw(up.b), "bd": draw(down.b)}
    if up.v is not None and down.v is not None:
        out |= {"vu": draw(up.v), "vd": draw(down.v)}
    if up.n is not None and down.n is not None:
        out |= {"nu": draw(up.n), "nd": draw(down.n)}
    return out


def _monte_carlo(method: ShockMethod, up: ShockSide, down: ShockSide):
    """Normals, θBn and speeds of draws within the side averages' standard errors."""
    rng = np.random.default_rng(0)
    normals: list[FloatArray] = []
    thetas: list[float] = []
    speeds: list[float] = []
    for _ in range(_DRAWS):
        try:
            n, theta, speed = _solve(method, up, down, _means(up, down, rng))
        except UserError:
            continue
        normals.append(n)
        thetas.append(theta)
        if speed is not None:
            speeds.append(speed)
    return normals, thetas, speeds


def _angle(a: FloatArray, b: FloatArray) -> float:
    return float(np.degrees(np.arccos(np.clip(abs(a @ b), -1.0, 1.0))))


def _geometry(theta: float) -> str:
    if theta >= 45:
        return "quasi-perpendicular (θBn ≥ 45°)"
    return "quasi-parallel (θBn < 45°)"


def shock_normal(
    upstream: ShockSide,
    downstream: ShockSide,
    method: ShockMethod = "MX3",
    *,
    frame: str | None = None,
    check_jumps: bool = True,
) -> ShockResult:
    """Shock normal by coplanarity (MC, VC, MX1-3), θBn, shock speed and the R-H check.

    Reference: Schwartz (1998), ISSI SR-001 ch. 10: MC eq. 10.14, VC 10.18, MX1-3
    10.15-10.17, θBn 10.2, shock speed from mass flux 10.27.

    Args:
        upstream: Samples upstream (B nT; V km/s and n cm^-3 where available).
        downstream: Samples downstream, same units and frame.
        method: MC (magnetic coplanarity, B only), VC (velocity coplanarity), MX1, MX2
            or MX3 (mixed modes, B and V).
        frame: The frame of the vectors (reported).
        check_jumps: Also check the Rankine-Hugoniot conservation across the normal.

    Returns:
        The normal (pointing upstream) with its uncertainty cone, every other method's
        normal for comparison, θBn, the shock speed and compression ratio.
    """
    if method not in METHODS:
        raise UserError(f"Unknown shock normal method {method!r}; use one of {METHODS}.")
    means = _means(upstream, downstream, None)
    n, theta, speed = _solve(method, upstream, downstream, means)
    normals, thetas, speeds = _monte_carlo(method, upstream, downstream)
    spread = [_angle(n, d) for d in normals]
    others: dict[str, list[float]] = {}
    for other in METHODS:
        try:
            on, _, _ = _solve(other, upstream, downstream, means)
        except UserError:
            continue
        if on @ n < 0:
            on = -on
        others[other] = [float(c) for c in on]
    checks = [
        Check(
            name="samples",
            ok=min(len(upstream.b), len(downstream.b)) >= 3,
            detail=f"{len(upstream.b)} upstream and {len(downstream.b)} downstream samples",
        ),
    ]
    if method == "MC" and (theta < 10 or theta > 80):
        checks.append(
            Check(
                name="geometry",
                ok=False,
                detail=(f"θBn = {theta:.0f}°: magnetic coplanarity is unreliable near 0° and 90°"),
            )
        )
    ratio = None
    mach = None
    if "nu" in means:
        ratio = float(means["nd"] / means["nu"])
        if speed is not None:
            un = abs(float(means["vu"] @ n) - speed) * 1e3
            va = np.linalg.norm(means["bu"]) * 1e-9 / np.sqrt(_MU0 * float(means["nu"]) * 1e6 * _MP)
            mach = float(un / va)
    jumps = None
    if check_jumps and speed is not None:
        jumps = rankine_hugoniot(upstream, downstream, n, speed)
    error = float(np.sqrt(np.mean(np.square(spread)))) if spread else float("nan")
    theta_error = float(np.std(thetas)) if thetas else float("nan")
    speed_error = float(np.std(speeds)) if speeds else None
    text = (
        f"Shock normal ({method}) n = ({n[0]:.3f}, {n[1]:.3f}, {n[2]:.3f})"
        f"{' in ' + frame if frame else ''} ± {error:.1f}°, θBn = {theta:.1f}° ± "
        f"{theta_error:.1f}° ({_geometry(theta)})"
    )
    if speed is not None:
        text += f", shock speed {speed:.0f} ± {speed_error or 0:.0f} km/s along n"
    if ratio is not None:
        text += f", density ratio {ratio:.2f}"
    if mach is not None:
        text += f", Alfvén Mach {mach:.1f}"
    if jumps is not None:
        text += "; Rankine-Hugoniot " + ("satisfied" if jumps.satisfied else "NOT satisfied")
    text += f". Method: {REFERENCE}."
    return ShockResult(
        method=f"shock normal by {method}",
        reference=REFERENCE,
        assumptions=[
            "a planar, time-stationary shock; upstream and downstream averages represent "
            "the uniform states on each side",
            "uncertainties from the standard errors of the side averages (Monte Carlo, "
            f"{_DRAWS} draws)",
            "the normal points upstream when the velocity is known (Δv·n > 0)",
        ],
        checks=checks,
        answer=text,
        normal=[float(c) for c in n],
        normal_error_deg=error,
        normals=others,
        theta_bn_deg=theta,
        theta_bn_error_deg=theta_error,
        shock_speed_km_s=speed,
        shock_speed_error_km_s=speed_error,
        compression_ratio=ratio,
        alfven_mach=mach,
        geometry=_geometry(theta),
        rankine_hugoniot=jumps,
    )


def _fluxes(side: dict[str, FloatArray], n: FloatArray, speed: float) -> dict[str, float]:
    """Conserved fluxes (SI) in the shock frame: eqs. 10.5-10.10."""
    rho = float(side["n"]) * 1e6 * _MP
    b = side["b"] * 1e-9
    u = (side["v"] - speed * n) * 1e3
    un, bn = float(u @ n), float(b @ n)
    ut, bt = u - un * n, b - bn * n
    out = {
        "mass": rho * un,
        "normal B": bn,
        "tangential E": float(np.linalg.norm(un * bt - bn * ut)),
        "tangential momentum": float(np.linalg.norm(rho * un * ut - bn * bt / _MU0)),
    }
    if "t" in side:
        p = float(side["n"]) * 1e6 * _KB * float(side["t"])
        out["normal momentum"] = rho * un**2 + p + float(bt @ bt) / (2 * _MU0)
        out["energy"] = (
            rho * un * (float(u @ u) / 2 + _GAMMA / (_GAMMA - 1) * p / rho)
            + un * float(b @ b) / _MU0
            - bn * float(u @ b) / _MU0
        )
    return out


def rankine_hugoniot(
    upstream: ShockSide,
    downstream: ShockSide,
    normal: npt.ArrayLike,
    shock_speed: float,
    tolerance: float = 0.1,
) -> JumpCheck:
    """Check that mass, normal B, tangential E, momentum and energy fluxes are conserved.

    Reference: Schwartz (1998), ISSI SR-001 ch. 10, eqs. 10.5-10.10 (γ = 5/3).

    Args:
        upstream: Samples upstream (B nT, V km/s, n cm^-3, T K: the total temperature
            for the momentum and energy checks).
        downstream: Samples downstream.
        normal: The shock normal.
        shock_speed: The shock speed along the normal (km/s, spacecraft frame).
        tolerance: The relative mismatch accepted for each flux.
    """
    if upstream.v is None or downstream.v is None or upstream.n is None or downstream.n is None:
        raise UserError("The Rankine-Hugoniot check needs B, V and n on both sides.")
    n = _unit(np.asarray(normal, dtype=np.float64), "given")
    sides: list[dict[str, FloatArray]] = []
    for side in (upstream, downstream):
        values = {"b": _mean(side.b), "v": _mean(side.v), "n": _mean(side.n)}  # type: ignore[arg-type]
        if upstream.t is not None and downstream.t is not None and side.t is not None:
            values["t"] = _mean(side.t)
        sides.append(values)
    up, down = (_fluxes(s, n, shock_speed) for s in sides)
    inflow = abs(float(sides[0]["v"] @ n) - shock_speed) * 1e3  # upstream normal flow, m/s
    scale = {
        "normal B": float(np.linalg.norm(sides[0]["b"])) * 1e-9,
        "tangential E": float(np.linalg.norm(sides[0]["b"])) * 1e-9 * inflow,
        "tangential momentum": abs(up["mass"]) * inflow,
    }
    fluxes: dict[str, list[float]] = {}
    ok = True
    for name, value in up.items():
        ref = scale.get(name, max(abs(value), abs(down[name])))
        mismatch = abs(down[name] - value) / ref if ref else 0.0
        fluxes[name] = [value, down[name], float(mismatch)]
        ok = ok and mismatch <= tolerance
    checks = [
        Check(name=name, ok=f[2] <= tolerance, detail=f"{name} flux differs by {f[2]:.1%}")
        for name, f in fluxes.items()
    ]
    assumptions = ["ideal MHD, isotropic pressure, γ = 5/3, protons only (ρ = n m_p)"]
    if "normal momentum" not in up:
        assumptions.append("no temperatures given: momentum and energy along n not checked")
    return JumpCheck(
        method="Rankine-Hugoniot conservation check",
        reference=REFERENCE,
        assumptions=assumptions,
        checks=checks,
        answer="Rankine-Hugoniot: "
        + ", ".join(f"{k} {v[2]:.1%}" for k, v in fluxes.items())
        + (" (all within " if ok else " (not all within ")
        + f"{tolerance:.0%}).",
        fluxes=fluxes,
        tolerance=tolerance,
        satisfied=ok,
    )
