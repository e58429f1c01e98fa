"""Synthetic cases with known answers for the analysis methods (shared by their tests).

`rh_shock` solves the ideal-MHD Rankine-Hugoniot conditions (Schwartz 1998, ISSI SR-001
eqs. 10.5-10.10, gamma = 5/3) for the downstream state of an oblique fast shock, so a test
knows the exact normal, θBn and shock speed the methods must recover.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import fsolve

MU0 = 4e-7 * np.pi
MP = 1.67262192e-27
KB = 1.380649e-23
GAMMA = 5.0 / 3.0


def rotation(seed: int = 3) -> np.ndarray:
    """A fixed random rotation matrix (rows: the new axes in the old frame)."""
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(3, 3)))
    return q if np.linalg.det(q) > 0 else -q


def _fluxes(rho, un, ut, bt, p, bn):
    return np.array(
        [
            rho * un,
            rho * un**2 + p + bt**2 / (2 * MU0),
            rho * un * ut - bn * bt / MU0,
            un * bt - bn * ut,
            rho * un * ((un**2 + ut**2) / 2 + GAMMA / (GAMMA - 1) * p / rho)
            + un * (bt**2 + bn**2) / MU0
            - bn * (un * bn + ut * bt) / MU0,
        ]
    )


def rh_shock(n_cm3=5.0, un_km_s=-500.0, b_nt=5.0, theta_bn_deg=60.0, t_k=1e5):
    """Upstream and downstream (rho, un, ut, bt, p) in the shock frame, and bn (SI).

    The normal points upstream (x), the upstream flow comes in along -x at `un_km_s`
    with no tangential flow in the de Hoffmann-Teller sense chosen by ut = un bt / bn.
    """
    rho = n_cm3 * 1e6 * MP
    un = un_km_s * 1e3
    theta = np.radians(theta_bn_deg)
    bn, bt = b_nt * 1e-9 * np.cos(theta), b_nt * 1e-9 * np.sin(theta)
    ut = un * bt / bn  # the HT frame: E = 0 on both sides
    p = n_cm3 * 1e6 * KB * t_k
    up = np.array([rho, un, ut, bt, p])
    target = _fluxes(*up, bn)
    scale = np.abs(target) + 1e-30

    def residual(x):
        return (_fluxes(*x, bn) - target) / scale

    guess = np.array([rho * 3, un / 3, ut / 3 * 1.0, bt * 3, p * 20])
    down = fsolve(residual, guess, xtol=1e-13)
    assert np.max(np.abs(residual(down))) < 1e-9 and down[0] > 1.5 * rho
    return up, down, bn


def shock_sides(normal: np.ndarray, tangent: np.ndarray, speed_km_s: float, samples: int = 20):
    """Spacecraft-frame samples (B nT, V km/s, n cm^-3, T K) of the two sides of a shock."""
    up, down, bn = rh_shock()
    rng = np.random.default_rng(5)
    sides = []
    for rho, un, ut, bt, p in (up, down):
        b = (bn * normal + bt * tangent) * 1e9
        v = (un * normal + ut * tangent) / 1e3 + speed_km_s * normal
        n = rho / 1e6 / MP
        t = p / (n * 1e6 * KB)
        noise = rng.normal(scale=1e-6, size=(samples, 3))
        sides.append((b + noise, v + noise, np.full(samples, n), np.full(samples, t)))
    return sides
