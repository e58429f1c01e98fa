"""The analysis tool and the offline sandbox code give the same plasma numbers.

`analysis/plasma.py` (astropy units, the plasma_quantities tool) and the code
`agents/offline/derived.py` writes for the sandbox both compute dynamic pressure, β, the
Alfvén speed, gyrofrequencies, inertial lengths, ... For every quantity both cover, the
same inputs must give the same numbers: a formula, a constant or a unit conversion that
drifts in one of them fails here. Both read `analysis/formulas.py`, whose scalar
formulas are checked here for dimensions against the units their sandbox code says.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("astropy")

from operations_support import derived_entry, run_code
from xhelio.agents.offline.derived import derived_code
from xhelio.analysis.formulas import CONSTANTS, FORMULAS, SI_UNITS
from xhelio.analysis.plasma import QUANTITIES, plasma_quantities
from xhelio.vocabulary import load_vocabulary

TIMES = pd.date_range("2003-10-29", periods=4, freq="1min")
INPUTS = {  # the same samples for both layers, in the units each input comes in
    "density": ([5.0, 10.0, 2.0, 25.0], "cm^-3"),
    "velocity": ([400.0, 650.0, 350.0, 1800.0], "km/s"),
    "magnetic_field": ([5.0, 8.0, 3.0, 60.0], "nT"),
    "temperature": ([1e5, 2e5, 5e4, 1.5e6], "K"),
}
TOOL_NAME = {"plasma_beta": "beta"}
"""A vocabulary key the tool reports under another name."""
SHARED = sorted(
    d.key for d in load_vocabulary().derived if TOOL_NAME.get(d.key, d.key) in QUANTITIES
)


def _needs(key: str) -> tuple[str, ...]:
    """The vocabulary row's inputs; none for a formula only the tool uses."""
    return next((d.needs for d in load_vocabulary().derived if d.key == key), ())


def test_both_layers_cover_the_plasma_quantities() -> None:
    assert {
        "dynamic_pressure",
        "plasma_beta",
        "alfven_speed",
        "alfven_mach",
        "magnetosonic_mach",
        "thermal_pressure",
        "magnetic_pressure",
        "total_pressure",
        "sound_speed",
        "proton_gyrofrequency",
        "electron_gyrofrequency",
        "ion_inertial_length",
        "electron_inertial_length",
    } <= set(SHARED)


@pytest.mark.parametrize("key", SHARED)
def test_the_sandbox_code_and_the_tool_give_the_same_numbers(key: str) -> None:
    derived = derived_entry(key)
    kinds = [need.partition(":")[0] for need in derived.needs]
    units = [INPUTS[kind][1] for kind in kinds]
    code, _ = derived_code(derived, units, [1] * len(kinds))
    frames = [pd.DataFrame({"v": INPUTS[kind][0]}, index=TIMES) for kind in kinds]
    sandbox = run_code(code, frames).iloc[:, 0].to_numpy()
    series, result = plasma_quantities(
        INPUTS["density"][0],
        INPUTS["magnetic_field"][0],
        INPUTS["velocity"][0],
        INPUTS["temperature"][0],
    )
    name = TOOL_NAME.get(key, key)
    assert result.units[name] in (derived.units, "" if derived.units == "1" else None)
    assert list(sandbox) == pytest.approx(list(series[name]), rel=1e-9)


SCALAR = sorted(
    key
    for key, f in FORMULAS.items()
    if f.kind == "si" and all(n.split(":")[-1] not in ("vector", "yz") for n in _needs(key))
)


@pytest.mark.parametrize("key", SCALAR)
def test_each_scalar_formula_has_the_units_its_code_says(key: str) -> None:
    from astropy import units as u

    formula = FORMULAS[key]
    names: dict[str, object] = {"np": np}
    names.update({k: c.value * u.Unit(c.unit) for k, c in CONSTANTS.items()})
    names.update({k: np.array([2.0, 3.0]) * u.Unit(unit) for k, unit in SI_UNITS.items()})
    value = formula.evaluate(names)
    unit = u.dimensionless_unscaled if formula.unit == "1" else u.Unit(formula.unit)
    assert value.unit.is_equivalent(unit), f"{key}: {value.unit} is no {formula.unit}"
    si = u.Unit(formula.si_unit) if formula.si_unit else unit
    factor = eval("1.0" + formula.scale)  # the sandbox code's conversion to `unit`
    assert factor == pytest.approx(si.to(unit)), f"{key}: {formula.scale} is no {si} -> {unit}"


def test_every_derived_quantity_has_its_formula_in_the_units_it_says() -> None:
    rows = load_vocabulary().derived
    assert {d.key: d.units for d in rows} == {d.key: FORMULAS[d.key].unit for d in rows}
