"""Derived quantities offline: what to fetch for each and the sandbox code computing it.

The vocabulary (`xhelio/vocabulary/domain.toml`) names each derived quantity, the words
people use for it, its inputs and units. This module turns an input spec such as
`"velocity:magnitude"` or `"density:alpha"` into a `QuantityWish` for the resolver, and
gives the pandas code over the fetched inputs: every input after the first is put on the
first one's times (interpolated inside its span, never extrapolated). Imports only this
package and `vocabulary`.
"""

from __future__ import annotations

from xhelio.language.intent import QuantityWish
from xhelio.vocabulary import DerivedQuantity, load_vocabulary

__all__ = ["derived_code", "derived_named", "input_wishes", "unit_problem"]

# Physical constants in the units the inputs come in (nT, cm^-3, km/s, K or eV).
_ALIGN = (
    "inputs = list(sources.values())\n"
    "first = inputs[0]\n"
    "def col(frame, magnitude=False):\n"
    "    frame = frame if isinstance(frame, pd.DataFrame) else frame.to_pandas()\n"
    "    if magnitude and frame.shape[1] >= 3:\n"
    "        s = frame.iloc[:, :3].pow(2).sum(axis=1, min_count=3).pow(0.5)\n"
    "    else:\n"
    "        s = frame.iloc[:, 0]\n"
    "    joined = s.reindex(s.index.union(first.index))\n"
    "    return joined.interpolate(method='time', limit_area='inside').reindex(first.index)\n"
)
_CODE = {
    "clock_angle": (
        "b = df.iloc[:, :3]\n"
        "result = np.degrees(np.arctan2(b.iloc[:, 1], b.iloc[:, 2])).to_frame('clock_angle')"
    ),
    "cone_angle": (
        "b = df.iloc[:, :3]\n"
        "bt = b.pow(2).sum(axis=1, min_count=3).pow(0.5)\n"
        "result = np.degrees(np.arccos((b.iloc[:, 0] / bt).clip(-1, 1))).to_frame('cone_angle')"
    ),
    "dynamic_pressure": _ALIGN
    + (
        "n = col(inputs[0])\n"
        "v = col(inputs[1], magnitude=True)\n"
        "result = (1.6726e-6 * n * v ** 2).to_frame('Pdyn')"
    ),
    "plasma_beta": _ALIGN
    + (
        "n = col(inputs[0])\n"
        "t = col(inputs[1]) * {t_scale}\n"
        "b = col(inputs[2], magnitude=True)\n"
        "pth = n * 1e6 * 1.380649e-23 * t\n"
        "pb = (b * 1e-9) ** 2 / (2 * 4e-7 * np.pi)\n"
        "result = (pth / pb).to_frame('beta')"
    ),
    "alfven_speed": _ALIGN
    + (
        "b = col(inputs[0], magnitude=True)\n"
        "n = col(inputs[1])\n"
        "result = (21.812 * b / np.sqrt(n)).to_frame('V_A')"
    ),
    "alpha_proton_ratio": _ALIGN
    + ("a = col(inputs[0])\np = col(inputs[1])\nresult = (a / p).to_frame('alpha_proton_ratio')"),
}


def derived_named(text: str) -> tuple[DerivedQuantity, ...]:
    """Derived quantities the request asks for, in text order."""
    found = [(m.start(), d) for d in load_vocabulary().derived if (m := d.words.search(text))]
    return tuple(d for _, d in sorted(found, key=lambda pd: pd[0]))


def input_wishes(derived: DerivedQuantity, frame: str | None) -> list[QuantityWish]:
    """One wish per input ("velocity:magnitude" -> velocity, magnitude component)."""
    wishes: list[QuantityWish] = []
    for n, need in enumerate(derived.needs):
        key, _, detail = need.partition(":")
        component = detail if detail in ("vector", "magnitude") else None
        species = detail if detail in ("alpha", "proton", "electron") else None
        if key in ("density", "temperature") and species is None:
            species = "proton"
        wish_frame = frame if key == "magnetic_field" else None
        if derived.key == "clock_angle" and wish_frame is None:
            wish_frame = "GSM"  # the clock angle is defined in the GSM y-z plane
        wishes.append(QuantityWish(key, need, n, component, wish_frame, species))
    return wishes


def unit_problem(derived: DerivedQuantity, units: list[str]) -> str | None:
    """Why the fetched inputs cannot give this quantity in its units (None when fine)."""
    if derived.key == "plasma_beta" and len(units) > 1:
        t = units[1].strip().lower()
        if not (t in ("k", "kelvin", "deg k") or t.startswith("ev")):
            return f"the temperature came as '{units[1]}', not K or eV, so beta is not computed"
    return None


def derived_code(derived: DerivedQuantity, units: list[str], *, split: bool = False) -> str:
    """The sandbox code for `derived` given the units of its fetched inputs.

    `split`: a vector input came as three component series (x, y, z), joined here on the
    first one's times before the formula reads its columns.
    """
    code = _CODE[derived.key]
    if split and derived.key in ("clock_angle", "cone_angle"):
        code = _ALIGN + "df = pd.concat([col(x) for x in inputs[:3]], axis=1)\n" + code
    if derived.key == "plasma_beta":
        scale = "11604.518" if len(units) > 1 and units[1].strip().lower().startswith("ev") else "1"
        code = code.replace("{t_scale}", scale)
    return code
