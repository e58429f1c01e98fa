"""Plasma quantities with units: β, speeds, Mach numbers, pressures, frequencies, lengths.

Alfvén, sound and magnetosonic speeds and Mach numbers; dynamic, magnetic, thermal and
total pressure; gyrofrequencies and inertial lengths.

The formulas and their CODATA constants are `formulas.FORMULAS` (scipy.constants), the
ones the offline sandbox code writes; here they are evaluated on astropy quantities, so
every formula is checked dimensionally and converted to the unit reported. astropy is
the `analysis` extra: PlasmaPy builds on it but adds many more dependencies for
formulas that are one line each here. Formulas: e.g. NRL Plasma Formulary (J. D.
Huba, 2019 ed., pp. 28-29); Baumjohann, W. & Treumann, R. A. (1996), *Basic Space
Plasma Physics*, Imperial College Press.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from xhelio.analysis.formulas import CONSTANTS, FORMULAS
from xhelio.analysis.report import AnalysisResult, Check
from xhelio.errors import UserError

__all__ = ["QUANTITIES", "REFERENCE", "PlasmaResult", "plasma_quantities"]


def _astropy() -> Any:
    """Astropy's units (members built at import, so typed as Any)."""
    try:
        from astropy import units
    except ImportError:
        raise UserError(
            "Plasma quantities need astropy: install the analysis extra, "
            "pip install 'xhelio[analysis]'."
        ) from None
    return units


REFERENCE = (
    "NRL Plasma Formulary (Huba, J. D., 2019 ed., pp. 28-29); Baumjohann & Treumann "
    "(1996), Basic Space Plasma Physics; units and CODATA constants by astropy"
)
_FORMULA_KEY = {"beta": "plasma_beta"}
"""A quantity whose formula (`formulas.FORMULAS`) is named otherwise."""

QUANTITIES: dict[str, tuple[str, str]] = {
    "beta": ("", "plasma β = 2μ0 n k (Tp + Te) / B²"),
    "alfven_speed": ("km/s", "V_A = B / √(μ0 n m_p)"),
    "sound_speed": ("km/s", "c_s = √(γ k (Tp + Te) / m_p), γ = 5/3"),
    "magnetosonic_speed": ("km/s", "fast speed perpendicular to B, √(V_A² + c_s²)"),
    "alfven_mach": ("", "M_A = V / V_A"),
    "magnetosonic_mach": ("", "M_ms = V / √(V_A² + c_s²)"),
    "dynamic_pressure": ("nPa", "P_dyn = n m_p V²"),
    "magnetic_pressure": ("nPa", "P_B = B² / 2μ0"),
    "thermal_pressure": ("nPa", "P_th = n k (Tp + Te)"),
    "total_pressure": ("nPa", "P_th + P_B"),
    "proton_gyrofrequency": ("Hz", "f_cp = e B / (2π m_p)"),
    "electron_gyrofrequency": ("Hz", "f_ce = e B / (2π m_e)"),
    "ion_inertial_length": ("km", "d_i = c / ω_pi"),
    "electron_inertial_length": ("km", "d_e = c / ω_pe"),
}
"""Every quantity: its unit and formula."""


class PlasmaResult(AnalysisResult):
    """Median of each quantity over the interval, with its unit and formula."""

    medians: dict[str, float]
    units: dict[str, str]
    formulas: dict[str, str]
    samples: int


def _array(values: npt.ArrayLike | None, size: int) -> npt.NDArray[np.float64] | None:
    if values is None:
        return None
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 2:
        array = np.sqrt(np.sum(array**2, axis=1))
    return np.broadcast_to(array.ravel(), (size,)).astype(np.float64)


def _positive(values: npt.NDArray[np.float64] | None) -> npt.NDArray[np.float64] | None:
    """Values with the unphysical (≤ 0, fill) ones made NaN."""
    return None if values is None else np.where(values > 0, values, np.nan)


def plasma_quantities(
    density_cm3: npt.ArrayLike,
    field_nt: npt.ArrayLike | None = None,
    speed_km_s: npt.ArrayLike | None = None,
    proton_temperature_k: npt.ArrayLike | None = None,
    electron_temperature_k: npt.ArrayLike | None = None,
) -> tuple[dict[str, npt.NDArray[np.float64]], PlasmaResult]:
    """Plasma quantities per sample (arrays in QUANTITIES' units) and their medians.

    Reference: NRL Plasma Formulary pp. 28-29; astropy units and constants.

    Args:
        density_cm3: Proton density, cm^-3 (n samples).
        field_nt: Field magnitude, nT (n) or vectors (n, 3); for speeds, β, frequencies.
        speed_km_s: Bulk speed, km/s (n) or velocity vectors (n, 3); for Mach numbers
            and dynamic pressure.
        proton_temperature_k: Proton temperature, K; for β, sound speed, pressures.
        electron_temperature_k: Electron temperature, K (default: not counted).
    """
    u = _astropy()
    n_values = np.asarray(density_cm3, dtype=np.float64).ravel()
    unphysical = int(np.sum(n_values <= 0))
    n_values = np.where(n_values > 0, n_values, np.nan)
    size = len(n_values)
    names: dict[str, Any] = {"np": np}
    names.update({k: c.value * u.Unit(c.unit) for k, c in CONSTANTS.items()})
    names["n"] = n_values * u.cm**-3
    b_values = _positive(_array(field_nt, size))
    if b_values is not None:
        names["B"] = b_values * u.nT
    assumptions = ["protons only (ρ = n m_p, no alphas); isotropic temperatures"]
    tp = _positive(_array(proton_temperature_k, size))
    te = _positive(_array(electron_temperature_k, size))
    if tp is not None:
        names["T"] = (tp + (te if te is not None else 0.0)) * u.K
        if te is None:
            assumptions.append("no electron temperature: β and pressures count protons only")
    v = _array(speed_km_s, size)
    if v is not None:
        names["V"] = v * u.km / u.s
    out: dict[str, Any] = {}
    for name in QUANTITIES:
        formula = FORMULAS[_FORMULA_KEY.get(name, name)]
        if formula.inputs <= names.keys():
            unit = u.dimensionless_unscaled if formula.unit == "1" else u.Unit(formula.unit)
            out[name] = formula.evaluate(names).to(unit)
    series = {
        k: np.asarray(q.to_value(QUANTITIES[k][0] or u.dimensionless_unscaled), dtype=np.float64)
        for k, q in out.items()
    }
    medians = {
        k: float(np.nanmedian(s)) if np.isfinite(s).any() else float("nan")
        for k, s in series.items()
    }
    finite = int(np.isfinite(n_values).sum())
    checks = [
        Check(name="gaps", ok=finite == size, detail=f"{finite} of {size} samples with a density"),
    ]
    if unphysical:
        checks.append(Check(name="values", ok=False, detail=f"{unphysical} densities ≤ 0 left out"))
    shown = ", ".join(
        f"{k.replace('_', ' ')} {medians[k]:.3g} {QUANTITIES[k][0]}".rstrip()
        for k in QUANTITIES
        if k in medians
    )
    result = PlasmaResult(
        method="plasma quantities",
        reference=REFERENCE,
        assumptions=assumptions,
        checks=checks,
        answer=f"Medians over {size} samples: {shown}. Method: {REFERENCE}.",
        medians=medians,
        units={k: QUANTITIES[k][0] for k in series},
        formulas={k: QUANTITIES[k][1] for k in series},
        samples=size,
    )
    return series, result
