"""Plasma formulas over SI inputs: the one home of each derived quantity's expression.

Each `Formula` is the textbook expression over the inputs n (m^-3), V (m/s), B (T) and
T (K), written in numpy with the CODATA constants of `CONSTANTS` (scipy.constants) by
name. The offline sandbox code (`agents/offline/derived.py`) writes it as it reads here,
with the constants' values and units; `plasma.py` evaluates the same expression on
astropy quantities, which checks its dimensions. A new derived quantity is one entry
here and its words in `vocabulary/domain.toml`. Imports numpy and scipy only.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from scipy import constants

__all__ = ["CONSTANTS", "FORMULAS", "SI_UNITS", "Constant", "Formula"]


@dataclass(frozen=True)
class Constant:
    """A named physical constant: its value in SI, its unit and what it is."""

    value: float
    unit: str
    meaning: str
    source: str = ""

    def code(self, name: str) -> str:
        """The sandbox line binding it: `mu0 = 1.2566e-06  # vacuum permeability [H/m]`."""
        source = f" ({self.source})" if self.source else ""
        return f"{name} = {self.value!r}  # {self.meaning} [{self.unit}]{source}"


CONSTANTS = {
    "mu0": Constant(constants.mu_0, "H/m", "vacuum permeability"),
    "k_B": Constant(constants.k, "J/K", "Boltzmann constant"),
    "m_p": Constant(constants.m_p, "kg", "proton mass"),
    "m_e": Constant(constants.m_e, "kg", "electron mass"),
    "e": Constant(constants.e, "C", "elementary charge"),
    "eps0": Constant(constants.epsilon_0, "F/m", "vacuum permittivity"),
    "c": Constant(constants.c, "m/s", "speed of light"),
    "R_E": Constant(6.371e6, "m", "Earth's mean radius", "IUGG"),
}
"""CODATA constants (scipy.constants) by the names the formulas use."""

SI_UNITS = {"n": "m^-3", "V": "m/s", "B": "T", "T": "K"}
"""The formulas' inputs and their SI units."""


@dataclass(frozen=True)
class Formula:
    """A derived quantity's expression, the unit it is reported in and its code.

    `kind` says what the expression reads: "si" the inputs of `SI_UNITS` and the
    constants; "vector" one vector `b` (columns x, y, z) in its own units; "ratio" two
    inputs of one kind (`col(inputs[i])`), no conversion.
    """

    symbol: str
    """The result's column; empty when `expression` is a table already."""
    expression: str
    unit: str
    """The unit reported ("1": none)."""
    si_unit: str = ""
    """The expression's unit when `scale` converts it to `unit`."""
    scale: str = ""
    """Code converting the SI value to `unit` (" * 1e9": Pa -> nPa)."""
    note: str = ""
    """The comment on the result line."""
    steps: str = ""
    """Lines binding the names `expression` reads (V_A, c_s, ...)."""
    kind: str = "si"

    @property
    def inputs(self) -> frozenset[str]:
        """The SI inputs (n, V, B, T) the steps and the expression read."""
        tree = ast.parse(f"{self.steps}\n{self.expression}")
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        return frozenset(names & SI_UNITS.keys())

    def code(self) -> str:
        """The sandbox code: the steps, then `result = (...).to_frame(symbol)  # note`."""
        value = self.expression
        top = ast.parse(value, mode="eval").body
        if self.scale and isinstance(top, ast.BinOp) and isinstance(top.op, ast.Add | ast.Sub):
            value = f"({value})"
        value += self.scale
        if self.symbol:
            is_op = isinstance(ast.parse(value, mode="eval").body, ast.BinOp | ast.UnaryOp)
            value = f"({value})" if is_op else value
            value = f"{value}.to_frame({self.symbol!r})"
        line = f"result = {value}" + (f"  # {self.note}" if self.note else "")
        return f"{self.steps}\n{line}" if self.steps else line

    def evaluate(self, names: dict[str, Any]) -> Any:
        """The expression over `names` (the inputs, the constants, `np`), in SI."""
        scope = dict(names)
        exec(self.steps, scope)  # the text of this module's own formulas, never input
        return eval(self.expression, scope)


_ALFVEN = "V_A = B / np.sqrt(mu0 * n * m_p)"
_SOUND = "c_s = np.sqrt(5 / 3 * k_B * T / m_p)  # sound speed, gamma = 5/3"
_PRESSURES = "p_thermal = n * k_B * T\np_magnetic = B**2 / (2 * mu0)"
_F_CE = "f_ce = e * B / (2 * np.pi * m_e)"
_F_CP = "f_cp = e * B / (2 * np.pi * m_p)"

FORMULAS: dict[str, Formula] = {
    "dynamic_pressure": Formula("Pdyn", "m_p * n * V**2", "nPa", "Pa", " * 1e9", "Pa -> nPa"),
    "plasma_beta": Formula("beta", "p_thermal / p_magnetic", "1", steps=_PRESSURES),
    "alfven_speed": Formula(
        "V_A", "B / np.sqrt(mu0 * n * m_p)", "km/s", "m/s", " / 1e3", "m/s -> km/s"
    ),
    "alfven_mach": Formula("M_A", "V / V_A", "1", note="Alfven Mach number", steps=_ALFVEN),
    "magnetosonic_mach": Formula(
        "M_ms",
        "V / np.sqrt(V_A**2 + c_s**2)",
        "1",
        steps="# fast magnetosonic Mach number (perpendicular to B), proton temperature only\n"
        f"{_ALFVEN}\n{_SOUND}",
    ),
    "magnetosonic_speed": Formula(
        "V_ms",
        "np.sqrt(V_A**2 + c_s**2)",
        "km/s",
        "m/s",
        " / 1e3",
        "m/s -> km/s",
        steps=f"# fast speed perpendicular to B\n{_ALFVEN}\n{_SOUND}",
    ),
    "thermal_pressure": Formula("P_th", "n * k_B * T", "nPa", "Pa", " * 1e9", "Pa -> nPa"),
    "magnetic_pressure": Formula("P_B", "B**2 / (2 * mu0)", "nPa", "Pa", " * 1e9", "Pa -> nPa"),
    "total_pressure": Formula(
        "P_total", "n * k_B * T + B**2 / (2 * mu0)", "nPa", "Pa", " * 1e9", "Pa -> nPa"
    ),
    "electric_field": Formula(
        "",
        "E",
        "mV/m",
        steps="# motional electric field E = -V x B, in V/m, then mV/m\n"
        "E = pd.DataFrame(-np.cross(V.to_numpy(), B.to_numpy()), index=V.index,\n"
        "                 columns=['Ex', 'Ey', 'Ez']) * 1e3",
    ),
    "newell_coupling": Formula(
        "dPhi/dt",
        "v ** (4 / 3) * b_t ** (2 / 3) * np.abs(np.sin(theta_c / 2)) ** (8 / 3)",
        "(km/s)^(4/3) nT^(2/3)",
        steps="# Newell et al. (2007): dPhi/dt = V^(4/3) B_T^(2/3) sin^(8/3)(theta_c / 2),\n"
        "# V in km/s, B_T = sqrt(By^2 + Bz^2) in nT (GSM), theta_c the IMF clock angle\n"
        "v = V / 1e3\n"
        "by, bz = B['y'] * 1e9, B['z'] * 1e9\n"
        "b_t = np.sqrt(by**2 + bz**2)\n"
        "theta_c = np.arctan2(by, bz)",
    ),
    "dawn_dusk_field": Formula(
        "E_y",
        "-V * B['z']",
        "mV/m",
        "V/m",
        " * 1e3",
        steps="# E_y = -V Bz (GSM): the dawn-dusk part of -V x B for a flow along -x, V/m -> mV/m",
    ),
    "akasofu_epsilon": Formula(
        "epsilon",
        "4 * np.pi / mu0 * V * b_sq * np.sin(theta_c / 2) ** 4 * l0**2",
        "GW",
        "W",
        " / 1e9",
        steps="# Perreault & Akasofu (1978): epsilon = (4 pi / mu0) V B^2 sin^4(theta_c / 2) "
        "l0^2,\n# l0 = 7 R_E, theta_c the IMF clock angle (GSM); W -> GW\n"
        "b_sq = B.pow(2).sum(axis=1, min_count=3)\n"
        "theta_c = np.arctan2(B['y'], B['z'])\n"
        "l0 = 7 * R_E",
    ),
    "field_flow_angle": Formula(
        "theta_BV",
        "np.degrees(np.arccos((dot / (b_abs * v_abs)).clip(-1, 1)))",
        "deg",
        steps="# the angle between B and V: acos(B . V / (|B| |V|))\n"
        "dot = (B * V).sum(axis=1, min_count=3)\n"
        "b_abs = B.pow(2).sum(axis=1, min_count=3).pow(0.5)\n"
        "v_abs = V.pow(2).sum(axis=1, min_count=3).pow(0.5)",
    ),
    "field_flow_dot": Formula(
        "B.V",
        "((B * 1e9) * (V / 1e3)).sum(axis=1, min_count=3)",
        "nT km/s",
        steps="# B . V = Bx Vx + By Vy + Bz Vz, in nT km/s",
    ),
    "alpha_proton_ratio": Formula(
        "alpha_proton_ratio",
        "a / p",
        "1",
        steps="a = col(inputs[0])\np = col(inputs[1])",
        kind="ratio",
    ),
    "temperature_anisotropy": Formula(
        "T_perp/T_par",
        "t_perp / t_par",
        "1",
        steps="t_perp = col(inputs[0])\nt_par = col(inputs[1])",
        kind="ratio",
    ),
    "electron_plasma_frequency": Formula(
        "f_pe", "np.sqrt(n * e**2 / (eps0 * m_e)) / (2 * np.pi)", "Hz", note="Hz"
    ),
    "ion_plasma_frequency": Formula(
        "f_pp", "np.sqrt(n * e**2 / (eps0 * m_p)) / (2 * np.pi)", "Hz", note="Hz"
    ),
    "electron_gyrofrequency": Formula("f_ce", "e * B / (2 * np.pi * m_e)", "Hz", note="Hz"),
    "proton_gyrofrequency": Formula("f_cp", "e * B / (2 * np.pi * m_p)", "Hz", note="Hz"),
    "ion_inertial_length": Formula(
        "d_p", "c * np.sqrt(eps0 * m_p / (n * e**2))", "km", "m", " / 1e3", "m -> km"
    ),
    "electron_inertial_length": Formula(
        "d_e", "c * np.sqrt(eps0 * m_e / (n * e**2))", "km", "m", " / 1e3", "m -> km"
    ),
    "debye_length": Formula("lambda_D", "np.sqrt(eps0 * k_B * T / (n * e**2))", "m", note="m"),
    "proton_gyroradius": Formula(
        "r_p",
        "m_p * v_th / (e * B)",
        "km",
        "m",
        " / 1e3",
        "m -> km",
        steps="v_th = np.sqrt(2 * k_B * T / m_p)  # thermal speed",
    ),
    "electron_gyroradius": Formula(
        "r_e",
        "m_e * v_th / (e * B)",
        "km",
        "m",
        " / 1e3",
        "m -> km",
        steps="v_th = np.sqrt(2 * k_B * T / m_e)  # thermal speed",
    ),
    "temperature_from_thermal_speed": Formula("T", "T", "K", note="K"),
    "electron_beta": Formula("beta_e", "p_thermal / p_magnetic", "1", steps=_PRESSURES),
    "sound_speed": Formula(
        "c_s", "np.sqrt(5 / 3 * k_B * T / m_p)", "km/s", "m/s", " / 1e3", "m/s -> km/s"
    ),
    "lower_hybrid_frequency": Formula(
        "f_lh",
        "(1 / (f_ce * f_cp) + 1 / f_pp**2) ** -0.5",
        "Hz",
        note="Hz",
        steps=f"{_F_CE}\n{_F_CP}\nf_pp = np.sqrt(n * e**2 / (eps0 * m_p)) / (2 * np.pi)",
    ),
    "upper_hybrid_frequency": Formula(
        "f_uh",
        "np.sqrt(f_pe**2 + f_ce**2)",
        "Hz",
        note="Hz",
        steps=f"{_F_CE}\nf_pe = np.sqrt(n * e**2 / (eps0 * m_e)) / (2 * np.pi)",
    ),
    "thermal_alfven_ratio": Formula(
        "V_th/V_A",
        "w / V_A",
        "1",
        steps=f"w = np.sqrt(2 * k_B * T / m_p)  # thermal speed\n{_ALFVEN}",
    ),
    "field_magnitude": Formula(
        "|B|", "b.pow(2).sum(axis=1, min_count=3).pow(0.5)", "nT", kind="vector"
    ),
    "clock_angle": Formula(
        "clock_angle", "np.degrees(np.arctan2(b['y'], b['z']))", "deg", kind="vector"
    ),
    "transverse_field": Formula(
        "B_T",
        "(b['y'] ** 2 + b['z'] ** 2).pow(0.5)",
        "nT",
        steps="# B_T = sqrt(By^2 + Bz^2)",
        kind="vector",
    ),
    "field_elevation": Formula(
        "theta_B",
        "np.degrees(np.arcsin((b.iloc[:, 2] / bt).clip(-1, 1)))",
        "deg",
        steps="bt = b.pow(2).sum(axis=1, min_count=3).pow(0.5)",
        kind="vector",
    ),
    "field_azimuth": Formula(
        "phi_B", "np.degrees(np.arctan2(b.iloc[:, 1], b.iloc[:, 0])) % 360", "deg", kind="vector"
    ),
    "cone_angle": Formula(
        "cone_angle",
        "np.degrees(np.arccos((b.iloc[:, 0] / bt).clip(-1, 1)))",
        "deg",
        steps="bt = b.pow(2).sum(axis=1, min_count=3).pow(0.5)",
        kind="vector",
    ),
}
"""Every derived quantity's formula by its vocabulary key (and the tool's magnetosonic
speed, which the vocabulary does not name)."""
