"""Field angles, B-V geometry and coupling functions: the generated code against numpy.

Each derived quantity below is computed by the code `agents/offline/derived.py`
generates (the code the sandbox runs) and checked against the textbook formula worked
independently with numpy, on vectors whose angles are known.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from operations_support import derived_entry, run_code
from plan_helpers import fetched, plan_of
from xhelio.agents.offline.derived import derived_code, derived_named, understood_with_derived
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.timerange.sentences import stray_clocks
from xhelio.vocabulary import load_vocabulary

MU0 = 1.25663706212e-06
R_E = 6.371e6
TIMES = pd.date_range("2015-03-17", periods=4, freq="1min")
B_ROWS = [[3.0, 4.0, -4.0], [-2.0, 1.0, 2.0], [0.5, -3.0, -1.0], [4.0, 0.0, 3.0]]  # nT
V_ROWS = [[-400.0, 10.0, -5.0], [-600.0, 0.0, 20.0], [-350.0, -30.0, 0.0], [-500.0, 5.0, 5.0]]


def _vector(rows: list[list[float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, index=TIMES, columns=["x", "y", "z"])


def _one_vector(key: str, column: str) -> np.ndarray:
    code = derived_code(derived_entry(key), ["nT"], [1])[0]
    return run_code(code, [_vector(B_ROWS)])[column].to_numpy()


def test_angles_and_transverse_field_of_one_vector() -> None:
    b = np.array(B_ROWS)
    bx, by, bz = b.T
    magnitude = np.linalg.norm(b, axis=1)
    assert _one_vector("transverse_field", "B_T") == pytest.approx(np.hypot(by, bz))
    assert _one_vector("clock_angle", "clock_angle") == pytest.approx(
        np.degrees(np.arctan2(by, bz))
    )
    assert _one_vector("cone_angle", "cone_angle") == pytest.approx(
        np.degrees(np.arccos(bx / magnitude))
    )
    assert _one_vector("field_elevation", "theta_B") == pytest.approx(
        np.degrees(np.arcsin(bz / magnitude))
    )
    azimuth = _one_vector("field_azimuth", "phi_B")
    assert azimuth == pytest.approx(np.degrees(np.arctan2(by, bx)) % 360)
    assert ((azimuth >= 0) & (azimuth < 360)).all()


def test_angle_and_dot_product_of_b_and_v() -> None:
    b, v = np.array(B_ROWS), np.array(V_ROWS)
    dot = (b * v).sum(axis=1)
    cos = dot / (np.linalg.norm(b, axis=1) * np.linalg.norm(v, axis=1))
    angle_code = derived_code(derived_entry("field_flow_angle"), ["km/s", "nT"], [1, 1])[0]
    angle = run_code(angle_code, [_vector(V_ROWS), _vector(B_ROWS)])["theta_BV"].to_numpy()
    assert angle == pytest.approx(np.degrees(np.arccos(cos)))
    dot_code = derived_code(derived_entry("field_flow_dot"), ["km/s", "nT"], [1, 1])[0]
    result = run_code(dot_code, [_vector(V_ROWS), _vector(B_ROWS)])["B.V"].to_numpy()
    assert result == pytest.approx(dot)  # nT km/s


def test_dawn_dusk_field_is_the_y_part_of_minus_v_cross_b() -> None:
    speed = pd.DataFrame({"v": [400.0] * 4}, index=TIMES)  # km/s
    b = _vector([[0.0, 0.0, -5.0]] * 4)  # southward IMF
    code = derived_code(derived_entry("dawn_dusk_field"), ["km/s", "nT"], [1, 1])[0]
    e_y = run_code(code, [speed, b])["E_y"].to_numpy()
    # -V x B with V = (-400, 0, 0) km/s: E_y = +2 mV/m (dawn to dusk) for Bz = -5 nT
    minus_v_cross_b = -np.cross([-400e3, 0.0, 0.0], [0.0, 0.0, -5e-9])[1] * 1e3
    assert e_y == pytest.approx([minus_v_cross_b] * 4)
    assert minus_v_cross_b == pytest.approx(2.0)


def test_akasofu_epsilon_in_gw() -> None:
    speed = pd.DataFrame({"v": [400.0, 400.0, 500.0, 500.0]}, index=TIMES)  # km/s
    rows = [[0.0, 0.0, -5.0], [0.0, 0.0, 5.0], [1.0, 3.0, 0.0], [2.0, -4.0, -4.0]]
    code = derived_code(derived_entry("akasofu_epsilon"), ["km/s", "nT"], [1, 1])[0]
    eps = run_code(code, [speed, _vector(rows)])["epsilon"].to_numpy()
    expected = []
    for v, (bx, by, bz) in zip([400.0, 400.0, 500.0, 500.0], rows, strict=True):
        theta = math.atan2(by, bz)
        b_sq = (bx**2 + by**2 + bz**2) * 1e-18
        watts = 4 * math.pi / MU0 * v * 1e3 * b_sq * math.sin(theta / 2) ** 4 * (7 * R_E) ** 2
        expected.append(watts / 1e9)
    assert eps == pytest.approx(expected, rel=1e-9)
    assert eps[0] == pytest.approx(198.9, abs=0.5)  # 400 km/s, 5 nT due south: ~2e11 W
    assert eps[1] == pytest.approx(0.0, abs=1e-9)  # due north: no coupling


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("transverse IMF from OMNI", "transverse_field"),
        ("Bt = sqrt(By^2 + Bz^2) at ACE", "transverse_field"),
        ("the elevation angle of the field at THEMIS-A", "field_elevation"),
        ("IMF azimuth angle from ACE", "field_azimuth"),
        ("angle between the magnetic field and the solar wind velocity", "field_flow_angle"),
        ("the angle between the flow and the IMF at Wind", "field_flow_angle"),
        ("dot product of B and V from ACE", "field_flow_dot"),
        ("dawn-dusk electric field Ey from Wind", "dawn_dusk_field"),
        ("the dawn-to-dusk field at OMNI", "dawn_dusk_field"),
        ("Akasofu epsilon parameter from OMNI", "akasofu_epsilon"),
    ],
)
def test_derived_words_name_the_quantity(text: str, key: str) -> None:
    assert [d.key for d in derived_named(text)] == [key]


def test_a_flow_angle_is_not_the_field_azimuth() -> None:
    assert not derived_named("solar wind flow azimuth angle from ACE")


def test_coupling_functions_ask_gsm_by_default() -> None:
    frames = {d.key: d.frame for d in load_vocabulary().derived}
    for key in ("clock_angle", "transverse_field", "dawn_dusk_field", "akasofu_epsilon"):
        assert frames[key] == "GSM", key


def test_dawn_dusk_is_no_time_of_day() -> None:
    assert stray_clocks("dawn-dusk electric field from Wind") == ()
    assert stray_clocks("the dawn to dusk field") == ()
    assert stray_clocks("Wind data at dawn") == ("dawn",)


def test_the_understood_line_names_the_computed_quantity(vocab: Vocabulary) -> None:
    intent = parse_request("OMNI IMF clock angle for 2015-03-17", vocab)
    parts = understood_with_derived(intent)
    assert "computed IMF clock angle (deg)" in parts
    assert parts.index("computed IMF clock angle (deg)") < next(
        i for i, p in enumerate(parts) if p.startswith("time range")
    )


def test_the_imf_of_a_clock_angle_is_its_input_not_a_second_series(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "OMNI IMF clock angle for 2015-03-17")
    params = [p for _, p in fetched(plan)]
    assert {"BY_GSM", "BZ_GSM"} <= set(params)
    assert "F" not in params  # no |B| panel beside the angle
    assert "BX_GSE" not in params  # the angle about x needs only By and Bz


def test_a_clock_angle_from_two_component_series() -> None:
    by, bz = [3.0, -1.0, 0.0, 2.0], [-4.0, 2.0, -1.0, 0.0]
    frames = [pd.DataFrame({"v": c}, index=TIMES) for c in (by, bz)]
    code = derived_code(derived_entry("clock_angle"), ["nT", "nT"], [2])[0]
    angle = run_code(code, frames)["clock_angle"].to_numpy()
    assert angle == pytest.approx(np.degrees(np.arctan2(by, bz)))
    code = derived_code(derived_entry("dawn_dusk_field"), ["km/s", "nT", "nT"], [1, 2])[0]
    speed = pd.DataFrame({"v": [400.0] * 4}, index=TIMES)
    e_y = run_code(code, [speed, *frames])["E_y"].to_numpy()
    assert e_y == pytest.approx([-400e3 * z * 1e-9 * 1e3 for z in bz])


def test_the_dawn_dusk_field_is_computed_over_the_day_asked(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "dawn-dusk electric field Ey from Wind on 2019-06-01")
    assert not any("time range" in note for note in plan.notes)
    assert plan.time_range is not None and plan.time_range.readable() == "2019-06-01"
    computes = [s for s in plan.steps if s.kind == "compute"]
    assert computes and "-V * B['z']" in str(computes[0].calls[0].args["code"])


def test_a_symbol_set_equal_to_the_formula_is_no_second_series(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "transverse IMF Bt = sqrt(By^2 + Bz^2) from OMNI on 2017-09-08")
    assert sorted(p for _, p in fetched(plan)) == ["BY_GSM", "BZ_GSM"]


def test_a_gsm_input_a_source_lacks_is_rotated_from_its_gse_vector(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "DSCOVR IMF clock angle on 2023-04-23")
    assert fetched(plan) == [("DSCOVR_H0_MAG", "B1GSE")]  # never the magnitude B1F1
    codes = [str(s.calls[0].args["code"]) for s in plan.steps if s.kind == "compute"]
    assert "analysis.rotate_frame(df, 'GSE', 'GSM')" in codes[0]
    assert any("rotated from GSE into GSM" in note for note in plan.notes)
