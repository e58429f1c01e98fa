"""A follow-up that only moves the time keeps the data shown: its dataset and parameter lead.

"zoom to 06:00-12:00" after ACE's 16-s field narrows that same series; the ranking alone
would pick another product of the instrument for the shorter window. A dataset shown
before with no data in the new window gives way to the ranking.
Imports only `catalog`, `language` and `timerange`.
"""

from __future__ import annotations

from xhelio.catalog.index import Catalog
from xhelio.language.intent import QuantityWish
from xhelio.language.resolve import Candidate, resolve
from xhelio.timerange import TimeRange

__all__ = ["keep_shown"]


def keep_shown(
    catalog: Catalog,
    wish: QuantityWish,
    span: TimeRange,
    cands: list[Candidate],
    shown: list[tuple[str, str]],
) -> list[Candidate]:
    """`cands` led by the (dataset, parameter) shown before for the same spacecraft, if any."""
    if not cands or not shown:
        return cands
    for cand in cands:
        if (cand.dataset_id, cand.parameter) in shown:
            return [cand, *(c for c in cands if c is not cand)]
    mission = catalog.dataset(cands[0].dataset_id).mission_id
    for dataset_id, parameter in shown:
        info = catalog.dataset(dataset_id)
        if info.mission_id != mission:
            continue
        found = resolve(catalog, wish, [info], time_range=span)
        same = [c for c in found if c.parameter == parameter]
        if same:
            return [same[0], *(c for c in cands if c.dataset_id != dataset_id)]
    return cands
