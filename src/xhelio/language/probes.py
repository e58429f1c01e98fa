"""Spacecraft of one constellation: probe shorthands and one product for all of them.

A product is a dataset id with its spacecraft token left out ("MMS*_FPI_FAST_L2_DIS-MOMS"):
the probes of a request ("MMS1 through MMS4", "STEREO A and B") are served the product
they all have, and a follow-up naming another probe ("now MMS3") keeps the product the
last request showed, as the catalog has it for that probe; what it lacks is said.
Nothing here is written per mission: probes come from the vocabulary, products from the
catalog's dataset ids. Imports `catalog`, `timerange`, `vocabulary` and this package.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from xhelio.catalog.index import Catalog
from xhelio.catalog.model import DatasetInfo
from xhelio.errors import UnknownDatasetError
from xhelio.language.intent import MissionRef
from xhelio.language.resolve import (
    Candidate,
    cadence_of,
    probe_of_dataset,
    probe_wanted,
    with_probe,
)
from xhelio.language.slots import find_designations
from xhelio.timerange import TimeRange
from xhelio.vocabulary import load_vocabulary

__all__ = [
    "Kept",
    "common_product",
    "kept_product",
    "led_by",
    "probe_doubts",
    "probe_swapped",
    "product",
    "switched_datasets",
    "switched_parameter",
]


def probe_swapped(mission_id: str, typed: str, token: str) -> str | None:
    """`typed` with its probe written as `token` ("RBSP-A", "B" -> "RBSP-B"), if that is one.

    The token takes the place of the end of `typed` that has its shape (digits, a letter,
    or letters and digits: "ARTEMIS P1", "P2" -> "ARTEMIS P2"); the result must name a
    probe of the same mission ("C3" after "MMS1" is Cluster's, not MMS's).
    """
    if probe_wanted(typed) is None:
        return None
    mixed = not (token.isdigit() or token.isalpha())
    shape = r"\d+" if token.isdigit() else r"[A-Za-z]" if token.isalpha() else r"[A-Za-z]{1,2}\d+"
    other = re.sub(rf"{shape}$", token.upper(), typed)
    if other == typed or probe_wanted(other) is None:
        return None
    entry = load_vocabulary().missions.get(mission_id)
    if entry is not None and entry.probes:
        known = entry.probe_of(other) if mixed else probe_wanted(other)
        return other if known in entry.probes else None
    # No table: a number, or the same letters with another number ("DMSP F16", "F18").
    letters = re.match(r"[A-Za-z]*", token)
    same = letters is not None and re.search(rf"{letters[0]}\d+$", typed, re.I) is not None
    return other if token.isdigit() or (mixed and same) else None


def product(dataset_id: str) -> str | None:
    """The product a dataset is of, whichever spacecraft ("MMS*_FGM_SRVY_L2"), or None."""
    return with_probe(dataset_id, "*")


def _covers(info: DatasetInfo, span: TimeRange | None) -> bool:
    if span is None:
        return True
    starts = info.start is None or info.start < span.end
    return starts and (info.stop is None or info.stop > span.start)


def common_product(
    catalog: Catalog, ranked: Sequence[Sequence[Candidate]], span: TimeRange | None
) -> str | None:
    """The product every probe's candidates hold with data for `span`.

    The one saying the request's product words for every probe first (`Candidate.said`),
    then the best summed score.
    """
    totals: dict[str, float] = {}
    counts: dict[str, int] = {}
    said: dict[str, int] = {}
    for cands in ranked:
        best: dict[str, Candidate] = {}
        for c in cands:
            key = product(c.dataset_id)
            if key and key not in best and _covers(catalog.dataset(c.dataset_id), span):
                best[key] = c
        for key, c in best.items():
            totals[key] = totals.get(key, 0.0) + c.score
            counts[key] = counts.get(key, 0) + 1
            said[key] = min(said.get(key, c.said), c.said)
    shared = [k for k in totals if counts[k] == len(ranked)]
    return max(shared, key=lambda k: (said[k], totals[k], k)) if shared else None


def led_by(cands: Sequence[Candidate], key: str, limit: int = 5) -> list[Candidate]:
    """The candidates, one per dataset, the first of product `key` in front."""
    unique = list({c.dataset_id: c for c in reversed(cands)}.values())[::-1]
    lead = [c for c in unique if product(c.dataset_id) == key][:1]
    return [*lead, *(c for c in unique if c not in lead)][:limit]


@dataclass(frozen=True)
class Kept:
    """The earlier request's product for one probe: the dataset to use, or why not."""

    dataset: DatasetInfo | None
    note: str | None = None


def kept_product(
    catalog: Catalog,
    earlier: Sequence[str],
    mission_id: str,
    probe: str,
    who: str,
    span: TimeRange | None,
) -> list[Kept]:
    """The datasets `earlier` showed, as the catalog has them for spacecraft `probe`.

    Only the earlier datasets of the same mission count; each maps to `probe`'s dataset
    of the same product when the catalog has it with data for `span`, or else to a note
    saying which of the two is missing (`who` names the probe in it).
    """
    kept: list[Kept] = []
    for dataset_id in earlier:
        info = _dataset(catalog, dataset_id)
        if info is None or info.mission_id != mission_id or probe_of_dataset(dataset_id) is None:
            continue
        mapped = with_probe(dataset_id, probe)
        other = _dataset(catalog, mapped) if mapped else None
        if other is None:
            note = f"The catalog has no {who} dataset of the product shown before ({dataset_id})"
            kept.append(Kept(None, note))
        elif not _covers(other, span):
            when = span.readable() if span else "the time asked"
            note = f"{other.id} (the product shown before, for {who}) has no data for {when}"
            kept.append(Kept(None, note))
        else:
            kept.append(Kept(other))
    return kept


def _dataset(catalog: Catalog, dataset_id: str) -> DatasetInfo | None:
    try:
        return catalog.dataset(dataset_id)
    except UnknownDatasetError:
        return None


def switched_datasets(
    catalog: Catalog,
    earlier: Sequence[str],
    probes: Sequence[tuple[str, str]],
    span: TimeRange | None,
) -> tuple[list[tuple[str, str]], list[str]]:
    """The datasets named before ("MMS1_FGM_SRVY_L2") as the catalog has them for `probes`.

    `probes` are (mission id, how the probe was typed) of a follow-up ("same for MMS2").
    Each earlier dataset of that mission maps to the probe's dataset of the same product;
    one the probe lacks (or has no data of for `span`) is said, with the probe's dataset
    the catalog search finds nearest to its title in its place. Returns the (earlier,
    new) dataset pairs and the notes.
    """
    pairs: list[tuple[str, str]] = []
    notes: list[str] = []
    for mission_id, typed in probes:
        probe = probe_wanted(typed)
        if probe is None:
            continue
        for kept, dataset_id in _each_kept(catalog, earlier, mission_id, probe, typed, span):
            if kept.dataset is not None:
                pairs.append((dataset_id, kept.dataset.id))
                continue
            near = _nearest_of_probe(catalog, dataset_id, mission_id, probe, span)
            instead = f"; used its nearest product, {near}" if near else ""
            notes.append(f"{kept.note}{instead}.")
            pairs.extend([(dataset_id, near)] if near else [])
    return list(dict.fromkeys(pairs)), notes


def switched_parameter(name: str, earlier: str, dataset_id: str) -> str:
    """Parameter `name` of dataset `earlier` as another probe's `dataset_id` names it.

    "tha_fgs_gsm" of THA_L2_FGM is "thb_fgs_gsm" of THB_L2_FGM; "B_mag__C1_CP_FGM_SPIN"
    is "B_mag__C3_CP_FGM_SPIN" of C3_CP_FGM_SPIN.
    """
    name = name.replace(earlier, dataset_id)
    old, new = earlier.split("_", 1)[0], dataset_id.split("_", 1)[0]
    for a, b in ((old, new), (old.lower(), new.lower()), (old.upper(), new.upper())):
        name = re.sub(rf"(?<![A-Za-z0-9]){re.escape(a)}(?![A-Za-z0-9])", b, name)
    return name


def _each_kept(
    catalog: Catalog,
    earlier: Sequence[str],
    mission_id: str,
    probe: str,
    who: str,
    span: TimeRange | None,
) -> list[tuple[Kept, str]]:
    pairs: list[tuple[Kept, str]] = []
    for dataset_id in earlier:
        pairs.extend(
            (k, dataset_id)
            for k in kept_product(catalog, [dataset_id], mission_id, probe, who, span)
        )
    return pairs


def _nearest_of_probe(
    catalog: Catalog, dataset_id: str, mission_id: str, probe: str, span: TimeRange | None
) -> str | None:
    """Spacecraft `probe`'s dataset nearest `dataset_id`, with data for `span`.

    The one sharing most words of the id ("PLA" of STA_L3_PLA_HEPLUS_...; a processing
    level counts half), then the nearest cadence, then the catalog search for the id
    and title.
    """
    info = catalog.dataset(dataset_id)
    words = " ".join(re.split(r"[_\W]+", f"{dataset_id} {info.title or ''}"))
    ranked = [h.dataset_id for h in catalog.search(words, limit=60, mission=mission_id)]
    mine = _id_words(product(dataset_id) or dataset_id)
    fits = [
        other.id
        for d in ranked
        if (other := _dataset(catalog, d)) and probe_of_dataset(d) == probe and _covers(other, span)
    ]

    def shared(d: str) -> float:
        both = mine & _id_words(product(d) or d)
        return sum(0.5 if _LEVEL.fullmatch(w) else 1.0 for w in both)

    def apart(d: str) -> float:  # how far the cadences are (factors of e), unknown: far
        mine_s, its_s = cadence_of(info), cadence_of(catalog.dataset(d))
        return abs(math.log(its_s / mine_s)) if mine_s and its_s else math.inf

    return max(fits, key=lambda d: (shared(d), -apart(d), -fits.index(d))) if fits else None


_LEVEL = re.compile(r"[LKH]\d")


def _id_words(dataset_id: str) -> set[str]:
    return {w for w in re.split(r"[_\W]+", dataset_id.upper()) if w and w != "*"}


def _designated(text: str, ref: MissionRef) -> bool:
    """Whether a launch designation follows the mission's name ("LANL-97A", "lanl 1994").

    The vocabulary's designation words say how they are written (`slots.find_designations`).
    """
    after = ref.position + len(ref.text)
    return any(after <= start <= after + 1 for start, _ in find_designations(text))


# "the other", "another": a spacecraft told apart from the one already shown.
_THE_OTHER = re.compile(r"\b(?:the other|another|the remaining)\s+$", re.I)


def probe_doubts(
    held: dict[str, frozenset[str]], text: str, missions: Sequence[MissionRef], datasets: bool
) -> tuple[str, ...]:
    """Questions about the spacecraft typed: one the catalog lacks, or none named."""
    return _probes_lacking(held, missions) or _unnamed_probes(held, text, missions, datasets)


def _probes_lacking(
    held: dict[str, frozenset[str]], missions: Sequence[MissionRef]
) -> tuple[str, ...]:
    """A question for each spacecraft typed that no dataset of its mission is of ("TWINS 3")."""
    doubts: list[str] = []
    for ref in missions:
        have = held.get(ref.mission_id, frozenset())
        probe = probe_wanted(ref.text)
        if have and probe is not None and probe not in have:
            names = ", ".join(sorted(have, key=lambda p: (len(p), p)))
            doubts.append(
                f"which spacecraft you mean by '{ref.text}' (the catalog has {ref.name} data"
                f" of spacecraft {names}; none of {probe})"
            )
    return tuple(doubts)


def _unnamed_probes(
    held: dict[str, frozenset[str]], text: str, missions: Sequence[MissionRef], datasets: bool
) -> tuple[str, ...]:
    """A question for each constellation named with none of its spacecraft ("THEMIS fgm").

    `held`: the spacecraft the catalog's dataset ids of each constellation name. Which one
    is meant is asked, never picked: "all", "each" or "both" name every one, and a dataset
    id (`datasets`) names its own.
    """
    if datasets:
        return ()
    probed = {m.mission_id for m in missions if probe_wanted(m.text) is not None}
    doubts: list[str] = []
    for ref in missions:
        have = held.get(ref.mission_id, frozenset())
        if len(have) < 2 or ref.mission_id in probed or probe_wanted(ref.text) is not None:
            continue
        if _designated(text, ref):
            continue
        if _THE_OTHER.search(text[: ref.position]):
            continue  # "the other Van Allen probe": the one not shown, for a follow-up
        names = ", ".join(sorted(have, key=lambda p: (len(p), p)))
        doubts.append(
            f"which {ref.name} spacecraft you mean ('{ref.text}' names none of them; the"
            f" catalog has {ref.name} data of spacecraft {names}; or say 'all')"
        )
    return tuple(doubts)
