"""Spectrum requests become one `spectrogram` wish, served by what variables' metadata say.

"spectrogram", "energy spectrum", "pitch angle", "radio", "wave spectrogram" and
"omnidirectional ... flux" become one wish whose component names the axis asked for
(energy, pitch angle, radio or frequency) and whose qualifiers keep the field ("magnetic",
"electric") and look direction ("omni", "par", "anti", "perp") typed. `spectrogram_fit`
scores a parameter for it from its units (a spectral density per Hz, a particle flux),
bins, description and name: the axis its channels span, E or B, omni or one direction.
A named direction or field is never served by another one.

Imports `catalog.model` and this package only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xhelio.catalog.model import BinsAxis, DatasetInfo, ParameterInfo
from xhelio.language.intent import QuantityWish

__all__ = [
    "apart",
    "asked_fit",
    "axis_dataset_score",
    "channel_axis",
    "channel_title",
    "is_spectral_density",
    "kept_dimension",
    "pitch_slice",
    "spectrogram_fit",
    "spectrum_wishes",
    "without_reductions",
]

_SPECTRUM = re.compile(
    r"\b(?:energy[- ]time|dynamic)\s+spectr\w*|\bspectrograms?\b|\benergy\s+spectr\w*"
    r"|\bpitch[- ]angles?(?:\s+distributions?)?\b|\bPADs?\b|\bradio\b|\bwave\s+spectr\w*"
    r"|\bfrequency\s+spectr\w*|\b(?:electron|ion|proton|particle)\s+spectr\w*|\bspectr(?:um|a)\b"
    r"|\bomni[- ]?directional\b(?=(?:\s+[\w+-]+){0,2}\s+fluxe?s?\b)",
    re.I,
)
_AXIS = (
    ("pitch", re.compile(r"pitch|\bPADs?\b", re.I)),
    ("radio", re.compile(r"radio", re.I)),
    ("frequency", re.compile(r"wave|frequenc|electric|magnetic|spectral dens|search.?coil", re.I)),
    ("energy", re.compile(r"energ|electron|\bions?\b|proton|particle|alpha|helium|oxy", re.I)),
)
# "flux" alone is a particle flux or a radio flux density ("RPW TNR flux spectrogram"):
# an energy spectrum first, a frequency one still serves (the product words decide).
_FLUX = re.compile(r"\bflux", re.I)
_FLUX_ONLY = "flux-only"


def spectrum_wishes(
    text: str,
    wishes: list[QuantityWish],
    species: str | None,
    operations: Sequence[tuple[int, int]] = (),
) -> list[QuantityWish]:
    """The wishes with spectrum words turned into one spectrogram wish.

    Unchanged when the request names no spectrum. A spectrum word inside another
    quantity's phrase is that quantity's ("F10.7 solar radio flux" is an index); one
    inside an operation's words (`operations`: "power spectrum", "Fourier spectrum")
    is that operation's.
    """
    match = next(
        (
            m
            for m in _SPECTRUM.finditer(text)
            if not any(w.position <= m.start() < w.position + len(w.text) for w in wishes)
            and not any(a <= m.start() and m.end() <= b for a, b in operations)
        ),
        None,
    )
    if match is None:
        return wishes
    # No axis word ("TNR spectrogram"): any axis, the product words pick the dataset. A
    # dimension named as averaged over or sliced at is not the one drawn.
    drawn = without_reductions(text)
    axis = next((name for name, cue in _AXIS if cue.search(drawn)), None)
    flux_only = axis is None and _FLUX.search(drawn) is not None
    axis = "energy" if flux_only else axis
    species = next((w.species for w in wishes if w.species), species)
    # A flux or field written in the spectrum's own phrase is the spectrum's ("magnetic
    # spectrogram"); one in another clause ("|B| and the electron spectrogram") stays.
    kept = [
        w
        for w in wishes
        if w.quantity not in ("particle_flux", "magnetic_field", "electric_field")
        or apart(text, *sorted((w.position, match.start())))
    ]
    qualifiers = tuple(name for name, cue in _QUALIFIERS if cue.search(drawn))
    qualifiers += tuple(
        f"{_PITCH_AT}{m[1] or m[2]}" for m in _REDUCED.finditer(text) if m[1] or m[2]
    )
    qualifiers += (_FLUX_ONLY,) if flux_only else ()
    # The qualifier words just before the spectrum words belong to its phrase.
    start = min(
        (
            m.start()
            for _, cue in _QUALIFIERS
            for m in cue.finditer(text, 0, match.start())
            if re.fullmatch(r"[\s\w+-]*", text[m.end() : match.start()])
            and len(text[m.end() : match.start()].split()) <= 3
        ),
        default=match.start(),
    )
    spectrum = QuantityWish(
        "spectrogram", text[start : match.end()], start, axis, None, species, qualifiers
    )
    return sorted([*kept, spectrum], key=lambda w: w.position)


# A dimension the request reduces ("averaged over pitch angle") or slices ("at 90 degrees
# pitch angle"): its words never name the axis drawn.
_REDUCED = re.compile(
    r"\b(?:averaged|integrated|summed|mean|average)\s+over\s+(?:all\s+)?(?:the\s+)?"
    r"(?:pitch[- ]angles?|energ(?:y|ies)|angles?|directions?|look directions?)"
    r"|\bat\s+(\d+(?:\.\d+)?)\s*(?:°|deg\w*)\s+pitch[- ]angles?"
    r"|\bat\s+(?:a\s+)?pitch[- ]angles?\s+(?:of\s+)?(\d+(?:\.\d+)?)",
    re.I,
)
_PITCH_AT = "pitch_at:"


_APART = re.compile(r",|;|\b(?:and|vs\.?|versus|with|against|plus|also|then)\b", re.I)


def apart(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` crosses into another clause (a comma, "and", "vs")."""
    return _APART.search(text, start, end) is not None


def without_reductions(text: str) -> str:
    """`text` without the dimensions it averages over or slices at (they name no product)."""
    return _REDUCED.sub(" ", text)


def pitch_slice(wish: QuantityWish) -> str | None:
    """The pitch angle (degrees, as typed) the request slices a distribution at, if any."""
    return next(
        (q.removeprefix(_PITCH_AT) for q in wish.qualifiers if q.startswith(_PITCH_AT)), None
    )


# Words of a request that narrow the variable: the field and the look direction.
_QUALIFIERS = (
    ("magnetic", re.compile(r"\bmagnetic\b|\bB[- ]field\b|search[- ]?coil|\bSCM\b", re.I)),
    ("electric", re.compile(r"\belectric\b|\bE[- ]field\b", re.I)),
    ("omni", re.compile(r"\bomni[- ]?directional\b", re.I)),
    ("anti", re.compile(r"\banti[- ]?parallel\b", re.I)),
    ("perp", re.compile(r"\bperpendicular\b", re.I)),
    ("par", re.compile(r"(?<![-\w])parallel\b", re.I)),
)
_LOOKS = frozenset({"omni", "anti", "perp", "par"})
# A spectral density per unit frequency (nT^2/Hz, (V/m)^2/Hz, W/m^2/Hz) or solar flux units.
_PER_HZ = re.compile(r"/\s*\(?\s*(?:sqrt\(|root-?)?hz|hz\s*(?:\^|\*\*|!e)?\s*-1|\bsfu\b", re.I)
# Particle intensities: per cm^2 (sr, s, energy), densities per energy, counts, rates.
_PARTICLE_UNITS = re.compile(r"cm|ster|\bsr\b|/cc|km\^?-?6|\bs\^?3|counts?|cnts|#|eflux", re.I)
# Units of a bin table itself: energies, frequencies, (solid) angles (support, never data).
_AXIS_UNITS = re.compile(r"^\s*(?:[kmg]?ev|[kmg]?hz|deg(?:rees?)?|°|rad|ster|sr)\s*$", re.I)
# A table of channel numbers ("Energy Bin Nos", "PES step number", "Energy Index ..."):
# unitless labels of the bins, never the data.
_INDEX_TABLE = re.compile(r"\b(?:bin|step)\s+(?:nos?|numbers?)\s*$|^\s*\w+\s+index\b", re.I)
# What a data provider marks as not for display, and geometry that is no spectrum (a
# coordinate transformation matrix flattened to 9 values).
_NOT_SHOWN = re.compile(
    r"do not use|\[no plots?\b|listing only|createcdf only|not useful|not yet functional"
    r"|\bvariance\b"
    r"|(?:transformation|rotation) matri|quaternion",
    re.I,
)
# Quantities derived from a spectral matrix that are not a power: drawn only when named.
_NOT_POWER = re.compile(
    r"cross|coheren|phase|ellipt|planar|polari[sz]|angle|azimuth|poynting|stokes|degree", re.I
)
# The sum (trace) over components or the provider's summary: the usual spectrogram.
_SUM = re.compile(r"\bsum\b|^[be]sum|trace|omni|total|summary|standard display", re.I)
_PITCH_WORDS = re.compile(r"pitch|(?:^|_)pad?(?:_|$)|\bPAD\b", re.I)
# Channels over look angles ("Spin Angle Spectrogram", "Polar Angle Spectrogram", sectors):
# a spectrogram over directions, never an energy or frequency spectrum.
_ANGLE_WORDS = re.compile(
    r"\b(?:spin|polar|azimuth(?:al)?|elevation|look|phase|sector)[- ]?angles?\b|\bsectors\b", re.I
)
_WAVE_WORDS = re.compile(r"freq|spectral density|power spectr|radio|\bwaves?\b|auto spectr", re.I)
_ENERGY_WORDS = re.compile(r"energ|flux|count|\brates?\b|distribution function", re.I)
_MAGNETIC_WORDS = re.compile(r"search[- ]?coil|\bSCM\b|magnetic|\bmag\b\.?|\bB[- ]?field", re.I)
_ELECTRIC_WORDS = re.compile(r"electric|\belec\b\.?|\bE[- ]?field", re.I)
_LOOK_WORDS = (
    ("omni", re.compile(r"omni", re.I)),
    ("anti", re.compile(r"(?:^|_)anti(?:_|$)|anti-?parallel", re.I)),
    ("perp", re.compile(r"(?:^|_)perp(?:_|$)|perpendicular", re.I)),
    ("par", re.compile(r"(?:^|_)par(?:_|$)|(?<![-\w])parallel", re.I)),
    ("direction", re.compile(r"(?:^|_)[pm][xyz](?:_|$)|unidirectional|\bnear\b", re.I)),
)


def channel_axis(p: ParameterInfo) -> str | None:
    """What the channels of `p` span, from its metadata: energy, pitch, angle or frequency.

    Bins (DEPEND_1) decide first, then units (a density per Hz is a wave or radio
    spectrum, a per-cm^2 intensity a particle one), then words of name and description.
    """
    for axis in p.bins_axes:
        said = f"{axis.name} {axis.units} {axis.description}"
        if re.search(r"pitch", said, re.I):
            return "pitch"
        if re.search(r"hz\b", axis.units, re.I):
            return "frequency"
        if re.search(r"ev\b", axis.units, re.I):
            return "energy"
        if re.search(r"^\s*deg|angle", f"{axis.units} {axis.name}", re.I):
            return "angle"
    text = f"{p.name} {p.description}"
    if _PITCH_WORDS.search(text):
        return "pitch"
    if _ANGLE_WORDS.search(p.description) and not re.search(r"energ", p.description, re.I):
        return "angle"
    if _PER_HZ.search(p.units):
        return "frequency"
    if _PARTICLE_UNITS.search(p.units):
        return "energy"
    if _WAVE_WORDS.search(text):
        return "frequency"
    if _ENERGY_WORDS.search(text):
        return "energy"
    return "frequency" if re.search(r"spectrogram", text, re.I) else None


_CHANNEL_TITLES = {
    "energy": "energy channel",
    "frequency": "frequency channel",
    "pitch": "pitch-angle bin",
    "angle": "angle bin",
}


def channel_title(p: ParameterInfo, axis: str | None = None) -> str | None:
    """The y title of a spectrogram of `p` whose drawn dimension has no bins in the metadata.

    What its channels span ("frequency channel", "pitch-angle bin"): channel numbers on
    y, never a bare "bin" or "FLUX_dim2" and never an energy or frequency unit the values
    do not carry. `axis` is the dimension drawn of a 2-D array; None when the metadata
    gives that dimension's bins (the plot labels them itself).
    """
    size = p.size or ()
    if len(size) == 2 and axis in ("energy", "pitch"):
        cue = r"ev\b|energ" if axis == "energy" else r"pitch|deg"
        known = any(
            _has_values(a) and re.search(cue, f"{a.name} {a.units} {a.description}", re.I)
            for a in p.bins_axes[:2]
        )
        return None if known else _CHANNEL_TITLES[axis]
    if p.bins_axes and _has_values(p.bins_axes[0]):
        return None
    kind = channel_axis(p)
    return _CHANNEL_TITLES[kind] if kind else None


def _has_values(axis: BinsAxis) -> bool:
    return axis.centers is not None or axis.low is not None or axis.centers_param is not None


def _field(p: ParameterInfo) -> str | None:
    """Whether a spectral density is of the magnetic or the electric field."""
    if _MAGNETIC_WORDS.search(p.description):
        return "magnetic"
    if _ELECTRIC_WORDS.search(p.description):
        return "electric"
    if re.search(r"nt|gauss", p.units, re.I):
        return "magnetic"
    if re.search(r"v", p.units, re.I):
        return "electric"
    return None


def _look(p: ParameterInfo) -> str | None:
    """The look direction of a particle spectrum: omni, par, anti, perp or one direction."""
    text = f"{p.name} {p.description}"
    return next((name for name, cue in _LOOK_WORDS if cue.search(text)), None)


def _axis_fit(wanted: str | None, kind: str | None, rank: int) -> float | None:
    """How the channels of a parameter fit the axis asked; None when they cannot serve it."""
    if kind is None:
        # Channels of unknown kind ("Electric Field (stacked plots)", V/m) may serve a
        # spectrogram that names no axis, never a particle energy or pitch-angle one.
        return None if wanted in ("energy", "pitch") else -1.0
    if kind == "angle":
        # Channels over look directions serve only a spectrogram that names no axis,
        # after every spectrum over energy or frequency.
        return -1.5 if wanted is None and rank == 1 else None
    if wanted is None:
        return 1.0 if rank == 2 else 2.0
    if wanted == "pitch":
        # A pitch-angle x energy array keeps pitch angle; an omni spectrum is other data.
        return 2.5 if rank == 2 else (3.0 if kind == "pitch" else None)
    if wanted == "energy":
        # A 1-D spectrum first; an array over energy and angles is reduced to it.
        return 1.0 if rank == 2 else (2.0 if kind == "energy" else None)
    return 2.0 if kind == "frequency" else None


def _look_fit(wish: QuantityWish, p: ParameterInfo, rank: int) -> float | None:
    asked = set(wish.qualifiers) & _LOOKS
    look = _look(p)
    if not asked:
        return {"omni": 1.0, None: 0.0}.get(look, -1.0)
    if look in asked or (look is None and asked == {"omni"} and rank == 1):
        return 3.0
    # "omni" asked, a look direction is other data (and the reverse).
    return None if look is not None or rank == 2 else -1.0


def _power_fit(p: ParameterInfo) -> float:
    """A power spectral density (per Hz) first, their sum over components before one."""
    text = f"{p.name} {p.description}"
    fit = 1.5 if _PER_HZ.search(p.units) else -1.0
    fit -= 2.0 if _NOT_POWER.search(p.description) else 0.0
    return fit + (0.5 if _SUM.search(text) else 0.0)


def spectrogram_fit(wish: QuantityWish, p: ParameterInfo) -> float | None:
    """How well `p` serves the spectrogram `wish`, from its metadata; None when it cannot.

    What was asked (`asked_fit`), then a power spectral density before an amplitude and
    more channels before fewer.
    """
    asked = asked_fit(wish, p)
    if asked is None:
        return None
    size = p.size or ()
    power = _power_fit(p) if channel_axis(p) == "frequency" else 0.0
    return asked + power + min(size[-1] if len(size) == 1 else max(size), 64) / 64


def asked_fit(wish: QuantityWish, p: ParameterInfo) -> float | None:
    """How far `p` is the spectrogram asked; None when it cannot serve it.

    Channels along one axis (or a pitch-angle x energy array, reduced along one), that
    axis the one asked, the field (E or B) and the look direction typed. Candidates
    equal here are told apart by the product words said, then by their other merits.
    """
    size = p.size or ()
    if not 1 <= len(size) <= 2 or min(size) < 4 or not 4 <= p.components <= 20_000:
        return None
    if _AXIS_UNITS.match(p.units) or _NOT_SHOWN.search(p.description):
        return None  # an energy, frequency or angle table is the axis, not the data
    if not p.units.strip() and _INDEX_TABLE.search(p.description):
        return None
    if size == (4,) and not p.bins_axes:
        return None  # a vector and its magnitude (Bx, By, Bz, |B|), no channels
    wanted = "frequency" if wish.component == "radio" else wish.component
    kind = channel_axis(p)
    if len(size) == 2 and kind not in ("energy", "pitch"):
        return None
    fit = _axis_fit(wanted, kind, len(size))
    if fit is None and kind == "frequency" and _FLUX_ONLY in wish.qualifiers:
        # A radio flux density, after any particle flux spectrum; one saying flux first.
        fit = -1.5 if _FLUX.search(f"{p.name} {p.description}") else -2.0
    look = _look_fit(wish, p, len(size)) if kind in ("energy", "pitch") else 0.0
    if fit is None or look is None:
        return None
    asked = set(wish.qualifiers) & {"magnetic", "electric"}
    if asked and kind == "frequency":
        field = _field(p)
        if field is not None and field not in asked:
            return None  # an electric spectral density is never the magnetic one asked
        fit += 2.0 if field in asked else -0.5
    return fit + look


def kept_dimension(info: DatasetInfo, p: ParameterInfo, axis: str | None) -> tuple[str, int] | None:
    """The dimension a spectrogram over `axis` keeps of a pitch-angle x energy array.

    Returned with the number of bins averaged along the other dimension. Named as the
    data's dimension is (its bins' name, or ``NAME_dimK``). The energy dimension is the
    one whose bins, or a sibling energy table of that length, say energy (eV); the
    description's "in 72 energy ..." counts too. None for 1-D data or when the metadata
    does not tell.
    """
    size = p.size or ()
    if len(size) != 2 or axis not in ("pitch", "energy"):
        return None
    names = [
        p.bins_axes[k].name if k < len(p.bins_axes) else f"{p.name}_dim{k + 1}" for k in (0, 1)
    ]
    energy = _energy_dimension(info, p)
    if energy is None:
        return None
    kept = energy if axis == "energy" else 1 - energy
    return names[kept], size[1 - kept]


def _energy_dimension(info: DatasetInfo, p: ParameterInfo) -> int | None:
    size = p.size or ()
    for k, axis in enumerate(p.bins_axes[:2]):
        if re.search(r"ev\b", axis.units, re.I) or re.search(r"energ", axis.name, re.I):
            return k
    lengths = [
        (other.size or (0,))[-1]
        for other in info.data_parameters
        if other is not p
        and re.search(r"energ", other.name, re.I)
        and re.search(r"ev\b", other.units, re.I)
    ]
    said = re.findall(r"(\d+)\s+energ", p.description, re.I)
    found = [k for k in (0, 1) if size[k] in lengths or str(size[k]) in said]
    return found[0] if len(found) == 1 else None


_RADIO_DATASET = re.compile(r"radio|RFS|TNR|HFR|_WAV|WAVES", re.I)
_MOMENTS_DATASET = re.compile(r"MOM|moments", re.I)
_SPECTRUM_NAME = re.compile(r"spectr|distribution|dist(?:_|$)|pitchang", re.I)


def axis_dataset_score(dataset_text: str, axis: str | None, parameter_name: str = "") -> float:
    """Dataset-level fit for a spectrogram: radio receivers for radio, not moments.

    A moments file whose parameter is named a spectrum or distribution (FPI's
    "energyspectr_omni" in DES-MOMS) holds the spectrum: no demotion then.
    """
    moments = _MOMENTS_DATASET.search(dataset_text) and not _SPECTRUM_NAME.search(parameter_name)
    score = -2.0 if moments else 0.0
    if axis == "radio":
        score += 3.0 if _RADIO_DATASET.search(dataset_text) else -1.0
    return score


def is_spectral_density(units: str) -> bool:
    """Whether a series in `units` is a spectral density already (per Hz or per root Hz).

    Its "spectral density" is the data as the catalog holds it: a PSD computed from it
    again would be a spectrum of a spectrum.
    """
    return _PER_HZ.search(units) is not None
