"""Derived quantities offline: what to fetch for each and the sandbox code computing it.

The vocabulary (`xhelio/vocabulary/domain.toml`) names each derived quantity, the words
people use for it, its inputs and units. This module turns an input spec such as
`"velocity:magnitude"` or `"density:alpha"` into a `QuantityWish` for the resolver, and
gives the pandas code over the fetched inputs: every input after the first is put on the
first one's times (interpolated inside its span, never extrapolated), each input is
converted to SI units in a commented line, and the formula reads like the textbook one.
Constants are CODATA values from `scipy.constants`, written into the code with their
names and units so the trace shows them. Imports only this package and `vocabulary`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from scipy import constants

from xhelio.catalog.index import Catalog
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.intent import QuantityWish, RequestIntent
from xhelio.language.resolve import Candidate
from xhelio.timerange import TimeRange
from xhelio.vocabulary import DerivedQuantity, load_vocabulary

__all__ = [
    "catalog_quantity",
    "derived_code",
    "derived_named",
    "flavoured",
    "input_wishes",
    "understood_with_derived",
    "unit_problem",
]

_ALIGN = (
    "inputs = list(sources.values())\n"
    "first = inputs[0]\n"
    "def on_first(s):\n"
    "    # on the first input's times, interpolated inside its span, never extrapolated\n"
    "    joined = s.reindex(s.index.union(first.index))\n"
    "    return joined.interpolate(method='time', limit_area='inside').reindex(first.index)\n"
    "def col(frame, magnitude=False):\n"
    "    frame = frame if isinstance(frame, pd.DataFrame) else frame.to_pandas()\n"
    "    if magnitude and frame.shape[1] >= 3:\n"
    "        return on_first(frame.iloc[:, :3].pow(2).sum(axis=1, min_count=3).pow(0.5))\n"
    "    return on_first(frame.iloc[:, 0])\n"
    "def vec(*frames):\n"
    "    # a vector as columns x, y, z: one 3-column input or three component inputs;\n"
    "    # two component inputs are y and z (all a clock angle needs)\n"
    "    if len(frames) == 1:\n"
    "        frame = frames[0] if isinstance(frames[0], pd.DataFrame) else frames[0].to_pandas()\n"
    "        parts = [on_first(frame.iloc[:, i]) for i in range(3)]\n"
    "    else:\n"
    "        parts = [col(f) for f in frames]\n"
    "    return pd.concat(parts, axis=1, keys=['x', 'y', 'z'][-len(parts):])\n"
)
# CODATA constants (scipy.constants), written into the code with their units.
_CONSTANTS = {
    "mu0": (constants.mu_0, "vacuum permeability [H/m]"),
    "k_B": (constants.k, "Boltzmann constant [J/K]"),
    "m_p": (constants.m_p, "proton mass [kg]"),
    "m_e": (constants.m_e, "electron mass [kg]"),
    "e": (constants.e, "elementary charge [C]"),
    "eps0": (constants.epsilon_0, "vacuum permittivity [F/m]"),
    "c": (constants.c, "speed of light [m/s]"),
    "R_E": (6.371e6, "Earth's mean radius [m] (IUGG)"),
}
# Each input bound to a name, in SI units (n in m^-3, V in m/s, B in T; T in K, see _kelvin).
_SI = {
    "density": "n = col({x}).where(lambda s: s > 0) * 1e6  # cm^-3 -> m^-3 (n <= 0: no value)",
    "velocity:magnitude": "V = col({x}, magnitude=True) * 1e3  # km/s -> m/s",
    "velocity:vector": "V = vec({x}) * 1e3  # km/s -> m/s",
    "magnetic_field:magnitude": "B = col({x}, magnitude=True) * 1e-9  # nT -> T",
    "magnetic_field:vector": "B = vec({x}) * 1e-9  # nT -> T",
    "magnetic_field:yz": "B = vec({x}) * 1e-9  # nT -> T (y and z)",
}
_FORMULAS = {
    "dynamic_pressure": "result = (m_p * n * V**2 * 1e9).to_frame('Pdyn')  # Pa -> nPa",
    "plasma_beta": (
        "p_thermal = n * k_B * T\n"
        "p_magnetic = B**2 / (2 * mu0)\n"
        "result = (p_thermal / p_magnetic).to_frame('beta')"
    ),
    "alfven_speed": "result = (B / np.sqrt(mu0 * n * m_p) / 1e3).to_frame('V_A')  # m/s -> km/s",
    "alfven_mach": (
        "V_A = B / np.sqrt(mu0 * n * m_p)\nresult = (V / V_A).to_frame('M_A')  # Alfven Mach number"
    ),
    "magnetosonic_mach": (
        "# fast magnetosonic Mach number (perpendicular to B), proton temperature only\n"
        "V_A = B / np.sqrt(mu0 * n * m_p)\n"
        "c_s = np.sqrt(5 / 3 * k_B * T / m_p)  # sound speed, gamma = 5/3\n"
        "result = (V / np.sqrt(V_A**2 + c_s**2)).to_frame('M_ms')"
    ),
    "thermal_pressure": "result = (n * k_B * T * 1e9).to_frame('P_th')  # Pa -> nPa",
    "magnetic_pressure": "result = (B**2 / (2 * mu0) * 1e9).to_frame('P_B')  # Pa -> nPa",
    "total_pressure": (
        "result = ((n * k_B * T + B**2 / (2 * mu0)) * 1e9).to_frame('P_total')  # Pa -> nPa"
    ),
    "electric_field": (
        "# motional electric field E = -V x B, in V/m, then mV/m\n"
        "E = pd.DataFrame(-np.cross(V.to_numpy(), B.to_numpy()), index=V.index,\n"
        "                 columns=['Ex', 'Ey', 'Ez']) * 1e3\n"
        "result = E"
    ),
    "newell_coupling": (
        "# Newell et al. (2007): dPhi/dt = V^(4/3) B_T^(2/3) sin^(8/3)(theta_c / 2),\n"
        "# V in km/s, B_T = sqrt(By^2 + Bz^2) in nT (GSM), theta_c the IMF clock angle\n"
        "v = V / 1e3\n"
        "by, bz = B['y'] * 1e9, B['z'] * 1e9\n"
        "b_t = np.sqrt(by**2 + bz**2)\n"
        "theta_c = np.arctan2(by, bz)\n"
        "result = (v ** (4 / 3) * b_t ** (2 / 3) * np.abs(np.sin(theta_c / 2)) ** (8 / 3))"
        ".to_frame('dPhi/dt')"
    ),
    "dawn_dusk_field": (
        "# E_y = -V Bz (GSM): the dawn-dusk part of -V x B for a flow along -x, V/m -> mV/m\n"
        "result = (-V * B['z'] * 1e3).to_frame('E_y')"
    ),
    "akasofu_epsilon": (
        "# Perreault & Akasofu (1978): epsilon = (4 pi / mu0) V B^2 sin^4(theta_c / 2) l0^2,\n"
        "# l0 = 7 R_E, theta_c the IMF clock angle (GSM); W -> GW\n"
        "b_sq = B.pow(2).sum(axis=1, min_count=3)\n"
        "theta_c = np.arctan2(B['y'], B['z'])\n"
        "l0 = 7 * R_E\n"
        "result = (4 * np.pi / mu0 * V * b_sq * np.sin(theta_c / 2) ** 4 * l0**2 / 1e9)"
        ".to_frame('epsilon')"
    ),
    "field_flow_angle": (
        "# the angle between B and V: acos(B . V / (|B| |V|))\n"
        "dot = (B * V).sum(axis=1, min_count=3)\n"
        "b_abs = B.pow(2).sum(axis=1, min_count=3).pow(0.5)\n"
        "v_abs = V.pow(2).sum(axis=1, min_count=3).pow(0.5)\n"
        "result = np.degrees(np.arccos((dot / (b_abs * v_abs)).clip(-1, 1))).to_frame('theta_BV')"
    ),
    "field_flow_dot": (
        "# B . V = Bx Vx + By Vy + Bz Vz, in nT km/s\n"
        "result = ((B * 1e9) * (V / 1e3)).sum(axis=1, min_count=3).to_frame('B.V')"
    ),
    "alpha_proton_ratio": (
        "a = col(inputs[0])\np = col(inputs[1])\nresult = (a / p).to_frame('alpha_proton_ratio')"
    ),
    "temperature_anisotropy": (
        "t_perp = col(inputs[0])\nt_par = col(inputs[1])\n"
        "result = (t_perp / t_par).to_frame('T_perp/T_par')"
    ),
    "electron_plasma_frequency": (
        "result = (np.sqrt(n * e**2 / (eps0 * m_e)) / (2 * np.pi)).to_frame('f_pe')  # Hz"
    ),
    "ion_plasma_frequency": (
        "result = (np.sqrt(n * e**2 / (eps0 * m_p)) / (2 * np.pi)).to_frame('f_pp')  # Hz"
    ),
    "electron_gyrofrequency": "result = (e * B / (2 * np.pi * m_e)).to_frame('f_ce')  # Hz",
    "proton_gyrofrequency": "result = (e * B / (2 * np.pi * m_p)).to_frame('f_cp')  # Hz",
    "ion_inertial_length": (
        "result = (c * np.sqrt(eps0 * m_p / (n * e**2)) / 1e3).to_frame('d_p')  # m -> km"
    ),
    "electron_inertial_length": (
        "result = (c * np.sqrt(eps0 * m_e / (n * e**2)) / 1e3).to_frame('d_e')  # m -> km"
    ),
    "debye_length": "result = np.sqrt(eps0 * k_B * T / (n * e**2)).to_frame('lambda_D')  # m",
    "proton_gyroradius": (
        "v_th = np.sqrt(2 * k_B * T / m_p)  # thermal speed\n"
        "result = (m_p * v_th / (e * B) / 1e3).to_frame('r_p')  # m -> km"
    ),
    "electron_gyroradius": (
        "v_th = np.sqrt(2 * k_B * T / m_e)  # thermal speed\n"
        "result = (m_e * v_th / (e * B) / 1e3).to_frame('r_e')  # m -> km"
    ),
    "temperature_from_thermal_speed": "result = T.to_frame('T')  # K",
    "electron_beta": (
        "p_thermal = n * k_B * T\n"
        "p_magnetic = B**2 / (2 * mu0)\n"
        "result = (p_thermal / p_magnetic).to_frame('beta_e')"
    ),
    "sound_speed": "result = (np.sqrt(5 / 3 * k_B * T / m_p) / 1e3).to_frame('c_s')  # m/s -> km/s",
    "lower_hybrid_frequency": (
        "f_ce = e * B / (2 * np.pi * m_e)\n"
        "f_cp = e * B / (2 * np.pi * m_p)\n"
        "f_pp = np.sqrt(n * e**2 / (eps0 * m_p)) / (2 * np.pi)\n"
        "result = ((1 / (f_ce * f_cp) + 1 / f_pp**2) ** -0.5).to_frame('f_lh')  # Hz"
    ),
    "upper_hybrid_frequency": (
        "f_ce = e * B / (2 * np.pi * m_e)\n"
        "f_pe = np.sqrt(n * e**2 / (eps0 * m_e)) / (2 * np.pi)\n"
        "result = np.sqrt(f_pe**2 + f_ce**2).to_frame('f_uh')  # Hz"
    ),
    "thermal_alfven_ratio": (
        "w = np.sqrt(2 * k_B * T / m_p)  # thermal speed\n"
        "V_A = B / np.sqrt(mu0 * n * m_p)\n"
        "result = (w / V_A).to_frame('V_th/V_A')"
    ),
}
# Ratios of two inputs of one kind: no SI conversion, the units must agree.
_PLAIN_RATIOS = ("alpha_proton_ratio", "temperature_anisotropy")
# Quantities of one vector `b` (3 columns: the vector or the components fetched for it).
_OF_ONE_VECTOR = {
    "field_magnitude": "result = b.pow(2).sum(axis=1, min_count=3).pow(0.5).to_frame('|B|')",
    "clock_angle": ("result = np.degrees(np.arctan2(b['y'], b['z'])).to_frame('clock_angle')"),
    "transverse_field": (
        "# B_T = sqrt(By^2 + Bz^2)\nresult = (b['y'] ** 2 + b['z'] ** 2).pow(0.5).to_frame('B_T')"
    ),
    "field_elevation": (
        "bt = b.pow(2).sum(axis=1, min_count=3).pow(0.5)\n"
        "result = np.degrees(np.arcsin((b.iloc[:, 2] / bt).clip(-1, 1))).to_frame('theta_B')"
    ),
    "field_azimuth": (
        "result = (np.degrees(np.arctan2(b.iloc[:, 1], b.iloc[:, 0])) % 360).to_frame('phi_B')"
    ),
    "cone_angle": (
        "bt = b.pow(2).sum(axis=1, min_count=3).pow(0.5)\n"
        "result = np.degrees(np.arccos((b.iloc[:, 0] / bt).clip(-1, 1))).to_frame('cone_angle')"
    ),
}


def derived_named(text: str) -> tuple[DerivedQuantity, ...]:
    """Derived quantities the request asks for, in text order.

    One written inside another's words ("V_A" of "Vth/VA", "P_B" of "Pth/Pb") is part
    of that one, not asked by itself.
    """
    found = [(m.span(), d) for d in load_vocabulary().derived if (m := d.words.search(text))]
    kept = [
        (span, d)
        for span, d in found
        if not any(
            o[0] <= span[0] and span[1] <= o[1] and o != span for o, other in found if other != d
        )
    ]
    return tuple(d for _, d in sorted(kept, key=lambda pd: pd[0][0]))


def understood_with_derived(intent: RequestIntent) -> list[str]:
    """`intent.understood()` with the derived quantities asked named after the quantities.

    "IMF clock angle" reads as the field (its input) and the angle computed from it: the
    understood line says both, the computed one with its unit.
    """
    parts = intent.understood()
    named = derived_named(intent.text) if not intent.time_error else ()
    if not named:
        return parts
    said = "computed " + ", ".join(f"{d.label} ({d.units})" for d in named)
    lead = ("mission", "dataset", "quantity")
    at = max((i + 1 for i, p in enumerate(parts) if p.startswith(lead)), default=0)
    return [*parts[:at], said, *parts[at:]]


# Quality flags, uncertainties and spreads are never the quantity itself.
_SUPPORT = re.compile(r"qual|flag|uncert|_err|error|sigma|rms|deviation|\bdev\b|_dev", re.I)


def catalog_quantity(
    derived: DerivedQuantity, datasets: list[DatasetInfo], span: TimeRange | None
) -> tuple[DatasetInfo, ParameterInfo] | None:
    """A parameter of `datasets` that already is `derived` (an alpha/proton ratio), if any.

    The first one, in the source's order, whose name or description the derived row's
    `catalog` pattern matches and whose dataset covers `span`.
    """
    if derived.catalog is None:
        return None
    for info in datasets:
        if span is not None and (
            (info.start is not None and info.start > span.start)
            or (info.stop is not None and info.stop < span.end)
        ):
            continue
        for p in info.parameters:
            if p.is_time or _SUPPORT.search(f"{p.name} {p.description}"):
                continue
            if derived.catalog.search(p.name) or derived.catalog.search(p.description):
                return info, p
    return None


_FLAVOURS = {
    "perpendicular": re.compile(r"perp|⊥", re.I),
    "parallel": re.compile(r"para(?!m)|parl|_par(?:_|$)|\bpar\b|parallel|∥", re.I),
    # Wind SWE Proton_W, 3DP VTHERMAL ("most probable speed"), THEMIS ESA vthermal
    "thermal_speed": re.compile(r"therm|v_?th|w_?th|most probable|(?:^|_)w(?:_|$)", re.I),
}
_ANY_FLAVOUR = re.compile(r"perp(?:endicular)?|para(?:llel)?(?!m)|parl|(?<=_)par(?=_|$)", re.I)


def flavoured(need: str, cands: list[Candidate], catalog: Catalog) -> list[Candidate]:
    """The candidates, each swapped for its sibling saying the input's flavour.

    "temperature:perpendicular": a dataset's parallel temperature gives way to its
    perpendicular one (`mms1_dis_temppara_fast` -> `mms1_dis_tempperp_fast`: the same
    name but for the flavour, else the first sibling in the same unit saying it). A
    candidate whose dataset has none is dropped; an input without a flavour keeps all.
    """
    flavour = _FLAVOURS.get(need.partition(":")[2])
    if flavour is None:
        return cands
    kept: list[Candidate] = []
    for c in cands:
        info = catalog.dataset(c.dataset_id)
        p = info.parameter(c.parameter)
        if p is None:
            continue
        if flavour.search(f"{p.name} {p.description}"):
            kept.append(c)
            continue
        stem = _ANY_FLAVOUR.sub("", p.name).lower()
        siblings = [
            q
            for q in info.parameters
            if _same_unit(q.units, p.units)
            and flavour.search(f"{q.name} {q.description}")
            and not _SUPPORT.search(f"{q.name} {q.description}")
        ]
        same = [q for q in siblings if _ANY_FLAVOUR.sub("", q.name).lower() == stem]
        # else the sibling named most like it (3DP MOM.P.VEL_MAG -> MOM.P.VTHERMAL, not A.)
        name = p.name
        nearest = sorted(siblings, key=lambda q: -_shared_prefix(q.name, name))
        for q in (same or nearest)[:1]:
            kept.append(
                replace(
                    c, parameter=q.name, reason=f"{c.reason}; its {need.partition(':')[2]} sibling"
                )
            )
    return list({(c.dataset_id, c.parameter): c for c in kept}.values())


def _shared_prefix(one: str, other: str) -> int:
    """How many leading characters two names share."""
    return next(
        (i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b),
        min(len(one), len(other)),
    )


def _same_unit(one: str, other: str) -> bool:
    """Whether two units strings say one unit ('km/s' and 'km/sec' do)."""
    kind = _temperature_kind(one)
    return one == other or (kind is not None and kind == _temperature_kind(other))


def input_wishes(
    derived: DerivedQuantity, frame: str | None, named_species: str | None = None
) -> list[QuantityWish]:
    """One wish per input ("velocity:magnitude" -> velocity, magnitude component).

    Vectors crossed or compared (-V x B) are asked in one frame: the one the request
    names, else the quantity's own (GSM for the clock angle and the coupling functions),
    else GSE. A temperature of
    one flavour (perpendicular, parallel) is of the species the request names.
    """
    vectors = frame or derived.frame or "GSE"
    wishes: list[QuantityWish] = []
    for n, need in enumerate(derived.needs):
        key, _, detail = need.partition(":")
        # "components": a vector, from the components the request names (any frame)
        component = "vector" if detail in ("components", "yz") else None
        component = detail if detail in ("vector", "magnitude") else component
        species = detail if detail in ("alpha", "proton", "electron") else None
        if key == "density" and species is None:
            species = "proton"
        if need == "temperature:thermal_speed":  # a speed, the thermal one of the species
            wishes.append(QuantityWish("velocity", need, n, None, None, species or "proton"))
            continue
        if key == "temperature" and detail in _FLAVOURS:
            species = named_species  # "ion Tperp/Tpar": the request's species, if any
        elif key == "temperature" and species is None:
            species = "proton"
        wish_frame = frame if key == "magnetic_field" else None
        if component == "vector" and detail != "components":
            wish_frame = vectors
        wishes.append(QuantityWish(key, need, n, component, wish_frame, species))
    return wishes


def _temperature_kind(unit: str) -> str | None:
    """'K', 'eV' or 'speed' (a thermal speed in km/s); None for another unit."""
    u = unit.strip().lower()
    if u in ("k", "kelvin", "deg k", "degk", "deg_k"):
        return "K"
    if u.startswith("ev"):
        return "eV"
    if u.replace(" ", "") in ("km/s", "kms^-1", "km/sec"):
        return "speed"
    return None


def unit_problem(derived: DerivedQuantity, units: list[str]) -> str | None:
    """Why the fetched inputs cannot give this quantity in its units (None when fine)."""
    kinds = {_temperature_kind(u) for u in units}
    if derived.key == "temperature_anisotropy" and len(kinds) > 1:
        return f"its two temperatures came in different units ('{units[0]}', '{units[1]}')"
    at = next((i for i, n in enumerate(derived.needs) if n.startswith("temperature")), None)
    if at is not None and derived.key not in _PLAIN_RATIOS and at < len(units):
        unit = units[at]
        if derived.needs[at] == "temperature:thermal_speed" and _temperature_kind(unit) != "speed":
            return f"the parameter fetched came as '{unit}', not a thermal speed in km/s"
        if unit and _temperature_kind(unit) is None:
            return f"the temperature came as '{unit}', not K, eV or a thermal speed in km/s"
    return None


def _kelvin(x: str, unit: str, mass: str = "m_p") -> tuple[str, str]:
    """(code binding T in K, the conversion said in the answer) for a temperature input.

    `mass` is the species' mass constant a thermal speed is converted with (m_e for
    electrons).
    """
    kind = _temperature_kind(unit)
    positive = f"col({x}).where(lambda s: s > 0)"  # a value <= 0 is no temperature
    if kind == "eV":
        return f"T = {positive} * e / k_B  # eV -> K", "the temperature in eV converted to K"
    if kind == "speed":
        code = (
            f"w = {positive} * 1e3  # thermal speed km/s -> m/s\n"
            f"T = {mass} * w**2 / (2 * k_B)  # w = sqrt(2 k T / {mass}) -> T in K"
        )
        return code, f"the thermal speed w converted to T = {mass} w^2 / 2k (K)"
    return f"T = {positive}  # K", ""


def derived_code(derived: DerivedQuantity, units: list[str], parts: list[int]) -> tuple[str, str]:
    """(sandbox code, unit conversions said in the answer) for `derived`.

    `units` are those of the fetched inputs and `parts` how many fetched series each
    input came as (1, or 3 for a vector fetched as x, y and z components).
    """
    starts = [sum(parts[:i]) for i in range(len(parts))]
    refs = [
        ", ".join(f"inputs[{s + j}]" for j in range(count))
        for s, count in zip(starts, parts, strict=True)
    ]
    if derived.key in _OF_ONE_VECTOR:
        return _ALIGN + f"b = vec({refs[0]})\n" + _OF_ONE_VECTOR[derived.key], ""
    if derived.key in _PLAIN_RATIOS:
        return _ALIGN + _FORMULAS[derived.key], ""
    lines: list[str] = []
    said: list[str] = []
    for need, ref, start in zip(derived.needs, refs, starts, strict=True):
        key, _, detail = need.partition(":")
        if key == "temperature":
            code, conversion = _kelvin(ref, units[start], "m_e" if detail == "electron" else "m_p")
            lines.append(code)
            said += [conversion] if conversion else []
        else:
            lines.append((_SI.get(need) or _SI[key]).format(x=ref))
    body = "\n".join(lines) + "\n" + _FORMULAS[derived.key]
    used = [
        f"{name} = {value!r}  # {what}"
        for name, (value, what) in _CONSTANTS.items()
        if re.search(rf"(?<![\w.]){name}(?!\w)", body)
    ]
    return _ALIGN + "\n".join(used) + ("\n" if used else "") + body, "; ".join(said)
