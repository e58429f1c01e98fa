"""Planetary missions and targets (``planetary.toml``), for requests the PDS source answers.

`load_planetary()` reads the data once. `PlanetaryVocabulary.mission_in` and
`targets_in` find the missions and bodies a request names (whole words, any case).
Imports nothing from xhelio.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["PlanetaryMission", "PlanetaryVocabulary", "Target", "load_planetary"]


def _words(names: list[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n).replace(r"\ ", r"[\s_-]?") for n in names)
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)


@dataclass(frozen=True)
class PlanetaryMission:
    """A mission of the PDS catalog: its id and the names people type."""

    mission_id: str
    names: tuple[str, ...]
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Target:
    """A body people name, and the words its datasets carry."""

    name: str
    query: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class PlanetaryVocabulary:
    """The missions and targets of ``planetary.toml``."""

    missions: tuple[PlanetaryMission, ...]
    targets: tuple[Target, ...]
    planet_frames: re.Pattern[str]
    """Coordinate systems centred on a planet (KSM, MSO...), which only PDS products carry."""

    def mission_in(self, text: str) -> tuple[PlanetaryMission, str] | None:
        """The first mission `text` names, with the words that named it."""
        found = [
            (m.start(), mission, m.group(0))
            for mission in self.missions
            if (m := mission.pattern.search(text))
        ]
        if not found:
            return None
        _, mission, words = min(found, key=lambda item: item[0])
        return mission, words

    def targets_in(self, text: str) -> list[Target]:
        """The bodies `text` names, in the order of the data."""
        return [t for t in self.targets if t.pattern.search(text)]


@cache
def load_planetary() -> PlanetaryVocabulary:
    """Read ``planetary.toml`` once."""
    text = resources.files("xhelio.vocabulary").joinpath("planetary.toml").read_text("utf-8")
    data: dict[str, Any] = tomllib.loads(text)
    missions = tuple(
        PlanetaryMission(key, tuple(v["names"]), _words(v["names"]))
        for key, v in data.get("missions", {}).items()
    )
    targets = tuple(
        Target(key, str(v.get("query") or key), _words(v["names"]))
        for key, v in data.get("targets", {}).items()
    )
    return PlanetaryVocabulary(missions, targets, _words(list(data["planet_frames"])))
