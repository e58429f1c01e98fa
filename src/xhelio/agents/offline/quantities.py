"""The physics vocabulary of the offline interpreter: words people type -> catalog hints.

A `Quantity` says how people name a quantity (`phrases`), what to search the catalog for
(`search`), and how to recognise a parameter that holds it from its metadata (`units`,
`describes`, `names`, and for vectors a `magnitude_cue`). No dataset id appears here:
`resolve.py` finds datasets and parameters for (mission, quantity) through the catalog.
Imports nothing from xhelio.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "GROUP_WORDS",
    "QUANTITIES",
    "Quantity",
    "quantity",
]

Shape = Literal["vector", "scalar", "spectrum", "spectrogram"]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


@dataclass(frozen=True)
class Quantity:
    """One physical quantity and how to recognise it in text and in catalog metadata."""

    key: str
    label: str
    phrases: re.Pattern[str]
    search: str
    units: re.Pattern[str] | None
    describes: re.Pattern[str]
    names: re.Pattern[str]
    shape: Shape
    default_component: str | None = None
    magnitude_cue: re.Pattern[str] | None = None
    component_letter: str | None = None
    default_mission: str | None = None
    solar_wind: bool = False


# Order matters: longer, more specific phrases are claimed first ("electric field"
# before the bare "field" of the magnetic field).
QUANTITIES: tuple[Quantity, ...] = (
    Quantity(
        key="electric_field",
        label="electric field",
        phrases=_rx(r"\belectric field\b|\be[- ]field\b|\befield\b"),
        search="electric field",
        units=_rx(r"^mv ?/ ?m|mv m\^?-1"),
        describes=_rx(r"electric field|\be[- ]?field\b"),
        names=_rx(r"^e(_|field|dc|$)|efield|(?:^|_)dce(?:_|$)"),
        shape="vector",
        default_component="vector",
    ),
    Quantity(
        key="magnetic_field",
        label="magnetic field",
        phrases=_rx(
            r"\binterplanetary magnetic field\b|\bmagnetic field\b|\bmag(?:netic)? field\b"
            r"|\bb[- ]?field\b|\bimf\b|\bmagnetometer\b|\bfield strength\b"
            r"|\bfield magnitude\b|\bfield\b|\bbmag\b|\|\s*b\s*\||\bmag\b"
        ),
        search="magnetic field",
        units=_rx(r"^nt(?!\s*(?:\^|\*\*|2|/))\b"),
        describes=_rx(r"magnetic|magnetometer|\bb[- ]?field|\bimf\b|\bfield\b"),
        names=_rx(r"^b|mag|imf|fgs|fgl|fgm|field|^f1?$"),
        shape="vector",
        default_component="vector",
        magnitude_cue=_rx(
            r"magnitude|\btotal\b|strength|\|b\||btotal|bmag|b_mag|abs_b|^(b|f|f1|bf1|b1f1|babs)$"
        ),
        component_letter="b",
        solar_wind=True,
    ),
    Quantity(
        key="velocity",
        label="solar wind speed",
        phrases=_rx(
            r"\bsolar wind (?:speed|velocity)\b|\b(?:flow|bulk|plasma|proton|ion) "
            r"(?:speed|velocity)\b|\bwind speed\b|\bspeed\b|\bvelocity\b|\bv_?sw\b|\|\s*v\s*\|"
            r"|\bhow fast\b"
        ),
        search="solar wind velocity speed",
        units=_rx(r"^km ?/ ?s|^km s\^?-1|^km/sec"),
        describes=_rx(r"speed|velocity|flow"),
        names=_rx(r"^v|speed|vel|flow"),
        shape="vector",
        default_component="magnitude",
        magnitude_cue=_rx(r"speed|magnitude|\|v\||^(v|vp|vsw|v_mag)$"),
        component_letter="v",
        solar_wind=True,
    ),
    Quantity(
        key="density",
        label="density",
        phrases=_rx(r"\b(?:number |plasma )?density\b|\bdensities\b|\bn_?p\b"),
        search="density",
        units=_rx(
            r"cm\s*(?:\^|\*\*)?\s*\{?-\s*3|/\s*cm\s*(?:\^|\*\*)?\s*3|/\s*cc\b|^(?:per |n/)?cc$"
        ),
        describes=_rx(r"density"),
        names=_rx(r"^n|dens"),
        shape="scalar",
        solar_wind=True,
    ),
    Quantity(
        key="temperature",
        label="temperature",
        phrases=_rx(r"\btemperatures?\b|\btemp\b|\bt_?p\b"),
        search="temperature",
        units=_rx(r"^k$|^kelvin|^deg ?k|^ev\b|^k\b"),
        describes=_rx(r"temperature"),
        names=_rx(r"^t|temp"),
        shape="scalar",
        solar_wind=True,
    ),
    Quantity(
        key="pressure",
        label="dynamic pressure",
        phrases=_rx(r"\b(?:dynamic|flow|ram|plasma) pressure\b|\bpressure\b|\bp_?dyn\b"),
        search="flow pressure",
        units=_rx(r"^npa"),
        describes=_rx(r"pressure"),
        names=_rx(r"^p|press"),
        shape="scalar",
        solar_wind=True,
    ),
    Quantity(
        key="particle_flux",
        label="energetic particle flux",
        phrases=_rx(
            r"\benergetic (?:particles?|protons?|electrons?|ions?)(?: flux(?:es)?)?\b"
            r"|\b(?:particle|proton|electron|ion) flux(?:es)?\b|\bflux(?:es)?\b|\bseps?\b"
        ),
        search="energetic particle flux",
        units=_rx(r"cm\^?-?2|cm2|/\(?cm|sr|ster"),
        describes=_rx(r"flux|intensit"),
        names=_rx(r"flux|^h_|^p\d|^fp|electron|^ion|^e\d|proton"),
        shape="spectrum",
    ),
    Quantity(
        key="spectrogram",
        label="spectrogram",
        # Never matched in text directly: `spectra.py` turns spectrum words into this wish.
        phrases=_rx(r"(?!x)x"),
        search="spectra flux energy",
        units=None,
        describes=_rx(
            r"flux|spectr|intensit|psd|phase space|power|distribution|energy|pitch|frequenc"
            r"|radio|wave|counts? rate"
        ),
        names=_rx(r"flux|spec|eflux|psd|pad|pitch|energy|power|rate|intens|cnt|^f[pe]|^e\d"),
        shape="spectrogram",
    ),
    Quantity(
        key="dst",
        label="Dst index",
        phrases=_rx(r"\bdst\b(?: index)?"),
        search="Dst",
        units=None,
        describes=_rx(r"\bdst\b"),
        names=_rx(r"^dst$|^dst_?index$"),
        shape="scalar",
        default_mission="omni",
    ),
    Quantity(
        key="sym_h",
        label="SYM-H index",
        phrases=_rx(r"\bsym[- _]?h\b"),
        search="SYM_H",
        units=None,
        describes=_rx(r"sym/h|sym-h"),
        names=_rx(r"^sym_?h$"),
        shape="scalar",
        default_mission="omni",
    ),
    Quantity(
        key="kp",
        label="Kp index",
        phrases=_rx(r"\bkp\b(?: index)?"),
        search="Kp",
        units=None,
        describes=_rx(r"\bkp\b"),
        names=_rx(r"^kp$|^kp_?index$"),
        shape="scalar",
        default_mission="omni",
    ),
    Quantity(
        key="ae",
        label="AE index",
        phrases=_rx(r"\bae\b(?: index)?|\bauroral electrojet\b"),
        search="AE index",
        units=None,
        describes=_rx(r"\bae\b|auroral electrojet"),
        names=_rx(r"^ae$|^ae_?index$"),
        shape="scalar",
        default_mission="omni",
    ),
    Quantity(
        key="position",
        label="position",
        phrases=_rx(
            r"\bpositions?\b|\borbits?\b|\btrajector(?:y|ies)\b|\blocation\b|\bephemeris\b"
            r"|\bdistance\b|\bwhere (?:was|is)\b"
        ),
        search="position",
        units=_rx(r"^km\b|^re\b|^r_?e\b|^au\b|earth radi"),
        describes=_rx(r"position|distance|location|radius|coordinates"),
        names=_rx(r"pos|xyz|dist|^r_|^r$|rad|^x|gse_?o?$|gci"),
        shape="vector",
        default_component="vector",
    ),
)

_BY_KEY = {q.key: q for q in QUANTITIES}

# Words that stand for a group of quantities: "solar wind" or "plasma" alone.
GROUP_WORDS: tuple[tuple[re.Pattern[str], tuple[tuple[str, str | None], ...]], ...] = (
    (
        _rx(r"\bsolar wind\b(?: (?:conditions|parameters|data|overview))?|\bupstream\b"),
        (("magnetic_field", "magnitude"), ("velocity", "magnitude"), ("density", None)),
    ),
    (
        _rx(r"\bplasma\b(?: (?:data|moments|parameters))?|\bmoments\b"),
        (("velocity", "magnitude"), ("density", None), ("temperature", None)),
    ),
)


def quantity(key: str) -> Quantity:
    """The vocabulary entry for `key` (e.g. 'magnetic_field')."""
    return _BY_KEY[key]
