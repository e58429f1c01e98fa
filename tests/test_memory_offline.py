"""Offline mode and long-term memory: "remember that I prefer ..." is stored.

A later session applies the preferences offline mode can (log scale, favourite dataset,
panel layout) and says so; what a request says itself wins.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from servers.catalog_hapi import CatalogHapiServer
from xhelio.agents.factory import make_assistant
from xhelio.agents.offline.memory_skill import applicable, remembered
from xhelio.agents.turn import TurnResult, run_turn
from xhelio.config import load_settings
from xhelio.long_term_memory.store import MemoryStore
from xhelio.tools.workspace import open_workspace


@pytest.fixture(scope="module")
def server() -> Iterator[CatalogHapiServer]:
    with CatalogHapiServer() as hapi:
        yield hapi


@pytest.fixture
def home(server: CatalogHapiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
    return Path(str(tmp_path))


def ask_in_new_session(*requests: str) -> tuple[list[TurnResult], object]:
    workspace = open_workspace(settings=load_settings())
    try:
        assistant, config = make_assistant(workspace)
        assert config.offline
        results = [run_turn(workspace, assistant, text) for text in requests]
        return results, workspace.session.plot.current
    finally:
        workspace.close()


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        (
            "remember that I prefer log scales for particle flux",
            ("I prefer log scales for particle flux", "preference"),
        ),
        ("Please remember: OMNI has gaps before 1995.", ("OMNI has gaps before 1995", "pitfall")),
        (
            "From now on, plot everything in separate panels",
            ("Plot everything in separate panels", "preference"),
        ),
        ("I remember the storm of 2003", None),
        ("plot ACE magnetic field", None),
    ],
)
def test_what_counts_as_a_remember_request(request_text: str, expected: object) -> None:
    assert remembered(request_text) == expected


def test_a_preference_stated_offline_is_applied_in_the_next_session(home: Path) -> None:
    (said,), _ = ask_in_new_session("remember that I prefer a log scale for proton flux")
    assert "I'll remember this preference" in said.answer
    (memory,) = MemoryStore.open(load_settings()).list()
    assert (memory.type, memory.source) == ("preference", "user_explicit")

    (result,), figure = ask_in_new_session("GOES 10 proton flux 2003-10-28")
    assert result.error is None, result.answer
    assert f"log scale for energetic particle flux (memory {memory.id})" in result.answer
    assert figure is not None
    assert figure.figure["layout"]["yaxis"]["type"] == "log"  # type: ignore[attr-defined]
    assert MemoryStore.open(load_settings()).get(memory.id).access_count == 1

    (linear,), figure = ask_in_new_session("GOES 10 proton flux 2003-10-28, linear scale")
    assert "Applied your saved preferences" not in linear.answer  # the request wins
    assert figure.figure["layout"]["yaxis"].get("type") != "log"  # type: ignore[attr-defined]


def test_a_disabled_preference_is_not_applied(home: Path) -> None:
    store = MemoryStore.open(load_settings())
    memory = store.add("Log scale for proton flux please", "preference")
    store.set_enabled(memory.id, False)
    (result,), figure = ask_in_new_session("GOES 10 proton flux 2003-10-28")
    assert "Applied" not in result.answer
    assert figure.figure["layout"]["yaxis"].get("type") != "log"  # type: ignore[attr-defined]


def test_a_favourite_dataset_is_applied(home: Path) -> None:
    MemoryStore.open(load_settings()).add(
        "For solar wind speed I use OMNI_HRO_1MIN", "preference", "data_ops"
    )
    (result,), _ = ask_in_new_session("solar wind speed 2024-01-10")
    assert result.error is None, result.answer
    assert "OMNI_HRO_1MIN for solar wind speed" in result.answer
    assert [d.dataset for d in result.data] == ["OMNI_HRO_1MIN"], result.answer


def test_a_panel_layout_is_applied(home: Path) -> None:
    MemoryStore.open(load_settings()).add(
        "I like each spacecraft in separate panels", "preference", "visualization"
    )
    (result,), figure = ask_in_new_session("ACE and Wind magnetic field magnitude 2024-01-10")
    assert result.error is None, result.answer
    assert "panel layout in separate panels" in result.answer
    assert figure.panels == 2  # type: ignore[attr-defined]


def test_preferences_need_a_matching_quantity() -> None:
    store_less = applicable([], "GOES proton flux")
    assert store_less == []
