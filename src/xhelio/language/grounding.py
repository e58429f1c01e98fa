"""Open-vocabulary quantities: a request's own words matched against catalog metadata.

The quantity table (`quantities.py`) knows a dozen quantities. Everything else a
physicist names ("spacecraft potential", "mean Fe charge state", "47-68 keV ions",
"delta-B") is found here from what the catalog says about each parameter: its name
tokens, description, labels and units, and its dataset's id and title. The request is
read into `Concept`s: words (with the synonyms of `vocabulary/quantities.toml`,
`[[synonym]]`), species (the vocabulary's species, e.g. Fe, O+, helium) and an energy
range in keV. A species or energy channel named is a constraint, never a preference: a
parameter of another species or of a channel outside the range is not a candidate.
A word no parameter covers is said in the answer ("Differs from the request: ...").
Datasets are weighed as the quantity resolver weighs them (level, coverage of the
requested time, cadence, spacecraft typed, product words). Imports `catalog`,
`timerange`, `vocabulary` and this package.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Literal

from xhelio.catalog.index import is_auxiliary
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.frames import frames_named, parameter_frames
from xhelio.language.measured import auxiliary_note, auxiliary_penalty
from xhelio.language.named_parts import named_parts
from xhelio.language.operations import derived_spans
from xhelio.language.products import (
    Term,
    coverage_score,
    is_support,
    is_view,
    named_by_id,
    product_terms,
    refused_words,
    says,
    uncovered,
    variant_count,
    view_primary,
)
from xhelio.language.resolve import (
    Candidate,
    dataset_fit,
    level_rank,
    probe_fit,
    rank_key,
    scorable,
    variant_notes,
)
from xhelio.language.slots import SlotReading, filler_words
from xhelio.timerange import TimeRange
from xhelio.vocabulary import load_vocabulary, read_table

__all__ = [
    "Concept",
    "OpenRequest",
    "clause_words",
    "energy_range",
    "honour_variants",
    "open_request",
    "order_parameters",
    "rank_open",
    "variants_unsaid",
    "what_phrase",
]

ConceptKind = Literal["word", "species", "energy"]


@dataclass(frozen=True)
class Concept:
    """One thing the request names: as typed, and the metadata words that mean it."""

    typed: str
    kind: ConceptKind
    tokens: frozenset[str] = frozenset()
    units: re.Pattern[str] | None = None
    """Units that say it too (a flux: per cm^2)."""
    variant: bool = False
    """A word that tells sibling parameters apart ("thermal", "omni"): the pick must say it."""


@dataclass(frozen=True)
class OpenRequest:
    """The concepts of a request, and the energy range (keV) it names if any."""

    concepts: tuple[Concept, ...]
    energy_kev: tuple[float, float] | None = None
    frames: tuple[str, ...] = ()
    """The coordinate frames named ("fgl gsm"): a parameter in one of them is the pick."""

    @property
    def strict(self) -> bool:
        """Whether it names a species or an energy channel (which must be matched)."""
        kinds = {c.kind for c in self.concepts}
        return bool(kinds - {"word"}) and kinds != {"species"}

    def phrase(self) -> str:
        """The concepts as typed."""
        return " ".join(dict.fromkeys(c.typed for c in self.concepts))


_KEV = {"ev": 1e-3, "kev": 1.0, "mev": 1e3, "gev": 1e6}
_NUMBER = r"\d+(?:\.\d+)?"
_RANGE = re.compile(
    rf"(?<![\w.])({_NUMBER})\s*(ev|kev|mev|gev)?\s*(?:-|\u2013|to)\s*({_NUMBER})\s*(ev|kev|mev|gev)\b",
    re.I,
)
_ABOVE = re.compile(
    rf"(?:>|\babove\s+|\bover\s+|\bgreater than\s+)\s*({_NUMBER})\s*(ev|kev|mev|gev)\b", re.I
)
_SINGLE = re.compile(rf"(?<![\w.\-])({_NUMBER})\s*(ev|kev|mev|gev)\b", re.I)


def energy_range(text: str) -> tuple[float, float] | None:
    """The energy range `text` names, in keV ("47-68 keV", "0.047-0.065 MeV", "> 2 MeV")."""
    match = _RANGE.search(text)
    if match:
        unit = _KEV[match[4].lower()]
        low_unit = _KEV[match[2].lower()] if match[2] else unit
        return (round(float(match[1]) * low_unit, 6), round(float(match[3]) * unit, 6))
    match = _ABOVE.search(text)
    if match:
        return (round(float(match[1]) * _KEV[match[2].lower()], 6), math.inf)
    match = _SINGLE.search(text)
    if match:
        value = round(float(match[1]) * _KEV[match[2].lower()], 6)
        return (value, value)
    return None


@dataclass(frozen=True)
class _Synonym:
    words: re.Pattern[str]
    tokens: frozenset[str]
    units: re.Pattern[str] | None
    variant: bool


@cache
def _synonyms() -> tuple[_Synonym, ...]:
    rows = read_table("quantities.toml").get("synonym", [])
    return tuple(
        _Synonym(
            re.compile(str(row["words"]), re.I),
            frozenset(str(t).lower() for t in row["tokens"]),
            re.compile(str(row["units"]), re.I) if "units" in row else None,
            bool(row.get("variant", False)),
        )
        for row in rows
    )


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+]*(?:-[A-Za-z0-9+]+)*")
_CHARGE_STATE = re.compile(r"(?<![\w+])([A-Z][a-z]?)(\d{1,2})\+")
_ACRONYM = re.compile(r"[A-Z0-9][A-Z0-9\-]+")


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def open_request(words: str, energy_text: str | None = None) -> OpenRequest:
    """Read the content words of a request (missions and times already left out).

    Synonym phrases are claimed first (longest first), then species, then the energy
    range (read from `energy_text`, default `words`), then each remaining word that is
    not filler nor an instrument acronym ("EPAM", "LEP": they pick datasets, not
    parameters) is a concept of its own.
    """
    concepts: list[Concept] = []
    # Parameter-level words first ("omni", "pitch angle" are product words too), then
    # look directions, kinds, cadences (dataset words), then the other synonyms.
    rest = _claim_synonyms(words, concepts, variant=True)
    for part in named_parts(rest):  # "0 deg telescope": the parameter must say that part
        concepts.append(Concept(part.typed, "word", part.spellings, None, True))
        rest = _mask(rest, *part.span)
    for term in product_terms(rest):
        for m in re.finditer(re.escape(term.typed), rest):
            rest = _mask(rest, *m.span())
    for word in refused_words(energy_text or words):  # "not low latency": nothing to say
        for m in re.finditer(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", rest, re.I):
            rest = _mask(rest, *m.span())
    rest = _claim_synonyms(rest, concepts, variant=False)
    for m in _CHARGE_STATE.finditer(rest):  # "O7+", "Fe10+": that charge state itself
        element, charge = m[1].lower(), m[2]
        tokens = frozenset({f"{element}+{charge}", f"{element}{charge}+"})
        concepts.append(Concept(m[0], "word", tokens))
    # Species are read in the words as typed (a bare "O" is oxygen before "intensities",
    # which a synonym has claimed by now), where no other concept took them.
    named = [
        (s.key, m.span())
        for s in load_vocabulary().species
        for m in s.words.finditer(words)
        if rest[m.start() : m.end()] == m[0]
    ]
    for key, (start, _) in dict(reversed(sorted(named, key=lambda ks: ks[1]))).items():
        typed = next(_WORD.finditer(words[start:]), None)
        concepts.append(Concept(typed[0] if typed else key, "species", frozenset({key})))
    for _, span in named:
        rest = _mask(rest, *span)
    energy = energy_range(energy_text if energy_text is not None else words)
    if energy is not None:
        concepts.append(Concept(_energy_typed(energy), "energy"))
    for m in _RANGE.finditer(rest):
        rest = _mask(rest, *m.span())
    filler = filler_words()
    for m in _WORD.finditer(rest):
        word = m[0]
        if word.lower() in filler or len(word) < 2 or _ACRONYM.fullmatch(word):
            continue
        if word.lower() in _KEV:
            continue
        concepts.append(Concept(word, "word", frozenset({word.lower(), _singular(word.lower())})))
    frames = frames_named(energy_text if energy_text is not None else words)
    return OpenRequest(tuple(dict.fromkeys(concepts)), energy, frames)


def _claim_synonyms(rest: str, concepts: list[Concept], *, variant: bool) -> str:
    """Add the synonym phrases of `rest` (longest first) to `concepts`; mask them out."""
    found = [(m, s) for s in _synonyms() if s.variant == variant for m in s.words.finditer(rest)]
    for match, syn in sorted(found, key=lambda ms: -len(ms[0][0])):
        if rest[match.start() : match.end()].strip() != match[0].strip():
            continue
        # One word is also its own token; a phrase means only what its tokens say.
        typed = match[0].strip().lower()
        own = {typed, _singular(typed)} if _WORD.fullmatch(typed) else set[str]()
        concepts.append(Concept(match[0], "word", syn.tokens | own, syn.units, syn.variant))
        rest = _mask(rest, *match.span())
    return rest


def _energy_typed(energy: tuple[float, float]) -> str:
    low, high = energy
    if math.isinf(high):
        return f"above {low:g} keV"
    return f"{low:g} keV" if low == high else f"{low:g}-{high:g} keV"


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and word[:-2].endswith(("x", "s", "sh", "ch")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


# ----------------------------------------------------------------- parameter metadata


def _name_tokens(name: str) -> set[str]:
    """Tokens of a parameter name: split at _ - . and case changes ("avqFe" -> avq, fe)."""
    base = name.split("__")[0]
    parts = re.split(r"[_\-.\s+/]+", base)
    tokens: set[str] = set()
    for part in parts:
        tokens.add(part.lower())
        tokens.update(t.lower() for t in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", part))
    return {t for t in tokens if t}


def _text_words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", text)}


@dataclass(frozen=True)
class _Said:
    """What one parameter (or its dataset) says, ready for matching."""

    names: frozenset[str]
    words: frozenset[str]
    text: str
    units: str = ""


def _said(name: str, text: str, units: str = "") -> _Said:
    words = _text_words(text)
    # Phrases are read in the text as written ("thermal speed"), names spelled out.
    spelled = f"{text.lower()} {text.lower().replace('_', ' ')}"
    return _Said(frozenset(_name_tokens(name)), frozenset(words), spelled, units)


def _covers(concept: Concept, said: _Said) -> bool:
    if concept.units is not None and said.units and concept.units.search(said.units):
        return True
    return any(_says(token, said) for token in concept.tokens)


def _says(token: str, said: _Said) -> bool:
    """A phrase in the text, a short token as a name token, a word (or its start)."""
    if " " in token or "-" in token or "+" in token:
        return any(
            re.search(rf"(?<![a-z0-9]){re.escape(t)}(?![a-z0-9])", said.text)
            for t in {token, token.replace("-", " ")}
        )
    if len(token) <= 2:
        return token in said.names
    if token in said.names or token in said.words:
        return True
    return len(token) >= 5 and any(w.startswith(token) for w in said.words)


def _species_hits(text: str) -> set[str]:
    return {s.key for s in load_vocabulary().species if s.cues.search(text)} - {"ion"}


def _species_fit(key: str, param_text: str, title: str) -> float | None:
    """+3 the parameter names the species, +1 only its dataset; None another species."""
    own = _species_hits(param_text)
    cue = load_vocabulary().species_cue(key)
    named = cue is not None and bool(cue.search(param_text))
    if key == "ion":
        return None if own & {"electron"} else (3.0 if named or own & {"proton"} else 0.5)
    if key == "proton" and not own and cue is not None and not named:
        ion = load_vocabulary().species_cue("ion")
        if ion is not None and ion.search(param_text):
            return 2.0  # ion channels are mostly protons
    if named or key in own:
        return 3.0
    if own:
        return None
    return 1.0 if key in _species_hits(title) else None


_ENERGY_IN_TEXT = re.compile(
    rf"({_NUMBER})\s*(ev|kev|mev|gev)?\s*-\s*({_NUMBER})\s*(ev|kev|mev|gev)"
    rf"|(?:>|above)\s*({_NUMBER})\s*(ev|kev|mev|gev)",
    re.I,
)


def _channel(p: ParameterInfo) -> tuple[float, float] | None:
    """The energy span (keV) a parameter's description, labels or bins state."""
    text = " ".join([p.description, *(p.labels or ())])
    spans: list[tuple[float, float]] = []
    for m in _ENERGY_IN_TEXT.finditer(text):
        if m[5]:
            spans.append((float(m[5]) * _KEV[m[6].lower()], math.inf))
            continue
        unit = _KEV[m[4].lower()]
        low = float(m[1]) * (_KEV[m[2].lower()] if m[2] else unit)
        spans.append((low, float(m[3]) * unit))
    units = (p.bins_units or "").lower().split("/")[0].strip()
    if not spans and p.bins and units in _KEV:
        scale = _KEV[units]
        spans.append((min(p.bins) * scale, max(p.bins) * scale))
    if not spans:
        return None
    return (min(s[0] for s in spans), max(s[1] for s in spans))


def _energy_fit(wanted: tuple[float, float], have: tuple[float, float] | None) -> float | None:
    """+1..4 for a channel overlapping the range asked; None for one outside it."""
    if have is None:
        return 0.0
    low, high = max(wanted[0], have[0]), min(wanted[1], have[1])
    if wanted[0] == wanted[1]:  # one energy: a channel holding it
        return 3.0 if have[0] <= wanted[0] <= have[1] else None
    if low > high:
        return None
    if math.isinf(wanted[1]) or math.isinf(have[1]):
        # Integral channels (">2 MeV"): the nearer threshold fits better.
        near = min(wanted[0], have[0]) / max(wanted[0], have[0], 1e-9)
        return 1.0 + 3.0 * near
    span = max(wanted[1], have[1]) - min(wanted[0], have[0])
    return 1.0 + 3.0 * (high - low) / max(span, 1e-9)


# ----------------------------------------------------------------- scoring


@dataclass(frozen=True)
class _Fit:
    score: float
    missing: tuple[Concept, ...]
    own: int


# A table of other data by its name ("energy_p", "ENERGY_CENTER_T1", "pitch_angle_e").
_AXIS_TABLE = re.compile(
    r"^(?:energ(?:y|ies)|angles?|theta|phi|pitch_?angles?|freq\w*)(?:_|$)", re.I
)
_DATA_WORDS = re.compile(r"flux|intens|rate|count|psd|density|spectr", re.I)


def _is_data(p: ParameterInfo, info: DatasetInfo) -> bool:
    """Measured values: not a support variable, an axis table, or a time-axis label."""
    if not scorable(p) or is_support(p, info) or p.description.lower().startswith("time axis"):
        return False
    return not (_AXIS_TABLE.match(p.name) and not _DATA_WORDS.search(p.name))


def _extra_words(description: str, request: OpenRequest) -> int:
    """Words of a description the request does not say ("Probe to spacecraft potential")."""
    asked = {t for c in request.concepts for t in c.tokens} | {
        w.lower() for c in request.concepts for w in _WORD.findall(c.typed)
    }
    words = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", description)}
    return len(words - asked - filler_words())


def _parameter_fit(
    request: OpenRequest, info: DatasetInfo, p: ParameterInfo, owner: _Said
) -> _Fit | None:
    if not _is_data(p, info):
        return None
    text = f"{p.name} {p.description} {' '.join(p.labels or ())} {p.units}"
    said = _said(p.name, text, p.units)
    score, own = 0.0, 0
    missing: list[Concept] = []
    for concept in request.concepts:
        if concept.kind == "species":
            fit = _species_fit(next(iter(concept.tokens)), f"{p.name} {p.description}", info.title)
            if fit is None:
                return None
            score += fit
            own += fit >= 2.0
        elif concept.kind == "energy" and request.energy_kev is not None:
            fit = _energy_fit(request.energy_kev, _channel(p))
            if fit is None:
                return None
            score += fit
            own += fit > 0
            if fit == 0:
                missing.append(concept)
        elif _covers(concept, said):
            score, own = score + 3.0, own + 1
        elif _covers(concept, owner):
            score += 1.0
        else:
            missing.append(concept)
    worded = [c for c in request.concepts if c.kind == "word"]
    unsaid = sum(c in missing for c in worded)
    if own == 0 or (worded and (2 * unsaid > len(worded) or unsaid == len(worded))):
        # A species alone is no quantity, and a parameter that says fewer of the words
        # asked than it leaves out ("cosmic ray anisotropy" -> an electron anisotropy)
        # is another quantity.
        return None
    dims = len(p.size or ())
    score -= 1.0 if dims == 2 else 3.0 if dims > 2 else 0.0
    score -= auxiliary_penalty(p, request.phrase())  # a model, a flag ...: the measured first
    score -= 0.15 * min(_extra_words(p.description, request), 10)
    return _Fit(score - 0.002 * len(p.name), tuple(missing), own)


def continued(params: Sequence[ParameterInfo]) -> list[ParameterInfo]:
    """`params` with CDAWeb's continued descriptions written out.

    A description starting "--->" continues the one before it: "---> B/E Detector" after
    "A/W Detector: Electron integral flux E1 >0.8 MeV" is "B/E Detector: Electron integral
    flux E1 >0.8 MeV" (the words before the colon are replaced). Without a colon, each
    comma-separated part of the continuation replaces the part of the one before it that
    is most like it: "---> 30 degree telescope" after "Proton integral energy flux, TED, 0
    degree telescope, low energy (50-1000 eV)" is that flux of the 30 degree telescope;
    a part like none is added ("---> % error"). One whole already ("---> HOPE O+ partial
    density" after "HOPE H+ partial density") stays as written.
    """
    out: list[ParameterInfo] = []
    for p in params:
        text = p.description.strip()
        before = out[-1].description if out else ""
        head, colon, tail = before.partition(":")
        rest = text.removeprefix("--->").strip().rstrip(":").strip()
        if text.startswith("--->") and colon and rest and head.strip() != rest:
            p = replace(p, description=f"{rest}:{tail}")
        elif text.startswith("--->") and rest and not colon and "," in before:
            p = replace(p, description=_carried_on(before, rest))
        out.append(p)
    return out


_PART_WORD = re.compile(r"[a-z]{3,}")


def _carried_on(before: str, rest: str) -> str:
    """`before` with each part of `rest` in place of the part most like it (see `continued`)."""
    parts = [s.strip() for s in before.split(",")]
    for new in (s.strip() for s in rest.split(",") if s.strip()):
        words = set(_PART_WORD.findall(new.lower()))
        digits = bool(re.search(r"\d", new))

        def like(part: str, words: set[str] = words, digits: bool = digits) -> int:
            shared = len(words & set(_PART_WORD.findall(part.lower())))
            return shared + (shared > 0 and digits and bool(re.search(r"\d", part)))

        scores = [like(part) for part in parts]
        best = max(scores, default=0)
        if best > 0 and scores.count(best) == 1:
            parts[scores.index(best)] = new
        else:
            parts.append(new)
    return ", ".join(parts)


def _says_terms(p: ParameterInfo, terms: Sequence[Term]) -> int:
    """How many of the request's words about the data `p`'s name or description says."""
    return sum(says(t, f"{p.name} {p.description}") for t in terms if t.about_data)


def rank_open(
    request: OpenRequest,
    datasets: Sequence[DatasetInfo],
    *,
    probe: str | None = None,
    time_range: TimeRange | None = None,
    wanted_cadence: float | None = None,
    terms: Sequence[Term] = (),
    complete: bool = False,
    units: str | None = None,
    limit: int = 5,
) -> list[Candidate]:
    """(dataset, parameter) pairs whose metadata covers the request, best first.

    One candidate per dataset. The first carries the notes the answer must give: the
    words of the request no parameter of its dataset covers. Empty when no parameter
    holds the species or energy channel named, or covers any of the request's words.
    `complete` keeps only parameters whose own metadata covers every concept; `units`,
    when given, are the quantity's own: a parameter in them goes first in its dataset
    (New Horizons' "pdyn" in nPa before its "thermal dynamic pressure" in pPa).
    """
    if all(c.kind == "species" for c in request.concepts):
        return []  # a species alone names no quantity ("SolO SWA electrons")
    ranked: list[tuple[Candidate, tuple[Concept, ...]]] = []
    for info in datasets:
        probe_score = probe_fit(info, probe)
        if probe_score is None or (is_auxiliary(info) and not named_by_id(info, terms)):
            continue
        owner = _said(info.id, f"{info.id.replace('_', ' ')} {info.title}")
        fits = [
            (f, p)
            for p in continued(info.data_parameters)
            if (f := _parameter_fit(request, info, p, owner))
        ]
        if complete:
            fits = [(f, p) for f, p in fits if f.own == len(request.concepts)]
        if units is not None:
            fits = [f for f in fits if _in_units(f[1], units)] or fits
        # A frame named ("THEMIS fgl gsm") picks the vector in that frame, never the
        # magnitude or another frame's copy, when the dataset holds one.
        fits = [f for f in fits if set(request.frames) & parameter_frames(f[1])] or fits
        if not fits:
            continue
        # A look direction or kind said by a parameter's own description ("B/E Detector"
        # for "east-facing") picks it among the dataset's parameters fitting as well.
        fit, best = max(fits, key=lambda fp: (fp[0].score, _says_terms(fp[1], terms)))
        level, notes, cadence = dataset_fit(info, time_range, wanted_cadence)
        total = 2.0 * fit.score + level + probe_score + coverage_score(info, terms, cadence)
        reason = ", ".join([f"{best.name} [{best.units or 'no units'}]", *notes])
        said = 0 if notes else variant_count(info, terms, cadence)  # notes: no data then
        candidate = Candidate(
            info.id,
            best.name,
            best.units,
            best.components,
            round(total, 3),
            reason,
            cadence,
            said=said,
            quicklook=bool(notes) or level_rank(info) == 2,  # science data first
        )
        ranked.append((candidate, fit.missing))
    ranked.sort(key=lambda cm: rank_key(cm[0]))
    if not ranked:
        return []
    top, missing = ranked[0]
    out = [c for c, _ in ranked[:limit]]
    infos = {d.id: d for d in datasets}
    said, _ = variant_notes([c for c, _ in ranked], infos, tuple(terms), time_range)
    drawn = infos[top.dataset_id].parameter(top.parameter)
    aux = auxiliary_note(infos[top.dataset_id], drawn, request.phrase()) if drawn else None
    notes = [*said, *([_differs(top, missing, datasets)] if missing else [])]
    notes += [aux] if aux is not None else []
    if notes:
        out[0] = replace(top, notes=tuple(notes))
    return out


def _in_units(p: ParameterInfo, units: str) -> bool:
    return p.units.strip().lower() == units.strip().lower()


def _differs(top: Candidate, missing: Sequence[Concept], datasets: Sequence[DatasetInfo]) -> str:
    info = next(d for d in datasets if d.id == top.dataset_id)
    p = info.parameter(top.parameter)
    what = (p.description.strip() if p else "") or top.parameter
    words = ", ".join(f"'{c.typed}'" for c in missing)
    return (
        f"Differs from the request: no parameter of {top.dataset_id} says {words}; "
        f"shown: {top.parameter} ({what})."
    )


# ----------------------------------------------------------------- parameter-level words


def honour_variants(
    cands: Sequence[Candidate],
    datasets: Sequence[DatasetInfo],
    request: OpenRequest,
    terms: Sequence[Term] = (),
) -> list[Candidate]:
    """The candidates, each parameter swapped for a sibling saying the request's variants.

    Parameter-level words ("thermal speed", "energy flux", "omni") pick a parameter when
    its dataset has one that says them: a constraint, not a preference (the bulk speed
    never stands in for the thermal speed its own dataset holds). A later candidate whose
    parameter says every such word goes first when its dataset holds the product words
    as well as the first's.
    When none does, the first carries the note that says which words it lacks.
    """
    wanted = [c for c in request.concepts if c.variant]
    if not wanted or not cands:
        return list(cands)
    # The constraint is the parameter-level words with the species and channel named.
    narrow = replace(
        request, concepts=tuple(c for c in request.concepts if c.variant or c.kind != "word")
    )
    infos = {d.id: d for d in datasets}
    out = list(cands)
    lacking: list[list[Concept]] = []
    for i, cand in enumerate(out):
        info = infos.get(cand.dataset_id)
        if info is None:
            lacking.append(wanted)
            continue
        out[i], missing = _saying_sibling(info, cand, narrow, wanted)
        lacking.append(missing)
    first = next((i for i, m in enumerate(lacking) if not m), None)
    if first == 0:
        return out
    if first is not None and _as_covered(out[first], out[0], infos, terms):
        return [out[first], *out[:first], *out[first + 1 :]]
    out[0] = replace(out[0], notes=(*out[0].notes, _differs(out[0], lacking[0], datasets)))
    return out


def _as_covered(
    later: Candidate, top: Candidate, infos: dict[str, DatasetInfo], terms: Sequence[Term]
) -> bool:
    """Whether `later`'s dataset holds every product word `top`'s holds."""
    top_lacks = uncovered(infos[top.dataset_id], terms, top.cadence_s)
    return len(uncovered(infos[later.dataset_id], terms, later.cadence_s)) <= len(top_lacks)


def _saying_sibling(
    info: DatasetInfo, cand: Candidate, request: OpenRequest, wanted: Sequence[Concept]
) -> tuple[Candidate, list[Concept]]:
    """`cand`, or its dataset's parameter that says more of `wanted`; the words unsaid."""
    current = info.parameter(cand.parameter)
    if current is None:
        return cand, list(wanted)
    # A word the dataset itself says and no parameter of it says is the whole product's
    # ("Electron omnidirectional fluxes": its FLUX is omni).
    unsaid = _unsaid(info, current, wanted)
    if not unsaid:
        return cand, []
    have = [c for c in wanted if c not in unsaid]
    owner = _said(info.id, f"{info.id.replace('_', ' ')} {info.title}")
    others = [c for c in _variant_concepts() if not any(c.tokens & w.tokens for w in wanted)]
    best: tuple[tuple[int, int, float], ParameterInfo, list[Concept]] | None = None
    # A plot view is its primary's data, never a sibling of its own.
    views = {p.name for p in info.data_parameters if is_view(p, info.data_parameters)}
    for p in continued(info.data_parameters):
        if p.name in views:
            continue
        fit = _parameter_fit(request, info, p, owner) if _same_kind(p, current) else None
        got = _variants_said(p, wanted) if fit is not None else []
        if fit is None or len(got) <= len(have):
            continue
        # A sibling that also says words not asked ("perpendicular") ranks below.
        key = (len(got), -len(_variants_said(p, others)), fit.score)
        if best is None or key > best[0]:
            best = (key, p, got)
    if best is None:
        return cand, [c for c in wanted if c not in have]
    _, p, got = best
    reason = f"{p.name} [{p.units or 'no units'}], says {', '.join(c.typed for c in got)}"
    swapped = replace(cand, parameter=p.name, units=p.units, components=p.components, reason=reason)
    return swapped, [c for c in wanted if c not in got]


_AREA = re.compile(r"cm|m\s*(?:\^|\*\*)?\s*\{?-?\s*2|m2", re.I)
_SPEED = re.compile(r"km\s*/\s*s|km\s*s\s*\^?-1", re.I)


def _same_kind(p: ParameterInfo, other: ParameterInfo) -> bool:
    """Whether two parameters' units are of one kind (a sibling of another kind is none).

    Both per area (number and energy fluxes differ in units), both speeds, or the same
    units otherwise.
    """
    kinds = [(bool(_AREA.search(q.units)), bool(_SPEED.search(q.units))) for q in (p, other)]
    if kinds[0] != kinds[1]:
        return False
    if any(kinds[0]):
        return True
    return p.units.strip().lower() == other.units.strip().lower()


def _variants_said(p: ParameterInfo, concepts: Sequence[Concept]) -> list[Concept]:
    said = _said(p.name, f"{p.name} {p.description} {' '.join(p.labels or ())}", p.units)
    return [c for c in concepts if _covers(c, said)]


@cache
def _variant_concepts() -> tuple[Concept, ...]:
    """Every parameter-level word of the vocabulary, as a concept."""
    return tuple(Concept(s.words.pattern, "word", s.tokens, s.units, True) for s in _variants())


# Where a request's clause ends: a list of quantities is split at these.
_CLAUSE = re.compile(r",|;|\band\b|\bvs\.?|\bversus\b|\bplus\b|\bagainst\b|\bwith\b", re.I)
# Slots that say where, when and from what, not which parameter.
_NOT_WHAT = frozenset({"mission", "dataset", "instrument", "time", "frame", "cadence", "place"})


def clause_words(reading: SlotReading, position: int) -> str:
    """The words of the request's clause holding `position`: which parameter is meant.

    The clauses after it that name no quantity of their own say more of it ("MEPED
    proton flux, 90 degree telescope"). Missions, instruments, frames and times are left
    out (they say where and when).
    """
    bounds = list(_CLAUSE.finditer(reading.text))
    start = max((m.end() for m in bounds if m.end() <= position), default=0)
    end = min((m.start() for m in bounds if m.start() > position), default=len(reading.text))
    quantities = [s.start for s in reading.slots if s.kind == "quantity"]
    for m in bounds:
        if m.start() != end:
            continue
        after = min((b.start() for b in bounds if b.start() > m.end()), default=len(reading.text))
        if any(m.end() <= q < after for q in quantities):
            break
        end = after
    return _what_words(reading)[start:end]


def _what_words(reading: SlotReading) -> str:
    """The request's text with its missions, instruments, frames and times blanked out."""
    text = reading.text
    for s in reading.slots:
        # "FAST TEAMS omni flux": "omni" meaning omnidirectional is no mission slot
        # (`spacecraft_words.omni_looks`), so it stays here as a parameter-level word.
        if s.kind in _NOT_WHAT:
            text = _mask(text, s.start, s.end)
    for start, end in derived_spans(text):  # "Vth/VA", "Tperp/Tpar": computed, not drawn
        text = _mask(text, start, end)
    return text


def _variants() -> tuple[_Synonym, ...]:
    return tuple(s for s in _synonyms() if s.variant)


def variants_unsaid(
    reading: SlotReading, drawn: Sequence[tuple[DatasetInfo, ParameterInfo]]
) -> list[str]:
    """Sentences naming each parameter-level word of the request no drawn parameter says.

    The request-vs-data check's view of `honour_variants`: whichever mode chose them, the
    parameters drawn must say "thermal speed", "omni", "energy flux" when it was asked.
    """
    what = _what_words(reading)
    wanted = [c for c in open_request(what, what).concepts if c.variant]
    notes: list[str] = []
    for concept in wanted:
        if not drawn or any(not _unsaid(info, p, [concept]) for info, p in drawn):
            continue
        info, p = drawn[0]
        said = [
            q.name
            for q in info.data_parameters
            if _is_data(q, info) and not _unsaid(info, q, [concept])
        ]
        shown = f"shown: {p.name} ({p.description.strip() or p.name})."
        if said:
            notes.append(
                f"'{concept.typed}' is {', '.join(said[:3])} in {info.id}, "
                f"which was not drawn; {shown}"
            )
        else:
            notes.append(f"no parameter of {info.id} says '{concept.typed}'; {shown}")
    return notes


def _unsaid(info: DatasetInfo, p: ParameterInfo, wanted: Sequence[Concept]) -> list[Concept]:
    """The words of `wanted` neither `p` nor (for the whole product) its dataset says."""
    owner = _said(info.id, f"{info.id.replace('_', ' ')} {info.title}")
    params = info.data_parameters
    views = [q for q in params if is_view(q, params)]
    by_parameter = {c for q in params if q not in views for c in _variants_said(q, wanted)}
    # What a plot view of `p` says ("---> Spectrograms by pitch angle") `p`'s data holds.
    have = _variants_said(p, wanted) + [
        c for q in views if view_primary(q, params) is p for c in _variants_said(q, wanted)
    ]
    return [c for c in wanted if c not in have and (c in by_parameter or not _covers(c, owner))]


def order_parameters(info: DatasetInfo, words: str) -> list[ParameterInfo]:
    """A dataset's parameters, those whose metadata best covers `words` first.

    What the LLM agents' `list_parameters` shows when asked about a quantity: the same
    scoring as the offline path; support data and parameters that say none of the
    words keep their file order after the rest.
    """
    request = open_request(words)
    owner = _said(info.id, f"{info.id.replace('_', ' ')} {info.title}")
    params = list(info.data_parameters)
    scores = {
        p.name: fit.score
        for p in params
        if request.concepts and (fit := _parameter_fit(request, info, p, owner)) is not None
    }
    return sorted(params, key=lambda p: (p.name not in scores, -scores.get(p.name, 0.0)))


# Slots whose words say what to fetch (the rest say where, when, how to show it).
_WHAT_KINDS = frozenset({"quantity", "species", "component", "product"})


def what_phrase(reading: SlotReading) -> str:
    """The words of a request that say what to fetch: quantity, species, left-over."""
    spans = [(s.start, s.end) for s in reading.slots if s.kind in _WHAT_KINDS]
    spans += [(w.start, w.end) for w in reading.leftover]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return " ".join(reading.text[a:b] for a, b in merged)
