"""Plasma frequencies, gyrofrequencies and lengths: the generated code against known numbers.

Each quantity's code (`agents/offline/derived.py`) runs on known series and is checked
against the NRL Plasma Formulary's rounded coefficients (f_pe = 8980 Hz sqrt(n / cm^-3),
f_ce = 28.0 Hz per nT, d_p = 228 km / sqrt(n), lambda_D = 7.43 m sqrt(T_eV / n)) and
against the formula worked by hand with CODATA constants.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from operations_support import derived_entry, run_code
from xhelio.agents.offline.derived import derived_code, derived_named, unit_problem

K_B, M_P, M_E, E = 1.380649e-23, 1.67262192369e-27, 9.1093837015e-31, 1.602176634e-19
MU0 = 1.25663706212e-06
TIMES = pd.date_range("2002-02-20", periods=4, freq="1min")
N = [1.0, 4.0, 25.0, 100.0]  # cm^-3
B = [1.0, 5.0, 10.0, 100.0]  # nT


def _scalar(values: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"v": values}, index=TIMES)


def _run(key: str, units: list[str], inputs: list[list[float]]) -> list[float]:
    code, _ = derived_code(derived_entry(key), units, [1] * len(units))
    result = run_code(code, [_scalar(v) for v in inputs])
    return list(result.iloc[:, 0].to_numpy())


def test_electron_plasma_frequency_is_8980_hz_root_n() -> None:
    f_pe = _run("electron_plasma_frequency", ["cm^-3"], [N])
    assert f_pe == pytest.approx([8980 * math.sqrt(n) for n in N], rel=1e-3)


def test_proton_plasma_frequency_is_210_hz_root_n() -> None:
    f_pp = _run("ion_plasma_frequency", ["cm^-3"], [N])
    assert f_pp == pytest.approx([209.6 * math.sqrt(n) for n in N], rel=1e-3)


def test_gyrofrequencies_per_nanotesla() -> None:
    assert _run("electron_gyrofrequency", ["nT"], [B]) == pytest.approx(
        [27.99 * b for b in B], rel=1e-3
    )
    assert _run("proton_gyrofrequency", ["nT"], [B]) == pytest.approx(
        [0.015245 * b for b in B], rel=1e-3
    )


def test_inertial_lengths_in_km() -> None:
    assert _run("ion_inertial_length", ["cm^-3"], [N]) == pytest.approx(
        [227.7 / math.sqrt(n) for n in N], rel=1e-3
    )
    assert _run("electron_inertial_length", ["cm^-3"], [N]) == pytest.approx(
        [5.314 / math.sqrt(n) for n in N], rel=1e-3
    )


def test_debye_length_from_a_temperature_in_ev() -> None:
    t_ev = [10.0, 10.0, 100.0, 1.0]
    lam = _run("debye_length", ["cm^-3", "eV"], [N, t_ev])
    expected = [7.434 * math.sqrt(t / n) for n, t in zip(N, t_ev, strict=True)]
    assert lam == pytest.approx(expected, rel=1e-3)


def test_proton_gyroradius_from_kelvin_and_nanotesla() -> None:
    t_k = [1e5, 1e5, 4e5, 1e6]
    r = _run("proton_gyroradius", ["K", "nT"], [t_k, B])
    expected = [
        M_P * math.sqrt(2 * K_B * t / M_P) / (E * b * 1e-9) / 1e3
        for t, b in zip(t_k, B, strict=True)
    ]
    assert r == pytest.approx(expected, rel=1e-6)
    assert r[1] == pytest.approx(84.8, rel=2e-3)  # 1e5 K protons in 5 nT: about 85 km


def test_an_electron_thermal_speed_is_converted_with_the_electron_mass() -> None:
    t_k = [1e5, 2e5, 5e5, 1e6]
    w_e = [math.sqrt(2 * K_B * t / M_E) / 1e3 for t in t_k]  # km/s
    code, said = derived_code(derived_entry("electron_gyroradius"), ["km/s", "nT"], [1, 1])
    r = run_code(code, [_scalar(w_e), _scalar(B)]).iloc[:, 0].to_numpy()
    expected = [M_E * w * 1e3 / (E * b * 1e-9) / 1e3 for w, b in zip(w_e, B, strict=True)]
    assert list(r) == pytest.approx(expected, rel=1e-6)
    assert "m_e w^2" in said


def test_temperature_from_a_thermal_speed_is_m_w2_over_2k() -> None:
    w = [50.0, 30.0, 70.0, 100.0]  # km/s
    t = _run("temperature_from_thermal_speed", ["km/s"], [w])
    assert t == pytest.approx([M_P * (v * 1e3) ** 2 / (2 * K_B) for v in w], rel=1e-6)
    assert t[0] == pytest.approx(1.514e5, rel=1e-3)  # 50 km/s: about 151 000 K


def test_electron_beta_and_sound_speed() -> None:
    t_k = [1e5, 2e5, 5e4, 1e6]
    beta_e = _run("electron_beta", ["cm^-3", "K", "nT"], [N, t_k, B])
    expected = [
        n * 1e6 * K_B * t / ((b * 1e-9) ** 2 / (2 * MU0)) for n, t, b in zip(N, t_k, B, strict=True)
    ]
    assert beta_e == pytest.approx(expected, rel=1e-6)
    c_s = _run("sound_speed", ["K"], [t_k])
    assert c_s == pytest.approx([math.sqrt(5 / 3 * K_B * t / M_P) / 1e3 for t in t_k], rel=1e-6)
    assert c_s[0] == pytest.approx(37.1, rel=2e-3)  # 1e5 K protons: about 37 km/s


def test_hybrid_frequencies() -> None:
    f_ce = [27.99 * b for b in B]
    f_cp = [0.015245 * b for b in B]
    f_pp = [209.6 * math.sqrt(n) for n in N]
    f_pe = [8980 * math.sqrt(n) for n in N]
    f_lh = _run("lower_hybrid_frequency", ["nT", "cm^-3"], [B, N])
    expected = [
        (1 / (ce * cp) + 1 / pp**2) ** -0.5 for ce, cp, pp in zip(f_ce, f_cp, f_pp, strict=True)
    ]
    assert f_lh == pytest.approx(expected, rel=2e-3)
    f_uh = _run("upper_hybrid_frequency", ["nT", "cm^-3"], [B, N])
    assert f_uh == pytest.approx(
        [math.hypot(pe, ce) for pe, ce in zip(f_pe, f_ce, strict=True)], rel=2e-3
    )


def test_a_temperature_already_in_kelvin_is_no_thermal_speed() -> None:
    problem = unit_problem(derived_entry("temperature_from_thermal_speed"), ["K"])
    assert problem is not None and "thermal speed" in problem


def test_a_density_of_zero_or_below_gives_no_value() -> None:
    f_pe = _run("electron_plasma_frequency", ["cm^-3"], [[4.0, 0.0, -1e31, 1.0]])
    assert math.isnan(f_pe[1]) and math.isnan(f_pe[2])
    assert f_pe[0] == pytest.approx(2 * 8980, rel=1e-3)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("electron plasma frequency from the C1 WHISPER density", "electron_plasma_frequency"),
        ("the plasma frequency at Wind", "electron_plasma_frequency"),
        ("f_pe from the electron density", "electron_plasma_frequency"),
        ("proton plasma frequency at OMNI", "ion_plasma_frequency"),
        ("ion plasma frequency", "ion_plasma_frequency"),
        ("electron cyclotron frequency from |B|", "electron_gyrofrequency"),
        ("electron gyrofrequency", "electron_gyrofrequency"),
        ("proton gyrofrequency at ACE", "proton_gyrofrequency"),
        ("ion cyclotron frequency", "proton_gyrofrequency"),
        ("Omega_ci at ACE", "proton_gyrofrequency"),
        ("ion inertial length", "ion_inertial_length"),
        ("proton skin depth", "ion_inertial_length"),
        ("electron inertial length", "electron_inertial_length"),
        ("the Debye length", "debye_length"),
        ("proton gyroradius", "proton_gyroradius"),
        ("thermal ion Larmor radius", "proton_gyroradius"),
        ("electron beta at MMS1", "electron_beta"),
        ("plasma β", "plasma_beta"),
        ("fast mode Mach number", "magnetosonic_mach"),
        ("ion acoustic speed", "sound_speed"),
        ("lower hybrid frequency", "lower_hybrid_frequency"),
        ("upper hybrid frequency from WHISPER", "upper_hybrid_frequency"),
        ("electron gyroradius", "electron_gyroradius"),
        ("proton temperature from the Wind 3DP thermal speed", "temperature_from_thermal_speed"),
        ("the thermal speed converted to temperature", "temperature_from_thermal_speed"),
    ],
)
def test_words_name_the_quantity(text: str, key: str) -> None:
    assert [d.key for d in derived_named(text)] == [key]


def test_plasma_waves_and_a_bare_temperature_are_no_derived_quantity() -> None:
    for text in (
        "WHISPER plasma waves",
        "proton temperature",
        "Wind thermal speed",
        "MMS1 FPI electron density",  # the instrument, no f_pi
    ):
        assert derived_named(text) == (), text
