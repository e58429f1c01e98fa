"""Derived quantities and resampling statistics: the generated code against hand computation.

The code `agents/offline/derived.py` and `codegen.py` generate is what the sandbox runs
(`df` the first input, `sources` every input by label); here it runs on known series
and each value is checked against the formula worked by hand with CODATA constants.
It also passes the sandbox's own validation, so the trace shows what ran.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from operations_support import derived_entry, run_code
from xhelio.agents.offline.codegen import series_code
from xhelio.agents.offline.derived import derived_code, derived_named, unit_problem
from xhelio.language.wishes import find_durations, find_operations

MU0, K_B, M_P, E = 1.25663706212e-06, 1.380649e-23, 1.67262192369e-27, 1.602176634e-19
TIMES = pd.date_range("2015-03-17", periods=4, freq="1min")


def _scalar(values: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"v": values}, index=TIMES)


def _vector(rows: list[list[float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, index=TIMES, columns=["x", "y", "z"])


N = [5.0, 10.0, 2.0, 7.0]  # cm^-3
T = [1e5, 2e5, 5e4, 1.5e5]  # K
B = [5.0, 8.0, 3.0, 10.0]  # nT
V = [400.0, 600.0, 350.0, 500.0]  # km/s


def _beta(n: float, t: float, b: float) -> float:
    return (n * 1e6 * K_B * t) / ((b * 1e-9) ** 2 / (2 * MU0))


def test_plasma_beta_in_kelvin_matches_the_hand_value() -> None:
    d = derived_entry("plasma_beta")
    code, said = derived_code(d, ["cm^-3", "K", "nT"], [1, 1, 1])
    result = run_code(code, [_scalar(N), _scalar(T), _scalar(B)])
    expected = [_beta(n, t, b) for n, t, b in zip(N, T, B, strict=True)]
    assert result["beta"].to_numpy() == pytest.approx(expected, rel=1e-6)
    assert said == ""


def test_a_temperature_in_ev_is_converted_to_kelvin_and_said() -> None:
    d = derived_entry("plasma_beta")
    t_ev = [t * K_B / E for t in T]  # the same temperatures in eV
    code, said = derived_code(d, ["cm^-3", "eV", "nT"], [1, 1, 1])
    result = run_code(code, [_scalar(N), _scalar(t_ev), _scalar(B)])
    expected = [_beta(n, t, b) for n, t, b in zip(N, T, B, strict=True)]
    assert result["beta"].to_numpy() == pytest.approx(expected, rel=1e-6)
    assert "eV" in said and "K" in said


def test_a_thermal_speed_gives_the_temperature_m_w2_over_2k() -> None:
    d = derived_entry("thermal_pressure")
    w = [math.sqrt(2 * K_B * t / M_P) / 1e3 for t in T]  # km/s
    code, said = derived_code(d, ["#/cc", "km/s"], [1, 1])
    result = run_code(code, [_scalar(N), _scalar(w)])
    expected = [n * 1e6 * K_B * t * 1e9 for n, t in zip(N, T, strict=True)]  # nPa
    assert result["P_th"].to_numpy() == pytest.approx(expected, rel=1e-6)
    assert "thermal speed" in said


def test_another_temperature_unit_is_refused_in_words() -> None:
    problem = unit_problem(derived_entry("plasma_beta"), ["cm^-3", "MK/s", "nT"])
    assert problem is not None and "MK/s" in problem


def test_alfven_and_magnetosonic_mach_numbers() -> None:
    alfven = derived_code(derived_entry("alfven_mach"), ["km/s", "nT", "cm^-3"], [1, 1, 1])[0]
    m_a = run_code(alfven, [_scalar(V), _scalar(B), _scalar(N)])["M_A"].to_numpy()
    v_a = [b * 1e-9 / math.sqrt(MU0 * n * 1e6 * M_P) for n, b in zip(N, B, strict=True)]
    assert m_a == pytest.approx([v * 1e3 / va for v, va in zip(V, v_a, strict=True)], rel=1e-6)

    fast = derived_entry("magnetosonic_mach")
    code = derived_code(fast, ["km/s", "nT", "cm^-3", "K"], [1, 1, 1, 1])[0]
    m_ms = run_code(code, [_scalar(V), _scalar(B), _scalar(N), _scalar(T)])["M_ms"].to_numpy()
    c_s = [math.sqrt(5 / 3 * K_B * t / M_P) for t in T]
    expected = [v * 1e3 / math.hypot(va, cs) for v, va, cs in zip(V, v_a, c_s, strict=True)]
    assert m_ms == pytest.approx(expected, rel=1e-6)


def test_dynamic_and_total_pressure_in_npa() -> None:
    code = derived_code(derived_entry("dynamic_pressure"), ["cm^-3", "km/s"], [1, 1])[0]
    pdyn = run_code(code, [_scalar(N), _scalar(V)])["Pdyn"].to_numpy()
    assert pdyn == pytest.approx(
        [M_P * n * 1e6 * (v * 1e3) ** 2 * 1e9 for n, v in zip(N, V, strict=True)]
    )
    # 1 cm^-3 at 400 km/s is the textbook 0.2677 nPa
    one = run_code(code, [_scalar([1.0] * 4), _scalar([400.0] * 4)])["Pdyn"].iloc[0]
    assert one == pytest.approx(0.2676, abs=1e-3)

    code = derived_code(derived_entry("total_pressure"), ["cm^-3", "K", "nT"], [1, 1, 1])[0]
    total = run_code(code, [_scalar(N), _scalar(T), _scalar(B)])["P_total"].to_numpy()
    expected = [
        (n * 1e6 * K_B * t + (b * 1e-9) ** 2 / (2 * MU0)) * 1e9
        for n, t, b in zip(N, T, B, strict=True)
    ]
    assert total == pytest.approx(expected, rel=1e-6)


def test_motional_electric_field_is_minus_v_cross_b_in_mv_per_m() -> None:
    v = _vector([[-400.0, 0.0, 0.0]] * 4)  # km/s, anti-sunward flow
    b = _vector([[0.0, 0.0, -5.0]] * 4)  # nT, southward IMF
    code = derived_code(derived_entry("electric_field"), ["km/s", "nT"], [1, 1])[0]
    e = run_code(code, [v, b])
    # -V x B: (-400, 0, 0) x (0, 0, -5) = (0, -2000, 0); minus that, times 1e-3 -> +2 mV/m dawn-dusk
    assert e.loc[TIMES[0]].to_numpy() == pytest.approx([0.0, 2.0, 0.0])


def test_newell_coupling_from_a_vector_in_three_component_series() -> None:
    by, bz = 3.0, -4.0  # nT: B_T = 5 nT, clock angle atan2(3, -4)
    code = derived_code(derived_entry("newell_coupling"), ["km/s", "nT", "nT", "nT"], [1, 3])[0]
    frames = [_scalar([500.0] * 4), _scalar([1.0] * 4), _scalar([by] * 4), _scalar([bz] * 4)]
    result = run_code(code, frames)["dPhi/dt"]
    theta = math.atan2(by, bz)
    expected = 500.0 ** (4 / 3) * 5.0 ** (2 / 3) * abs(math.sin(theta / 2)) ** (8 / 3)
    assert result.to_numpy() == pytest.approx([expected] * 4, rel=1e-9)


def test_derived_words_name_the_quantity() -> None:
    said = {
        "proton plasma beta from Wind": "plasma_beta",
        "Alfven Mach number at ACE": "alfven_mach",
        "fast magnetosonic Mach number from OMNI": "magnetosonic_mach",
        "the thermal pressure of the solar wind": "thermal_pressure",
        "total pressure at ACE": "total_pressure",
        "motional electric field -V x B": "electric_field",
        "the Newell coupling function": "newell_coupling",
    }
    for text, key in said.items():
        assert [d.key for d in derived_named(text)][:1] == [key], text


STATISTIC_INDEX = pd.date_range("2015-03-17", periods=12, freq="30min")
VALUES = [1.0, 5.0, 2.0, 8.0, 3.0, 4.0, 9.0, 7.0, 6.0, 0.0, 10.0, 11.0]


@pytest.mark.parametrize(
    ("request_text", "seconds", "expected"),
    [
        ("hourly maxima of the AE index", 3600, [5.0, 8.0, 4.0, 9.0, 6.0, 11.0]),
        ("daily minimum Dst", 86400, [0.0]),
        ("3-hour median of the OMNI flow speed", 10800, [3.5, 8.0]),
        ("95th percentile per day of the speed", 86400, [np.percentile(VALUES, 95)]),
        ("maximum Kp per day", 86400, [11.0]),
        (
            "2-hour standard deviation of |B|",
            7200,
            [np.std(VALUES[i : i + 4], ddof=1) for i in (0, 4, 8)],
        ),
    ],
)
def test_resampling_keeps_the_statistic_and_the_cadence(
    request_text: str, seconds: int, expected: list[float]
) -> None:
    ops = find_operations(request_text, find_durations(request_text))
    assert [(op.kind, op.window_s) for op in ops] == [("resample", seconds)]
    code, words, _ = series_code("resample", seconds, ops[0].detail)
    result = run_code(code, [pd.DataFrame({"v": VALUES}, index=STATISTIC_INDEX)])
    assert result["v"].to_numpy() == pytest.approx(expected)
    assert f"'{seconds}s'" in code and words.split()[0] != "averages"


def test_a_stated_running_window_is_the_window_used() -> None:
    text = "Wind |B| with a 20-minute boxcar"
    (op,) = find_operations(text, find_durations(text))
    code, words, _ = series_code(op.kind, op.window_s or 0.0, op.detail)
    assert "rolling('1200s'" in code and words == "smoothed over 20 min"


def test_statistic_per_orbit_is_declined_in_words() -> None:
    from xhelio.language.operations import declined_operations

    (declined,) = declined_operations("max |B| per orbit of MMS1")
    assert "orbit" in declined.label and "cadence" in declined.reason
