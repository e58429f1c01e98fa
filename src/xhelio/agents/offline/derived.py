"""Derived quantities offline: what to fetch for each and the sandbox code computing it.

The vocabulary (`xhelio/vocabulary/domain.toml`) names each derived quantity, the words
people use for it, its inputs and units. This module turns an input spec such as
`"velocity:magnitude"` or `"density:alpha"` into a `QuantityWish` for the resolver, and
gives the pandas code over the fetched inputs: every input after the first is put on the
first one's times (interpolated inside its span, never extrapolated), each input is
converted to SI units in a commented line, and the formula reads like the textbook one.
The formulas and their CODATA constants come from `analysis/formulas.py` (shared with
the plasma_quantities tool), written into the code with their names and units so the
trace shows them.
"""

from __future__ import annotations

import re
from dataclasses import replace

from xhelio.analysis.formulas import CONSTANTS, FORMULAS
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
# Each input bound to a name, in SI units (n in m^-3, V in m/s, B in T; T in K, see _kelvin).
_SI = {
    "density": "n = col({x}).where(lambda s: s > 0) * 1e6  # cm^-3 -> m^-3 (n <= 0: no value)",
    "velocity:magnitude": "V = col({x}, magnitude=True) * 1e3  # km/s -> m/s",
    "velocity:vector": "V = vec({x}) * 1e3  # km/s -> m/s",
    "magnetic_field:magnitude": "B = col({x}, magnitude=True) * 1e-9  # nT -> T",
    "magnetic_field:vector": "B = vec({x}) * 1e-9  # nT -> T",
    "magnetic_field:yz": "B = vec({x}) * 1e-9  # nT -> T (y and z)",
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
    if at is not None and FORMULAS[derived.key].kind != "ratio" and at < len(units):
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
    formula = FORMULAS[derived.key]
    if formula.kind == "vector":
        return _ALIGN + f"b = vec({refs[0]})\n" + formula.code(), ""
    if formula.kind == "ratio":
        return _ALIGN + formula.code(), ""
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
    body = "\n".join(lines) + "\n" + formula.code()
    used = [
        constant.code(name)
        for name, constant in CONSTANTS.items()
        if re.search(rf"(?<![\w.]){name}(?!\w)", body)
    ]
    return _ALIGN + "\n".join(used) + ("\n" if used else "") + body, "; ".join(said)
