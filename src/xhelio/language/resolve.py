"""Mission + quantity -> ranked candidate (dataset, parameter) pairs, from catalog metadata.

Every parameter of the mission's datasets is scored against the quantity's vocabulary
entry (units, description, name tokens, shape, component, frame, species), and every
dataset on what a scientist would pick: science data over support data, definitive over
quick-look, burst mode last, coverage of the requested time, a cadence that gives a
sensible number of points for the span, the spacecraft typed ("MMS2", "THEMIS-C"), and
the catalog's own full-text rank for the quantity. No dataset id is written here.
Imports `catalog`, `timerange` and this package only.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from datetime import timedelta

from xhelio.catalog.index import Catalog, is_auxiliary
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.candidate import (
    UNCOVERED,
    Candidate,
    cadence_of,
    duration_seconds,
    level_rank,
    level_score,
    product_cadence,
    rank_key,
    time_coverage,
)
from xhelio.language.choice_notes import choice_notes, unhonoured_ids, variant_notes
from xhelio.language.flavours import flavour_score
from xhelio.language.intent import QuantityWish
from xhelio.language.measured import auxiliary_note, auxiliary_penalty, frame_of
from xhelio.language.products import (
    Term,
    coverage_score,
    is_support,
    is_view,
    named_by_id,
    title_head,
    unasked_markers,
    variant_count,
)
from xhelio.language.qualifiers import (
    Qualifier,
    discriminating,
    of_parameters,
    qualifier_fit,
    request_words,
)
from xhelio.language.quantities import QUANTITIES, Quantity, quantity
from xhelio.language.quantity_words import MAGNITUDE_WORD
from xhelio.language.spectra import asked_fit, axis_dataset_score, spectrogram_fit
from xhelio.language.wishes import format_seconds
from xhelio.timerange import TimeRange
from xhelio.vocabulary import load_vocabulary

__all__ = [
    "Candidate",
    "cadence_of",
    "dataset_fit",
    "duration_seconds",
    "is_ephemeris",
    "level_rank",
    "probe_fit",
    "probe_of_dataset",
    "probe_wanted",
    "product_cadence",
    "rank_key",
    "resolve",
    "scorable",
    "variant_notes",
    "with_probe",
]

_EXCLUDED_NAME = re.compile(
    r"err|uncert|^unc_|sigma|_sd(?:_|$)|std|rms|qual|flag|^delta|_dq|mask|status|valid|gap"
    r"|count|cnts|_pts$|percent|^num_|duration|mode|^tm_|energy_(?:min|max|center)|_bins?$"
    r"|(?:^|_)(?:bg|bkg|bkgd|cps)(?:_|$)",
    re.I,
)
# What a description says of a support or bookkeeping variable (never the data drawn).
_BOOKKEEPING = re.compile(
    r"listing only|spin[- ]?phase|^\W*(?:[\w/+().-]+\s+){0,4}flags?\b(?!\s+applied)|step[- ]?table"
    r"|calibration table|table id|lookup table|telemetry index|\bindex (?:of|into|number)\b"
    r"|\bversion(?: number)?\b|\bheader\b|\bbits \d|\bparity\b|observation mode"
    r"|\bmode (?:id|number|flag|table)|program spec",
    re.I,
)
# Units of a flag or an index: "(0=good)", "[0, 1]", "Index".
_BOOKKEEPING_UNITS = re.compile(
    r"^\(?\s*\d\s*=\s*(?:good|ok|bad|valid|invalid)\b|^\[\s*0\s*,\s*1\s*\]$|^index$", re.I
)
_EPHEMERIS_ID = re.compile(
    r"(?:^|[_-])(?:EPHEM\w*|ORBIT|OR|POS|STATE|SSC|HELIO\d*(?:HR|DAY))(?:[_-]|$)"
)
_EPHEMERIS_TITLE = re.compile(
    r"\bephem(?:eris)?\b|\borbit\b|\btrajectory\b|heliocentric coordinates|\bposition data\b", re.I
)
_DISTANCE = re.compile(r"distance|radius|how far|\br in au\b", re.I)
_AC_FIELD = re.compile(r"search coil|(?:^|_)SCM|_DSP_|spectral|wave", re.I)
# Near Earth GSE is the usual frame, away from it RTN; when a dataset has both, GSE wins.
_NATURAL_FRAMES = {"GSE": 0.3, "RTN": 0.25}
_FRAMES = frozenset(load_vocabulary().frames)
# How catalog names and descriptions write each species (from the one vocabulary).
_SPECIES_CUES = {sp.key: sp.cues for sp in load_vocabulary().species}
_PROBE_IN_ID = re.compile(r"^(?:TH|ST|RBSP)-?([A-E])(?:-|PRED|$)|(\d+)$")
_DEFAULT_PROBES = frozenset({"1", "A"})
_SCORED_SPAN = timedelta(days=7)
_UNASKED_MARKER = 1.0  # per marker word ("burst", "auxiliary") the request does not say
# Quantities whose products differ by distribution kind (omni, pitch angle) by nature.
_DISTRIBUTIONS = frozenset({"spectrum", "spectrogram"})
# Points per series that show a span well without a slow fetch.
_POINTS_BAND = (300.0, 30_000.0)


def probe_wanted(typed: str) -> str | None:
    """The spacecraft letter or number a mission mention names ("MMS2" -> "2")."""
    for entry in load_vocabulary().missions.values():
        probe = entry.probe_of(typed)
        if probe is not None:
            return probe
    squeezed = re.sub(r"[\s\-]", "", typed.upper())
    if squeezed.endswith("AHEAD"):
        return "A"
    if squeezed.endswith("BEHIND"):
        return "B"
    letter = re.fullmatch(r"(?:THEMIS|TH|STEREO|ST|RBSP|VANALLENPROBES?)([A-E])", squeezed)
    if letter:
        return letter[1]
    number = re.search(r"\D(\d{1,2})$", squeezed)
    return number[1] if number else None


def probe_of_dataset(dataset_id: str) -> str | None:
    """The spacecraft letter or number a dataset id belongs to ("C3_CP_FGM_SPIN" -> "3").

    An id prefix the vocabulary lists as a probe's shorthand names it ("PIONEERVENUS").
    """
    head = dataset_id.upper().split("_", 1)[0]
    for entry in load_vocabulary().missions.values():
        listed = entry.probe_of(head)
        if listed is not None:
            return listed
    match = _PROBE_IN_ID.search(head)
    if not match:
        return None
    return match[1] or str(int(match[2]))


def with_probe(dataset_id: str, probe: str) -> str | None:
    """The id of the same product of spacecraft `probe` ("MMS1_FGM_SRVY_L2", "3" -> "MMS3_...").

    None when the id names no spacecraft. The id need not exist: check the catalog.
    """
    head, sep, rest = dataset_id.partition("_")
    match = _PROBE_IN_ID.search(head.upper())
    if not match:
        return None
    group = 1 if match[1] else 2
    return f"{head[: match.start(group)]}{probe}{head[match.end(group) :]}{sep}{rest}"


def _abbreviated(info: DatasetInfo, have: str | None, probe: str) -> bool:
    """Whether an id abbreviates spacecraft `probe` and its title spells it ("G0": GOES 10)."""
    return (
        have is not None
        and len(probe) > len(have)
        and probe.endswith(have)
        and re.search(rf"[A-Za-z][ -]?{probe}(?!\w)", info.title) is not None
    )


def probe_fit(info: DatasetInfo, probe: str | None) -> float | None:
    """Score for the spacecraft typed; None when the dataset is another spacecraft's."""
    have = probe_of_dataset(info.id)
    if probe is None:
        return 0.5 if have in _DEFAULT_PROBES else 0.0
    if have == probe or _abbreviated(info, have, probe):
        return 0.0
    return -1.0 if have is None else None


def _title_species_score(info: DatasetInfo, q: Quantity, wish: QuantityWish) -> float:
    """Penalty for a dataset whose title names another species ("Alpha moments")."""
    wanted = wish.species or ("proton" if q.solar_wind and q.shape != "vector" else None)
    if wish.quantity == "velocity":
        wanted = wish.species or "proton"
    if wanted is None:
        return 0.0
    named = {s for s, cue in _SPECIES_CUES.items() if cue.search(info.title)} - {"ion"}
    if not named or wanted in named or (wanted == "ion" and "proton" in named):
        return 0.0
    return -2.0


def _other_species(wish: QuantityWish, info: DatasetInfo, p: ParameterInfo) -> bool:
    """Whether the parameter holds another species than the one the request names."""
    if wish.species == "ion":
        # Ions asked: electrons alone (said by the parameter, else by the dataset) are
        # never a stand-in ("FAST Electron Survey Distributions" for an ion spectrogram).
        for said in (f"{p.name} {p.description}", f"{info.id} {info.title}"):
            named = {s for s, cue in _SPECIES_CUES.items() if cue.search(said)}
            if named:
                return named == {"electron"}
        return False
    if wish.species is None:
        return False
    text = f"{p.name} {p.description}"
    hits = {s for s, cue in _SPECIES_CUES.items() if cue.search(text)} - {"ion"}
    if not hits:
        # The dataset's species, when it names one: its id first ("..._EPEAD-SCIENCE-
        # ELECTRONS_..." under a title spelling out "Energetic Proton Electron and Alpha
        # Detector"), else its title; a title naming several ("H+, O+, He+ fluxes") says
        # nothing of a parameter that names none.
        for said in (re.sub(r"[_\-]", " ", info.id), f"{info.id} {info.title}"):
            named = {s for s, cue in _SPECIES_CUES.items() if cue.search(said)} - {"ion"}
            if named:
                break
        hits = named if len(named) == 1 else set()
    if wish.species != "proton" and not hits:
        # Alphas, electrons or heavy ions asked: a parameter that names no species is
        # the bulk (proton) plasma ("Vp: Solar Wind Bulk Speed"), never a stand-in.
        return True
    return bool(hits) and wish.species not in hits


def _frame_in_id(info: DatasetInfo, wish: QuantityWish) -> float:
    """A frame written in the dataset id ("..._4SEC-GSM_..."): the one asked, or another."""
    named = set(re.split(r"[_\-]", info.id.upper())) & _FRAMES
    if not named:
        return 0.0
    if not wish.frame:
        # None asked: among datasets split by frame ("..._4SEC-GEO", "..._4SEC-GSE"),
        # the usual near-Earth one; a frame-split heliospheric product gains nothing.
        return _NATURAL_FRAMES["GSE"] if "GSE" in named else 0.0
    return 3.0 if wish.frame in named else -6.0


def _of_named_instrument(
    scored: list[tuple[float, ParameterInfo]], hints: tuple[str, ...], info: DatasetInfo
) -> list[tuple[float, ParameterInfo]]:
    """Within a dataset shared by instruments, the parameters of the one typed.

    Cluster's CIS prime parameters hold HIA and CODIF moments side by side: "CIS HIA ion
    density" keeps the parameters whose name or description says HIA. A word of the
    dataset's own id ("GME" of I8_H0_GME) names the whole dataset, never one parameter
    that repeats it ("11 I8 GME Event Type Rates").
    """
    own_id = {w.upper() for w in re.split(r"[^A-Za-z0-9]+", info.id) if w}
    kept = scored
    for hint in hints:
        if sum(c.isupper() or c.isdigit() for c in hint) < 2:
            continue  # an acronym names an instrument; a plain word does not
        if hint.upper() in own_id:
            continue
        said = re.compile(rf"(?<![A-Za-z]){re.escape(hint)}(?![A-Za-z])", re.I)
        own = [(sc, p) for sc, p in kept if said.search(f"{p.name} {p.description}")]
        if own:  # a name every parameter carries ("_CIS") narrows nothing
            kept = own
    return kept


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[_\-.\s]+", name) if t]


def _names_match(q: Quantity, name: str) -> bool:
    return bool(q.names.search(name)) or any(q.names.search(t) for t in _tokens(name))


def _shape_score(q: Quantity, wish: QuantityWish, p: ParameterInfo) -> float | None:
    """How well the parameter's shape fits the wish; None when it cannot serve it."""
    size = p.size or ()
    n = p.components
    if q.shape == "spectrum":
        return None if len(size) > 1 or n > 64 else (1.0 if n > 1 else 0.0)
    if q.shape == "scalar":
        return 0.0 if n == 1 else None
    component = wish.component or q.default_component or "vector"
    text = f"{p.name} {p.description}"
    is_vector = len(size) == 1 and n in (3, 4)
    if n > 1 and not is_vector:
        return None
    if component == "vector":
        return 3.0 if is_vector else -2.0
    says_magnitude = bool(
        n == 1
        and q.magnitude_cue
        and (q.magnitude_cue.search(p.name) or q.magnitude_cue.search(p.description))
    )
    if component == "magnitude":
        if n == 1:
            # The dataset's own magnitude, in the words a request writes it ("Magnitude",
            # "B_total"), before the magnitude computed from its vector, whatever else the
            # vector's description says (its frame, "magnetometer"). A scalar that only
            # says "speed" may be another quantity's (a thermal speed): no more than a cue.
            if says_magnitude and MAGNITUDE_WORD.search(f"{p.name} {p.description}"):
                return _OWN_MAGNITUDE
            return _SAYS_SPEED if says_magnitude else None
        return 2.0
    letter = q.component_letter or ""
    if says_magnitude:
        return None  # "Magnitude ..., sqrt(Bx^2+By^2+Bz^2)" is no single component
    if n == 1:
        pattern = rf"(?:^|_){letter}_?{component}(?:_|$)|^{component}$|\b{letter}{component}\b"
        return (
            2.0
            if re.search(pattern, p.name, re.I)
            or re.search(rf"\b{letter}{component}\b", text, re.I)
            else None
        )
    return 2.0


# How far a scalar that says it is the magnitude ranks above a 3-vector for a magnitude
# asked: more than the vector's description and frame words can add (3.0).
_OWN_MAGNITUDE = 5.0
_SAYS_SPEED = 2.5


def _species_score(wish: QuantityWish, p: ParameterInfo) -> float:
    text = f"{p.name} {p.description}"
    hits = {s for s, cue in _SPECIES_CUES.items() if cue.search(text)}
    if wish.species:
        wanted = (
            "proton" if wish.species in ("proton", "ion") and "proton" in hits else wish.species
        )
        if wanted in hits or (wish.species == "ion" and "proton" in hits):
            return 2.0
        if wish.species == "proton" and "ion" in hits:
            return 1.0  # ion channels are mostly protons
        return -2.0 if hits else 0.0
    if wish.quantity in ("density", "temperature", "velocity"):
        if hits & {"electron", "alpha"} and not hits & {"proton", "ion"}:
            return -1.5
        return 0.5 if hits & {"proton", "ion"} else 0.0
    return 0.0


def _frame_score(wish: QuantityWish, p: ParameterInfo) -> float | None:
    text = f"{p.name} {p.units} {p.description}".upper()
    present = {f for f in _FRAMES if re.search(rf"(?<![A-Z]){f}(?![A-Z])", text)}
    said = frame_of(p)  # "OUTBOARD BD PAYLOAD": the spacecraft frame in words
    if said is not None:
        present.add(said)
    if wish.frame:
        if wish.frame in present:
            return 1.5
        # Another frame is never a stand-in for the one asked (the check would flag it).
        return None if present else 0.0
    if wish.component in ("y", "z") and "GSM" in present:
        return 0.5
    if present and present <= set(_NATURAL_FRAMES):
        return min(_NATURAL_FRAMES[f] for f in present)
    return -0.3 if present else 0.0


def scorable(p: ParameterInfo) -> bool:
    """Whether `p` can hold measured values (numbers; no error, flag, count or table).

    Its name, its description or its units may say it is bookkeeping instead: a flag, a
    spin phase, a step or calibration table, a version, a header, an index into other
    data, "listing only" (CDAWeb's mark of support data).
    """
    return (
        not p.is_time
        and p.type in ("double", "integer")
        and not _EXCLUDED_NAME.search(p.name)
        and not _BOOKKEEPING.search(p.description)
        and not _BOOKKEEPING_UNITS.search(p.units.strip())
    )


def _parameter_score(q: Quantity, wish: QuantityWish, p: ParameterInfo, asked: str) -> float | None:
    """How well `p` holds the quantity asked; None when it cannot serve it.

    A model, a corotation field, an uncertainty ... of the quantity (`measured`) ranks
    below the measured value unless `asked` (the request's words) asks for it.
    """
    if not scorable(p) or (q.excludes is not None and q.excludes.search(p.description)):
        return None
    name_hit = _names_match(q, p.name)
    desc_hit = bool(q.describes.search(p.description))
    if q.shape == "spectrogram":  # chosen by axis, field and look direction (`spectra`)
        fit = spectrogram_fit(wish, p)
        if fit is None:
            return None
        said = 1.5 if name_hit or desc_hit else 0.0
        return (
            3.0
            + said
            + fit
            + _species_score(wish, p)
            - auxiliary_penalty(p, asked, wish.frame)
            - _NAME_TIE_BREAK * len(p.name)
        )
    if q.units is None:
        if not (q.names.fullmatch(p.name) or q.names.search(p.name) or desc_hit):
            return None
        score = 5.0 if q.names.search(p.name) else 2.0
    else:
        units = p.units.strip()  # none given: the description alone must say it
        if not (q.units.search(units) if units else desc_hit):
            return None
        if not (name_hit or desc_hit):
            return None
        score = 3.0 + (1.5 if name_hit else 0.0) + (1.5 if desc_hit else 0.0)
    shape = _shape_score(q, wish, p)
    if shape is None:
        return None
    frame = _frame_score(wish, p)
    if frame is None:
        return None
    score += shape + _species_score(wish, p) + frame + flavour_score(q.key, p)
    score += _NOTATION_SAID if notation_said(wish.text, p) else 0.0
    if "all q" in p.units.lower() or "all flags" in p.units.lower():
        score -= 0.5
    return score - auxiliary_penalty(p, asked, wish.frame) - _NAME_TIE_BREAK * len(p.name)


# Among parameters the request fits equally, the shorter name (the plain quantity).
_NAME_TIE_BREAK = 0.005

# A quantity typed in notation the description spells ("E dot B=0"): more than the
# cadence of a sibling product (fast survey vs spin fit), less than the frame asked.
_NOTATION_SAID = 1.0
_NOTATION = re.compile(r"[=^+*/]")


def notation_said(typed: str, p: ParameterInfo) -> bool:
    """Whether `typed`, written in notation ("E dot B=0", "Eu^2+Ev^2"), is in `p`'s description.

    Spaces are left out on both sides; plain words ("electric field") never count.
    """
    if not _NOTATION.search(typed):
        return False
    written = re.sub(r"\s+", "", typed).lower()
    return written in re.sub(r"\s+", "", p.description).lower()


def _kind_score(info: DatasetInfo, q: Quantity) -> float:
    """Science over support data, definitive over quick-look, the instrument's own data."""
    score = 1.0 if q.key == "position" and is_auxiliary(info) else 0.0
    score += level_score(info)
    text = f"{info.id} {info.title}"
    if q.key == "magnetic_field" and _AC_FIELD.search(text):
        score -= 2.5
    # A quantity borrowed by another instrument's dataset (the field in a plasma file)
    # ranks below the instrument that measures it.
    score += 1.0 if q.describes.search(info.title) else -0.5
    return score


def _cadence_score(
    cadence: float | None, time_range: TimeRange | None, wanted_cadence: float | None
) -> float:
    """Penalty for a cadence giving too few or too many points for the span."""
    if cadence is None:
        return -1.0
    span = time_range.duration if time_range else _SCORED_SPAN
    points = span.total_seconds() / max(cadence, 1e-3)
    score = 0.0
    if points > _POINTS_BAND[1]:
        score -= min(1.5 * math.log10(points / _POINTS_BAND[1]), 5.0)
    elif points < _POINTS_BAND[0]:
        score -= min(1.5 * math.log10(_POINTS_BAND[0] / points), 5.0)
    if wanted_cadence and cadence > wanted_cadence * 1.01:
        score -= 2.0
    return score


def _dataset_score(
    info: DatasetInfo,
    q: Quantity,
    time_range: TimeRange | None,
    wanted_cadence: float | None,
) -> tuple[float, list[str], float | None]:
    """Dataset-level score, the reasons worth telling, and the cadence in seconds."""
    cadence = cadence_of(info)
    coverage, notes = time_coverage(info, time_range)
    score = _kind_score(info, q) + coverage + _cadence_score(cadence, time_range, wanted_cadence)
    return score, notes, cadence


def dataset_fit(
    info: DatasetInfo, time_range: TimeRange | None, wanted_cadence: float | None
) -> tuple[float, list[str], float | None]:
    """A dataset's score whatever it holds (level, coverage, cadence), notes, cadence."""
    cadence = cadence_of(info)
    coverage, notes = time_coverage(info, time_range)
    score = level_score(info) + coverage + _cadence_score(cadence, time_range, wanted_cadence)
    return score, notes, cadence


def _fts_bonus(catalog: Catalog, q: Quantity, mission_id: str | None) -> dict[str, float]:
    if mission_id is None:
        return {}
    hits = catalog.search(q.search, limit=40, mission=mission_id)
    return {h.dataset_id: 1.5 * (40 - rank) / 40 for rank, h in enumerate(hits)}


def resolve(
    catalog: Catalog,
    wish: QuantityWish,
    datasets: list[DatasetInfo],
    *,
    mission_id: str | None = None,
    probe: str | None = None,
    time_range: TimeRange | None = None,
    wanted_cadence: float | None = None,
    parameter_names: tuple[str, ...] = (),
    hints: tuple[str, ...] = (),
    terms: tuple[Term, ...] = (),
    keep_support: bool = False,
    asked: str = "",
    qualifiers: str = "",
    limit: int = 5,
) -> list[Candidate]:
    """Rank (dataset, parameter) pairs for `wish` among `datasets`, best first.

    Args:
        catalog: The catalog (for its full-text rank of the quantity).
        wish: The quantity, component, frame and species asked for.
        datasets: Where to look (a mission's datasets, or datasets the user named).
        mission_id: The mission, for the catalog search bonus.
        probe: The spacecraft letter/number typed, if any.
        time_range: The requested span (coverage and cadence fit).
        wanted_cadence: A cadence asked for (datasets coarser than it rank lower).
        parameter_names: Parameters the user named explicitly; they win when present.
        hints: Words of the request that may name an instrument ("EPAM", "3DP").
        terms: The request's product terms (`language.products.request_terms`): the
            datasets whose metadata covers more of them rank first.
        keep_support: Consider support data for any quantity (datasets the user named).
        asked: The request's words: a model, an uncertainty, a raw copy ... of the
            quantity (`measured`) ranks below the measured value unless they ask for it.
        qualifiers: The request's words that may say which parameter of a product is
            meant ("Bw", "reduced", "burst"; `qualifiers.qualifier_text`).
        limit: Most candidates to return (one per dataset).

    Support data (orbit, ephemeris, attitude) only serves positions: the velocity in an
    orbit file is the spacecraft's, the field in an ephemeris file a model's. A dataset
    of another spacecraft than the one typed ("GOES-16") is never a candidate.
    """
    q = quantity(wish.quantity)
    if q.key == "position" and _DISTANCE.search(wish.text) and wish.component in (None, "r"):
        wish = replace(wish, component="magnitude")  # a distance: the position's magnitude
    bonus = _fts_bonus(catalog, q, mission_id)
    naming = [t for t in terms if t.acronym]
    as_typed = [replace(t, tokens=_typed_tokens(t)) for t in naming]
    qualifier_words = request_words(qualifiers)
    unmet_of: dict[str, str] = {}
    ranked: list[Candidate] = []
    for info in datasets:
        probe_score = probe_fit(info, probe)
        support = not keep_support and q.key != "position" and is_auxiliary(info)
        support = support and not named_by_id(info, terms)  # "ASPOC": the product asked
        if probe_score is None or support:
            continue
        # named: by the request's dataset ids, or the wish is written as the id ("V_GSE")
        typed = (wish.text,) if written_as_id(wish.text) else ()
        typed += written_parameters(asked, info)
        named = [p for p in info.data_parameters if p.name in (*parameter_names, *typed)]
        scored = [(20.0, p) for p in named] or [
            (s, p)
            for p in info.data_parameters
            if (q.key == "position" or not is_support(p, info))
            and (s := _parameter_score(q, wish, p, asked)) is not None
        ]
        # A plot view ("---> Spectrograms by energy ...") is its primary's data: the primary.
        scored = [(sc, p) for sc, p in scored if not is_view(p, [q for _, q in scored])]
        if not scored:
            continue
        scored = _of_named_instrument(scored, hints, info)
        # Protons asked, an electron or heavy-ion parameter is never a stand-in.
        scored = [(sc, p) for sc, p in scored if not _other_species(wish, info, p)]
        if not scored:
            continue
        said_of = of_parameters(qualifier_words, info)
        best_score, best, unmet = _best_parameter(scored, said_of)
        if q.shape == "spectrogram":
            best, listed_first = _first_listed(scored, said_of, best_score, best, info.id)
            unmet = " ".join(n for n in (unmet, listed_first) if n)
        dataset_score, notes, cadence = _dataset_score(info, q, time_range, wanted_cadence)
        extra = (
            probe_score
            + coverage_score(info, terms, cadence)
            - (
                _UNASKED_MARKER * len(unasked_markers(info, terms))
                if q.shape not in _DISTRIBUTIONS
                else 0.0
            )
            + _frame_in_id(info, wish)
            + _title_species_score(info, q, wish)
            + bonus.get(info.id, 0.0)
            + (
                axis_dataset_score(f"{info.id} {info.title}", wish.component, best.name)
                if q.shape == "spectrogram"
                else 0.0
            )
        )
        total = best_score + dataset_score + extra
        if _shape_score(q, wish, best) == _OWN_MAGNITUDE:
            # A dataset's own |B| wins within it (EMFISIS "Magnitude" over "Mag"), never
            # across datasets: an hourly merged |B| is no better than 1-min MAG vectors.
            total -= _OWN_MAGNITUDE - _SAYS_SPEED
        if unmet:
            unmet_of[info.id] = unmet
        why = [f"{best.name} [{best.units or 'no units'}]"]
        if cadence:
            why.append(f"cadence {info.cadence or format_seconds(cadence)}")
        why.extend(notes)
        ranked.append(
            Candidate(
                info.id,
                best.name,
                best.units,
                best.components,
                round(total, 3),
                ", ".join(why),
                cadence,
                said=0 if UNCOVERED in notes else variant_count(info, terms, cadence),
                named=0 if UNCOVERED in notes else variant_count(info, naming, cadence),
                # a parameter written as its id ("V_GSE") is what was asked, quick-look or not
                fit=_asked_fit(q, wish, info, best) + (best.name in typed),
                exact=0 if UNCOVERED in notes else variant_count(info, as_typed, cadence),
                quicklook=level_rank(info) == 2 or UNCOVERED in notes,
                borrowed=UNCOVERED in notes or not _measures(q, info),
            )
        )
    ranked.sort(key=rank_key)
    if probe is not None and any(probe_of_dataset(c.dataset_id) is not None for c in ranked):
        # The spacecraft typed has its own data: a dataset of no spacecraft (THEMIS's
        # ground magnetometers) is no fallback for it.
        ranked = [c for c in ranked if probe_of_dataset(c.dataset_id) is not None]
    if ranked:
        infos = {info.id: info for info in datasets}
        notes = choice_notes(ranked, infos, terms, time_range)
        notes += unhonoured_ids(ranked[0], infos, terms, q.label)
        if ranked[0].parameter not in parameter_names:
            notes += _drawn_note(infos[ranked[0].dataset_id], ranked[0], asked, wish.frame)
            if ranked[0].dataset_id in unmet_of:
                notes += (unmet_of[ranked[0].dataset_id],)
        ranked[0] = replace(ranked[0], notes=notes)
    return ranked[:limit]


_QUALIFIER_WEIGHT = 1.0


def _first_listed(
    scored: list[tuple[float, ParameterInfo]],
    qualifiers: tuple[Qualifier, ...],
    score: float,
    best: ParameterInfo,
    dataset: str,
) -> tuple[ParameterInfo, str]:
    """The spectrum the dataset lists first among those the request fits equally, and a note.

    A receiver's spectra per antenna channel ("HFR Auto Spectra, Ch0: V1V2", "... Ch0: V1")
    differ in no word the request said: only the length of their names told them apart.
    The catalog lists the instrument's main channel first; the answer names the one drawn
    and the others, so the choice is never silent.
    """
    said = qualifier_fit(qualifiers, [p for _, p in scored])  # a channel named: that one

    def plain(sc: float, p: ParameterInfo) -> float:
        # without the shorter-name tie-break
        return sc + _NAME_TIE_BREAK * len(p.name) + _QUALIFIER_WEIGHT * said[p.name]

    level = plain(score, best)
    equal = [
        p
        for sc, p in scored
        if abs(plain(sc, p) - level) < 1e-6 and p.size == best.size and p.units == best.units
    ]
    if len(equal) < 2:
        return best, ""
    first = equal[0]
    others = ", ".join(p.name for p in equal[1:4]) + (" ..." if len(equal) > 4 else "")
    return first, (
        f"{len(equal)} spectra of {dataset} fit the request equally; shown {first.name} "
        f"({first.description.strip() or first.name}), the first the dataset lists "
        f"(others: {others})."
    )


def _best_parameter(
    scored: list[tuple[float, ParameterInfo]], qualifiers: tuple[Qualifier, ...]
) -> tuple[float, ParameterInfo, str]:
    """The parameter of one dataset that serves the quantity and says most of what was typed.

    A request word some candidates say and others do not ("Bw", "reduced", "burst")
    adds `_QUALIFIER_WEIGHT` per word to the score: more than a tie-break (a quality
    copy, a longer name), less than the frame asked; the score (measured before model,
    statistic or direction copies) decides the rest. The third value is what the answer
    must say when a word that tells them apart is not said by the one drawn.
    """
    params = [p for _, p in scored]
    fit = qualifier_fit(qualifiers, params)
    score, best = max(scored, key=lambda sp: sp[0] + _QUALIFIER_WEIGHT * fit[sp[1].name])
    unmet = [
        word.typed for word, saying in discriminating(qualifiers, params) if best.name not in saying
    ]
    if not unmet:
        return score, best, ""
    said = ", ".join(repr(w) for w in unmet)
    return (
        score,
        best,
        (
            f"Could not honour {said}: shown {best.name} "
            f"({best.description.strip() or best.name}), which does not say it."
        ),
    )


_ID_LIKE = re.compile(r"[A-Za-z]\w*(?:_\w|\d|GS[EM]|RTN|GEI|GEO)\w*")


# A word typed as a parameter's own name ("BuBu", "EuEu", "HP_E_AVGE", "np_moment_gd"):
# capitals inside, a digit or an underscore; a plain word ("density") never counts.
_NAME_LIKE = re.compile(r"[A-Za-z]\w*(?:[a-z][A-Z]|[A-Z]{2}|_|\d)\w*")


def written_parameters(asked: str, info: DatasetInfo) -> tuple[str, ...]:
    """Parameters of `info` whose name the request's words spell exactly ("WFR BuBu").

    A parameter named as typed is what was asked, above any reading of the words as a
    quantity or an operation ("BuBu spectral density" is the BuBu parameter). A word of
    the dataset's own id, or one the vocabulary reads as a quantity, never counts: "MAG"
    names the instrument, not a parameter "MAG". Words written as ids ("V_GSE", "B_R")
    are their own wishes or a derived quantity's inputs, read where those are.
    """
    if not asked:
        return ()
    held = {p.name: p.name for p in info.data_parameters}
    skip = set(re.split(r"[_\-]", info.id.upper()))
    return tuple(
        dict.fromkeys(
            held[w]
            for w in re.findall(r"[A-Za-z][\w+]*", asked)
            if w in held
            and len(w) >= 3
            and _NAME_LIKE.fullmatch(w)
            and w.upper() not in skip
            and not _quantity_word(w)
            and not written_as_id(w)
        )
    )


def _quantity_word(word: str) -> bool:
    """Whether the vocabulary reads `word` alone as a quantity ("IMF", "Bmag", "SYMH").

    OMNI's "IMF" parameter is the spacecraft the IMF came from: "IMF clock angle" asks
    for the field.
    """
    return any((m := q.phrases.search(word)) is not None and m[0] == word for q in QUANTITIES)


def written_as_id(text: str) -> bool:
    """Whether `text` is written like a parameter id ("V_GSE", "B1GSE", "BGSM"), not a word."""
    return _ID_LIKE.fullmatch(text) is not None


def _measures(q: Quantity, info: DatasetInfo) -> bool:
    """Whether `info` is of the instrument type that measures `q` (or either is unknown).

    Polar's magnetic field comes from its magnetometer's datasets, not from an ion
    spectrometer's file carrying the field beside its fluxes.
    """
    if q.instrument is None or not info.instrument:
        return True
    return bool(q.instrument.search(info.instrument))


def _drawn_note(
    info: DatasetInfo, top: Candidate, asked: str, frame: str | None
) -> tuple[str, ...]:
    """The answer's word on a model, uncertainty ... drawn for want of the measured value."""
    p = info.parameter(top.parameter)
    note = auxiliary_note(info, p, asked, frame) if p is not None else None
    return (note,) if note is not None else ()


def _typed_tokens(term: Term) -> frozenset[str]:
    """The tokens of `term` spelled as typed ("EPACT/STEP" -> STEP), no synonym."""
    parts = {term.typed.upper(), *(p.upper() for p in term.typed.split("-") if len(p) >= 3)}
    return frozenset(parts & term.tokens)


def is_ephemeris(info: DatasetInfo) -> bool:
    """Whether the catalog says `info` holds the spacecraft's ephemeris, orbit or position.

    Support data by its id or title (`is_auxiliary`), or an id or title naming an orbit,
    ephemeris or position product ("..._L2-EPHEM", "Magnetic ephemeris", "HELIO1DAY").
    """
    return (
        is_auxiliary(info)
        or bool(_EPHEMERIS_ID.search(info.id.upper()))
        or bool(_EPHEMERIS_TITLE.search(title_head(info.title)))
    )


def _asked_fit(q: Quantity, wish: QuantityWish, info: DatasetInfo, p: ParameterInfo) -> float:
    """How far `p` of `info` is what was asked, where that has levels (`Candidate.fit`).

    A position comes from an ephemeris dataset, never from a science file that happens
    to carry the spacecraft's position (a radio receiver's "position_RTN").
    """
    if q.shape == "spectrogram":
        return asked_fit(wish, p) or 0.0
    if q.key == "position":
        return 1.0 if is_ephemeris(info) else 0.0
    return 0.0
