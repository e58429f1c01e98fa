"""The physical quantities a request names, with their components, frames and species.

Quantity phrases come from the vocabulary (`quantities.toml`); component tokens ("Bz",
"V_x GSE", "|B|"), symbols ("Np", "Tp"), frames and species words are attached to the
quantity they qualify; a vector named with a frame is asked as its components.
Imports `vocabulary` and this package.
"""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import pairwise

from xhelio.language.intent import QuantityWish
from xhelio.language.quantities import FORM_WORDS, GROUP_WORDS, QUANTITIES, SYMBOL_SPECIES, quantity
from xhelio.vocabulary import load_vocabulary

__all__ = [
    "COMPONENT_TOKEN",
    "COMPONENT_WORD",
    "FRAME_WORDS",
    "MAGNITUDE_TOKEN",
    "MAGNITUDE_WORD",
    "SPACECRAFT_FRAME",
    "SPECIES_WORDS",
    "VECTOR_WORD",
    "quantity_wishes",
]

FRAME_WORDS = load_vocabulary().frame_words
# The spacecraft's own axes, however written ("payload coordinates", "s/c frame"): SC.
SPACECRAFT_FRAME = re.compile(
    r"\b(?:spacecraft|s/c|payload|body)[- ](?:coordinates|coords|frame|axes)()", re.I
)
SPECIES_WORDS = re.compile(
    "|".join(f"(?P<{sp.key}>{sp.words.pattern})" for sp in load_vocabulary().species), re.I
)

COMPONENT_TOKEN = re.compile(
    r"(?<![\w|])(?P<q>[bv])_?(?P<c>[xyzrtn])(?:[_ ]?(?P<f>gse|gsm|rtn))?(?![\w])", re.I
)


_LIST_GLUE = re.compile(r"[\s,;/&]*(?:and|or)?[\s,;/&]*", re.I)


MAGNITUDE_TOKEN = re.compile(
    r"\|\s*(?P<q>[bv])\s*\||\b(?P<q2>b)(?:mag|_mag|tot|total|_total)\b"
    r"|\b(?P<q3>[bv])[- ](?:magnitude|mag|total|strength)\b",
    re.I,
)


# A capital B, V or E standing alone is the field, the velocity or the electric field
# ("SolO B", "ACE V", "EFI spin-fit E"); not a probe's letter ("probe E"), nor
# a symbol of an equation ("E dot B=0" names an electric-field product).
_BARE_SYMBOL = re.compile(
    r"(?<![\w|\-])(?<!dot )(?<!\u00b7)(?<!probe )(?P<q>[BVE])(?![\w|\-])(?!\s*=)(?![ -]?fields?\b)"
)
_SYMBOL_QUANTITY = {"B": "magnetic_field", "V": "velocity", "E": "electric_field"}
# A letter in a list of probes ("probes A and E", "spacecraft C, D, E") names a probe.
_PROBE_LIST = re.compile(
    r"\b(?i:probes?|spacecraft|satellites?|s/c)\s+\(?(?:[A-Z]\s*(?:,|&|/|\band\b|\bor\b)\s*)*$"
)


# "normal mode", "normal-rate" name a product of the instrument, not the N component.
COMPONENT_WORD = re.compile(
    r"\b(?P<c>[xyzrtn])[- ]?comp(?:onent)?s?\b|\b(?P<rtn>radial|tangential|normal)\b"
    r"(?![- ](?:modes?|rate|resolution|cadence)\b)",
    re.I,
)


# How a request asks for a vector's magnitude or its components (`[forms]` of the vocabulary).
MAGNITUDE_WORD = re.compile(FORM_WORDS["magnitude"], re.I)


VECTOR_WORD = re.compile(FORM_WORDS["vector"], re.I)


# A quantity written as its symbol with a species or a frame, the way parameters are
# named: "Ne", "T_i", "Vp" (electron density, ion temperature, proton speed), "B_RTN",
# "BGSE", "V_GSM" (the field or velocity vector in that frame). Letters and species
# from `vocabulary/quantities.toml`, frames from the vocabulary's frame table.
_SYMBOLS = {q.symbol: q.key for q in QUANTITIES if q.symbol}


_SYMBOL_TOKEN = re.compile(
    rf"(?<![\w|/.+-])(?P<q>[{''.join(_SYMBOLS)}])(?P<u>_?)"
    rf"(?:(?P<s>{'|'.join(sorted(SYMBOL_SPECIES, key=len, reverse=True))})|(?P<f>"
    rf"{'|'.join(sorted(load_vocabulary().frames, key=len, reverse=True))}))(?![\w/+-])",
    re.I,
)


def _in_component_list(match: re.Match[str], tokens: list[re.Match[str]]) -> bool:
    """Whether a lowercase "by" sits in a list of components ("bx, by and bz")."""
    text = match.string
    for other in tokens:
        between = text[other.end() : match.start()] or text[match.end() : other.start()]
        if other is not match and _LIST_GLUE.fullmatch(between):
            return True
    return False


def _bare_symbols(text: str) -> list[re.Match[str]]:
    """The capital B, V and E standing alone, without the letters of a list of probes."""
    return [m for m in _BARE_SYMBOL.finditer(text) if not _PROBE_LIST.search(text, 0, m.start())]


def quantity_wishes(text: str) -> list[QuantityWish]:
    """Quantity wishes in text order, with components, frames and species attached."""
    claimed: list[tuple[int, int]] = []
    wishes: list[QuantityWish] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in claimed)

    frame_match = FRAME_WORDS.search(text) or SPACECRAFT_FRAME.search(text)
    frame = (frame_match[1] or "SC").upper() if frame_match else None
    for wish in _symbol_wishes(text):
        wishes.append(wish)
        claimed.append((wish.position, wish.position + len(wish.text)))
    tokens = list(COMPONENT_TOKEN.finditer(text))
    for match in tokens:
        if match[0] == "by" and not _in_component_list(match, tokens):
            continue  # the English word ("measured by ACE"), not the By component
        key = "magnetic_field" if match["q"].lower() == "b" else "velocity"
        wishes.append(
            QuantityWish(
                key,
                match[0],
                match.start(),
                match["c"].lower(),
                (match["f"] or "").upper() or frame,
            )
        )
        claimed.append(match.span())
    for match in MAGNITUDE_TOKEN.finditer(text):
        letter = (match["q"] or match["q3"] or "b").lower()
        key = "velocity" if letter == "v" else "magnetic_field"
        wishes.append(QuantityWish(key, match[0], match.start(), "magnitude"))
        claimed.append(match.span())
    for match in _bare_symbols(text):
        key = _SYMBOL_QUANTITY[match["q"]]
        if free(*match.span()) and not any(w.quantity == key for w in wishes):
            wishes.append(QuantityWish(key, match[0], match.start(), frame=frame))
            claimed.append(match.span())
    for entry in QUANTITIES:
        for match in entry.phrases.finditer(text):
            if not free(*match.span()):
                continue
            claimed.append(match.span())
            if any(w.quantity == entry.key for w in wishes):
                continue
            framed = frame if entry.shape == "vector" else None  # a pressure has no frame
            wishes.append(QuantityWish(entry.key, match[0], match.start(), frame=framed))
    if not wishes:
        for pattern, members in GROUP_WORDS:
            match = pattern.search(text)
            if match:
                wishes = [
                    QuantityWish(key, match[0], match.start() + n, component)
                    for n, (key, component) in enumerate(members)
                ]
                break
    wishes.sort(key=lambda w: w.position)
    detailed = _with_details(text, wishes, frame)
    # "ACE Bz and Wind Bz": one wish per quantity; every mission gets each one anyway.
    unique = {(w.quantity, w.component, w.frame, w.species): w for w in reversed(detailed)}
    order = {id(w): n for n, w in enumerate(detailed)}  # "ion and electron": in that order
    return sorted(unique.values(), key=lambda w: (w.position, order[id(w)]))


def _symbol_wishes(text: str) -> list[QuantityWish]:
    """Quantities typed as symbols: "Ne", "T_i", "Vp", "B_RTN", "BGSE".

    A species letter is lower case after a capital or an underscore ("Ne", "n_e"; never
    "NE" nor "ne"); a two-letter frame is in capitals or after an underscore ("BSM",
    "B_sm"). The species belongs to scalar moments and the velocity, the frame to vectors.
    """
    wishes: list[QuantityWish] = []
    for match in _SYMBOL_TOKEN.finditer(text):
        key = _SYMBOLS[match["q"].lower()]
        shape = quantity(key).shape
        letter, frame = match["s"], match["f"]
        if letter is not None:
            if (
                not letter.islower()
                or not (match["q"].isupper() or match["u"])
                or (len(letter) > 1 and not match["u"])
            ):
                continue
            if key == "magnetic_field":
                continue
            species = SYMBOL_SPECIES[letter]
            wishes.append(QuantityWish(key, match[0], match.start(), species=species))
        elif key == "velocity" and frame.upper() == "SC":
            continue  # "V_sc": the spacecraft potential
        elif shape == "vector" and (len(frame) > 2 or frame.isupper() or match["u"]):
            wishes.append(QuantityWish(key, match[0], match.start(), frame=frame.upper()))
    return wishes


def _with_details(text: str, wishes: list[QuantityWish], frame: str | None) -> list[QuantityWish]:
    """Attach component words, vector words, frames and species to the right wishes."""
    result = list(wishes)
    vectors = [i for i, w in enumerate(result) if quantity(w.quantity).shape == "vector"]

    def nearest(position: int) -> int | None:
        # A word ("magnitude", "components") qualifies a wish still open, never an explicit
        # component ("Bx, By and Bz"); "field magnitude" belongs to the field it follows.
        open_ = [i for i in vectors if result[i].component is None]

        def distance(i: int) -> int:
            start = result[i].position
            return min(abs(start - position), abs(start + len(result[i].text) - position))

        return min(open_, key=distance) if open_ else None

    for pattern, value in (
        (COMPONENT_WORD, None),
        (MAGNITUDE_WORD, "magnitude"),
        (VECTOR_WORD, "vector"),
    ):
        for match in pattern.finditer(text):
            target = nearest(match.start())
            if target is None:
                sibling = _both_forms(result, vectors, value, match.start())
                if sibling is not None:
                    result.append(replace(sibling, component=value, position=match.start()))
                continue
            component = value or (match["c"] or match["rtn"][0]).lower()
            old = result[target]
            result[target] = QuantityWish(
                old.quantity, old.text, old.position, component, old.frame or frame, old.species
            )
    result = [_framed_vector(w) for w in result]
    listed = _listed_species(text)
    if listed:
        result = [
            QuantityWish(w.quantity, w.text, w.position, w.component, w.frame, w.species or s)
            for w in result
            for s in (listed if w.quantity in _OF_A_SPECIES and not w.species else [None])
        ]
    return result


_OF_A_SPECIES = frozenset({"density", "temperature", "particle_flux", "velocity"})
_SPECIES_JOIN = re.compile(r"\s*(?:,\s*(?:and\s+)?|\band\b|&|/|\+|\bvs\.?|\bversus\b)\s*", re.I)


def _listed_species(text: str) -> list[str]:
    """The species the text names: the first one, or every one of a list joined there.

    "ion and electron number density", "proton, alpha and O+ densities": each species
    of the list is asked; otherwise the first species word names the one asked.
    """
    found = [m for m in SPECIES_WORDS.finditer(text) if m.lastgroup]
    if not found:
        return []
    listed = [found[0]]
    for before, after in pairwise(found):
        if before is not listed[-1] or not _SPECIES_JOIN.fullmatch(
            text, before.end(), after.start()
        ):
            break
        listed.append(after)
    return list(dict.fromkeys(m.lastgroup for m in listed if m.lastgroup))


# Words that ask for how fast, whatever the frame: the magnitude stays the default.
_SPEED_WORDS = re.compile(r"\bspeeds?\b|\bhow fast\b|\|", re.I)


def _framed_vector(wish: QuantityWish) -> QuantityWish:
    """A vector named with a frame ("ion velocity GSE", "VGSE") is asked as its components.

    Its default form may be the magnitude (a bare "solar wind velocity" is its speed),
    but a frame only means something for the components; "speed" keeps the magnitude.
    """
    q = quantity(wish.quantity)
    if (
        wish.component is None
        and wish.frame not in (None, "SC")
        and q.shape == "vector"
        and q.default_component == "magnitude"
        and not _SPEED_WORDS.search(wish.text)
    ):
        return replace(wish, component="vector")
    return wish


def _both_forms(
    wishes: list[QuantityWish], vectors: list[int], value: str | None, position: int
) -> QuantityWish | None:
    """The wish a second form word asks for again: "field components and its magnitude".

    The first of "components"/"magnitude" took the field; the other asks for the same
    field in its other form, as one more wish.
    """
    forms = {"magnitude", "vector"}
    if value not in forms:
        return None
    taken = [i for i in vectors if wishes[i].component in forms - {value}]
    if not taken:
        return None
    return wishes[min(taken, key=lambda i: abs(wishes[i].position - position))]
