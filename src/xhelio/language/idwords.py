"""Words that are parts of a named mission's dataset id, not other spacecraft.

"MMS3 EDP FAST DCE" names MMS3_EDP_FAST_L2_DCE: "FAST" is its mode, not the FAST
spacecraft; "C1 STA SM" names C1_CP_STA_SM: "STA" is Cluster's STAFF, not STEREO-A. The
catalog says so: a mission word is read as an id part when a dataset of another named
mission holds it among its id parts together with at least two other words of the request.
Imports `catalog` and `language.intent` only.
"""

from __future__ import annotations

import re
from functools import cache

from xhelio.catalog.index import Catalog
from xhelio.language.intent import MissionRef

__all__ = ["id_parts_not_missions"]

_WORD = re.compile(r"[A-Za-z0-9]+")


@cache
def _id_parts(catalog: Catalog) -> dict[str, tuple[frozenset[str], ...]]:
    """Each mission's dataset ids as sets of their upper-case parts."""
    return {
        m.id: tuple(frozenset(re.split(r"[_-]", d.upper())) for d in m.dataset_ids)
        for m in catalog.missions()
    }


def _an_id_part(word: str, words: frozenset[str], held: tuple[frozenset[str], ...]) -> bool:
    return any(word in parts and len((parts & words) - {word}) >= 2 for parts in held)


def id_parts_not_missions(
    catalog: Catalog, text: str, refs: tuple[MissionRef, ...], spans: list[tuple[int, int]]
) -> tuple[tuple[MissionRef, ...], list[tuple[int, int]]]:
    """`refs` and `spans` without the mission words that are id parts of another's dataset."""
    if len(refs) < 2:
        return refs, spans
    words = frozenset(w.upper() for w in _WORD.findall(text))
    parts = _id_parts(catalog)
    dropped = [
        ref
        for ref in refs
        if _WORD.fullmatch(ref.text)
        and any(
            _an_id_part(ref.text.upper(), words, parts.get(other.mission_id, ()))
            for other in refs
            if other.mission_id != ref.mission_id
        )
    ]
    if not dropped or len(dropped) == len(refs):
        return refs, spans
    starts = {ref.position for ref in dropped}
    return (
        tuple(r for r in refs if r not in dropped),
        [s for s in spans if s[0] not in starts],
    )
