"""The catalog as the request parser reads it: mission names, dataset ids, probes held.

`Vocabulary` is built once per assistant from the catalog (its alias table, the dataset
ids by their first id part, the spacecraft each constellation's ids name). Imports
`catalog` and `language.resolve` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from xhelio.catalog.aliases import AliasTable
from xhelio.catalog.index import Catalog
from xhelio.language.resolve import probe_of_dataset

__all__ = ["Vocabulary"]


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
