"""The composer: one answer from data results, API results and literature, with sources.

Seed 003's composer merges every agent's result into the final answer. Here the results
are DataStore entries, so `compose` reads the labels an answer rests on, sorts them into
data (fetched or computed), web API answers and search hits, and writes the answer with
a numbered *Sources* list: a dataset's citation (DOI, acknowledgement), an API's address
and credit, each paper or page with its link. `compose_answer` is the tool the agents
call last; the offline skills use `compose` directly. Imports `tools` and `data`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore
from xhelio.tools.context import ToolContext
from xhelio.tools.registry import tool

__all__ = ["COMPOSE_TOOLS", "Source", "compose", "sources_of"]

_MAX_HITS_CITED = 10


@dataclass(frozen=True)
class Source:
    """One item of the Sources list."""

    kind: str
    """``data``, ``api``, ``literature`` or ``web``."""
    text: str
    url: str = ""

    def line(self) -> str:
        """The item as one line of text."""
        return f"{self.text} <{self.url}>" if self.url else self.text


def _kind(entry: DataEntry) -> str:
    dataset = entry.source_dataset or ""
    if dataset.startswith("search/"):
        return "literature" if dataset == "search/ads" else "web"
    return "api" if entry.meta.get("source_url") else "data"


def _hits(entry: DataEntry, kind: str) -> list[Source]:
    frame = entry.data
    if not isinstance(frame, pd.DataFrame) or "url" not in frame.columns:
        return []
    found: list[Source] = []
    for row in frame.head(_MAX_HITS_CITED).to_dict("records"):
        fields: dict[str, Any] = {str(k): v for k, v in row.items()}
        parts = [str(fields.get(k) or "") for k in ("authors", "year", "title")]
        text = ", ".join(p for p in parts if p)
        found.append(Source(kind, text or str(fields["url"]), str(fields["url"])))
    return found


def _entry_sources(entry: DataEntry) -> list[Source]:
    kind = _kind(entry)
    if kind in ("literature", "web"):
        return _hits(entry, kind)
    if kind == "api":
        cite = entry.citation
        text = f"{cite.get('dataset', entry.label)}; {cite.get('acknowledgement', '')}".strip("; ")
        return [Source("api", f"[{entry.label}] {text}", str(entry.meta["source_url"]))]
    found: list[Source] = []
    for cite in entry.citations or [{"dataset": entry.source_dataset or "computed in xhelio"}]:
        bits = [cite.get("dataset", ""), cite.get("doi", ""), cite.get("acknowledgement", "")]
        text = "; ".join(b for b in bits if b)
        found.append(Source("data", f"[{entry.label}] {text}"))
    return found


def sources_of(store: DataStore, labels: Sequence[str]) -> list[Source]:
    """The sources of the entries `labels` names (unknown labels skipped), each once."""
    seen: dict[str, Source] = {}
    for label in labels:
        if store.has(label):
            for source in _entry_sources(store.get(label)):
                seen.setdefault(source.line(), source)
    return list(seen.values())


def compose(answer: str, store: DataStore, labels: Sequence[str]) -> str:
    """`answer` followed by the numbered sources of `labels` (data, APIs, then papers)."""
    order = {"data": 0, "api": 1, "literature": 2, "web": 3}
    sources = sorted(sources_of(store, labels), key=lambda s: order[s.kind])
    if not sources:
        return answer.strip()
    lines = [f"{n}. {s.line()}" for n, s in enumerate(sources, 1)]
    return f"{answer.strip()}\n\nSources:\n" + "\n".join(lines)


@tool("conversation", reads=("labels",))
def compose_answer(ctx: ToolContext, answer: str, labels: list[str]) -> dict[str, Any]:
    """Merge your answer with the sources of the data, API results and papers it rests on.

    Call it last, then give the user its `answer` text unchanged (it ends with the sources).

    Args:
        answer: Your answer in plain words, citing results by their labels.
        labels: The stored labels the answer uses (data, API results, search results).
    """
    unknown = [lb for lb in labels if not ctx.store.has(lb)]
    merged = compose(answer, ctx.store, labels)
    sources = sources_of(ctx.store, labels)
    result: dict[str, Any] = {"answer": merged, "sources": [s.line() for s in sources]}
    if unknown:
        result["unknown_labels"] = unknown
    return result


COMPOSE_TOOLS = [compose_answer]
