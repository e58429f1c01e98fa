"""The LLM path reaches PDS: a mission agent for a PDS-only mission fetches with source 'pds'.

"Juno" is no CDAWeb mission: its mission agent is made from the PDS catalog, its prompt
lists Juno's PDS datasets, and its (scripted) model lists parameters and fetches through
the ordinary tools with ``source="pds"`` from a loopback PPI archive.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from agent_script import Script, scripted_config
from servers.ppi_server import Column, PpiTestServer, iso_minutes, pds3_product
from xhelio.agents.mission import MissionAgents
from xhelio.agents.models import ModelRouter
from xhelio.agents.subagent import AgentEnv
from xhelio.agents.toolbridge import run_coroutine
from xhelio.config import load_settings
from xhelio.tools.workspace import Workspace, open_workspace

pytest.importorskip("pdr")
pytest.importorskip("pdsmcp")

JUNO = "pds3:JNO-J-3-FGM-CAL-V1.0:DATA"


@pytest.fixture
def workspace(monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    day = datetime(2016, 8, 27, tzinfo=UTC)
    files = pds3_product(
        "FGM_JNO_L3_2016240PC_R60S_V01",
        iso_minutes(day, 60, doy=True),
        [Column("BX PLANETOCENTRIC", [float(i) for i in range(60)], "NANOTESLA")],
    )
    with PpiTestServer() as archive:
        archive.add("/data/JNO-J-3-FGM-CAL-V1.0/DATA/JUPITER/PC/PERI-01", files)
        monkeypatch.setenv("XHELIO_PDS_URL", archive.url)
        ws = open_workspace(settings=load_settings())
        try:
            yield ws
        finally:
            ws.close()


def test_a_pds_only_mission_gets_an_agent_that_fetches_from_pds(workspace: Workspace) -> None:
    fetch = {
        "dataset_id": JUNO,
        "parameter_id": "BX PLANETOCENTRIC",
        "time_range": "2016-08-27T00:00 to 2016-08-27T01:00",
        "source": "pds",
    }
    script = Script(
        {
            "mission:Juno (NASA PDS PPI; fetch with source='pds')": [
                [("list_parameters", {"dataset_id": JUNO, "source": "pds"})],
                [("fetch_data", fetch)],
                "Fetched Juno's magnetic field from PDS.",
            ]
        }
    )
    env = AgentEnv(workspace, ModelRouter(scripted_config(), build=script.build))
    agent = MissionAgents(env).get("Juno")
    assert JUNO in agent.mission.dataset_ids and "source='pds'" in agent.mission.name
    result = run_coroutine(lambda: agent.fetch("Juno magnetometer 2016-08-27", threading.Event()))
    assert not result.failed, result
    listed = [op for op in workspace.session.operations if op["tool"] == "list_parameters"]
    assert listed and "BX PLANETOCENTRIC" in str(listed[0]["result"])
    entry = workspace.session.store.get(f"{JUNO}.BX PLANETOCENTRIC")
    assert len(entry.data) == 60 and entry.citation["provider"] == "NASA PDS PPI"


def test_an_unknown_mission_is_still_a_clear_error(workspace: Workspace) -> None:
    env = AgentEnv(workspace, ModelRouter(scripted_config(), build=Script({}).build))
    with pytest.raises(Exception, match="Unknown mission 'Hayabusa'"):
        MissionAgents(env).get("Hayabusa")
