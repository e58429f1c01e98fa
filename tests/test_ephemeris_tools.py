"""The ephemeris tools through the funnel: stored entries, fallback said, figure, transforms."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("spiceypy")
pytest.importorskip("sunpy")

from ephemeris_support import (
    AU_KM,
    MINIMAL_PCK,
    PSP_SPK,
    circular_states,
    earth_states,
    naif_stand_in,
    write_spk,
)
from servers.hapi_server import HapiTestServer, make_info
from xhelio.config import load_settings
from xhelio.data.entry import DataEntry
from xhelio.tools.toolset import default_registry
from xhelio.tools.workspace import Workspace, open_workspace

TIMES = pd.date_range("2021-04-27", "2021-05-03", freq="1h", tz="UTC")


@pytest.fixture
def with_kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    planets = write_spk(tmp_path / "de.bsp", {399: (TIMES, earth_states(TIMES))})
    probe = write_spk(tmp_path / "psp.bsp", {-96: (TIMES, circular_states(TIMES, 0.4, 30.0))})
    with naif_stand_in() as naif:
        naif.add("generic_kernels/pck/pck00011.tpc", MINIMAL_PCK.encode())
        naif.add("generic_kernels/spk/planets/de440s.bsp", planets.read_bytes())
        naif.add(f"{PSP_SPK}/spp_nom_20180812_20300101_v042.bsp", probe.read_bytes())
        monkeypatch.setenv("XHELIO_NAIF_URL", naif.url)
        workspace = open_workspace(settings=load_settings(), ephemeral=True)
        yield workspace
        workspace.close()


def _positions(server: HapiTestServer, prefix: str, radius_au: float, lon: float) -> None:
    times = pd.date_range("2022-02-20", "2022-03-01", freq="1h", tz="UTC", name="time")
    frame = pd.DataFrame(
        {"RAD_AU": radius_au, "HGI_LAT": 0.0, "HGI_LON": lon}, index=times, dtype=float
    )
    info = make_info(
        "2022-02-20T00:00:00Z",
        "2022-03-01T00:00:00Z",
        [("RAD_AU", "AU", None), ("HGI_LAT", "deg", None), ("HGI_LON", "deg", None)],
        cadence="PT1H",
    )
    server.add_dataset(f"{prefix}_HELIO1HR_POSITION", info, frame)


@pytest.fixture
def archive_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    with HapiTestServer(version="2.0") as server:
        _positions(server, "SOLO", 0.5, 40.0)
        _positions(server, "PSP", 0.1, 40.0 - 27.0)
        _positions(server, "EARTH", 0.99, 150.0)
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        monkeypatch.setenv("XHELIO_NAIF_URL", "http://127.0.0.1:9/naif")
        monkeypatch.setenv("XHELIO_HTTP_RETRIES", "0")
        workspace = open_workspace(settings=load_settings(), ephemeral=True)
        yield workspace
        workspace.close()


def test_the_tools_are_registered_and_public() -> None:
    registry = default_registry()
    for name in ("get_ephemeris", "spacecraft_separation", "magnetic_connectivity"):
        spec = registry.get(name)
        assert spec is not None and spec.public and spec.time_args == ("time_range",)
    transform = registry.get("transform_frame")
    assert transform is not None and transform.public and transform.produces is not None


def test_get_ephemeris_stores_a_plottable_entry(with_kernels: Workspace) -> None:
    result = with_kernels.funnel.call(
        "get_ephemeris",
        {
            "target": "Parker Solar Probe",
            "time_range": "2021-04-29",
            "frame": "GSE",
            "observer": "Earth",
            "step": "1h",
        },
    )
    assert result.status == "ok", result.error
    assert result.labels == ["ephemeris.PSP.GSE.from_EARTH"]
    entry = with_kernels.context.store.get("ephemeris.PSP.GSE.from_EARTH")
    assert isinstance(entry.data, pd.DataFrame) and len(entry.data) == 25
    assert entry.units["x"] == "km" and entry.units["light_time"] == "s"
    assert any("spp_nom" in s for s in result.payload["sources"])
    distance = np.linalg.norm(entry.data[["x", "y", "z"]].to_numpy(), axis=1)
    assert np.allclose(distance, entry.data["distance"])


def test_separation_lists_alignment_periods(with_kernels: Workspace) -> None:
    result = with_kernels.funnel.call(
        "spacecraft_separation",
        {
            "first": "PSP",
            "second": "Earth",
            "time_range": "2021-04-28 to 2021-05-02",
            "within_deg": 400,
        },
    )
    assert result.status == "ok", result.error
    table = with_kernels.context.store.get(result.labels[0]).data
    assert isinstance(table, pd.DataFrame)
    assert set(table.columns) == {"angle", "delta_longitude", "delta_latitude"}
    assert len(result.payload["periods"]) == 1  # always within 400 deg: one whole period
    assert 0 <= result.payload["smallest_angle_deg"] <= result.payload["largest_angle_deg"] <= 180


def test_connectivity_from_archive_positions_is_said_and_drawn(archive_only: Workspace) -> None:
    result = archive_only.funnel.call(
        "magnetic_connectivity",
        {
            "bodies": ["Solar Orbiter", "PSP", "Earth"],
            "time_range": "2022-02-25",
            "wind_speed": 400,
        },
    )
    assert result.status == "ok", result.error
    payload = result.payload
    assert any("SOLO_HELIO1HR_POSITION" in s for s in payload["sources"])
    assert any("no kernel covered" in n for n in payload["notes"])
    # Closed form lag (deg) at 400 km/s: Omega (r - 2.5 Rsun) / v.
    omega = 2 * np.pi / (25.38 * 86400)

    def lag(r_au: float) -> float:
        return float(np.degrees(omega * (r_au * AU_KM - 2.5 * 695700.0) / 400.0))

    solo, psp = payload["footpoints_deg"]["SOLO"], payload["footpoints_deg"]["PSP"]
    assert psp - solo == pytest.approx((-27.0 + lag(0.1)) - lag(0.5), abs=0.2)
    assert payload["connected"] is False  # Earth is far off
    assert archive_only.context.plot.current is not None


def test_transform_frame_rotates_a_stored_vector_and_back(archive_only: Workspace) -> None:
    times = pd.date_range("2022-02-25", periods=50, freq="10min", tz="UTC")
    rng = np.random.default_rng(3)
    values = rng.normal(size=(50, 3)) * 5
    columns = ["BGSEc_0", "BGSEc_1", "BGSEc_2"]
    archive_only.context.store.put(
        DataEntry(
            "AC_H2_MFI.BGSEc",
            pd.DataFrame(values, index=times, columns=columns),
            units=dict.fromkeys(columns, "nT"),
            source_dataset="AC_H2_MFI",
            source_parameter="BGSEc",
        )
    )
    funnel = archive_only.funnel
    result = funnel.call("transform_frame", {"label": "AC_H2_MFI.BGSEc", "to_frame": "GSM"})
    assert result.status == "ok", result.error
    in_gsm = archive_only.context.store.get("AC_H2_MFI.BGSEc_in_GSM")
    rotated = np.asarray(in_gsm.data, dtype=float)
    assert np.allclose(rotated[:, 0], values[:, 0], atol=1e-6)  # GSE and GSM share X
    assert np.allclose(np.linalg.norm(rotated, axis=1), np.linalg.norm(values, axis=1))
    assert not np.allclose(rotated, values)
    assert in_gsm.units["GSM_x"] == "nT"
    back = funnel.call(
        "transform_frame",
        {"label": "AC_H2_MFI.BGSEc_in_GSM", "to_frame": "GSE", "from_frame": "GSM"},
    )
    assert back.status == "ok", back.error
    again = np.asarray(archive_only.context.store.get(back.labels[0]).data, dtype=float)
    assert np.allclose(again, values, atol=1e-9)


def test_transform_frame_says_what_it_needs(archive_only: Workspace) -> None:
    times = pd.date_range("2022-02-25", periods=5, freq="1h", tz="UTC")
    archive_only.context.store.put(
        DataEntry("B", pd.DataFrame(np.ones((5, 3)), index=times, columns=["a", "b", "c"]))
    )
    unknown = archive_only.funnel.call("transform_frame", {"label": "B", "to_frame": "GSM"})
    assert unknown.status == "error" and "give from_frame" in (unknown.error or "")
    rtn = archive_only.funnel.call(
        "transform_frame", {"label": "B", "to_frame": "RTN", "from_frame": "HCI"}
    )
    assert rtn.status == "error" and "name the spacecraft" in (rtn.error or "")
    located = archive_only.funnel.call(
        "transform_frame",
        {"label": "B", "to_frame": "RTN", "from_frame": "HCI", "spacecraft": "PSP"},
    )
    assert located.status == "ok", located.error


def test_the_cli_prints_and_writes_the_ephemeris(with_kernels: Workspace, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from xhelio.cli.main import app

    out = tmp_path / "psp.csv"
    runner = CliRunner(env={"COLUMNS": "200"})
    result = runner.invoke(
        app, ["ephemeris", "PSP", "--time", "2021-04-29", "--frame", "HEE", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "ephemeris.PSP.HEE" in result.output and "SPICE" in result.output
    written = pd.read_csv(out, comment="#")
    assert {"x [km]", "distance_au [AU]", "light_time [s]"} <= set(written.columns)
    refused = runner.invoke(app, ["ephemeris", "PSP", "--time", "2021-04-29", "--frame", "XYZ"])
    assert refused.exit_code != 0 and "Unknown frame 'XYZ'" in refused.output


def _offline(workspace: Workspace, request: str) -> str:
    import threading

    from xhelio.agents.offline.assistant import OfflineAssistant

    return OfflineAssistant(workspace).respond(request, threading.Event()).text


def test_offline_geometry_questions_are_understood(archive_only: Workspace) -> None:
    connected = _offline(
        archive_only, "were Solar Orbiter and PSP magnetically connected on 2022-02-25"
    )
    assert "SOLO and PSP were" in connected and "Footpoint longitudes" in connected
    assert "SOLO_HELIO1HR_POSITION" in connected  # where the positions came from
    where = _offline(archive_only, "where was PSP relative to Earth on 2022-02-25")
    assert "PSP seen from EARTH in GSE" in where and "AU" in where
    apart = _offline(archive_only, "separation between Solar Orbiter and Earth on 2022-02-26")
    assert "Angle between SOLO and EARTH seen from Sun" in apart
    aligned = _offline(archive_only, "when were PSP and Solar Orbiter aligned on 2022-02-26")
    assert "Within 10 deg" in aligned


def test_offline_geometry_asks_for_a_time_and_leaves_other_requests(
    archive_only: Workspace,
) -> None:
    from xhelio.agents.offline.assistant import OfflineAssistant
    from xhelio.agents.offline.ephemeris_skill import answer

    assistant = OfflineAssistant(archive_only)
    asked = answer(assistant, "where was Solar Orbiter relative to Earth")
    assert asked is not None and asked.clarification and "For which time" in asked.text
    assert answer(assistant, "ACE magnetic field 2022-02-25") is None
    assert answer(assistant, "plot the distance column of my data on 2022-02-25") is None
    assert answer(assistant, "where was Wind on 2018-01-01") is None  # the archive's data
    assert answer(assistant, "ARTEMIS P1 magnetic field in lunar orbit 2012-07-20") is None


def test_a_mission_agent_uses_the_ephemeris_tools(archive_only: Workspace) -> None:
    import threading

    from agent_script import Script, scripted_config
    from xhelio.agents.mission import MissionAgents
    from xhelio.agents.models import ModelRouter
    from xhelio.agents.subagent import AgentEnv
    from xhelio.agents.toolbridge import run_coroutine

    times = pd.date_range("2022-02-25", periods=6, freq="1h", tz="UTC")
    archive_only.context.store.put(
        DataEntry(
            "AC_H2_MFI.BGSEc",
            pd.DataFrame(np.ones((6, 3)), index=times, columns=["x", "y", "z"]),
            units=dict.fromkeys("xyz", "nT"),
            source_parameter="BGSEc",
        )
    )
    call = [("transform_frame", {"label": "AC_H2_MFI.BGSEc", "to_frame": "GSM"})]
    script = Script({"mission:ACE": [call, "Stored AC_H2_MFI.BGSEc_in_GSM."]})
    agent = MissionAgents(
        AgentEnv(archive_only, ModelRouter(scripted_config(), build=script.build))
    ).get("ACE")
    run_coroutine(lambda: agent.fetch("ACE field in GSM", threading.Event(), mode="task"))
    done = [(op["tool"], op["status"]) for op in archive_only.session.operations]
    assert ("transform_frame", "ok") in done
    assert archive_only.context.store.has("AC_H2_MFI.BGSEc_in_GSM")


def test_an_ephemeris_replays_in_a_pipeline_for_another_time(with_kernels: Workspace) -> None:
    funnel = with_kernels.funnel
    first = funnel.call("get_ephemeris", {"target": "PSP", "time_range": "2021-04-29"})
    assert first.status == "ok", first.error
    seqs = [op["seq"] for op in with_kernels.session.operations if op["tool"] == "get_ephemeris"]
    saved = funnel.call("save_pipeline", {"name": "psp where", "step_seqs": seqs})
    assert saved.status == "ok", saved.error
    replayed = funnel.call("run_pipeline", {"pipeline": "psp where", "time_range": "2021-04-30"})
    assert replayed.status == "ok", replayed.error
    entry = with_kernels.context.store.get("ephemeris.PSP.HCI")
    assert isinstance(entry.data, pd.DataFrame)
    assert str(entry.data.index[0].date()) == "2021-04-30"


def test_on_a_server_kernels_come_only_from_the_session_uploads(tmp_path: Path) -> None:
    from xhelio.api.policy import server_policy

    (tmp_path / "uploads").mkdir()
    own = tmp_path / "uploads" / "mission.bsp"
    own.write_bytes(b"DAF/SPK ")
    policy = server_policy(tmp_path, allow_unsandboxed_code=False)
    spec = default_registry().get("get_ephemeris")
    assert spec is not None and spec.file_args == ("kernels",)
    base = {"target": "PSP", "time_range": "2021-04-29"}
    assert policy(spec, base) is None  # no kernel of the user's: nothing to check
    assert policy(spec, {**base, "kernels": [str(own)]}) is None
    for bad in (["/etc/passwd"], [str(own), "../../x.bsp"], ["~/.ssh/id_rsa"]):
        refused = policy(spec, {**base, "kernels": bad})
        assert refused is not None and not refused.ok, bad
