"""Plasma quantities against the NRL Plasma Formulary's numerical forms (pp. 28-29)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("astropy")

from xhelio.analysis.plasma import plasma_quantities


def test_quantities_match_the_formulary_rules_of_thumb() -> None:
    series, result = plasma_quantities([1.0, 4.0], [10.0, 10.0], [400.0, 400.0], [1e5, 1e5])
    # V_A = 2.18e11 B(G) / sqrt(n) cm/s: 10 nT, 1 cm^-3 -> 218 km/s.
    assert series["alfven_speed"][0] == pytest.approx(218.1, rel=2e-3)
    assert series["alfven_speed"][1] == pytest.approx(218.1 / 2, rel=2e-3)
    # f_cp = 1.52e3 B(G) Hz -> 0.152 Hz at 10 nT; f_ce = 2.80e6 B(G) Hz -> 280 Hz.
    assert series["proton_gyrofrequency"][0] == pytest.approx(0.1525, rel=2e-3)
    assert series["electron_gyrofrequency"][0] == pytest.approx(279.9, rel=2e-3)
    # c/ω_pi = 2.28e7 / sqrt(n) cm -> 228 km at 1 cm^-3; c/ω_pe = 5.31e5 / sqrt(n) cm.
    assert series["ion_inertial_length"][0] == pytest.approx(227.7, rel=3e-3)
    assert series["electron_inertial_length"][0] == pytest.approx(5.31, rel=3e-3)
    # β = 2 μ0 n k T / B², P_dyn = n m_p V².
    beta = 2 * 4e-7 * np.pi * 1e6 * 1.380649e-23 * 1e5 / (10e-9) ** 2
    assert series["beta"][0] == pytest.approx(beta, rel=1e-6)
    assert series["dynamic_pressure"][0] == pytest.approx(
        1e6 * 1.67262192e-27 * 4e5**2 * 1e9, rel=1e-6
    )
    assert series["alfven_mach"][0] == pytest.approx(400 / 218.1, rel=2e-3)
    assert result.units["dynamic_pressure"] == "nPa" and "NRL" in result.reference
    assert any("electron temperature" in a for a in result.assumptions)


def test_vectors_are_taken_by_magnitude() -> None:
    series, _ = plasma_quantities([1.0], [[6.0, 8.0, 0.0]])
    assert series["alfven_speed"][0] == pytest.approx(218.1, rel=2e-3)
    assert "beta" not in series  # no temperature: no β, said by its absence
