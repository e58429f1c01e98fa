"""The names people use: mission aliases, physics-word synonyms, and typed-query plans.

`AliasTable` maps every way of naming a mission ("PSP", "Parker Solar Probe", "STEREO-A",
"Van Allen Probes") to a catalog mission id. It is built from the snapshot's own mission
ids and names plus a small table of common names; entries for missions the catalog does
not have are ignored. `find_mentions` spots mission names inside free text without
mistaking physics phrases ("solar wind", "polar cap") or lower-case English words
("fast", "image") for missions.

`QUANTITY_SYNONYMS` expands physics words into the abbreviations, instrument acronyms,
parameter names and units that CDAWeb metadata actually uses. `plan_query` turns what a
person typed into missions named, words that may be dataset ids or parameter names, and
one FTS5 expression per concept, every word quoted so no input is FTS syntax. Imports
only `catalog.model` and `vocabulary` from xhelio.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from xhelio.catalog.model import Mission, ParameterInfo
from xhelio.vocabulary import load_vocabulary

__all__ = [
    "QUANTITY_SYNONYMS",
    "AliasTable",
    "Expansion",
    "MissionMention",
    "QueryPlan",
    "Synonym",
    "normalize_name",
    "plan_query",
    "word_spans",
]

# Common names, probe shorthands, English-word aliases and physics phrases come from the
# one domain vocabulary (xhelio/vocabulary/missions.toml and domain.toml).
_VOCABULARY = load_vocabulary()
_COMMON_NAMES: dict[str, tuple[str, ...]] = {
    m.mission_id: m.names + tuple(s for probe in m.probes.values() for s in probe)
    for m in _VOCABULARY.missions.values()
}
# Aliases that are also everyday words of the field: they name a mission only when written
# with a capital letter ("FAST electrons", "Polar UVI"), never in lower case ("fast ions",
# "polar region"). Lower-case "wind" still means the spacecraft unless in "solar wind".
_ENGLISH_WORD_ALIASES = _VOCABULARY.english_word_aliases
# Probe shorthands that count only when typed exactly so: "THE" is THEMIS-E, "The" English.
_EXACT_ALIASES = _VOCABULARY.exact_aliases()
# Phrases whose words collide with mission names but mean physics, in any case.
_PHYSICS_PHRASES = _VOCABULARY.physics_phrases
# Id prefixes that are also words of the field ("AC" field, "HK" housekeeping).
_NOT_ABBREVIATIONS = _VOCABULARY.not_mission_abbreviations


def normalize_name(text: str) -> str:
    """Lower-case `text` and collapse everything but letters and digits to single spaces."""
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """Split text into (word, start, end) runs of letters and digits (`_` separates)."""
    return [(m.group(0), m.start(), m.end()) for m in re.finditer(r"[^\W_]+", text)]


@dataclass(frozen=True)
class MissionMention:
    """A mission named inside free text: which mission and which words named it."""

    mission_id: str
    first_word: int
    end_word: int
    text: str


class AliasTable:
    """Every known name of every catalog mission, normalized, with lookup and spotting."""

    def __init__(self, missions: Iterable[Mission]) -> None:
        self._by_name: dict[str, str] = {}
        self._aliases: dict[str, list[str]] = {}
        self._names: dict[str, str] = {}
        self._exact = set(_EXACT_ALIASES)
        missions = list(missions)
        for mission in missions:
            self._names[mission.id] = mission.name
            for alias in _generated_aliases(mission):
                self._add(mission.id, alias)
        for mission_id, names in _COMMON_NAMES.items():
            if mission_id in self._names:
                for alias in names:
                    self._add(mission_id, alias)
        # Names that count only in a list of spacecraft ("tha and the", "wi and ac"):
        # the exact shorthands in another case, the id prefixes that are words ("AC").
        self._listed: dict[str, str] = {}
        for mission in missions:
            for alias in _id_prefix_aliases(mission):
                if normalize_name(alias) not in self._by_name:
                    self._exact.add(alias)
                    self._add(mission.id, alias)
            for alias in _id_prefix_aliases(mission, words=True):
                self._listed.setdefault(alias.lower(), mission.id)
        for alias in self._exact:
            if (mission_id := self._by_name.get(normalize_name(alias))) is not None:
                self._listed.setdefault(alias.lower(), mission_id)
        self._longest = max((len(key.split()) for key in self._by_name), default=1)

    def _add(self, mission_id: str, alias: str) -> None:
        key = normalize_name(alias)
        if not key:
            return
        # The first mission to claim a name keeps it: snapshot names beat common names.
        self._by_name.setdefault(key, mission_id)
        if self._by_name[key] == mission_id:
            shown = self._aliases.setdefault(mission_id, [])
            if alias not in shown and alias != mission_id:
                shown.append(alias)
        glued = key.replace(" ", "")
        if glued != key:
            self._by_name.setdefault(glued, mission_id)

    def aliases(self, mission_id: str) -> tuple[str, ...]:
        """Other names of a mission (not its id or name), in the order they were learned."""
        own = {normalize_name(mission_id), normalize_name(self._names.get(mission_id, ""))}
        return tuple(a for a in self._aliases.get(mission_id, ()) if normalize_name(a) not in own)

    def names(self) -> dict[str, str]:
        """Every normalized name and the mission id it names (a copy)."""
        return dict(self._by_name)

    def resolve(self, name: str) -> str | None:
        """Mission id named by `name` (any alias, any case), or None."""
        key = normalize_name(name)
        return self._by_name.get(key) or self._by_name.get(key.replace(" ", ""))

    def listed_only(self, word: str) -> str | None:
        """The mission `word` names only when listed with other spacecraft, or None.

        A probe shorthand typed in another case than its own ("the" for THE) or an id
        prefix that is also a word of the field ("ac" for AC_): "tha and the", "wi and
        ac" list spacecraft; alone, "the" is English and "ac" a field's kind.
        """
        return self._listed.get(word.lower())

    def find_mentions(self, text: str) -> list[MissionMention]:
        """Missions named in free text, longest names first, never overlapping."""
        words = word_spans(text)
        lowered = [w.lower() for w, _, _ in words]
        blocked = _physics_phrase_words(lowered)
        mentions: list[MissionMention] = []
        i = 0
        while i < len(words):
            found = self._match_at(text, words, lowered, blocked, i)
            if found is None:
                i += 1
                continue
            mentions.append(found)
            i = found.end_word
        return mentions

    def _match_at(
        self,
        text: str,
        words: Sequence[tuple[str, int, int]],
        lowered: Sequence[str],
        blocked: set[int],
        start: int,
    ) -> MissionMention | None:
        for length in range(min(self._longest, len(words) - start), 0, -1):
            span = range(start, start + length)
            if any(i in blocked for i in span):
                continue
            key = " ".join(lowered[start : start + length])
            mission_id = self._by_name.get(key)
            if mission_id is None and length > 1:
                mission_id = self._by_name.get(key.replace(" ", ""))
            if mission_id is None:
                continue
            original = text[words[start][1] : words[start + length - 1][2]]
            if key in _ENGLISH_WORD_ALIASES and original == original.lower():
                continue
            if key.upper() in self._exact and original != key.upper():
                continue
            return MissionMention(mission_id, start, start + length, original)
        return None


def _generated_aliases(mission: Mission) -> list[str]:
    """Names taken from the snapshot itself: id, name, and an acronym in parentheses."""
    names = [mission.id, mission.name]
    bare = re.sub(r"\s*\([^)]*\)", "", mission.name).strip()
    names.append(bare)
    for inner in re.findall(r"\(([^)]*)\)", mission.name):
        if re.fullmatch(r"[A-Z][A-Z0-9/\-]+", inner.strip()):
            names.append(inner.strip())
    if "/" in bare:
        names.extend(part.strip() for part in bare.split("/"))
    return [n for n in names if n]


def _id_prefix_aliases(mission: Mission, words: bool = False) -> list[str]:
    """Dataset id prefixes that abbreviate the mission's name ("WI", "GE", "I8", "UY").

    A prefix counts when its letters are those of one of the mission's names, in order
    and from its first letter (a probe number may follow), and it is no data level
    ("L1") nor a word of the field (`not_mission_abbreviations`). Such an alias names
    the mission only when typed exactly so, in capitals ("ge" is no Geotail). `words`:
    only the prefixes that are words of the field ("AC").
    """
    names = [mission.name, mission.id, *_COMMON_NAMES.get(mission.id, ())]
    squeezed = [re.sub(r"[^A-Z]", "", n.upper()) for n in names]
    found: list[str] = []
    for prefix in dict.fromkeys(d.split("_", 1)[0].upper() for d in mission.dataset_ids):
        letters = re.fullmatch(r"([A-Z]{1,4})\d{0,2}", prefix)
        if letters is None or len(prefix) < 2 or (prefix in _NOT_ABBREVIATIONS) != words:
            continue
        if re.fullmatch(r"L\d", prefix):
            continue
        if any(n[:1] == letters[1][0] and _in_order(letters[1], n) for n in squeezed):
            found.append(prefix)
    return found


def _in_order(letters: str, word: str) -> bool:
    rest = iter(word)
    return all(c in rest for c in letters)


def _physics_phrase_words(lowered: Sequence[str]) -> set[int]:
    blocked: set[int] = set()
    for phrase in _PHYSICS_PHRASES:
        parts = phrase.split()
        for i in range(len(lowered) - len(parts) + 1):
            if list(lowered[i : i + len(parts)]) == parts:
                blocked.update(range(i, i + len(parts)))
    return blocked


@dataclass(frozen=True)
class Expansion:
    """One search term a physics word expands to; `column` limits where it may match."""

    term: str
    column: str | None = None


@dataclass(frozen=True)
class Synonym:
    """Words people type for one quantity, and the terms CDAWeb metadata uses for it."""

    phrases: tuple[str, ...]
    expansions: tuple[Expansion, ...]


def _any(*terms: str) -> tuple[Expansion, ...]:
    return tuple(Expansion(t) for t in terms)


def _in(column: str, *terms: str) -> tuple[Expansion, ...]:
    return tuple(Expansion(t, column) for t in terms)


# Single letters and unit strings are confined to parameter names / units: in titles they
# are initials of PIs ("E. C. Stone") and would match everything.
QUANTITY_SYNONYMS: tuple[Synonym, ...] = (
    Synonym(
        ("magnetic field", "b field", "bfield", "imf", "mag field", "magnetic", "magnetometer"),
        _any("magnetic field", "mag", "mfi", "fgm", "magnetometer", "imf")
        + _in("params", "b", "bmag", "b_mag", "bgse", "bgsm", "brtn", "babs")
        + _in("units", "nt"),
    ),
    Synonym(
        ("mag",),
        _any("mag", "mfi", "fgm", "magnetometer", "magnetic field") + _in("units", "nt"),
    ),
    Synonym(
        (
            "solar wind speed",
            "solar wind velocity",
            "wind speed",
            "flow speed",
            "bulk speed",
            "bulk velocity",
            "speed",
            "velocity",
        ),
        _any("velocity", "speed", "flow speed", "bulk speed")
        + _in("params", "v", "vsw", "vp", "vx", "v_gse", "vp_gse")
        + _in("units", "km s"),
    ),
    # `Ne` is neon as often as electron density (ISOIS rates): only "electron density"
    # reaches for it.
    Synonym(
        ("number density", "proton density", "ion density", "plasma density", "density"),
        _any("density") + _in("params", "n", "np", "n_p", "ni") + _in("units", "cm 3", "cc"),
    ),
    Synonym(
        ("electron density",),
        _any("electron density") + _in("params", "ne", "n_e") + _in("units", "cm 3", "cc"),
    ),
    Synonym(
        ("temperature", "temp"),
        _any("temperature", "thermal speed")
        + _in("params", "t", "tp", "te", "ti")
        + _in("units", "k", "ev"),
    ),
    Synonym(
        ("dynamic pressure", "flow pressure", "pressure"),
        _any("pressure") + _in("params", "p", "pdyn") + _in("units", "npa"),
    ),
    Synonym(
        ("electric field", "e field", "efield"),
        _any("electric field", "efi", "edp", "efw", "edc") + _in("units", "mv m"),
    ),
    Synonym(
        ("plasma",),
        _any("plasma", "swe", "swepam", "3dp", "pesa", "moments", "sweap", "span", "spc", "swa"),
    ),
    Synonym(
        ("energetic particles", "energetic particle", "particles", "particle flux"),
        _any("energetic particle", "particle", "flux", "epd", "epam", "sep", "sst"),
    ),
    Synonym(
        ("plasma waves", "radio waves", "waves", "radio"),
        _any("wave", "radio", "spectrum", "tnr", "rpw", "emfisis", "waves"),
    ),
    Synonym(
        ("position", "ephemeris", "orbit", "trajectory", "location"),
        _any("position", "ephemeris", "orbit", "trajectory", "helio1hr") + _in("units", "au", "re"),
    ),
)


_STOP_WORDS = frozenset(
    {
        "a", "an", "and", "the", "of", "for", "in", "on", "at", "to", "from", "by", "with",
        "or", "is", "me", "show", "plot", "get", "fetch", "find", "give", "data", "dataset",
        "datasets", "what", "which", "measured", "measurements",
    }
)  # fmt: skip
_SUPPORT_WORDS = frozenset(
    {
        "orbit", "orbits", "ephemeris", "position", "positions", "trajectory", "location",
        "attitude", "housekeeping", "hk", "calibration", "state", "spin", "engineering",
    }
)  # fmt: skip
_SYNONYM_PHRASES: dict[tuple[str, ...], Synonym] = {
    tuple(normalize_name(phrase).split()): synonym
    for synonym in QUANTITY_SYNONYMS
    for phrase in synonym.phrases
}
_LONGEST_PHRASE = max(len(key) for key in _SYNONYM_PHRASES)


def _fts_phrase(term: str, column: str | None = None) -> str:
    """One FTS5 phrase from plain words; quoting makes every word a literal, never syntax."""
    words = re.findall(r"[^\W_]+", term.lower())
    if not words:
        return ""
    phrase = '"' + " ".join(words) + '"'
    return f"{column} : {phrase}" if column else phrase


@dataclass(frozen=True)
class _Concept:
    typed: str
    expansions: tuple[Expansion, ...]

    def terms(self) -> list[Expansion]:
        # A lone typed letter ("B", "V") is a parameter name; in titles it is a PI's initial.
        typed_column = "{params units}" if re.fullmatch(r"[^\W\d_]", self.typed) else None
        return [Expansion(self.typed, typed_column), *self.expansions]

    def expression(self) -> str:
        parts = list(dict.fromkeys(p for t in self.terms() if (p := _fts_phrase(t.term, t.column))))
        return "(" + " OR ".join(parts) + ")" if len(parts) > 1 else parts[0]


@dataclass(frozen=True)
class QueryPlan:
    """A free-text query turned into mission ids, exact-id candidates and FTS5 expressions."""

    mission_ids: tuple[str, ...]
    id_words: tuple[str, ...]
    typed_words: tuple[str, ...]
    concepts: tuple[_Concept, ...]
    mission_words: tuple[str, ...]

    @property
    def wants_support_data(self) -> bool:
        """Whether the query asks for orbit/attitude/housekeeping-type data itself."""
        words = {w for c in self.concepts for w in c.typed.split()}
        return bool(words & _SUPPORT_WORDS)

    @property
    def concept_expressions(self) -> tuple[str, ...]:
        """One FTS5 expression per concept (a typed word or phrase with its synonyms)."""
        return tuple(c.expression() for c in self.concepts)

    @property
    def all_expression(self) -> str:
        """All concepts required; empty when there are fewer than two concepts."""
        if len(self.concepts) < 2:
            return ""
        return " AND ".join(self.concept_expressions)

    @property
    def any_expression(self) -> str:
        """Any concept or mission word; empty when the query has no concept at all."""
        if not self.concepts:
            return ""
        extra = [p for w in self.mission_words if (p := _fts_phrase(w))]
        return " OR ".join([*self.concept_expressions, *extra])

    def matching_parameters(self, parameters: Sequence[ParameterInfo]) -> tuple[str, ...]:
        """Names of the parameters that the query's words or synonyms describe."""
        terms = [
            (normalize_name(t.term), t.column) for c in self.concepts for t in c.terms() if t.term
        ]
        typed = set(self.typed_words)
        matched: list[str] = []
        for p in parameters:
            if p.is_time:
                continue
            if p.name.upper() in typed:
                matched.append(p.name)
                continue
            words = _words_of(p.name, p.units, p.description)
            if any(_describes(words, t, col) for t, col in terms):
                matched.append(p.name)
        return tuple(matched)


@dataclass(frozen=True)
class _ParameterWords:
    """A parameter's name, units and description normalized once (searches reuse them)."""

    compact_name: str
    name_tokens: frozenset[str]
    units: str
    description: str  # padded with spaces, for whole-word tests


@lru_cache(maxsize=1 << 15)
def _words_of(name: str, units: str, description: str) -> _ParameterWords:
    normalized = normalize_name(name)
    return _ParameterWords(
        compact_name=normalized.replace(" ", ""),
        name_tokens=frozenset({*normalized.split(), name.lower()}),
        units=normalize_name(units),
        description=f" {normalize_name(description)} ",
    )


def _describes(words: _ParameterWords, term: str, column: str | None) -> bool:
    if column == "units":
        return term == words.units
    if column is not None:
        return term in words.name_tokens or term.replace(" ", "") == words.compact_name
    if " " not in term and term in words.name_tokens:
        return True
    if len(term) < 3:
        return False
    return f" {term} " in words.description or f" {term}s " in words.description


def plan_query(text: str, aliases: AliasTable) -> QueryPlan:
    """Split free text into missions named, raw words (for ids) and search concepts."""
    raw_words = [w.strip("()[]{}<>\"'`,;:!?*+=|\\^~") for w in text.split()]
    raw_words = [w for w in raw_words if w]
    mentions = aliases.find_mentions(text)
    words = word_spans(text)
    in_mention = {i for m in mentions for i in range(m.first_word, m.end_word)}
    content = [w.lower() for i, (w, _, _) in enumerate(words) if i not in in_mention]
    meaningful = [w for w in content if w not in _STOP_WORDS] or content
    concepts = _concepts(meaningful)
    # Physics words ("density") are served by their synonyms; only the other words
    # ("Dst", "B_GSE") are likely to be a parameter's exact name.
    known = {m.text.lower() for m in mentions} | {
        w for c in concepts if c.expansions for w in c.typed.split()
    }
    typed = [w for w in [*raw_words, *meaningful] if normalize_name(w) not in known]
    return QueryPlan(
        mission_ids=tuple(dict.fromkeys(m.mission_id for m in mentions)),
        id_words=tuple(dict.fromkeys(w.upper() for w in raw_words)),
        typed_words=tuple(dict.fromkeys(w.upper() for w in typed)),
        concepts=tuple(concepts),
        mission_words=tuple(m.text for m in mentions),
    )


def _concepts(words: Sequence[str]) -> list[_Concept]:
    concepts: list[_Concept] = []
    i = 0
    while i < len(words):
        for length in range(min(_LONGEST_PHRASE, len(words) - i), 0, -1):
            synonym = _SYNONYM_PHRASES.get(tuple(words[i : i + length]))
            if synonym is not None:
                concepts.append(_Concept(" ".join(words[i : i + length]), synonym.expansions))
                i += length
                break
        else:
            concepts.append(_Concept(words[i], ()))
            i += 1
    return concepts
