"""Words that are parts of a dataset id: an id written with spaces, and mission words in it.

"THG MAG FRN" and "BAR 1G MSPC" are THG_L2_MAG_FRN and BAR_1G_L2_MSPC written as words:
a run of words that is exactly one dataset id's parts (its level and processing parts,
L2, H0, K1, may be left out) names that dataset, when no other id fits the run.

"MMS3 EDP FAST DCE" names MMS3_EDP_FAST_L2_DCE: "FAST" is its mode, not the FAST
spacecraft; "C1 STA SM" names C1_CP_STA_SM: "STA" is Cluster's STAFF, not STEREO-A. The
catalog says so: a mission word is read as an id part when a dataset of another named
mission holds it among its id parts together with at least two other words of the request.
Imports `catalog` and `language.intent` only.
"""

from __future__ import annotations

import itertools
import re
from functools import cache

from xhelio.catalog.index import Catalog
from xhelio.language.intent import MissionRef

__all__ = ["an_id_part", "id_parts_not_missions", "spaced_dataset_ids"]

_WORD = re.compile(r"[A-Za-z0-9]+")


@cache
def _id_parts(catalog: Catalog) -> dict[str, tuple[frozenset[str], ...]]:
    """Each mission's dataset ids as sets of their upper-case parts."""
    return {
        m.id: tuple(frozenset(re.split(r"[_-]", d.upper())) for d in m.dataset_ids)
        for m in catalog.missions()
    }


def an_id_part(catalog: Catalog, word: str) -> bool:
    """Whether `word` is a part of a dataset id of the catalog (a code, never a slip)."""
    upper = word.upper()
    return any(upper in parts for held in _id_parts(catalog).values() for parts in held)


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


# Id parts a writer may leave out: processing level and data type (L2, H0, K1).
_OPTIONAL = re.compile(r"^(?:L[0-4][A-Z]?|[HK][0-9])$")
_LONGEST_RUN = 8


def _fits(run: list[str], dataset_id: str) -> bool:
    parts = re.split(r"[_-]", dataset_id.upper())
    required = [p for p in parts if not _OPTIONAL.match(p)]
    return (len(run) >= 2 and sorted(run) == sorted(required)) or run == parts


def _side_by_side(text: str, run: list[re.Match[str]]) -> bool:
    """Whether only spaces, "-" or "_" stand between the words of `run`."""
    return all(not text[a.end() : b.start()].strip(" -_") for a, b in itertools.pairwise(run))


def spaced_dataset_ids(
    by_prefix: dict[str, list[str]], text: str
) -> list[tuple[str, tuple[int, int]]]:
    """Dataset ids written as words ("THG MAG FRN"), each with the span of its words.

    Only a run that fits exactly one dataset id is read; "AC MFI" fits five and is left
    to the resolver.
    """
    words = list(_WORD.finditer(text))
    found: list[tuple[str, tuple[int, int]]] = []
    i = 0
    while i < len(words):
        ids = by_prefix.get(words[i][0].upper(), [])
        best: tuple[str, int] | None = None
        for end in range(min(len(words), i + _LONGEST_RUN), i + 1, -1):
            run = [w[0].upper() for w in words[i:end]]
            if not _side_by_side(text, words[i:end]):
                continue
            fitting = [d for d in ids if _fits(run, d)]
            if len(fitting) == 1:
                best = (fitting[0], end)
                break
            if fitting:
                break  # several ids fit the longest run: the words do not decide
        if best is None:
            i += 1
            continue
        found += _listed_before(by_prefix, text, words, i, best[1])
        found.append((best[0], (words[i].start(), words[best[1] - 1].end())))
        i = best[1]
    return found


_LIST_GLUE = re.compile(r"\s*(?:,\s*(?:and\s+)?|and|&|/)\s*", re.I)


def _listed_before(
    by_prefix: dict[str, list[str]], text: str, words: list[re.Match[str]], i: int, end: int
) -> list[tuple[str, tuple[int, int]]]:
    """The ids a list of first words before the run also names.

    "tha and the ESA" is THA_L2_ESA as well as THE_L2_ESA: each listed word takes the
    place of the run's first word, and reads so when exactly one id then fits.
    """
    rest = [w[0].upper() for w in words[i + 1 : end]]
    found: list[tuple[str, tuple[int, int]]] = []
    after = words[i].start()
    j = i - 1
    while j >= 0:
        if words[j][0].lower() == "and":
            j -= 1
            if j < 0:
                break
        if not _LIST_GLUE.fullmatch(text, words[j].end(), after):
            break
        run = [words[j][0].upper(), *rest]
        fitting = [d for d in by_prefix.get(run[0], []) if _fits(run, d)]
        if len(fitting) != 1:
            break
        found.insert(0, (fitting[0], words[j].span()))
        after = words[j].start()
        j -= 1
    return found
