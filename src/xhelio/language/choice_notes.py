"""What the answer says about a resolver's pick: words it lacks, siblings left out.

A product word the pick does not say that a sibling says (the sibling without data for
the time, or without the quantity), a word typed like an id that names another dataset
only, quick-look data shown because no science data covers the time. Imports `catalog`,
`timerange`, `vocabulary` and this package.
"""

from __future__ import annotations

import re

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.candidate import (
    NO_COVERAGE,
    UNCOVERED,
    Candidate,
    cadence_of,
    level_rank,
    time_coverage,
)
from xhelio.language.products import (
    Term,
    hard,
    is_view,
    metadata_tokens,
    product_id_words,
    says,
    uncovered,
    variant_count,
    view_primary,
)
from xhelio.timerange import TimeRange
from xhelio.vocabulary import load_vocabulary

__all__ = ["choice_notes", "unhonoured_ids", "variant_notes"]

_SPECIES_CUES = {sp.key: sp.cues for sp in load_vocabulary().species}


def _same_species(p: ParameterInfo, other: ParameterInfo) -> bool:
    """Whether two parameters name no different species ("FEDU" electrons, "FPDO" protons)."""
    named = [
        {s for s, cue in _SPECIES_CUES.items() if cue.search(f"{q.name} {q.description}")} - {"ion"}
        for q in (p, other)
    ]
    return not (named[0] and named[1] and named[0].isdisjoint(named[1]))


def variant_notes(
    ranked: list[Candidate],
    infos: dict[str, DatasetInfo],
    terms: tuple[Term, ...],
    time_range: TimeRange | None,
) -> tuple[list[str], list[Term]]:
    """Product words the pick does not say that a sibling says, without data for the time.

    Returns the notes and the words they account for. "burst" asked, the burst product
    ends before the requested day: the normal one is shown and the answer says why.
    """
    top = ranked[0]
    info = infos[top.dataset_id]
    notes: list[str] = []
    done: list[Term] = []
    for term in terms:
        # A plain word ("ion") may be said by the parameter drawn: only id-like words here.
        if not hard(term) or not term.acronym or variant_count(info, [term], top.cadence_s):
            continue
        # A ranked sibling, else any dataset of the source: the one saying most words, then
        # the one sharing most id words with the pick (the same instrument), first.
        others = [infos[c.dataset_id] for c in ranked[1:]]
        own = set(re.split(r"[_\-]", top.dataset_id))
        others += sorted(
            (d for d in infos.values() if d not in others and d.id != top.dataset_id),
            key=lambda d: (
                -variant_count(d, terms, cadence_of(d)),
                -len(own & set(re.split(r"[_\-]", d.id))),
            ),
        )
        sibling = next((d for d in others if variant_count(d, [term], cadence_of(d))), None)
        if sibling is None:
            continue
        done.append(term)
        instead = f"shown instead: {top.dataset_id} ({info.title.split(' - ')[0].strip()})."
        if time_coverage(sibling, time_range)[1]:
            when = time_range.readable() if time_range else "the requested time"
            held = ""
            if sibling.start and sibling.stop:
                held = f", which has data from {sibling.start:%Y-%m-%d} to {sibling.stop:%Y-%m-%d}"
            notes.append(
                f"Differs from the request: no '{term.typed}' dataset has data for {when} "
                f"(nearest: {sibling.id}{held}); {instead}"
            )
        else:
            notes.append(
                f"Differs from the request: the '{term.typed}' product {sibling.id} has no "
                f"parameter read as what was asked; {instead}"
            )
    return notes, done


def choice_notes(
    ranked: list[Candidate],
    infos: dict[str, DatasetInfo],
    terms: tuple[Term, ...],
    time_range: TimeRange | None,
) -> tuple[str, ...]:
    """What the answer says about the pick: words it lacks, a sibling without the time."""
    top = ranked[0]
    info = infos[top.dataset_id]
    notes, done = variant_notes(ranked, infos, terms, time_range)
    terms = tuple(t for t in terms if t not in done)
    timeless = next(
        (c for c in ranked[1:] if UNCOVERED in c.reason and c.score + NO_COVERAGE > top.score),
        None,
    )
    if done:  # the sibling that says the words asked is named already
        timeless = None
    lacking = uncovered(info, terms, top.cadence_s)
    if lacking:
        words = ", ".join(f"'{t.typed}'" for t in lacking)
        where = "no dataset found for"
        if timeless is not None and not uncovered(
            infos[timeless.dataset_id], lacking, timeless.cadence_s
        ):
            where = f"{timeless.dataset_id} has no data in the requested time for"
            timeless = None  # said here
        notes.append(
            f"Differs from the request: {where} {words} as asked; shown "
            f"instead: {top.dataset_id} "
            f"({info.title.split(' - ')[0].strip()})."
        )
    param = info.parameter(top.parameter)
    if param is not None:
        params = info.data_parameters
        views = [p for p in params if is_view(p, params)]
        # What a plot view of the parameter drawn says, its data holds.
        text = " ".join(
            f"{p.name} {p.description}"
            for p in [param, *views]
            if p is param or view_primary(p, params) is param
        )
        for term in terms:
            if not term.about_data or term in lacking or says(term, text):
                continue
            said = [
                p.name
                for p in params
                if p not in views
                and says(term, f"{p.name} {p.description}")
                and _same_species(p, param)
            ]
            if said:
                notes.append(
                    f"Differs from the request: '{term.typed}' is {', '.join(said[:3])} in "
                    f"{info.id}, which was not drawn; shown: {param.name} "
                    f"({param.description.strip() or param.name})."
                )
    science = _science_sibling(ranked, infos, terms)
    if science is not None and UNCOVERED not in top.reason:
        held = (
            f"{science.start:%Y-%m-%d} to {science.stop:%Y-%m-%d}"
            if science.start and science.stop
            else "other times"
        )
        notes.append(
            f"Only quick-look (low-latency, beacon or key-parameter) data covers the requested "
            f"time: shown {top.dataset_id}; the science-quality {science.id} has data for "
            f"{held}."
        )
    elif timeless is not None and UNCOVERED not in top.reason:
        notes.append(
            f"{timeless.dataset_id} fits the request's words better but has no data for the "
            f"requested time; used {top.dataset_id}."
        )
    return tuple(notes)


def unhonoured_ids(
    top: Candidate, infos: dict[str, DatasetInfo], terms: tuple[Term, ...], label: str
) -> tuple[str, ...]:
    """What the answer says of a word typed like an id that names another dataset only.

    A soft word ("AC" in "DE-2 VEFI AC electric field") the pick does not say anywhere,
    while it is a word of another dataset's own id (DE2_AC500MS_VEFI) that holds no
    `label`: the word could not be honoured, and the answer says so.
    """
    info = infos[top.dataset_id]
    described = " ".join([info.title, *(f"{p.name} {p.description}" for p in info.data_parameters)])
    own, _ = metadata_tokens(info, top.cadence_s)
    notes: list[str] = []
    for term in terms:
        if not term.soft or term.tokens & own or says(term, described):
            continue
        named = sorted(
            other.id
            for other in infos.values()
            if other.id != info.id and term.tokens & set(product_id_words(other))
        )
        if named:
            notes.append(
                f"Differs from the request: could not honour '{term.typed}' ("
                f"{', '.join(named[:2])}{' ...' if len(named) > 2 else ''} holds no {label} "
                f"as asked); shown: {top.dataset_id}."
            )
    return tuple(notes)


def _science_sibling(
    ranked: list[Candidate], infos: dict[str, DatasetInfo], terms: tuple[Term, ...]
) -> DatasetInfo | None:
    """A science-quality sibling without data for the time, when the pick is quick-look.

    Quick-look data the request did not ask for is shown only when no science data covers
    the time (`rank_key`); the answer says so, naming the sibling of the same instrument
    (sharing an id word beyond the spacecraft and level) that says as much of the request.
    """
    top = ranked[0]
    info = infos[top.dataset_id]
    if level_rank(info) != 2:
        return None
    own = set(re.split(r"[_\-]", top.dataset_id)[2:])
    said = variant_count(info, terms, top.cadence_s)
    for c in ranked[1:]:
        other = infos[c.dataset_id]
        if (
            UNCOVERED in c.reason
            and level_rank(other) < 2
            and own & set(re.split(r"[_\-]", c.dataset_id)[2:])
            and variant_count(other, terms, c.cadence_s) >= said
        ):
            return other
    return None
