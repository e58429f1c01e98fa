"""The spacecraft a request names: missions, probes, lists and whole constellations.

Missions are spotted with the catalog's alias table ("PSP", "SolO", "STEREO-A"); a probe
written after its mission ("THEMIS probes C", "MMS 1") or in a list ("THEMIS-A/-D/-E",
"thc, thd, the") is read with it; "all four MMS" and "each Van Allen probe" name every
spacecraft of the constellation, and a count that does not fit is asked about. "the
wind" blowing is not the Wind spacecraft. Imports `catalog`, `timerange.words`,
`vocabulary` and this package.
"""

from __future__ import annotations

import re

from xhelio.catalog.aliases import word_spans
from xhelio.language.carriers import carrier_missions
from xhelio.language.catalog_view import Vocabulary
from xhelio.language.intent import MissionRef
from xhelio.language.probes import probe_swapped
from xhelio.language.ratios import ratio_spans
from xhelio.language.resolve import probe_wanted
from xhelio.language.slots import filler_words, masked
from xhelio.timerange.words import WHOLE_NUMBER_WORDS, alternatives
from xhelio.vocabulary import MissionEntry, load_vocabulary

__all__ = ["omni_looks", "plurals_read", "read_missions"]

_CRAFT_AFTER = re.compile(
    r"^\s+(?:spacecraft|satellite|mission|probe|data|observatory|mfi|swe|3dp|waves|epact)\b", re.I
)

# "Wind speed" is physics, but "Wind velocity at L1" with a capital W is the spacecraft.
_WIND_CRAFT = re.compile(r"(?<!solar )(?<!Solar )\b(?:Wind|WIND)(?= (?:speed|velocity)\b)")


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


def plurals_read(vocab: Vocabulary, text: str) -> tuple[str, frozenset[int]]:
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
        text = masked(text, end, end + 1)
    return text, ends


def read_missions(
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
    refs += _listed_names(vocab, text, refs, spans)
    refs += _restated_probes(text, refs, spans)
    refs.sort(key=lambda r: r.position)
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


_LIST_GLUE = r"\s*(?:,|&|/|\band\b|\bor\b|\bvs\b\.?|\bversus\b)\s*(?:and\s+)?"
_GLUED_AFTER = re.compile(rf"^{_LIST_GLUE}$", re.I)
# A word after "the" that makes it an article; "on", "for", "during" start the time.
# (The time is read first: its words are blanks here.)
_WORD_NEXT = re.compile(
    r"^\s*(?!(?:on|for|during|over|from|between|at|in)\b(?:\s*\d|\s*$|\s\s))[A-Za-z]", re.I
)


def _listed_names(
    vocab: Vocabulary, text: str, refs: list[MissionRef], spans: list[tuple[int, int]]
) -> list[MissionRef]:
    """Spacecraft named by a word that names one only in a list ("tha and the", "wi and ac").

    Such a word (`AliasTable.listed_only`) counts when "and", "," "/" or "vs" join it to
    a spacecraft read already (or to one read so); an English word of the request
    ("the") only when no word follows it but the time's ("tha and the (probes A and
    E)", "tha and the on 2008-02-26"), so "Wind and the ACE data" keeps its "the".
    """
    filler = filler_words()
    found: list[MissionRef] = []
    named = sorted(spans)
    grew = True
    while grew:
        grew = False
        for word, start, end in word_spans(text):
            mission_id = vocab.aliases.listed_only(word)
            if mission_id is None or any(a <= start < b for a, b in named):
                continue
            if word.lower() in filler and _WORD_NEXT.match(text[end:]):
                continue
            if not any(
                _GLUED_AFTER.match(text[b:start]) or _GLUED_AFTER.match(text[end:a])
                for a, b in named
            ):
                continue
            name = vocab.mission_names.get(mission_id, mission_id)
            entry = load_vocabulary().missions.get(mission_id)
            typed = word.upper() if entry is not None and entry.probe_of(word) else name
            found.append(MissionRef(mission_id, name, typed, start))
            named.append((start, end))
            spans.append((start, end))
            grew = True
    return found


# "(probes A and E)", "(C1, C3)": the probes of the one constellation named, said again.
_PROBE_ITEM = r"(?:[A-Za-z]{0,5}-?)?(?:\d{1,2}|[A-Ea-e])"
_RESTATED = re.compile(
    rf"\(\s*(?:(?:probes?|spacecraft|s/c)\s+)?{_PROBE_ITEM}"
    rf"(?:\s*(?:,|&|/|and)\s*(?:and\s+)?{_PROBE_ITEM})*\s*\)",
    re.I,
)


_RESTATED_NOUN = re.compile(r"^\s*(?:probes?|spacecraft|s/c)\s+", re.I)
_RESTATED_GLUE = re.compile(r"\s*(?:,|&|/|\band\b)\s*(?:and\s+)?", re.I)
_PROBE_END = re.compile(r"(?:\d{1,2}|[A-Ea-e])$")


def _probe_letter(item: str) -> str:
    """The probe letter or number an item of a parenthesis ends with ("A", "probe 3")."""
    end = _PROBE_END.search(item)
    return end[0].upper() if end else ""


def _restated_probes(
    text: str, refs: list[MissionRef], spans: list[tuple[int, int]]
) -> list[MissionRef]:
    """The probes a parenthesis lists for the one constellation named, read with it.

    "at tha and the (probes A and E)": the parenthesis names the same spacecraft (and any
    one the words before it left unread); a parenthesis naming no probe of that mission,
    or several missions named, change nothing.
    """
    ids = {r.mission_id for r in refs}
    entry = load_vocabulary().missions.get(next(iter(ids))) if len(ids) == 1 else None
    if entry is None or not entry.probes:
        return []
    ref = refs[0]
    have = {probe_wanted(r.text) for r in refs}
    found: list[MissionRef] = []
    for said in _RESTATED.finditer(text):
        inner = _RESTATED_NOUN.sub("", said[0][1:-1])
        items = [i for i in _RESTATED_GLUE.split(inner) if i]
        probes = [entry.probe_of(i) or _probe_letter(i) for i in items]
        if not all(p in entry.probes for p in probes):
            continue
        spans.append(said.span())
        for p in probes:
            if p not in have:
                have.add(p)
                found.append(MissionRef(ref.mission_id, ref.name, entry.probes[p][0], said.start()))
    return found


def _the_wind(text: str, typed: str, start: int, end: int) -> bool:
    """Whether lower-case "the wind" is the wind blowing ("how fast was the wind")."""
    return (
        typed == "wind"
        and _THE_WIND.search(text[:start]) is not None
        and _CRAFT_AFTER.match(text[end:]) is None
    )


# "proton omni flux", "omni electron intensities", "omni-directional": a look direction.
_OMNI_LOOK = re.compile(
    r"^(?:[- ]?directional\b|\s+(?:[\w+-]+\s+){0,2}?"
    r"(?:flux|fluxes|intensit\w*|spectr\w*|counts?|rates?|PSD|phase[- ]space)\b)",
    re.I,
)
# "electric field PSD (omni)": the look direction written after its data, in brackets.
_OMNI_LOOK_BEFORE = re.compile(
    r"\b(?:flux|fluxes|intensit\w*|spectr(?:um|a|ogram)s?|PSDs?|(?:spectral|phase[- ]space)\s+"
    r"densit(?:y|ies))\s*[(\[]\s*$",
    re.I,
)


def omni_looks(
    vocab: Vocabulary, text: str, refs: tuple[MissionRef, ...], spans: list[tuple[int, int]]
) -> tuple[tuple[MissionRef, ...], list[tuple[int, int]]]:
    """The missions and spans without an "omni" that means omnidirectional, not OMNI.

    "omni" before a flux, intensity or spectrum, or in brackets after one ("PSD (omni)"),
    is the look direction when the request names the spacecraft otherwise: another
    mission, an instrument only one mission carries ("REPT", "HOPE"), or "omni" written
    in lower case. "OMNI proton flux" alone
    is the OMNI data set's.
    """
    looks = [
        r
        for r in refs
        if r.mission_id == "omni"
        and r.text.lower().startswith("omni")
        and (
            _OMNI_LOOK.match(text[r.position + 4 :]) or _OMNI_LOOK_BEFORE.search(text[: r.position])
        )
    ]
    if not looks:
        return refs, spans
    kept = tuple(r for r in refs if r not in looks)
    rest = text
    for r in looks:
        rest = masked(rest, r.position, r.position + len(r.text))
    elsewhere = bool(kept) or any(
        c.mission_id != "omni" for c in carrier_missions(rest, vocab.mission_names)[0]
    )
    looks = [r for r in looks if elsewhere or r.text.islower()]
    if not looks:
        return refs, spans
    starts = {r.position for r in looks}
    return tuple(r for r in refs if r not in looks), [s for s in spans if s[0] not in starts]


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


# "REPT pitch angle flux, probe B": a spacecraft named apart from its mission's name.
_DETACHED_PROBE = re.compile(
    r"(?<![\w-])(?i:probe|spacecraft|satellite|s/c)\s+(?P<p>[A-E]|\d{1,2})(?![\w-])"
)


def detached_probes(
    text: str, missions: tuple[MissionRef, ...], spans: list[tuple[int, int]]
) -> tuple[tuple[MissionRef, ...], list[tuple[int, int]]]:
    """The one probe a request names apart from its mission ("EMFISIS ... probe A").

    A constellation named whole, or by an instrument only, with one "probe B" or
    "spacecraft 3" elsewhere in the request (outside the spans read already) means that
    probe of it; several missions named, or a letter no probe of it has, change nothing.
    """
    ids = {ref.mission_id for ref in missions}
    found = [
        m for m in _DETACHED_PROBE.finditer(text) if not any(a <= m.start() < b for a, b in spans)
    ]
    if len(ids) != 1 or len(found) != 1:
        return missions, spans
    entry = load_vocabulary().missions.get(next(iter(ids)))
    match = found[0]
    shorthands = entry.probes.get(match["p"].upper()) if entry is not None else None
    one_probe = len(missions) == 1 and probe_wanted(missions[0].text) is not None
    if not shorthands or one_probe:
        return missions, spans
    ref = missions[0]
    return (MissionRef(ref.mission_id, ref.name, shorthands[0], match.start("p")),), [
        *spans,
        match.span(),
    ]
