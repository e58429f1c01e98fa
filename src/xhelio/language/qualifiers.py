"""Qualifier words of a request matched against the parameters of one dataset.

A request often names *which* parameter of a product it means with a word beside the
mission and the quantity: a wave component ("Bw spectra", "Ev"), a mode ("reduced",
"burst"), an energy range ("mid energies"), a sensor head. The catalog says the same
in each parameter's own id tokens, description and labels ("BwBw", "ESA Reduced ...
Mode, Ion Density", "midenergy"). Among the parameters of one dataset that can serve
the quantity, a request word that some of them say and others do not tells them apart;
the ones saying it are what was asked. A word every candidate says (the quantity's own
"density") or none says decides nothing here.

Synonyms (`mid` for "medium", "spin-averaged" for "SA") come from the vocabulary's
`[[qualifier]]` table (`vocabulary/domain.toml`). Imports `catalog.model` and
`vocabulary` only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import NamedTuple

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.slots import SlotReading
from xhelio.vocabulary import read_table

__all__ = [
    "Qualifier",
    "discriminating",
    "of_parameters",
    "parameter_tokens",
    "qualifier_fit",
    "qualifier_text",
    "request_words",
]

# The slots whose words may name which parameter of a product is meant; the quantity,
# mission, species, frame and time have their own scores.
# A formula typed ("Eu^2+Ev^2") may be a parameter's own description.
_QUALIFYING = ("product", "instrument", "component", "formula")


def qualifier_text(reading: SlotReading, unplaced: Sequence[str] = ()) -> str:
    """The words of a request that may say which parameter of a product is meant.

    Product and instrument words, components, and the words no slot took ("Bw",
    "reduced").
    """
    words = [s.text(reading.text) for s in reading.slots if s.kind in _QUALIFYING]
    words += [w.text for w in reading.leftover]
    return " ".join(dict.fromkeys([*words, *unplaced]))


# Words of a request that never tell two parameters of one product apart.
_PLAIN_WORDS = """
    a an the of in on at to for from and or with by as is are be me my i us our plot show
    give get fetch draw display want need please can could would like also data values series
    time timeseries panel panels figure graph during between over then each both into using
    use what which this that these those it its them they day days hour hours minute minutes
    week weeks month months year years today yesterday ago last next first since until around
    near about some all any jan feb mar apr may jun jul aug sep sept oct nov dec january
    february march april june july august september october november december utc ut doy
    average averages averaged avg mean means median min mins sec secs hr hrs resolution
    cadence res
"""
_PLAIN = frozenset(_PLAIN_WORDS.split())
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-+][A-Za-z0-9]+)*")


class Qualifier(NamedTuple):
    """One request word as typed and the spellings (lower case) that mean it."""

    typed: str
    spellings: frozenset[str]


@cache
def _synonyms() -> tuple[tuple[re.Pattern[str], frozenset[str]], ...]:
    rows = read_table("domain.toml").get("qualifier", [])
    return tuple(
        (re.compile(str(r["words"]), re.I), frozenset(str(t).lower() for t in r["tokens"]))
        for r in rows
    )


def request_words(text: str) -> tuple[Qualifier, ...]:
    """The request's content words, each as the set of spellings that mean it.

    Dates, clock times, single letters and plain request words are left out; a word the
    `[[qualifier]]` table knows brings its synonyms ("mid" -> mid, medium, midenergy).
    """
    out: list[Qualifier] = []
    for m in _WORD.finditer(text):
        word = m[0].lower()
        if len(word) < 2 or word in _PLAIN or re.fullmatch(r"\d.*|t\d+", word):
            continue
        parts = (p for p in re.split(r"[-+]", word) if len(p) >= 2 and p not in _PLAIN)
        spellings = {word, *parts}
        for pattern, tokens in _synonyms():
            if pattern.fullmatch(m[0]):
                spellings |= tokens
        out.append(Qualifier(m[0], frozenset(spellings)))
    return tuple(dict.fromkeys(out))


def of_parameters(words: Sequence[Qualifier], info: DatasetInfo) -> tuple[Qualifier, ...]:
    """The words that may name a parameter of `info`: not those its id holds.

    A word of the dataset's own id ("MAG" of GOES12_K0_MAG, "ESA") named the product
    and is honoured by it; a parameter's abbreviation of it ("Mag. Field, local s/c") is
    no reason to prefer that parameter. Titles often list every mode a file holds
    ("Reduced, Full and Burst"), so a title word still tells parameters apart.
    """
    own = {w.lower() for w in re.split(r"[^A-Za-z0-9]+", info.id) if w}
    return tuple(w for w in words if not w.spellings & own)


def parameter_tokens(p: ParameterInfo) -> frozenset[str]:
    """A parameter's own words, lower case.

    Its name split at _ - . and at case changes ("BwBw" -> bwbw, bw), its description
    and its labels.
    """
    name_parts = re.split(r"[_\-.\s]+", p.name)
    camel = [w for part in name_parts for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", part)]
    text = f"{p.description} {' '.join(p.labels or ())}"
    words = [*name_parts, *camel, *re.findall(r"[A-Za-z][A-Za-z0-9]*", text)]
    return frozenset(w.lower() for w in words if w)


def _says(spellings: frozenset[str], tokens: frozenset[str]) -> bool:
    """Whether one of `spellings` is a token, or begins one ("averag" in "averages")."""
    if spellings & tokens:
        return True
    return any(
        len(s) >= 4 and t.startswith(s[:-1] if s.endswith("s") else s)
        for s in spellings
        for t in tokens
    )


def discriminating(
    words: Sequence[Qualifier], params: Sequence[ParameterInfo]
) -> list[tuple[Qualifier, frozenset[str]]]:
    """The words that some but not all of `params` say, each with the names saying it."""
    if len(params) < 2:
        return []
    tokens = {p.name: parameter_tokens(p) for p in params}
    out: list[tuple[Qualifier, frozenset[str]]] = []
    for word in words:
        saying = frozenset(name for name, own in tokens.items() if _says(word.spellings, own))
        if 0 < len(saying) < len(params):
            out.append((word, saying))
    return out


def qualifier_fit(words: Sequence[Qualifier], params: Sequence[ParameterInfo]) -> dict[str, int]:
    """For each parameter of `params`, how many request words that tell them apart it says."""
    fit = {p.name: 0 for p in params}
    for _, saying in discriminating(words, params):
        for name in saying:
            fit[name] += 1
    return fit
