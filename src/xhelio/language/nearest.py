"""The real dataset and parameter ids nearest one that is not in the catalog.

A model (or a person) that makes up an id ("ACE_MAG_H2", "B_GSE") gets the nearest real
ones back, so it can correct itself: ids spelled alike (difflib), and ids whose words
(mission, instrument, level, frame) the catalog search finds for the words of the id.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Protocol

from xhelio.catalog.model import DatasetInfo
from xhelio.errors import UserError

__all__ = ["IdCatalog", "nearest_datasets", "nearest_parameters"]


class _Hit(Protocol):
    @property
    def dataset_id(self) -> str: ...


class IdCatalog(Protocol):
    """What the lookup needs of the catalog (`catalog.index.Catalog` has it)."""

    def dataset_ids(self) -> list[str]:
        """Every dataset id."""
        ...

    def search(self, query: str, limit: int = 20, mission: str | None = None) -> Sequence[_Hit]:
        """Datasets matching free text, best first."""
        ...


_SEPARATORS = re.compile(r"[_\-.\s/]+")


def _words(ident: str) -> set[str]:
    return {w for w in _SEPARATORS.split(ident.upper()) if w}


def _closeness(typed: str, real: str) -> float:
    """Spelling likeness plus the share of the typed id's words the real one holds."""
    words = _words(typed)
    shared = len(words & _words(real)) / max(len(words), 1)
    spelled = max(
        difflib.SequenceMatcher(None, a, b).ratio()
        for a, b in ((typed.upper(), real.upper()), (_squeezed(typed), _squeezed(real)))
    )
    return spelled + 0.5 * shared


def _squeezed(ident: str) -> str:
    return _SEPARATORS.sub("", ident.upper())


def nearest_datasets(catalog: IdCatalog, typed: str, limit: int = 5) -> list[str]:
    """Real dataset ids nearest `typed`, nearest first (empty when nothing is near)."""
    ids = catalog.dataset_ids()
    upper = {i.upper(): i for i in ids}
    wanted = typed.strip().upper()
    pool = {upper[c] for c in difflib.get_close_matches(wanted, list(upper), n=10, cutoff=0.5)}
    try:
        found = catalog.search(" ".join(_SEPARATORS.split(typed.strip())), limit=10)
    except UserError:
        found = []
    searched = {h.dataset_id: (10 - n) / 20 for n, h in enumerate(found)}
    pool |= set(searched)
    ranked = sorted(pool, key=lambda i: (-(_closeness(wanted, i) + searched.get(i, 0.0)), i))
    return [i for i in ranked if _closeness(wanted, i) + searched.get(i, 0.0) >= 0.7][:limit]


def nearest_parameters(
    typed: str, names: Sequence[str], info: DatasetInfo | None = None, limit: int = 5
) -> list[str]:
    """Parameter names nearest `typed`, nearest first: by spelling, words and description."""
    described = {p.name: p.description for p in info.parameters} if info else {}

    def score(name: str) -> float:
        words = _words(typed)
        said = len(words & _words(described.get(name, ""))) / max(len(words), 1)
        return _closeness(typed, name) + 0.5 * said

    ranked = sorted(names, key=lambda n: (-score(n), names.index(n)))
    return [n for n in ranked if score(n) >= 0.5][:limit]
