"""The per-user event-list store: save, search, resolve phrases, users kept apart."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from xhelio.errors import UserError
from xhelio.events.model import make_event_list
from xhelio.events.store import EventStore
from xhelio.migrations import applied_versions


def _storms() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "start": ["2014-02-18T10:00Z", "2015-03-17T04:00Z", "2015-06-22T18:00Z"],
            "end": ["2014-02-20T00:00Z", "2015-03-19T00:00Z", "2015-06-24T00:00Z"],
            "minimum": [-116.0, -222.0, -204.0],
        }
    )


def test_two_sessions_of_one_user_share_lists_other_users_do_not(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    first = EventStore(path, "alice")
    first.save(make_event_list("my storms", _storms(), description="storms I study"))
    later = EventStore(path, "alice")  # another session of the same user
    loaded = later.load("MY STORMS")
    assert len(loaded) == 3 and loaded.frame["minimum"].tolist() == [-116.0, -222.0, -204.0]
    assert loaded.frame["start"][1] == pd.Timestamp("2015-03-17T04:00Z")
    bob = EventStore(path, "bob")
    assert bob.names() == [] and bob.search("storms") == []
    with pytest.raises(UserError, match="No saved event list"):
        bob.load("my storms")


def test_phrase_picks_the_list_and_its_years(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "e.sqlite")
    store.save(make_event_list("my storms", _storms(), description="storms I study"))
    store.save(make_event_list("fte crossings", _storms().head(1), description="FTEs"))
    chosen = store.resolve("the 2015 storms in my list")
    assert chosen.name == "my storms" and len(chosen) == 2
    assert set(chosen.frame["start"].dt.year) == {2015}
    assert store.resolve("fte crossings").name == "fte crossings"
    assert [s["name"] for s in store.search("storm")] == ["my storms"]
    with pytest.raises(UserError, match="Your lists: fte crossings, my storms"):
        store.resolve("the substorms of 2001")
    store.delete("fte crossings")
    assert len(store.resolve("the 2014 events in my list")) == 1  # the only list


def test_saving_over_a_name_needs_replace(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "e.sqlite")
    store.save(make_event_list("s", _storms()))
    with pytest.raises(UserError, match="already have"):
        store.save(make_event_list("s", _storms().head(1)))
    assert len(store.load("s")) == 3  # nothing lost
    store.save(make_event_list("s", _storms().head(1)), replace=True)
    assert len(store.load("s")) == 1
    assert store.delete("s") and not store.delete("s")


def test_schema_is_versioned(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    EventStore(path)
    with sqlite3.connect(path) as db:
        assert applied_versions(db) == [1]
