"""Data the CDAWeb catalog does not hold: a request answered from another registered archive.

The ordinary reading resolves missions and quantities against the catalog index. When it
finds nothing to fetch, and the request has a time range, the request's words (its time
expression and request verbs left out) go to the one ranked search over every registered
source, through the funnel. A hit is taken only when it is a dataset the catalog does not
know and its id, title, mission and parameters hold most of those words (a dataset id
typed in the request is always enough); its parameters that the request names (else its
first few data parameters) are fetched from that source and plotted. Nothing taken means
None, and the ordinary clarification stands: no archive is guessed at.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xhelio.agents.offline.plan import OfflinePlan, PlanStep, ToolCall, presentation_steps
from xhelio.language.intent import RequestIntent
from xhelio.operations import ToolResult
from xhelio.sources.search import matched_words, query_words
from xhelio.timerange import find_time

__all__ = ["plan_elsewhere"]

CallTool = Callable[[str, dict[str, Any]], ToolResult]

_MAX_PARAMETERS = 3
_MIN_COVERAGE = 0.6
_REQUEST_WORDS = frozenset(
    {
        "plot", "show", "fetch", "get", "give", "me", "please", "graph", "draw", "display",
        "load", "download", "from", "between", "to", "at", "during", "over", "until", "till",
        "vs", "versus", "compare", "what", "was", "were", "how", "is", "are", "time", "series",
    }
)  # fmt: skip


def _content_words(intent: RequestIntent) -> list[str]:
    """The request's words that could name data: no time expression, no request verbs."""
    text = intent.text
    for start, end in sorted(find_time(text).spans, reverse=True):
        text = text[:start] + " " + text[end:]
    return [w for w in query_words(text) if w not in _REQUEST_WORDS and not w.isdigit()]


def _chosen_hit(
    hits: list[dict[str, Any]], words: list[str], known: Callable[[str], bool], named: list[str]
) -> dict[str, Any] | None:
    """The first hit outside the catalog that holds enough of the request's words.

    Every word of `named` (the spacecraft names the catalog lacks) must be among them.
    """
    for hit in hits:
        dataset = str(hit.get("dataset_id", ""))
        if not dataset or known(dataset):
            continue
        if dataset.lower() in words or dataset.lower() in " ".join(words):
            return hit
        text = " ".join(
            [dataset, str(hit.get("title", "")), str(hit.get("mission") or "")]
            + [str(p) for p in hit.get("parameters") or []]
        )
        matched = matched_words(words, text)
        if not set(matched_words(named, text)) >= set(named):
            continue
        if len(matched) >= min(2, len(words)) and len(matched) >= _MIN_COVERAGE * len(words):
            return hit
    return None


def _chosen_parameters(parameters: list[dict[str, Any]], words: list[str]) -> list[dict[str, Any]]:
    """The parameters the request singles out, else the first few one-dimensional ones.

    A parameter is singled out when its name and description hold more of the request's
    words than some other parameter's do (words every parameter shares name nothing).
    """
    texts = [f"{p.get('name', '')} {p.get('description', '')}" for p in parameters]
    scores = [len(matched_words(words, text)) for text in texts]
    if scores and max(scores) > min(scores):
        return [p for p, n in zip(parameters, scores, strict=True) if n == max(scores)][
            :_MAX_PARAMETERS
        ]
    plain = [p for p in parameters if not p.get("size") or len(p["size"]) <= 1]
    return (plain or parameters)[:_MAX_PARAMETERS]


def plan_elsewhere(
    intent: RequestIntent, call: CallTool, known: Callable[[str], bool]
) -> OfflinePlan | None:
    """A fetch-and-plot plan from another archive, or None (see the module doc).

    Args:
        intent: The request as read; it must have a time range.
        call: Runs a tool through the session's funnel.
        known: Whether the catalog index knows a dataset id.
    """
    span = intent.time_range
    if span is None or intent.time_error or intent.doubts:
        return None
    if intent.quantities and not intent.missions and not intent.unknown_names:
        return None  # "magnetic field and density": which spacecraft is asked, never guessed
    words = _content_words(intent)
    if not words:
        return None
    found = call("search_datasets", {"query": " ".join(words), "limit": 10})
    hits = found.payload.get("results") if found.ok else None
    # A spacecraft the request names must be the hit's own: "Zephyr-3 proton density" is
    # never answered by whichever archive has a proton density, nor "DSCOVR Bz GSM" (a
    # frame DSCOVR lacks) by another mission's Bz GSM.
    names = [*intent.unknown_names, *(m.text for m in intent.missions)]
    named = [w for name in names for w in query_words(name) if not w.isdigit()]
    hit = _chosen_hit(list(hits or []), words, known, named)
    if hit is None:
        return None
    dataset, source = str(hit["dataset_id"]), str(hit["source"])
    listed = call("list_parameters", {"dataset_id": dataset, "source": source})
    if not listed.ok:
        return None
    parameters = _chosen_parameters(list(listed.payload.get("parameters") or []), words)
    steps: list[PlanStep] = []
    finals: list[tuple[str, str, str]] = []
    for n, p in enumerate(parameters):
        name = str(p["name"])
        args = {
            "dataset_id": dataset,
            "parameter_id": name,
            "time_range": str(span),
            "source": source,
        }
        ref = f"elsewhere{n}"
        series = f"{dataset} {name}"
        steps.append(
            PlanStep(
                "fetch",
                f"Fetch {series} from '{source}'",
                "__data_ops__",
                (ToolCall("fetch_data", args),),
                ref,
                series=series,
            )
        )
        units = str(p.get("units") or "")
        # Series of one unit share a panel; each other unit gets its own.
        finals.append((ref, f"{name} ({units})" if units else name, units or name))
    shown, notes = presentation_steps(intent, finals, span)
    title = hit.get("title", "")
    note = f"The CDAWeb catalog has no match; found {dataset} ({title}) in source '{source}'."
    return OfflinePlan(intent, (*steps, *shown), (note, *notes), (), span)
