"""The one domain vocabulary, as data.

Missions and probes, instruments, species, frames, derived quantities and named events.

The facts live in `missions.toml` and `domain.toml` in this package (shipped in the
wheel); `load_vocabulary()` reads them once and returns a frozen `DomainVocabulary`.
The catalog's alias table, the offline parser and resolver, the request-vs-data check
and the planner's time finder all read it, so adding a mission, a probe shorthand, an
instrument or an event is one data edit plus a test. Imports nothing from xhelio.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

__all__ = [
    "DerivedQuantity",
    "DomainVocabulary",
    "Event",
    "Instrument",
    "MissionEntry",
    "NamedDay",
    "ProductWord",
    "Species",
    "load_vocabulary",
    "read_table",
]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


@dataclass(frozen=True)
class MissionEntry:
    """A mission's common names and, for multi-spacecraft missions, its probes."""

    mission_id: str
    names: tuple[str, ...]
    probes: dict[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    probe_kind: str | None = None
    probe_count: int | None = None
    exact: frozenset[str] = frozenset()
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Names of some of the probes together ("ARTEMIS": THEMIS B and C)."""
    near_earth: bool = False
    """Measures near Earth (L1 monitors, OMNI): "Bt" there is the total field |B|."""

    def probe_of(self, typed: str) -> str | None:
        """The probe a shorthand names ("C3" -> "3", "THE" -> "E"), or None."""
        key = _squeeze(typed)
        for probe, shorthands in self.probes.items():
            if any(_squeeze(s) == key for s in shorthands):
                return probe
        return None


@dataclass(frozen=True)
class Instrument:
    """An instrument of a mission: the names people type and its dataset ids."""

    mission_id: str
    names: tuple[str, ...]
    datasets: re.Pattern[str]
    words: re.Pattern[str]
    quantity: str | None = None


@dataclass(frozen=True)
class Species:
    """A particle species: how people name it and how catalog metadata writes it."""

    key: str
    words: re.Pattern[str]
    cues: re.Pattern[str]
    symbol: str = ""
    """Its chemical element's symbol ("Fe", "He"), as abundance ratios write it ("Fe/O")."""


@dataclass(frozen=True)
class DerivedQuantity:
    """A quantity computed from fetched ones, with its inputs, units and formula."""

    key: str
    label: str
    words: re.Pattern[str]
    needs: tuple[str, ...]
    units: str
    formula: str = ""
    catalog: re.Pattern[str] | None = None
    """A parameter whose name or description this matches is the quantity itself (an
    alpha/proton ratio a plasma instrument already gives): fetched, not computed."""
    named_inputs: bool = False
    """Asked as computed from inputs the request names ("|B| from B_R, B_T, B_N"): always
    computed from them, never a parameter of the catalog that is the quantity itself."""
    frame: str = ""
    """The frame its vectors are asked in when the request names none (GSM for the IMF
    clock angle and the coupling functions); empty: GSE."""


@dataclass(frozen=True)
class Event:
    """A named event or storm and the time range it stands for."""

    name: str
    words: re.Pattern[str]
    range: str
    spacecraft: re.Pattern[str] | None = None
    """When set, the event is meant only if the request also names this spacecraft
    ("the Jupiter flyby" of Cassini, of Ulysses, ...)."""


@dataclass(frozen=True)
class NamedDay:
    """A day people name instead of a date ("Christmas 2006"): the same date every year.

    `date` is "MM-DD", or "" for a day that moves from year to year (Easter), which is
    asked about; `note` says what the date assumes ("approximately").
    """

    name: str
    words: re.Pattern[str]
    date: str
    note: str = ""


@dataclass(frozen=True)
class ProductWord:
    """A word that picks one product among siblings and how metadata writes it."""

    words: re.Pattern[str]
    tokens: frozenset[str]
    soft: bool = False
    """An everyday word too ("fast", "slow"): it ranks the products that hold it first but
    never rules one out, and its absence is not a difference worth saying."""
    about_data: bool = True
    """A word about the data itself (a look direction); False for a product's kind or
    level ("key parameters", "level 2", "magnetometer")."""
    marker: bool = False
    """Marks a product apart from its siblings ("burst", "auxiliary", "merged"): a dataset
    holding it ranks below its siblings unless the request says it."""
    designation: bool = False
    """A spacecraft's designation ("LANL 1994-084"): the numbers its groups match are a
    name, never a date."""

    def tokens_for(self, match: re.Match[str]) -> frozenset[str]:
        """The tokens a match of `words` means.

        "{NAME}" in a token is group `name` as typed; a token whose group did not take
        part is left out.
        """
        if not match.groupdict():
            return self.tokens
        groups = {k.upper(): v for k, v in match.groupdict().items() if v}
        out: set[str] = set()
        for token in self.tokens:
            try:
                out.add(token.format_map(groups).upper())
            except KeyError:
                continue
        return frozenset(out)


@dataclass(frozen=True)
class DomainVocabulary:
    """Everything the data files say, ready to use."""

    missions: dict[str, MissionEntry]
    instruments: tuple[Instrument, ...]
    species: tuple[Species, ...]
    frames: dict[str, str]
    derived: tuple[DerivedQuantity, ...]
    events: tuple[Event, ...]
    english_word_aliases: frozenset[str]
    physics_phrases: tuple[str, ...]
    solar_wind_missions: frozenset[str] = frozenset()
    not_mission_abbreviations: frozenset[str] = frozenset()
    """Dataset id prefixes that are words of the field, never a mission ("AC", "HK")."""
    not_placed: re.Pattern[str] | None = None
    """Things people measure that no spacecraft quantity here stands for (neutrons)."""
    products: tuple[ProductWord, ...] = ()
    """Look directions and distribution kinds ("sunward", "pitch angle", "omni")."""
    frame_words: re.Pattern[str] = re.compile(r"(?!)")
    """Any frame name as a word, in group 1 ("GSM"; two-letter ones only in capitals)."""
    days: tuple[NamedDay, ...] = ()
    """Days named instead of a date ("New Year's Day", "the March equinox")."""

    def instruments_of(self, mission_id: str) -> tuple[Instrument, ...]:
        """The instruments known for a mission."""
        return tuple(i for i in self.instruments if i.mission_id == mission_id)

    def species_named(self, text: str) -> list[tuple[str, int]]:
        """Species named in text, as (key, position), in text order."""
        found: list[tuple[str, int]] = []
        for s in self.species:
            found.extend((s.key, m.start()) for m in s.words.finditer(text))
        return sorted(found, key=lambda kp: kp[1])

    def species_cue(self, key: str) -> re.Pattern[str] | None:
        """How catalog metadata writes species `key`."""
        return next((s.cues for s in self.species if s.key == key), None)

    def probe_names(self, mission_id: str, typed: str = "") -> list[str]:
        """How each spacecraft of a constellation is written ("MMS1".."MMS4"), in order.

        When `typed` names a group of its probes ("ARTEMIS", "ARTEMIS P1"), only those.
        """
        entry = self.missions.get(mission_id)
        if entry is None or not entry.probes:
            return []
        said = _squeeze(typed)
        group = next((g for n, g in entry.groups.items() if said.startswith(_squeeze(n))), ())
        return [names[0] for p, names in sorted(entry.probes.items()) if not group or p in group]

    def exact_aliases(self) -> frozenset[str]:
        """Shorthands that name a probe only when typed exactly so ("THE", "C1")."""
        return frozenset(a for m in self.missions.values() for a in m.exact)


def _squeeze(text: str) -> str:
    return re.sub(r"[\s\-_]", "", text.upper())


def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    # Acronyms count as written in capitals ("STEP", not "step"); words in any case, and
    # hyphenated acronyms too, which no English word is ("SPAN-i").
    alternatives = [
        re.escape(n).replace(r"\-", "[- ]?")
        if not re.search("[a-z]", n) and "-" not in n
        else "(?i:" + re.escape(n).replace(r"\-", "[- ]?") + ")"
        for n in sorted(names, key=len, reverse=True)
    ]
    # "HOPE-B", "REPT-A": a probe letter or number may follow a hyphen.
    return re.compile(rf"(?<![\w-])(?:{'|'.join(alternatives)})(?!\w|-(?![A-Ea-e1-9](?![\w-])))")


def _frame_words(frames: dict[str, Any]) -> re.Pattern[str]:
    names = sorted((k for k in frames if k.isupper() and "_" not in k), key=len, reverse=True)
    # "SM" and "SC" are frames only in capitals ("sm" and "sc" are other words).
    spelled = [n if len(n) <= 2 else f"(?i:{n})" for n in names]
    return re.compile(rf"(?<![\w-])({'|'.join(spelled)})(?![\w-])")


@cache
def read_table(name: str) -> dict[str, Any]:
    """One data file of this package (e.g. "quantities.toml"), parsed once per process.

    Callers read it, never change it: the same dictionary is handed to every caller.
    """
    return tomllib.loads(resources.files("xhelio.vocabulary").joinpath(name).read_text("utf-8"))


@cache
def load_vocabulary() -> DomainVocabulary:
    """Read the vocabulary data files once (later calls return the same object)."""
    raw_missions = read_table("missions.toml")
    raw = read_table("domain.toml")
    missions = {
        mission_id: MissionEntry(
            mission_id,
            tuple(entry.get("names", ())),
            {str(k): tuple(v) for k, v in entry.get("probes", {}).items()},
            entry.get("probe_kind"),
            entry.get("probe_count"),
            frozenset(entry.get("exact", ())),
            {str(k): tuple(v) for k, v in entry.get("groups", {}).items()},
            bool(entry.get("near_earth", False)),
        )
        for mission_id, entry in raw_missions.items()
    }
    instruments = tuple(
        Instrument(
            row["mission"],
            tuple(row["names"]),
            _rx(row["datasets"]),
            _names_pattern(tuple(row["names"])),
            row.get("quantity"),
        )
        for row in raw.get("instrument", [])
    )
    return DomainVocabulary(
        missions=missions,
        instruments=instruments,
        species=tuple(
            Species(row["key"], _rx(row["words"]), _rx(row["cues"]), row.get("symbol", ""))
            for row in raw.get("species", [])
        ),
        frames={k: v for k, v in raw.get("frames", {}).items() if k.isupper() and "_" not in k},
        derived=tuple(
            DerivedQuantity(
                row["key"],
                row["label"],
                _rx(row["words"]),
                tuple(row["needs"]),
                row["units"],
                row.get("formula", ""),
                _rx(row["catalog"]) if "catalog" in row else None,
                bool(row.get("named_inputs", False)),
                row.get("frame", ""),
            )
            for row in raw.get("derived", [])
        ),
        events=tuple(
            Event(
                row["name"],
                _rx(row["words"]),
                row["range"],
                _rx(row["spacecraft"]) if row.get("spacecraft") else None,
            )
            for row in raw.get("event", [])
        ),
        days=tuple(
            NamedDay(row["name"], _rx(row["words"]), row.get("date", ""), row.get("note", ""))
            for row in raw.get("day", [])
        ),
        english_word_aliases=frozenset(raw.get("english_word_aliases", ())),
        physics_phrases=tuple(raw.get("physics_phrases", ())),
        solar_wind_missions=frozenset(raw.get("solar_wind_missions", ())),
        not_mission_abbreviations=frozenset(raw.get("not_mission_abbreviations", ())),
        not_placed=_rx("|".join(f"(?:{w})" for w in raw["not_placed"]))
        if raw.get("not_placed")
        else None,
        frame_words=_frame_words(raw.get("frames", {})),
        products=tuple(
            ProductWord(
                _rx(row["words"]),
                frozenset(t.upper() for t in row["tokens"]),
                soft=row.get("soft", False),
                about_data=row.get("about_data", True),
                marker=row.get("marker", False),
                designation=row.get("designation", False),
            )
            for row in raw.get("product", [])
        ),
    )
