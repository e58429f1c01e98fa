"""Request text -> `RequestIntent`: missions, datasets, quantities, time range and wishes.

Missions are spotted with the catalog's own alias table (ids, names, common names such
as "PSP", "SolO", "STEREO-A"), dataset ids are checked against the catalog, the time
range is the longest piece of the sentence that `parse_time_range` accepts, and the
physics words come from `quantities.py`. Pieces already claimed (a title, dataset ids,
durations, the time phrase) are masked before the next pass reads the text, so "2000
seconds" never becomes the year 2000 and a quoted title never names a mission.
Imports `catalog`, `timerange`, `errors` and this package; never the tools.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from xhelio.catalog.aliases import AliasTable, word_spans
from xhelio.catalog.index import Catalog
from xhelio.language.acronyms import instrument_capitals
from xhelio.language.carriers import carrier_missions
from xhelio.language.channel_names import named_channels
from xhelio.language.doubts import find_doubts
from xhelio.language.idwords import id_parts_not_missions, spaced_dataset_ids
from xhelio.language.intent import (
    MissionRef,
    OperationWish,
    PlotWish,
    QuantityWish,
    RequestIntent,
)
from xhelio.language.operations import (
    operand_spans,
    operation_spans,
    operation_windows,
    ratio_slashes,
)
from xhelio.language.probes import probe_doubts, probe_swapped
from xhelio.language.products import product_terms
from xhelio.language.quantities import (
    GROUP_WORDS,
    QUANTITIES,
    SYMBOL_SPECIES,
    SYNONYM_WORDS,
    quantity,
)
from xhelio.language.ratios import ratio_spans
from xhelio.language.resolve import probe_of_dataset, probe_wanted
from xhelio.language.slots import (
    Slot,
    SlotKind,
    SlotReading,
    account,
    find_designations,
    find_formulas,
    find_places,
    name_runs,
)
from xhelio.language.spectra import spectrum_wishes
from xhelio.language.wishes import (
    Duration,
    find_colours,
    find_discovery,
    find_durations,
    find_export,
    find_hints,
    find_layout,
    find_operations,
    find_title,
    find_unplaced,
    wants_log,
    wants_plot,
)
from xhelio.timerange import TimeFound, find_time, stray_clocks, unread_time_words
from xhelio.timerange.words import WHOLE_NUMBER_WORDS, alternatives
from xhelio.vocabulary import MissionEntry, load_vocabulary

__all__ = ["Vocabulary", "parse_request"]

_DATASET_SHAPE = re.compile(r"[A-Za-z0-9]+(?:[_\-][A-Za-z0-9]+)+")
_COMPONENT_TOKEN = re.compile(
    r"(?<![\w|])(?P<q>[bv])_?(?P<c>[xyzrtn])(?:[_ ]?(?P<f>gse|gsm|rtn))?(?![\w])", re.I
)
_LIST_GLUE = re.compile(r"[\s,;/&]*(?:and|or)?[\s,;/&]*", re.I)
_MAGNITUDE_TOKEN = re.compile(
    r"\|\s*(?P<q>[bv])\s*\||\b(?P<q2>b)(?:mag|_mag|tot|total|_total)\b"
    r"|\b(?P<q3>[bv])[- ](?:magnitude|mag|total|strength)\b",
    re.I,
)
# A capital B or V standing alone is the field or the velocity ("SolO B", "ACE V").
_BARE_SYMBOL = re.compile(r"(?<![\w|\-])(?P<q>[BV])(?![\w|\-])")
# "Wind speed" is physics, but "Wind velocity at L1" with a capital W is the spacecraft.
_WIND_CRAFT = re.compile(r"(?<!solar )(?<!Solar )\b(?:Wind|WIND)(?= (?:speed|velocity)\b)")
# "normal mode", "normal-rate" name a product of the instrument, not the N component.
_COMPONENT_WORD = re.compile(
    r"\b(?P<c>[xyzrtn])[- ]?comp(?:onent)?s?\b|\b(?P<rtn>radial|tangential|normal)\b"
    r"(?![- ](?:modes?|rate|resolution|cadence)\b)",
    re.I,
)
_MAGNITUDE_WORD = re.compile(r"\bmagnitudes?\b|\btotal\b|\bstrength\b|\babsolute value\b", re.I)
_VECTOR_WORD = re.compile(r"\bcomponents\b|\bvectors?\b|\ball three\b|\b3 components\b", re.I)
_FRAME = load_vocabulary().frame_words
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
# The spacecraft's own axes, however written ("payload coordinates", "s/c frame"): SC.
_SC_FRAME = re.compile(
    r"\b(?:spacecraft|s/c|payload|body)[- ](?:coordinates|coords|frame|axes)()", re.I
)
_SPECIES = re.compile(
    "|".join(f"(?P<{sp.key}>{sp.words.pattern})" for sp in load_vocabulary().species), re.I
)
_COMPARE = re.compile(r"\bcompar\w*|\bvs\.?(?!\w)|\bversus\b|\bagainst\b", re.I)
# "STEREO A and B", "RBSP-A and -B", "ARTEMIS P1 and P2", "GOES 13 and 15".
_MORE_PROBES = re.compile(
    r"^\s*(?:,|and|&|/|vs\.?|versus)\s*(?:and\s+)?-?(?P<p>[a-z]{0,2}\d{1,2}|[a-e])(?![\w-])",
    re.I,
)
_PROBE_SUFFIX = re.compile(r"^(?:-| )?(?:[a-e]|[a-z]?\d{1,3})\b", re.I)
# "THEMIS probes C, D and E", "Cluster spacecraft 1 and 3": the probe after a noun.
_NOUN_PROBE = re.compile(r"^\s+(?i:probes?|spacecraft|satellites?|s/c)\s+(?P<p>[A-E]|\d{1,2})\b")
# "thc, thd, the": a further shorthand of the same constellation in a list.
_MORE_SHORTHAND = re.compile(r"^\s*(?:,|and|&|/)\s*(?:and\s+)?(?P<p>[A-Za-z][\w-]*)(?![\w-])")
# "how fast was the wind at DSCOVR": the wind blowing, not the Wind spacecraft.
_THE_WIND = re.compile(r"\bthe\s+$")
_CRAFT_AFTER = re.compile(
    r"^\s+(?:spacecraft|satellite|mission|probe|data|observatory|mfi|swe|3dp|waves|epact)\b", re.I
)
# "(see Fig. 2)", "as in Figure 3b", "(cf. Eq. 4)": a remark citing a paper, never a probe.
_CITED = re.compile(
    r"(?:\(\s*)?(?:(?:see|cf\.?|as in|compare)\s+)?\b(?:fig(?:ure)?s?|eqs?|equations?|tables?)"
    r"\.?\s*\d+[a-z]?(?:\s*(?:,|and|&|-)\s*\d+[a-z]?)*(?:\s*\))?",
    re.I,
)
_AT_EARTH = re.compile(r"\b(?:at|near)[- ]earth\b|\bupstream\b|\bnear-earth\b|\bat l1\b", re.I)


@dataclass
class Vocabulary:
    """What the parser needs from the catalog: mission names, dataset ids, parameters."""

    catalog: Catalog
    aliases: AliasTable
    mission_names: dict[str, str]
    dataset_ids: dict[str, str]
    by_prefix: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    """Dataset ids by their first id token ("JUNO" -> JUNO_HELIO1HR_POSITION)."""
    probes: dict[str, frozenset[str]] = field(default_factory=dict[str, frozenset[str]])
    """The spacecraft the dataset ids of each constellation name ("goes": "10", "12", ...)."""

    def __post_init__(self) -> None:
        for key, dataset_id in sorted(self.dataset_ids.items()):
            self.by_prefix.setdefault(key.split("_", 1)[0], []).append(dataset_id)

    @classmethod
    def from_catalog(cls, catalog: Catalog) -> Vocabulary:
        """Build the vocabulary once per assistant (mission aliases, id lookup)."""
        missions = catalog.missions()
        names = {m.id: re.sub(r"\s*\([^)]*\)", "", m.name).strip() or m.id for m in missions}
        return cls(
            catalog,
            catalog.aliases,
            names,
            {i.upper(): i for i in catalog.dataset_ids()},
            probes={m.id: held for m in missions if len(held := _probes_held(m.dataset_ids)) > 1},
        )


def _probes_held(dataset_ids: tuple[str, ...]) -> frozenset[str]:
    return frozenset(p for i in dataset_ids if (p := probe_of_dataset(i)) is not None)


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _more_probes(
    mission_id: str, typed: str, text: str, end: int, spans: list[tuple[int, int]], listed: bool
) -> list[tuple[str, int]]:
    """Further spacecraft after the first ("STEREO A and B", "ARTEMIS P1 and P2").

    `listed`: another probe of the mission was named just before ("thc, thd, ...").
    """
    found: list[tuple[str, int]] = []
    entry = load_vocabulary().missions.get(mission_id)
    while True:
        more = _MORE_PROBES.match(text[end:])
        other = probe_swapped(mission_id, typed, more["p"]) if more else None
        if other is None and entry is not None:
            more = _MORE_SHORTHAND.match(text[end:])
            other = _probe_word(entry, typed, more["p"], bool(found) or listed) if more else None
        if more is None or other is None:
            return found
        found.append((other, end + more.start("p")))
        spans.append((end, end + more.end()))
        end += more.end()


def _probe_word(entry: MissionEntry, typed: str, word: str, in_list: bool) -> str | None:
    """How `word` after "and" names another probe of `entry`, or None.

    The nickname in place of the first one's ("STEREO Ahead and Behind": "STEREO
    Behind"); inside a list of two or more, a shorthand the vocabulary has only as typed
    exactly ("thc, thd, the": "the" is THEMIS-E).
    """
    head = typed.rsplit(" ", 1)[0] if " " in typed else ""
    named = f"{head} {word}"
    if head and entry.probe_of(named) not in (None, entry.probe_of(typed)):
        return named
    return word if in_list and entry.probe_of(word) else None


def _joined(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Mentions written as one word ("STA/STB", "THEMIS-A/-D/-E"), as one span each."""
    runs: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if runs and (a < runs[-1][1] or text[runs[-1][1] : a] in ("", "/", "-")):
            runs[-1] = (runs[-1][0], max(b, runs[-1][1]))
        else:
            runs.append((a, b))
    return [r for r in runs if r not in spans]


def _distinct(refs: list[MissionRef]) -> list[MissionRef]:
    """Each spacecraft once ("MMS1 through MMS4" names MMS4 twice)."""
    seen: set[tuple[str, str]] = set()
    out: list[MissionRef] = []
    for ref in refs:
        key = (ref.mission_id, probe_wanted(ref.text) or ref.text.upper())
        if key not in seen:
            seen.add(key)
            out.append(ref)
    return out


def _plurals(vocab: Vocabulary, text: str) -> tuple[str, frozenset[int]]:
    """`text` with constellations in the plural ("both Voyagers") in the singular.

    And where each such name ends: all its spacecraft are meant ("the STEREOs").
    """
    vocabulary = load_vocabulary()
    names = sorted(
        (
            n
            for mission_id in vocab.probes
            if (entry := vocabulary.missions.get(mission_id)) is not None
            for n in entry.names
            if not n.lower().endswith("s")
        ),
        key=len,
        reverse=True,
    )
    if not names:
        return text, frozenset()
    plural = re.compile(rf"(?<![\w-])(?:{'|'.join(map(re.escape, names))})(?=s(?![\w-]))", re.I)
    ends = frozenset(m.end() for m in plural.finditer(text))
    for end in ends:
        text = _mask(text, end, end + 1)
    return text, ends


def _missions(
    vocab: Vocabulary, text: str, plurals: frozenset[int] = frozenset()
) -> tuple[tuple[MissionRef, ...], list[tuple[int, int]], tuple[str, ...]]:
    """The spacecraft named, the spans naming them, and questions about their count.

    A count that does not fit the constellation ("all four THEMIS": THEMIS has five)
    is asked about.
    """
    words = word_spans(text)
    refs: list[MissionRef] = []
    spans: list[tuple[int, int]] = []
    ions = ratio_spans(text)  # "C6/C5" is a charge-state ratio, not Cluster 6 and 5
    for mention in vocab.aliases.find_mentions(text):
        start, end = words[mention.first_word][1], words[mention.end_word - 1][2]
        typed = mention.text
        if _the_wind(text, typed, start, end) or any(a <= start < b for a, b in spans + ions):
            continue  # the wind blowing; a probe of a list already read ("THEMIS-A/-D/-E")
        suffix = _PROBE_SUFFIX.match(text[end:]) if mention.mission_id in vocab.probes else None
        noun = _NOUN_PROBE.match(text[end:]) if mention.mission_id in vocab.probes else None
        if noun and probe_wanted(named := f"{typed} {noun['p']}") is not None:
            end += noun.end()
            typed = named  # "THEMIS probes C" is THEMIS C
        elif suffix and not re.search(r"\d$|-[a-e]$", typed, re.I):
            end += suffix.end()
            typed = text[start:end]
        spans.append((start, end))
        name = vocab.mission_names.get(mention.mission_id, mention.mission_id)
        listed = any(r.mission_id == mention.mission_id for r in refs)
        extra = _more_probes(mention.mission_id, typed, text, end, spans, listed)
        for ref in [
            MissionRef(mention.mission_id, name, typed, start),
            *(MissionRef(mention.mission_id, name, t, at) for t, at in extra),
        ]:
            key = (ref.mission_id, ref.text.upper().replace(" ", "").replace("-", ""))
            if any(
                (r.mission_id, r.text.upper().replace(" ", "").replace("-", "")) == key
                for r in refs
            ):
                continue
            refs.append(ref)
    counts: list[str] = []
    refs = _distinct(_whole_constellations(text, refs, spans, vocab.probes, plurals, counts))
    spans += _joined(text, spans)
    # "Cluster C2 and C4": the bare mission name is not a third spacecraft.
    probed = {r.mission_id for r in refs if probe_wanted(r.text) is not None}
    refs = [r for r in refs if r.mission_id not in probed or probe_wanted(r.text) is not None]
    craft = _WIND_CRAFT.search(text)
    if craft and "wind" in vocab.mission_names and all(r.mission_id != "wind" for r in refs):
        refs.append(MissionRef("wind", vocab.mission_names["wind"], craft[0], craft.start()))
        spans.append(craft.span())
        refs.sort(key=lambda r: r.position)
    return tuple(refs), spans, tuple(counts)


def _the_wind(text: str, typed: str, start: int, end: int) -> bool:
    """Whether lower-case "the wind" is the wind blowing ("how fast was the wind")."""
    return (
        typed == "wind"
        and _THE_WIND.search(text[:start]) is not None
        and _CRAFT_AFTER.match(text[end:]) is None
    )


_SMALL_COUNT = rf"{alternatives(WHOLE_NUMBER_WORDS)}|\d{{1,2}}"
_ALL_BEFORE = re.compile(
    rf"\b(?:(?:all(?:\s+(?:the\s+)?(?P<n>{_SMALL_COUNT}))?|both|each(?:\s+of)?|every)"
    rf"(?:\s+(?:of\s+)?the)?|the\s+(?P<m>{_SMALL_COUNT}))\s+$",
    re.I,
)
# "MMS field for each spacecraft", "THEMIS density, all five probes": every one, said apart.
_ALL_APART = re.compile(
    rf"\b(?:all(?:\s+(?:the\s+)?(?P<n>{_SMALL_COUNT}))?|both|each(?:\s+of\s+the)?"
    r"|every)\s+(?:probes|probe|spacecraft|satellites|satellite|s/c)\b",
    re.I,
)
_ALL_AFTER = re.compile(r"^\s*(?:spacecraft|probes|satellites)?\s*(?:\(\s*)?all\b", re.I)
_PROBE_RANGE = re.compile(
    r"^(?:(?P<to>\s+to|\s+[-\u2013]\s)|\s*(?:-|\u2013|through))\s*[A-Za-z]{0,5}-?"
    r"(?P<b>\d{1,2}|[A-Ea-e])\b"
)
# "the ratio of MMS1 to MMS4", "GOES 15 - GOES 13 difference": two spacecraft, no range.
_ARITHMETIC = re.compile(r"\b(?:ratios?|differences?|minus|subtract\w*|divided)\b", re.I)


def _count_said(every: re.Match[str] | None) -> int | None:
    """How many spacecraft "all four", "the two" or "both" says (None when no number)."""
    if every is None:
        return None
    said = every.groupdict()
    word = said.get("n") or said.get("m") or ("two" if every[0].lower().startswith("both") else "")
    if not word:
        return None
    return int(word) if word.isdigit() else WHOLE_NUMBER_WORDS[word.lower()]


def _members(ref: MissionRef, held: frozenset[str]) -> list[str]:
    """How each spacecraft of `ref`'s constellation is written, in order.

    The vocabulary's probe names of those the catalog has datasets of; with no probe
    table, the spacecraft the catalog's dataset ids number ("GOES 13", "DMSP F17").
    """
    names = load_vocabulary().probe_names(ref.mission_id, ref.text)
    if names:
        return [n for n in names if not held or probe_wanted(n) in held]
    typed = probe_wanted(ref.text)
    named = [
        ref.text if p == typed else probe_swapped(ref.mission_id, ref.text, p)
        for p in sorted((p for p in held if p.isdigit()), key=int)
    ]
    return [n for n in named if n is not None]


def _whole_constellations(
    text: str,
    refs: list[MissionRef],
    spans: list[tuple[int, int]],
    held: dict[str, frozenset[str]],
    plurals: frozenset[int],
    counts: list[str],
) -> list[MissionRef]:
    """Every spacecraft of "all four MMS", "both Van Allen Probes", "Cluster 1-4".

    A count that does not fit ("all four THEMIS") is a question added to `counts`.
    """
    out: list[MissionRef] = []
    for ref in refs:
        names = _members(ref, held.get(ref.mission_id, frozenset()))
        end = next((b for a, b in spans if a == ref.position), ref.position + len(ref.text))
        first = probe_wanted(ref.text)
        wanted: list[str] = []
        every = _ALL_BEFORE.search(text[: ref.position])
        if every is None and len({r.mission_id for r in refs}) == 1:
            every = _ALL_APART.search(text)
        if first is None and (every or end in plurals or _ALL_AFTER.match(text[end:])):
            # "the two STEREO", "both ARTEMIS probes", "the Voyagers".
            count = _count_said(every)
            wanted = names if count in (None, len(names)) else []
            if every is not None and not wanted and names:
                counts.append(
                    f"which {ref.name} spacecraft you mean ('{every[0].strip()}' was written, "
                    f"and {ref.name} has {len(names)}: {', '.join(names)})"
                )
        elif (
            first is not None
            and (span := _PROBE_RANGE.match(text[end:])) is not None
            and not (span["to"] and _ARITHMETIC.search(text))
        ):
            keys = [probe_wanted(n) for n in names]
            last = span["b"].upper()
            if first in keys and last in keys and keys.index(last) > keys.index(first):
                wanted = names[keys.index(first) : keys.index(last) + 1]
                spans.append((ref.position, end + span.end()))  # "C1-C4" as one phrase
        if not wanted:
            out.append(ref)
            continue
        out.extend(MissionRef(ref.mission_id, ref.name, n, ref.position) for n in wanted)
    return out


def _in_component_list(match: re.Match[str], tokens: list[re.Match[str]]) -> bool:
    """Whether a lowercase "by" sits in a list of components ("bx, by and bz")."""
    text = match.string
    for other in tokens:
        between = text[other.end() : match.start()] or text[match.end() : other.start()]
        if other is not match and _LIST_GLUE.fullmatch(between):
            return True
    return False


def _quantities(text: str) -> list[QuantityWish]:
    """Quantity wishes in text order, with components, frames and species attached."""
    claimed: list[tuple[int, int]] = []
    wishes: list[QuantityWish] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in claimed)

    frame_match = _FRAME.search(text) or _SC_FRAME.search(text)
    frame = (frame_match[1] or "SC").upper() if frame_match else None
    for wish in _symbol_wishes(text):
        wishes.append(wish)
        claimed.append((wish.position, wish.position + len(wish.text)))
    tokens = list(_COMPONENT_TOKEN.finditer(text))
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
    for match in _MAGNITUDE_TOKEN.finditer(text):
        letter = (match["q"] or match["q3"] or "b").lower()
        key = "velocity" if letter == "v" else "magnetic_field"
        wishes.append(QuantityWish(key, match[0], match.start(), "magnitude"))
        claimed.append(match.span())
    for match in _BARE_SYMBOL.finditer(text):
        key = "velocity" if match["q"] == "V" else "magnetic_field"
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
    return sorted(unique.values(), key=lambda w: w.position)


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
        (_COMPONENT_WORD, None),
        (_MAGNITUDE_WORD, "magnitude"),
        (_VECTOR_WORD, "vector"),
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
    species_match = _SPECIES.search(text)
    if species_match and species_match.lastgroup:
        species = species_match.lastgroup
        result = [
            QuantityWish(w.quantity, w.text, w.position, w.component, w.frame, w.species or species)
            if w.quantity in {"density", "temperature", "particle_flux", "velocity"}
            else w
            for w in result
        ]
    return result


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


def _parameter_names(vocab: Vocabulary, dataset_ids: list[str], text: str) -> tuple[str, ...]:
    names: list[str] = []
    for dataset_id in dataset_ids:
        params = {p.name.lower(): p.name for p in vocab.catalog.dataset(dataset_id).data_parameters}
        for word in re.findall(r"[\w\-]+", text):
            found = params.get(word.lower())
            if found and (len(found) > 2 or word == found) and found not in names:
                names.append(found)
    return tuple(names)


# A capitalised name just before a quantity ("Juno magnetic field", "Foobar's |B|") or
# after "from"/"by" ("|B| from Juno") stands where a spacecraft goes.
_NAME_BEFORE = re.compile(r"(?<![\w-])(?P<n>[A-Z][A-Za-z0-9]{2,})(?:'s)?\s+$")
_NAME_AFTER = re.compile(r"\b(?:from|by)\s+(?P<n>[A-Z][A-Za-z0-9]{2,})\b")
# Verbs and places that open a sentence before a quantity ("Plot magnetic field").
_NOT_NAMES = re.compile(
    r"(?:show|plot|get|fetch|give|display|draw|graph|chart|overlay|compare|smooth|average"
    r"|download|load|find|see|visuali[sz]e|what|which|how|the|earth|sun)",
    re.I,
)


def _unknown_names(vocab: Vocabulary, physics: str, wishes: list[QuantityWish]) -> tuple[str, ...]:
    """Names standing where a spacecraft goes that the catalog has no mission for.

    `physics` has the missions the alias table knows masked already. A word counts only
    when the catalog cannot place it: no dataset, title or parameter mentions it, or it
    is just the prefix of dataset ids of no mission of its own (JUNO_HELIO1HR_POSITION).
    Physics words ("Plasma", "Energetic") are all over the catalog, so they never count.
    """
    found = [m["n"] for w in wishes if (m := _NAME_BEFORE.search(physics[: w.position]))]
    found += [m["n"] for m in _NAME_AFTER.finditer(physics)]
    unknown: list[str] = []
    for name in dict.fromkeys(found):
        if _NOT_NAMES.fullmatch(name) or _SPECIES.search(name) or _FRAME.fullmatch(name):
            continue
        if name.upper() in vocab.by_prefix or not vocab.catalog.search(name, limit=1):
            unknown.append(name)
    return tuple(unknown)


def _instrument_quantity(text: str, missions: tuple[MissionRef, ...]) -> list[QuantityWish]:
    """What named instruments measure, when the request names nothing else ("C1 FGM").

    Each quantity once, in the order named ("EMFISIS vs EFW": each instrument's own).
    """
    frame = _FRAME.search(text)  # "MGF data in GSM": the frame is the data's
    typed = frame[1].upper() if frame else None
    wishes: dict[str, QuantityWish] = {}
    for ref in missions:
        for inst in load_vocabulary().instruments_of(ref.mission_id):
            match = inst.words.search(text)
            if match and inst.quantity and inst.quantity not in wishes:
                wishes[inst.quantity] = QuantityWish(
                    inst.quantity, match[0], match.start(), frame=typed
                )
    return sorted(wishes.values(), key=lambda w: w.position)


def _instrument_words(missions: tuple[MissionRef, ...]) -> re.Pattern[str] | None:
    """Every name of the instruments of the missions named, as one pattern."""
    words = [
        inst.words.pattern
        for ref in missions
        for inst in load_vocabulary().instruments_of(ref.mission_id)
    ]
    return re.compile("|".join(f"(?:{w})" for w in words), re.I) if words else None


def _not_placed(text: str) -> tuple[str, ...]:
    """What the request names that no quantity here stands for ("neutron flux")."""
    pattern = load_vocabulary().not_placed
    match = pattern.search(text) if pattern else None
    if match is None:
        return ()
    return (f"what data you mean by '{match[0]}' (offline mode has no quantity for it)",)


_SLOT_WORDS: tuple[tuple[SlotKind, re.Pattern[str]], ...] = (
    ("component", _COMPONENT_TOKEN),
    ("component", _MAGNITUDE_TOKEN),
    ("component", _COMPONENT_WORD),
    ("component", _MAGNITUDE_WORD),
    ("component", _VECTOR_WORD),
    ("species", _SPECIES),
    ("frame", _FRAME),
    ("frame", _SC_FRAME),
    ("place", _AT_EARTH),
)


def _physics_spans(
    physics: str, quantities: list[QuantityWish], missions: tuple[MissionRef, ...]
) -> list[Slot]:
    """Spans of the quantity, component, species, frame, instrument and product words."""
    found: list[Slot] = [
        Slot("quantity", w.quantity, w.position, w.position + len(w.text))
        for w in quantities
        if physics[w.position : w.position + len(w.text)] == w.text
    ]
    found += [Slot(kind, m[0], *m.span()) for kind, rx in _SLOT_WORDS for m in rx.finditer(physics)]
    # "spacecraft potential": a filler word inside a quantity's phrase is the quantity's.
    found += [
        Slot("quantity", m[0], *m.span()) for rx in SYNONYM_WORDS for m in rx.finditer(physics)
    ]
    instruments = _instrument_words(missions)
    if instruments is not None:
        found += [Slot("instrument", m[0], *m.span()) for m in instruments.finditer(physics)]
    for term in product_terms(physics):
        found += [Slot("product", term.typed, *m.span()) for m in _phrase(term.typed, physics)]
    return found


def _phrase(piece: str, text: str) -> list[re.Match[str]]:
    return list(re.finditer(rf"(?<!\w){re.escape(piece)}(?!\w)", text, re.I)) if piece else []


def _quoted_spans(text: str, sayings: list[str]) -> list[Slot]:
    """Words already spoken for: a quoted piece of a question, an operation's own words."""
    pieces = [q for s in sayings for q in re.findall(r"'([^']+)'", s) or [s]]
    return [Slot("operation", p, *m.span()) for p in pieces for m in _phrase(p, text)]


def _account(vocab: Vocabulary, text: str, claimed: list[Slot]) -> SlotReading:
    """The slot reading of a request: what each parser claimed, and the rest.

    A word the catalog's metadata holds is a product word for the resolver (it ranks
    datasets by such words), so only the rest is left over.
    """
    first = account(text, claimed)
    placed = [w for w in first.leftover if _catalog_places(vocab, w.text)]
    if not placed:
        return first
    return account(text, [*claimed, *(Slot("product", w.text, w.start, w.end) for w in placed)])


def _catalog_places(vocab: Vocabulary, word: str) -> bool:
    parts = re.findall(r"[A-Za-z]{3,}", word)
    return bool(parts) and all(
        p.upper() not in vocab.by_prefix and vocab.catalog.search(p, limit=1) for p in parts
    )


# Words after which a name is a spacecraft ("seen by the Halcyon orbiter").
_CRAFT_BEFORE = re.compile(r"\b(?:from|by|of|at|on|aboard|with|for)\s+(?:the\s+)?$", re.I)
_QUALIFIED: frozenset[SlotKind] = frozenset({"mission", "instrument", "product", "dataset"})
_BESIDE: frozenset[SlotKind] = frozenset(
    {"quantity", "species", "component", "instrument", "product", "frame"}
)


def _names_left(reading: SlotReading) -> tuple[str, ...]:
    """Left-over names standing where a spacecraft goes.

    Before what it measured, or after "from"/"by"/"at" ("Demo Observatory probe
    temperature", "by the Halcyon orbiter").
    """
    names: list[str] = []
    for start, end in name_runs(reading):
        before = next((s for s in reversed(reading.slots) if s.end <= start), None)
        if before and before.kind in _QUALIFIED and not reading.text[before.end : start].strip():
            continue  # a qualifier of what was named ("ARTEMIS P1", "EPAM LEMS120")
        after = next((s for s in reading.slots if s.start >= end), None)
        between = reading.text[end : after.start] if after else ""
        beside = after is not None and after.kind in _BESIDE and not account(between, []).leftover
        if beside or _CRAFT_BEFORE.search(reading.text[:start]):
            names.append(reading.text[start:end])
    return tuple(names)


def _merged(names: tuple[str, ...], more: tuple[str, ...]) -> tuple[str, ...]:
    """`names` and those of `more` that neither hold nor are part of one already there."""
    out = list(names)
    for name in more:
        if not any(name in n or n in name for n in out):
            out.append(name)
    return tuple(out)


# A range this long may be only the year written beside a time that was not read.
_COARSE = timedelta(days=27)


def _inside(d: Duration, spans: tuple[tuple[int, int], ...]) -> bool:
    return any(a <= d.start and d.end <= b and (a, b) != (d.start, d.end) for a, b in spans)


def _time_with_durations(
    work: str, timeless: str, durations: list[Duration], now: datetime | None
) -> TimeFound:
    """The time range of the request, with the durations that belong to it.

    A duration may be part of it ("6 hours starting 14:00", "10 days ago", "12h to 06h",
    "plus or minus 2 hours") but never the whole of it ("2000 s").
    """
    raw = find_time(work, now)
    if raw.range is not None and any(_inside(d, raw.spans) for d in durations):
        return raw
    return find_time(timeless, now)


_Windows = list[tuple[str, tuple[str, str], int, int]]


def _part_windows(
    work: str, timeless: str, durations: list[Duration], now: datetime | None
) -> tuple[_Windows, str, str]:
    """Clock times an operation is computed over, masked from the texts the time is read in.

    "ACE Bz 06:00-18:00 on 2015-03-17, PSD over 09:00-10:00": the PSD's clocks are a part
    of the plotted range. Only when the rest still names a range with clock times; a
    request whose only clocks are the operation's ("on 2017-07-11: PSD of Bz over
    13:00-13:10") keeps them as its time range, as before.
    """
    windows = operation_windows(work)
    if not windows:
        return [], work, timeless
    rest, rest_timeless = work, timeless
    for _, _, start, end in windows:
        rest, rest_timeless = _mask(rest, start, end), _mask(rest_timeless, start, end)
    found = _time_with_durations(rest, rest_timeless, durations, now)
    if found.range is None or all(
        t.time() == datetime.min.time() for t in (found.range.start, found.range.end)
    ):
        return [], work, timeless
    return windows, rest, rest_timeless


def _computed_over(operations: list[OperationWish], windows: _Windows) -> list[OperationWish]:
    """The operations with the clock times each is computed over, if the request gave them."""
    during = {key: clocks for key, clocks, _, _ in windows}
    return [replace(op, during=during[op.kind]) if op.kind in during else op for op in operations]


def _without_operations(work: str) -> str:
    """The text with its operation words masked ("5th percentile", "time below -10 nT")."""
    for span in operation_spans(work):
        work = _mask(work, *span)
    return work


def _without_notation(physics: str, work: str) -> str:
    """`physics` without the marks operations write around quantities.

    The slash of a ratio ("Te/Ti": two quantities, their ratio an operation) and the
    "d" and "/dt" of a derivative ("dSYM-H/dt": SYM-H is a quantity to read).
    """
    for slash in ratio_slashes(work):
        physics = _mask(physics, slash, slash + 1)
    for operand in operand_spans(work):
        for span in operand.affixes():
            physics = _mask(physics, *span)
    return physics


def _without_citations(work: str) -> str:
    """`work` without the numbers that name no time nor probe.

    A designation ("LANL 1994-084": a name, not a day of 1994) and a remark citing a
    paper ("(see Fig. 2)").
    """
    for span in find_designations(work):
        work = _mask(work, *span)
    for cited in _CITED.finditer(work):
        work = _mask(work, *cited.span())
    return work


def parse_request(text: str, vocab: Vocabulary, now: datetime | None = None) -> RequestIntent:
    """Read one request into a `RequestIntent` (never raises for odd text)."""
    text = instrument_capitals(text)  # "wind mfi": the instrument, as "Wind MFI" is
    work = " ".join(text.split())
    title, title_span = find_title(work)
    if title_span:
        work = _mask(work, *title_span)
    dataset_ids: list[str] = []
    dataset_spans: list[tuple[str, tuple[int, int]]] = []
    for match in _DATASET_SHAPE.finditer(work):
        known = vocab.dataset_ids.get(match[0].upper())
        if known:
            dataset_ids.append(known)
            dataset_spans.append((known, match.span()))
            work = _mask(work, *match.span())
    for known, span in spaced_dataset_ids(vocab.by_prefix, work):
        dataset_ids.append(known)
        dataset_spans.append((known, span))
        work = _mask(work, *span)
    work = _without_citations(work)
    time_range, time_text, time_error = None, None, None
    time_spans: list[tuple[int, int]] = []
    durations = find_durations(work)
    timeless = work
    for d in durations:
        timeless = _mask(timeless, d.start, d.end)
    windows, work, timeless = _part_windows(work, timeless, durations, now)
    if time_range is None:
        found = _time_with_durations(work, timeless, durations, now)
        durations = [d for d in durations if not _inside(d, found.spans)]
        time_range, time_text, time_error = found.range, found.text, found.error
        time_spans = list(found.spans)
        for span in found.spans:
            work = _mask(work, *span)
    coarse = time_range is None or time_range.duration > _COARSE
    if coarse and time_error is None and (unread := unread_time_words(work)):
        # Never "the last 7 days", nor the year written beside it, for a request that
        # wrote a time this could not read.
        time_error = (
            f"I could not read the time around '{unread}'; "
            "please write it like 2015-03-17 or 2015-03-17 to 2015-03-19"
        )
        time_range, time_text = None, None
    time_unread = stray_clocks(_without_operations(work)) if time_error is None else ()
    # A formula's symbols ("n v^2") name no spacecraft; a place ("in lunar orbit") says
    # where, and asks for no position.
    formulas, places = find_formulas(work), find_places(work)
    # A derived quantity's words ("plasma beta", "-V x B") name what is computed from
    # its inputs: no mission, no quantity to fetch (agents/offline/derived.py).
    derived = [m.span() for d in load_vocabulary().derived for m in d.words.finditer(work)]
    work, plurals = _plurals(vocab, work)
    named = work
    for span in [*formulas, *derived]:
        named = _mask(named, *span)
    missions, spans, counts = _missions(vocab, named, plurals)
    missions, spans = id_parts_not_missions(vocab.catalog, named, missions, spans)
    missions = missions or (() if dataset_ids else carrier_missions(named, vocab.mission_names))
    physics = work
    for span in [*spans, *places, *derived, *((d.start, d.end) for d in durations)]:
        physics = _mask(physics, *span)
    physics = _without_notation(physics, work)
    worded = physics
    for span in formulas:
        worded = _mask(worded, *span)
    species = _SPECIES.search(physics)
    # "power spectrum", "Fourier spectrum": an operation's words, never a spectrogram
    computing = operation_spans(work)
    quantities = spectrum_wishes(
        worded, _quantities(worded), species.lastgroup if species else None, computing
    ) or spectrum_wishes(
        physics, _quantities(physics), species.lastgroup if species else None, computing
    )
    if not quantities:
        quantities = _instrument_quantity(physics, missions)
    channels = None if dataset_ids else named_channels(vocab.catalog, missions, physics, time_range)
    operations = _computed_over(find_operations(work, durations), windows)
    hinted = physics
    for span in computing:
        hinted = _mask(hinted, *span)
    figure_format, figure_file, data_format = find_export(work)
    resample = next((op for op in operations if op.kind == "resample"), None)
    doubts = (
        counts
        or probe_doubts(vocab.probes, " ".join(text.split()), missions, bool(dataset_ids))
        or find_doubts(named, vocab.aliases, [])
    ) + _not_placed(physics)
    claimed: list[Slot] = [
        *(Slot("figure", "title", *title_span) for _ in [1] if title_span),
        *(Slot("dataset", d, *span) for d, span in dataset_spans),
        *(Slot("time", time_text or "", *span) for span in time_spans),
        *(Slot("mission", work[a:b], a, b) for a, b in spans),
        *(Slot("formula", work[a:b], a, b) for a, b in formulas),
        *(Slot("place", work[a:b], a, b) for a, b in places),
        *(Slot("operation", d.text, d.start, d.end) for d in durations),
        *(Slot("operation", work[a:b], a, b) for a, b in computing),
        *(Slot("quantity", work[a:b], a, b) for a, b in derived),
        *_physics_spans(physics, quantities, missions),
        *_quoted_spans(
            work, [*doubts, *time_unread, *(op.text for op in operations), time_error or ""]
        ),
    ]
    slots = _account(vocab, work, claimed)
    return RequestIntent(
        text=text,
        missions=missions,
        quantities=tuple(quantities),
        time_range=time_range,
        time_text=time_text,
        time_error=time_error,
        time_unread=time_unread,
        cadence_s=resample.window_s if resample else None,
        cadence_text=resample.text if resample else None,
        operations=tuple(operations),
        plot=PlotWish(
            wanted=wants_plot(work),
            layout=find_layout(_without_operations(work)),
            log_y=wants_log(work),
            title=title,
            colours=find_colours(physics),
            export_format=figure_format,
            export_filename=figure_file,
        ),
        compare=_COMPARE.search(work) is not None or len(missions) > 1,
        at_earth=_AT_EARTH.search(work) is not None,
        dataset_ids=tuple(dict.fromkeys(dataset_ids))
        or ((channels.dataset_id,) if channels else ()),
        parameter_names=_parameter_names(vocab, dataset_ids, work)
        or (channels.parameters + channels.missing if channels else ()),
        save_data_format=data_format,
        hints=find_hints(hinted, [(q.position, q.text) for q in quantities]),
        unknown_names=_merged(_unknown_names(vocab, worded, quantities), _names_left(slots)),
        unplaced=() if quantities else find_unplaced(hinted, _instrument_words(missions)),
        doubts=doubts,
        slots=slots,
        discovery=find_discovery(
            work, bool(missions), bool(dataset_ids), bool(quantities), time_range is not None
        ),
    )
