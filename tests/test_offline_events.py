"""Offline event requests end to end: import, storms, shocks and superposed epoch."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from events_synthetic import dst_with_storms
from servers.catalog_hapi import CatalogHapiServer
from xhelio.agents.offline import OfflineAssistant
from xhelio.agents.offline.events_skill import parse_event_request
from xhelio.agents.turn import TurnResult, run_turn
from xhelio.config import load_settings
from xhelio.events.formats import write_events
from xhelio.events.shipped import shipped_list
from xhelio.tools.workspace import Workspace, open_workspace

DST, PLANTED, _ = dst_with_storms()  # 2015-01-01 to 2015-03-02, hourly


class PlantedDstServer(CatalogHapiServer):
    """The catalog server, with OMNI's hourly DST replaced by the planted storms."""

    def _register(self, dataset_id: str, start: pd.Timestamp, stop: pd.Timestamp) -> None:
        super()._register(dataset_id, start, stop)
        if dataset_id != "OMNI2_H0_MRG1HR":
            return
        served = self._datasets[dataset_id]  # pyright: ignore[reportPrivateUsage]
        times = pd.DatetimeIndex(served.frame.index)
        planted = np.interp(times.asi8, DST.index.as_unit(times.unit).asi8, DST.to_numpy())
        served.frame[served.columns["DST"][0]] = planted
        served.rendered.clear()


@dataclass
class Offline:
    workspace: Workspace
    assistant: OfflineAssistant

    def ask(self, text: str) -> TurnResult:
        return run_turn(self.workspace, self.assistant, text)


@pytest.fixture(name="offline", scope="module")
def offline_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Offline]:
    home = tmp_path_factory.mktemp("events-home")
    with PlantedDstServer(max_rows=10_000) as server, pytest.MonkeyPatch.context() as env:
        env.setenv("XHELIO_HOME", str(home))
        env.setenv("XHELIO_HAPI_URL", server.url)
        workspace = open_workspace(settings=load_settings())
        try:
            yield Offline(workspace, OfflineAssistant(workspace))
        finally:
            workspace.close()


def test_find_storms_lists_every_planted_storm(offline: Offline) -> None:
    turn = offline.ask("find geomagnetic storms in 2015")
    assert turn.error is None, turn.answer
    assert f"Found {len(PLANTED)} events as events.storms-2015." in turn.answer
    assert "Gonzalez" in turn.answer and "threshold_nT=-50.0" in turn.answer
    for storm in PLANTED:
        assert f"minimum_time {storm.minimum_time:%Y-%m-%d}" in turn.answer


def test_superposed_epoch_of_bz_for_intense_storms(offline: Offline) -> None:
    turn = offline.ask("superposed epoch of OMNI Bz for the storms in 2015 with Dst below -100 nT")
    assert turn.error is None, turn.answer
    intense = sum(1 for s in PLANTED if s.minimum <= -100)
    assert f"Found {intense} events" in turn.answer and "threshold_nT=-100.0" in turn.answer
    assert f"around {intense} of {intense} events (epoch = minimum_time" in turn.answer
    table = offline.workspace.session.store.get("sea.storms-2015.BZ_GSM").data
    assert table["count"].max() == intense


def test_import_saves_and_then_the_list_is_used_by_phrase(offline: Offline, tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_text(write_events(shipped_list("omni-dst-storms-1999-2001"), "csv"), "utf-8")
    turn = offline.ask(f"import events from {path} as solarmax and save it")
    assert turn.error is None, turn.answer
    assert "Imported 85 events as events.solarmax." in turn.answer
    turn = offline.ask("superposed epoch of OMNI Bz for the 2000 storms in my list")
    assert turn.error is None, turn.answer
    in_2000 = (shipped_list("omni-dst-storms-1999-2001").frame["start"].dt.year == 2000).sum()
    assert f"Using {in_2000} events as events.solarmax." in turn.answer
    assert f"around {in_2000} of {in_2000} events (epoch = start" in turn.answer


def test_shocks_request_runs_the_detector(offline: Offline) -> None:
    turn = offline.ask("list shocks in Wind data for 2015-03-17")
    assert turn.error is None, turn.answer
    assert "events as events.shocks-wind-2015-03-17." in turn.answer and "Kilpua" in turn.answer


def test_a_request_without_a_time_gets_a_question(offline: Offline) -> None:
    for text in (
        "find geomagnetic storms",
        "list shocks in ACE data",
        "superposed epoch of OMNI Bz for the intense storms",
    ):
        turn = offline.ask(text)
        assert "Which time should I look for" in turn.answer, text


@pytest.mark.parametrize(
    "text",
    ["plot Wind magnetic field for March 2015", "what is a geomagnetic storm?", "import numpy"],
)
def test_other_requests_are_left_to_the_ordinary_reading(text: str) -> None:
    assert parse_event_request(text) is None


def test_stream_interactions_request_runs_the_detector(offline: Offline) -> None:
    turn = offline.ask("find stream interaction regions in OMNI data for 2015-01-01 to 2015-01-10")
    assert turn.error is None, turn.answer
    assert "events.stream-interactions-omni-2015-01-01" in turn.answer and "Jian" in turn.answer
