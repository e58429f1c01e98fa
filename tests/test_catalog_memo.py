"""The catalog's in-memory answers: the same results as reading the index, forgotten on change.

`Catalog` keeps dataset records and search answers in memory (`catalog.memo.Memo`), shared by
every session of a server. Nothing it remembers may change a ranking or survive a change of
the index, by this connection or by another one.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from xhelio.catalog.index import Catalog, open_catalog
from xhelio.catalog.memo import Memo
from xhelio.catalog.model import BinsAxis, DatasetInfo, ParameterInfo
from xhelio.config import Settings
from xhelio.language.products import is_support

QUERIES = [
    ("ACE magnetic field", None),
    ("Wind proton density on 2024-02-03", None),
    ("OMNI solar wind speed", None),
    ("MMS1 FPI electron pitch angle distribution", None),
    ("sunward electrons 5-minute", None),
    ("AC_H0_MFI", None),
    ("PSP", None),
    ("BGSEc", None),
    ("magnetic field", "ace"),
    ("proton density", "wind"),
    ("orbit position", "themis"),
]


def _answers(catalog: Catalog) -> list[list[tuple[str, float, tuple[str, ...]]]]:
    return [
        [(h.dataset_id, h.score, h.matched_parameters) for h in catalog.search(q, 25, mission=m)]
        for q, m in QUERIES
    ]


@pytest.fixture(scope="module")
def index_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real snapshot's index, built once."""
    home = tmp_path_factory.mktemp("memo-home")
    with open_catalog(Settings(home=home)) as opened:
        return opened.path


@pytest.fixture
def own_index(index_path: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of the index a test may write to."""
    path = tmp_path / "catalog.sqlite"
    shutil.copyfile(index_path, path)
    yield path


def test_remembered_answers_equal_answers_read_from_the_index(index_path: Path) -> None:
    with Catalog(index_path) as warm:
        first = _answers(warm)
        again = _answers(warm)  # now from memory
        browsed = warm.browse("wind")
        browsed_again = warm.browse("wind")
        missions = warm.missions()
        ids = warm.dataset_ids()
    with Catalog(index_path) as cold:
        read = _answers(cold)
        assert ids == cold.dataset_ids()
        assert [d.id for d in cold.browse("wind")] == [d.id for d in browsed]
        assert cold.browse("wind") == browsed
    assert first == again == read
    assert all(a is b for a, b in zip(browsed, browsed_again, strict=True))
    assert missions == sorted(missions, key=lambda m: m.id) and missions


def test_callers_get_their_own_lists(index_path: Path) -> None:
    with Catalog(index_path) as catalog:
        hits = catalog.search("ACE magnetic field", limit=5)
        hits.clear()
        assert len(catalog.search("ACE magnetic field", limit=5)) == 5
        missions = catalog.missions()
        missions.clear()
        assert catalog.missions()


def test_an_upsert_is_seen_by_the_next_search_and_browse(own_index: Path) -> None:
    with Catalog(own_index) as catalog:
        before = [h.dataset_id for h in catalog.search("zebrafield", limit=5)]
        assert "AC_H9_ZEBRA" not in before
        assert "AC_H9_ZEBRA" not in [d.id for d in catalog.browse("ace")]
        new = DatasetInfo(
            id="AC_H9_ZEBRA",
            title="ACE zebrafield",
            mission_id="ace",
            parameters=(ParameterInfo("Time", "isotime"), ParameterInfo("Zebrafield")),
        )
        catalog.upsert([new])
        assert catalog.search("zebrafield", limit=5)[0].dataset_id == "AC_H9_ZEBRA"
        assert "AC_H9_ZEBRA" in [d.id for d in catalog.browse("ace")]
        assert "AC_H9_ZEBRA" in next(m for m in catalog.missions() if m.id == "ace").dataset_ids


def test_a_change_by_another_connection_is_seen(own_index: Path) -> None:
    with Catalog(own_index) as reader, Catalog(own_index) as writer:
        assert reader.search("zebrafield", limit=5) == []
        old = reader.dataset("AC_H0_MFI")
        writer.upsert(
            [
                DatasetInfo(id="AC_H9_ZEBRA", title="ACE zebrafield", mission_id="ace"),
                DatasetInfo(id="AC_H0_MFI", title="renamed", mission_id="ace"),
            ]
        )
        assert [h.dataset_id for h in reader.search("zebrafield", limit=5)] == ["AC_H9_ZEBRA"]
        assert "AC_H9_ZEBRA" in reader.dataset_ids()
        assert reader.dataset("AC_H0_MFI").title == "renamed" != old.title


def test_memo_keeps_the_most_recently_used() -> None:
    memo: Memo[int, str] = Memo(2)
    calls: list[list[int]] = []

    def compute(keys: list[int]) -> dict[int, str]:
        calls.append(keys)
        return {k: str(k) for k in keys}

    assert memo.get_many([1, 2], compute) == {1: "1", 2: "2"}
    assert memo.get(1, lambda: "other") == "1"  # 1 is now the most recent
    assert memo.get_many([3], compute) == {3: "3"}  # 2 goes
    assert memo.get_many([1, 2, 3], compute) == {1: "1", 2: "2", 3: "3"}
    assert calls == [[1, 2], [3], [2]]
    assert len(memo) == 2


def test_memo_forgets_an_answer_computed_across_a_clear() -> None:
    memo: Memo[str, int] = Memo(4)
    computing, cleared = threading.Event(), threading.Event()

    def slow() -> int:
        computing.set()
        cleared.wait(5)
        return 1

    worker = threading.Thread(target=lambda: memo.get("k", slow))
    worker.start()
    computing.wait(5)
    memo.clear()  # the index changed while the old answer was computed
    cleared.set()
    worker.join()
    assert memo.get("k", lambda: 2) == 2


def _is_support_by_scan(p: ParameterInfo, info: DatasetInfo) -> bool:
    """`is_support`'s structural test, spelled as a scan of every other parameter."""
    others = [o for o in info.data_parameters if o is not p]
    return any(
        p.name in (o.bins_name, *(n for a in o.bins_axes for n in (a.name, a.centers_param)))
        or p.name in (a.ranges_param for a in o.bins_axes)
        for o in others
    )


def test_bins_owners_answer_like_a_scan_of_every_parameter() -> None:
    energy = ParameterInfo("ENERGY_TABLE", size=(32,))
    flux = ParameterInfo(
        "FLUX",
        size=(32, 8),
        bins_name="ENERGY_TABLE",
        bins_axes=(
            BinsAxis("energy", centers_param="ENERGY_TABLE"),
            BinsAxis("pitch", ranges_param="PA_RANGES"),
        ),
    )
    ranges = ParameterInfo("PA_RANGES", size=(8, 2))
    selfish = ParameterInfo("SELF", size=(4,), bins_name="SELF")
    plain = ParameterInfo("DENSITY")
    info = DatasetInfo(
        id="X_Y",
        parameters=(ParameterInfo("Time", "isotime"), energy, flux, ranges, selfish, plain),
    )
    for p in info.data_parameters:
        assert is_support(p, info) == _is_support_by_scan(p, info), p.name
    assert [p.name for p in info.data_parameters if is_support(p, info)] == [
        "ENERGY_TABLE",
        "PA_RANGES",
    ]
    assert info.bins_owners["ENERGY_TABLE"] == (flux,)
