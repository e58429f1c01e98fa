"""One ranked search over every source's catalog, and the search of a small catalog.

`search_sources` asks each source for its best hits and merges the lists into one. Each
source's own order is kept (CDAWeb's is the catalog index's ranking, untouched here); the
lists are interleaved by how many of the query's words the next hit of each contains
(in its id, title, mission and matched parameters), the earlier source first on a tie.
A dataset found by several sources (CDAWeb's HAPI server and its CDF files share one
catalog) appears once, under the first, the others in `DatasetHit.also_from`. A source
that fails (a server down) is left out with a note; a `UserError` (a mission unknown to
that source) is raised only when no source found anything.

`search_registered` opens the named sources itself (the default one first) and leaves
out, with a note, any that cannot be opened.

`rank_datasets` is the search of a source whose catalog is a list of `DatasetInfo` (a
configured HAPI server's /catalog, a plugin's few datasets): datasets holding more of the
query's words first, words in the id and title counting most.

Imports `catalog.model`, `errors` and `sources.base` only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from xhelio.catalog.model import DatasetInfo
from xhelio.errors import UserError, XhelioError
from xhelio.sources.base import DatasetHit, DataSource

__all__ = [
    "SearchResults",
    "matched_words",
    "query_words",
    "rank_datasets",
    "search_registered",
    "search_sources",
]

_WORD = re.compile(r"[a-z0-9]+")
_IGNORED = frozenset({"a", "an", "and", "the", "of", "for", "in", "on", "to", "with", "data"})


@dataclass
class SearchResults:
    """The merged hits, best first, and what the user should know about sources left out."""

    hits: list[DatasetHit]
    notes: list[str] = field(default_factory=list[str])


def query_words(text: str) -> list[str]:
    """The words of a query that carry meaning, lower case, in order, once each."""
    words = [w for w in _WORD.findall(text.lower()) if w not in _IGNORED]
    return list(dict.fromkeys(words))


def _matches(word: str, tokens: set[str]) -> bool:
    """A query word matches a token equal to it, or one it begins (3 letters or more)."""
    return word in tokens or (len(word) >= 3 and any(t.startswith(word) for t in tokens))


def matched_words(words: Sequence[str], text: str) -> list[str]:
    """The query `words` that `text` holds.

    A word is held when it equals a word of `text` or, from 3 letters, begins one.
    """
    tokens = set(_WORD.findall(text.lower()))
    return [w for w in words if _matches(w, tokens)]


def _coverage(words: Sequence[str], text: str) -> float:
    return len(matched_words(words, text)) / len(words) if words else 0.0


def _hit_text(hit: DatasetHit) -> str:
    return " ".join([hit.dataset_id, hit.title, hit.mission_id or "", *hit.parameters])


def search_sources(
    sources: Iterable[DataSource], query: str, limit: int = 10, mission: str | None = None
) -> SearchResults:
    """Search every source's catalog and merge the hits into one ranking (module doc)."""
    lists: list[list[DatasetHit]] = []
    notes: list[str] = []
    refused: UserError | None = None
    for source in sources:
        try:
            lists.append(list(source.search(query, limit, mission)))
        except UserError as exc:
            refused = refused or exc
        except XhelioError as exc:
            notes.append(f"Source '{source.name}' was left out of this search: {exc.message}")
    if refused is not None and not any(lists):
        raise refused
    words = query_words(query)
    return SearchResults(_merge(lists, words, limit), notes)


def search_registered(
    names: Sequence[str],
    open_source: Callable[[str], DataSource],
    query: str,
    limit: int = 10,
    mission: str | None = None,
    first: str = "",
) -> SearchResults:
    """Search the sources called `names` (`first` ahead of the others) in one ranking."""
    sources: list[DataSource] = []
    notes: list[str] = []
    for name in sorted(names, key=lambda n: n != first):
        try:
            sources.append(open_source(name))
        except Exception as exc:  # a plugin may fail in any way; the others still answer
            reason = exc.message if isinstance(exc, XhelioError) else f"{type(exc).__name__}: {exc}"
            notes.append(f"Source '{name}' was left out of this search: {reason}")
    found = search_sources(sources, query, limit, mission)
    found.notes[:0] = notes
    return found


def _merge(
    lists: Sequence[Sequence[DatasetHit]], words: Sequence[str], limit: int
) -> list[DatasetHit]:
    """Interleave per-source rankings by the coverage of their next hit (module doc)."""
    heads = [0] * len(lists)
    merged: dict[str, DatasetHit] = {}
    while len(merged) < limit:
        best: tuple[float, int] | None = None
        for index, hits in enumerate(lists):
            if heads[index] < len(hits):
                cover = _coverage(words, _hit_text(hits[heads[index]]))
                if best is None or cover > best[0]:
                    best = (cover, index)
        if best is None:
            break
        hit = lists[best[1]][heads[best[1]]]
        heads[best[1]] += 1
        _add(merged, hit)
    for index, hits in enumerate(lists):  # later duplicates still name their source
        for hit in hits[heads[index] :]:
            if hit.dataset_id.upper() in merged:
                _add(merged, hit)
    return list(merged.values())


def _add(merged: dict[str, DatasetHit], hit: DatasetHit) -> None:
    key = hit.dataset_id.upper()
    first = merged.get(key)
    if first is None:
        merged[key] = hit
    elif hit.source != first.source and hit.source not in first.also_from:
        merged[key] = replace(first, also_from=(*first.also_from, hit.source))


def rank_datasets(
    datasets: Iterable[DatasetInfo],
    query: str,
    source: str,
    limit: int = 10,
    mission: str | None = None,
) -> list[DatasetHit]:
    """The datasets best matching `query`, best first, as hits of `source` (module doc)."""
    words = query_words(query)
    wanted = mission.strip().lower() if mission else None
    scored: list[tuple[float, str, DatasetHit]] = []
    for info in datasets:
        if wanted is not None and (info.mission_id or "").lower() != wanted:
            continue
        score, matched = _score(info, words)
        if score > 0:
            hit = DatasetHit(info.id, info.title, source, info.mission_id, matched, score)
            scored.append((-score, info.id, hit))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [hit for _, _, hit in scored[: max(0, limit)]]


def _score(info: DatasetInfo, words: Sequence[str]) -> tuple[float, tuple[str, ...]]:
    """Words found (id and title weigh most) and the parameters that hold any of them."""
    if not words:
        return 0.0, ()
    places = (
        (3.0, f"{info.id} {info.title}"),
        (2.0, f"{info.mission_id or ''} {info.instrument or ''}"),
        (1.0, " ".join(f"{p.name} {p.description} {p.units}" for p in info.parameters)),
    )
    found = 0
    weight = 0.0
    for word in words:
        best = max((w for w, text in places if _coverage([word], text)), default=0.0)
        found += best > 0
        weight += best
    matched = tuple(
        p.name
        for p in info.data_parameters
        if any(_coverage([w], f"{p.name} {p.description}") for w in words)
    )
    return (found / len(words)) * 10 + weight if found else 0.0, matched
