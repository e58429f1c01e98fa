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
from xhelio.language.products import (
    Term,
    coverage_score,
    is_support,
    product_terms,
    variant_count,
)
from xhelio.language.resolve import (
    Candidate,
    dataset_fit,
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
    "energy_range",
    "open_request",
    "order_parameters",
    "rank_open",
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


@dataclass(frozen=True)
class OpenRequest:
    """The concepts of a request, and the energy range (keV) it names if any."""

    concepts: tuple[Concept, ...]
    energy_kev: tuple[float, float] | None = None

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


@cache
def _synonyms() -> tuple[tuple[re.Pattern[str], frozenset[str], re.Pattern[str] | None], ...]:
    rows = read_table("quantities.toml").get("synonym", [])
    return tuple(
        (
            re.compile(str(row["words"]), re.I),
            frozenset(str(t).lower() for t in row["tokens"]),
            re.compile(str(row["units"]), re.I) if "units" in row else None,
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
    rest = words
    for term in product_terms(words):  # look directions, kinds, cadences: dataset words
        for m in re.finditer(re.escape(term.typed), rest):
            rest = _mask(rest, *m.span())
    found = [(m, tokens, units) for rx, tokens, units in _synonyms() for m in rx.finditer(rest)]
    for match, tokens, units in sorted(found, key=lambda mt: -len(mt[0][0])):
        if rest[match.start() : match.end()].strip() != match[0].strip():
            continue
        # One word is also its own token; a phrase means only what its tokens say.
        typed = match[0].strip().lower()
        own = {typed, _singular(typed)} if _WORD.fullmatch(typed) else set[str]()
        concepts.append(Concept(match[0], "word", tokens | own, units))
        rest = _mask(rest, *match.span())
    for m in _CHARGE_STATE.finditer(rest):  # "O7+", "Fe10+": that charge state itself
        element, charge = m[1].lower(), m[2]
        tokens = frozenset({f"{element}+{charge}", f"{element}{charge}+"})
        concepts.append(Concept(m[0], "word", tokens))
    for key, position in dict(reversed(load_vocabulary().species_named(rest))).items():
        typed = next(_WORD.finditer(rest[position:]), None)
        concepts.append(Concept(typed[0] if typed else key, "species", frozenset({key})))
    for s in load_vocabulary().species:
        for m in s.words.finditer(rest):
            rest = _mask(rest, *m.span())
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
    return OpenRequest(tuple(dict.fromkeys(concepts)), energy)


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
    joined = " ".join(sorted(words)) + " " + text.lower()
    return _Said(frozenset(_name_tokens(name)), frozenset(words), joined, units)


def _covers(concept: Concept, said: _Said) -> bool:
    if concept.units is not None and said.units and concept.units.search(said.units):
        return True
    return any(_says(token, said) for token in concept.tokens)


def _says(token: str, said: _Said) -> bool:
    """A phrase in the text, a short token as a name token, a word (or its start)."""
    if " " in token or "-" in token or "+" in token:
        return token in said.text or token.replace("-", " ") in said.text
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
    score -= 0.15 * min(_extra_words(p.description, request), 10)
    return _Fit(score - 0.002 * len(p.name), tuple(missing), own)


def rank_open(
    request: OpenRequest,
    datasets: Sequence[DatasetInfo],
    *,
    probe: str | None = None,
    time_range: TimeRange | None = None,
    wanted_cadence: float | None = None,
    terms: Sequence[Term] = (),
    complete: bool = False,
    limit: int = 5,
) -> list[Candidate]:
    """(dataset, parameter) pairs whose metadata covers the request, best first.

    One candidate per dataset. The first carries the notes the answer must give: the
    words of the request no parameter of its dataset covers. Empty when no parameter
    holds the species or energy channel named, or covers any of the request's words.
    `complete` keeps only parameters whose own metadata covers every concept.
    """
    if all(c.kind == "species" for c in request.concepts):
        return []  # a species alone names no quantity ("SolO SWA electrons")
    ranked: list[tuple[Candidate, tuple[Concept, ...]]] = []
    for info in datasets:
        probe_score = probe_fit(info, probe)
        if probe_score is None or is_auxiliary(info):
            continue
        owner = _said(info.id, f"{info.id.replace('_', ' ')} {info.title}")
        fits = [
            (f, p) for p in info.data_parameters if (f := _parameter_fit(request, info, p, owner))
        ]
        if complete:
            fits = [(f, p) for f, p in fits if f.own == len(request.concepts)]
        if not fits:
            continue
        fit, best = max(fits, key=lambda fp: fp[0].score)
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
        )
        ranked.append((candidate, fit.missing))
    ranked.sort(key=lambda cm: rank_key(cm[0]))
    if not ranked:
        return []
    top, missing = ranked[0]
    out = [c for c, _ in ranked[:limit]]
    infos = {d.id: d for d in datasets}
    said, _ = variant_notes([c for c, _ in ranked], infos, tuple(terms), time_range)
    if missing or said:
        out[0] = replace(top, notes=(*said, *([_differs(top, missing, datasets)] * bool(missing))))
    return out


def _differs(top: Candidate, missing: Sequence[Concept], datasets: Sequence[DatasetInfo]) -> str:
    info = next(d for d in datasets if d.id == top.dataset_id)
    p = info.parameter(top.parameter)
    what = (p.description.strip() if p else "") or top.parameter
    words = ", ".join(f"'{c.typed}'" for c in missing)
    return (
        f"Differs from the request: no parameter of {top.dataset_id} says {words}; "
        f"shown: {top.parameter} ({what})."
    )


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
