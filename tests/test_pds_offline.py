"""Offline requests naming planetary missions and targets resolve to PDS datasets.

"Juno magnetometer at Jupiter 2016-08-27", "Galileo magnetometer 1996-06-27" and
"Cassini MAG at Saturn 2005-02-15" are answered by the planetary skill from "pds": the
shipped catalog is searched, the chosen dataset's products are read from a loopback PPI
archive (serving, for whichever dataset is chosen, a day built from the catalog's own
field list), fetched and plotted, cited to NASA PDS PPI. Requests of missions CDAWeb
also serves stay with the ordinary reader unless they say PDS, name a planet-centred
frame, or name a target at a time CDAWeb holds none of that mission's data for.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from servers.ppi_server import PpiTestServer, catalog_day
from xhelio.agents.offline import OfflineAssistant
from xhelio.agents.offline.planetary_skill import answer
from xhelio.agents.turn import TurnResult, run_turn
from xhelio.config import load_settings
from xhelio.tools.workspace import Workspace, open_workspace

pytest.importorskip("pdr")
pdsmcp = pytest.importorskip("pdsmcp")

from xhelio.sources.pds.catalog import load_catalog  # noqa: E402


@dataclass
class Offline:
    archive: PpiTestServer
    workspace: Workspace
    assistant: OfflineAssistant

    def ask(self, text: str) -> TurnResult:
        return run_turn(self.workspace, self.assistant, text)


def _serve_every(archive: PpiTestServer, mission: str, day: datetime) -> None:
    """A day of products for every dataset of `mission` with known fields covering `day`."""
    for dataset in load_catalog().datasets.values():
        info = dataset.info
        if info.mission_id != mission or not info.data_parameters:
            continue
        if info.start and info.stop and not (info.start <= day <= info.stop):
            continue
        folder, files = catalog_day(
            dataset.slot, info.id, [p.name for p in info.data_parameters], day
        )
        archive.add(folder, files)


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Offline]:
    home = tmp_path_factory.mktemp("pds-offline-home")
    with PpiTestServer() as archive, pytest.MonkeyPatch.context() as env:
        _serve_every(archive, "JUNO", datetime(2016, 8, 27, tzinfo=UTC))
        _serve_every(archive, "CASSINI", datetime(2005, 2, 15, tzinfo=UTC))
        _serve_every(archive, "VOYAGER1", datetime(1980, 11, 12, tzinfo=UTC))
        _serve_every(archive, "GALILEO", datetime(1996, 6, 27, tzinfo=UTC))
        env.setenv("XHELIO_HOME", str(home))
        env.setenv("XHELIO_PDS_URL", archive.url)
        workspace = open_workspace(settings=load_settings())
        try:
            yield Offline(archive, workspace, OfflineAssistant(workspace))
        finally:
            workspace.close()


@pytest.mark.parametrize(
    ("text", "mission", "day"),
    [
        ("Juno magnetometer at Jupiter 2016-08-27", "JUNO", "2016-08-27"),
        ("Cassini MAG at Saturn 2005-02-15", "CASSINI", "2005-02-15"),
        ("Galileo magnetometer 1996-06-27", "GALILEO", "1996-06-27"),
        ("Voyager 1 magnetic field in KRTP at Saturn on 1980-11-12", "VOYAGER1", "1980-11-12"),
        ("Voyager 1 field at Saturn from PDS, 1980-11-12", "VOYAGER1", "1980-11-12"),
    ],
)
def test_planetary_requests_fetch_and_plot_pds_data(
    offline: Offline, text: str, mission: str, day: str
) -> None:
    result = offline.ask(text)
    assert result.error is None, result.answer
    assert "NASA PDS PPI" in result.answer
    catalog = load_catalog()
    fetched = [d for d in result.data if d.dataset]
    assert fetched, result.answer
    for touched in fetched:
        found = catalog.get(str(touched.dataset))
        assert found is not None and found.info.mission_id == mission
        assert touched.points == 1440 and str(touched.start).startswith(day)
        entry = offline.workspace.session.store.get(touched.label)
        assert entry.citation["provider"] == "NASA PDS PPI"
        assert set(entry.units.values()) == {"nT"}  # the field components
    assert result.figures


def test_without_a_time_the_reply_asks_and_gives_the_coverage(offline: Offline) -> None:
    result = offline.ask("Juno magnetometer at Jupiter")
    assert not result.data and "For which time?" in result.answer
    assert re.search(r"covers \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d", result.answer)


def test_a_time_outside_every_dataset_is_said(offline: Offline) -> None:
    result = offline.ask("Juno magnetometer at Jupiter 1990-01-01")
    assert not result.data and "covers" in result.answer and "Closest" in result.answer


@dataclass
class _NoTools:
    workspace: Workspace

    def call_tool(self, tool: str, args: dict[str, Any]) -> Any:
        raise AssertionError(f"the skill must not take this request (called {tool})")


@pytest.mark.parametrize(
    "text",
    [
        "Voyager 1 magnetic field 1980-11-12",  # CDAWeb serves it and no target is named
        # A body named, but CDAWeb holds the mission's data for the time asked.
        "show the magnetic field of Voyager 1 at Saturn on 1980-11-12",
        "Cassini |B| during the Jupiter flyby, 2000-12-30",
        "MAVEN magnetic field at Mars 2015-03-08",
        "Cassini magnetometer 1-minute field 2004-07-01",
        "MAVEN MAG magnetic field vector 2015-03-08",
        "ACE magnetic field 2024-01-01",
        "plot the Moon phase",  # a target alone names no mission
    ],
)
def test_requests_of_other_archives_are_left_to_the_ordinary_reader(
    offline: Offline, text: str
) -> None:
    assert answer(_NoTools(offline.workspace), text) is None  # type: ignore[arg-type]
