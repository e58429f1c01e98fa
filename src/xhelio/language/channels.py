"""Energy channels a dataset keeps as separate scalar parameters, read from their metadata.

Many particle instruments publish a spectrum as one parameter per energy channel (ACE
EPAM's P1..P8, ULEIS's H_S1..H_S5, Voyager CRS's PROTONFLUX1..), not as one array with
energy bins. `energy_channels` finds such a family in a dataset: scalar parameters with
the same units whose descriptions are the same words around an energy range ("P1 LEMS30
(...; 0.047-0.065 MeV Ions), Sector Avg"). The range gives each channel's energies; the
family's words give its population, matched to the species asked with the vocabulary's
species cues. Uncertainty and error parameters are never channels.

Imports `catalog.model` and `vocabulary` only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.vocabulary import load_vocabulary

__all__ = ["ChannelFamily", "EnergyChannel", "energy_channels", "words_in"]

# "0.047-0.065 MeV", "3.0 - 4.6 MeV/n", "25.394-54.877 keV", "(0.160-0.320 MeV/nucleon)".
_RANGE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*([kMG]?eV)((?:/n(?:uc(?:leon)?)?\.?)?)"
)
_NOT_DATA = re.compile(r"uncertaint|\berror|errorbar|\bsigma\b|\bunc\b", re.I)
_KEV = {"eV": 1e-3, "keV": 1.0, "MeV": 1e3, "GeV": 1e6}
# Element symbols as descriptions write a population ("H, (0.16-0.32 MeV/nucleon)",
# "He4", "W3 CA60 (...; He)"), for the species the vocabulary names in words.
_SYMBOLS = {"proton": "H", "alpha": "He", "oxygen": "O", "iron": "Fe", "carbon": "C"}
# Ions include protons and helium: an "Ions" channel family serves them, said as ions.
_ION_SPECIES = frozenset({"proton", "alpha", "ion"})
_MIN_CHANNELS = 3


@dataclass(frozen=True)
class EnergyChannel:
    """One channel: its parameter, energy range as the catalog writes it, and units."""

    parameter: str
    low: float
    high: float
    unit: str
    units: str
    family: str
    """The description's words around the range: what the channels measure."""

    @property
    def label(self) -> str:
        """The channel as the answer names it: "P1 0.047-0.065 MeV"."""
        return f"{self.parameter} {self.low:g}-{self.high:g} {self.unit}"

    @property
    def low_kev(self) -> float:
        """The channel's lower energy in keV (per nucleon when the unit is)."""
        return self.low * _KEV[self.unit.split("/")[0]]


@dataclass(frozen=True)
class ChannelFamily:
    """The channels of one population in one dataset, and how well they fit the request."""

    dataset_id: str
    channels: tuple[EnergyChannel, ...]
    fit: tuple[int, int]
    """(species fit: 2 named, 1 as ions, 0 none; request words in its title and family)."""


def energy_channels(
    info: DatasetInfo, species: str | None, words: Sequence[str] = ()
) -> ChannelFamily | None:
    """The channel family of `info` for `species`, lowest energy first; None if none.

    Of several families (EPAM's ions, deflected electrons, foil electrons), the one of the
    species asked wins, then the one sharing most of the request's `words` ("deflected",
    "LEMS"), then the one with most channels. A species no family measures gives None.
    """
    families: dict[tuple[str, str], list[EnergyChannel]] = {}
    for p in info.parameters:
        channel = _channel(p)
        if channel is not None:
            families.setdefault((channel.family, channel.units), []).append(channel)
    wanted = {w.lower() for w in words if len(w) > 2}
    title = words_in(info, words)
    ranked = sorted(
        (f for f in families.values() if len(f) >= _MIN_CHANNELS),
        key=lambda f: (_species_fit(f, species), _word_fit(f[0].family, wanted), len(f)),
        reverse=True,
    )
    if not ranked or (species is not None and _species_fit(ranked[0], species) == 0):
        return None
    best = ranked[0]
    fit = (_species_fit(best, species), title + _word_fit(best[0].family, wanted))
    return ChannelFamily(info.id, tuple(sorted(best, key=lambda c: c.low_kev)), fit)


def _channel(p: ParameterInfo) -> EnergyChannel | None:
    if p.components != 1 or "fraction" in p.units.lower():
        return None
    if _NOT_DATA.search(p.name) or _NOT_DATA.search(p.description):
        return None
    match = _RANGE.search(p.description)
    if match is None:
        return None
    unit = match[3] + (match[4] or "").rstrip(".")
    family = p.description[: match.start()] + "#" + p.description[match.end() :]
    # The channel's own name ("P1 LEMS30 ...") is not part of what the family measures.
    family = re.sub(rf"(?<!\w){re.escape(p.name)}(?!\w)", "", family).strip()
    low, high = float(match[1]), float(match[2])
    return EnergyChannel(p.name, low, high, unit, p.units, family)


def _species_fit(family: Sequence[EnergyChannel], species: str | None) -> int:
    """2: the family names the species; 1: it names ions (for an ion species); else 0."""
    if species is None:
        return 1
    text = f"{family[0].family} {family[0].parameter}"
    cues = {s.key: s.cues for s in load_vocabulary().species}
    symbol = _SYMBOLS.get(species)
    if (cue := cues.get(species)) is not None and cue.search(text):
        return 2
    if symbol is not None and re.search(rf"(?<![A-Za-z]){symbol}(?![A-Za-z])", text):
        return 2
    ions = cues.get("ion")
    if species in _ION_SPECIES and ions is not None and ions.search(family[0].family):
        return 0 if cues["electron"].search(family[0].family) else 1
    return 0


def words_in(info: DatasetInfo, words: Sequence[str]) -> int:
    """How many of the request's `words` (three letters or more) a dataset's id and title say.

    The id counts word by word ("VG1_PWS_LR" says "PWS"): many titles spell the instrument
    out and leave its acronym to the id.
    """
    said = f"{re.sub(r'[_-]', ' ', info.id)} {info.title}"
    return _word_fit(said, {w.lower() for w in words if len(w) > 2})


def _word_fit(family: str, wanted: set[str]) -> int:
    return len(wanted & {w.lower() for w in re.findall(r"[A-Za-z]\w+", family)})
