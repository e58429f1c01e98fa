"""One ranked search over several sources: order kept per source, tags, failures."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.errors import ServerUnreachableError, UserError
from xhelio.sources.base import DatasetHit
from xhelio.sources.search import rank_datasets, search_registered, search_sources


class ListSource:
    """A source whose search answers a fixed list (or raises), to test the merge alone."""

    def __init__(
        self, name: str, hits: Sequence[tuple[str, str]] = (), error: Exception | None = None
    ):
        self.name = name
        self.hits = [DatasetHit(i, t, name) for i, t in hits]
        self.error = error

    def search(self, query: str, limit: int = 10, mission: str | None = None) -> list[DatasetHit]:
        if self.error is not None:
            raise self.error
        return self.hits[:limit]


CDAWEB = [
    ("AC_H0_MFI", "ACE magnetic field 16-second"),  # the index's own order, kept as is
    ("WI_H0_MFI", "Wind magnetic field"),
    ("AC_H2_MFI", "ACE magnetic field hourly"),
]


def test_each_source_keeps_its_order_and_better_covering_hits_come_first() -> None:
    weak = ListSource("lab", [("LAB_X", "laboratory noise"), ("LAB_B", "ACE-like magnetic field")])
    found = search_sources([ListSource("hapi", CDAWEB), weak], "ACE magnetic field")
    ids = [h.dataset_id for h in found.hits]
    cdaweb = [i for i in ids if not i.startswith("LAB")]
    assert cdaweb == ["AC_H0_MFI", "WI_H0_MFI", "AC_H2_MFI"]  # never reordered
    assert ids.index("AC_H0_MFI") < ids.index("LAB_X")  # full match before no match
    assert ids.index("LAB_X") < ids.index("LAB_B")  # the lab's own order holds too
    assert {h.source for h in found.hits} == {"hapi", "lab"}


def test_a_dataset_found_by_two_sources_is_listed_once_with_both() -> None:
    found = search_sources(
        [ListSource("hapi", CDAWEB), ListSource("cdf", CDAWEB)], "magnetic field", limit=2
    )
    assert [h.dataset_id for h in found.hits] == ["AC_H0_MFI", "WI_H0_MFI"]
    assert all(h.source == "hapi" and h.also_from == ("cdf",) for h in found.hits)


def test_a_source_that_fails_is_left_out_with_a_note() -> None:
    down = ListSource("lab", error=ServerUnreachableError("Cannot reach http://lab/hapi."))
    found = search_sources([down, ListSource("hapi", CDAWEB)], "ACE")
    assert [h.dataset_id for h in found.hits][:1] == ["AC_H0_MFI"]
    assert found.notes == [
        "Source 'lab' was left out of this search: Cannot reach http://lab/hapi."
    ]


def test_an_unknown_mission_is_an_error_only_when_no_source_knows_it() -> None:
    refusing = ListSource("hapi", error=UserError("Unknown mission 'demo-sat'."))
    knowing = ListSource("demo", [("DEMO_WAVE", "demo wave")])
    assert search_sources([refusing, knowing], "wave", mission="demo-sat").hits
    with pytest.raises(UserError, match="demo-sat"):
        search_sources([refusing, ListSource("cdf")], "wave", mission="demo-sat")


def test_search_registered_asks_the_default_first_and_notes_sources_that_cannot_open() -> None:
    sources = {"cdf": ListSource("cdf", CDAWEB), "hapi": ListSource("hapi", CDAWEB)}

    def open_source(name: str) -> ListSource:
        if name == "bad":
            raise RuntimeError("plugin bug")
        return sources[name]

    found = search_registered(["cdf", "bad", "hapi"], open_source, "ACE", first="hapi")
    assert found.hits[0].source == "hapi" and found.hits[0].also_from == ("cdf",)
    assert found.notes == ["Source 'bad' was left out of this search: RuntimeError: plugin bug"]


def test_rank_datasets_ranks_a_small_catalog_by_the_words_it_holds() -> None:
    datasets = [
        DatasetInfo("LAB_TEMP", "Laboratory temperature", mission_id="lab"),
        DatasetInfo(
            "LAB_PLASMA",
            "Laboratory plasma",
            mission_id="lab",
            parameters=(ParameterInfo("density", units="cm^-3", description="Electron density"),),
        ),
        DatasetInfo("OTHER", "Unrelated", mission_id="elsewhere"),
    ]
    hits = rank_datasets(datasets, "laboratory plasma density", "lab")
    assert [h.dataset_id for h in hits] == ["LAB_PLASMA", "LAB_TEMP"]
    assert hits[0].parameters == ("density",) and hits[0].source == "lab"
    assert rank_datasets(datasets, "unrelated", "lab", mission="lab") == []
    assert rank_datasets(datasets, "the of and", "lab") == []  # no word that means anything
    assert [h.dataset_id for h in rank_datasets(datasets, "temp", "lab")] == ["LAB_TEMP"]
