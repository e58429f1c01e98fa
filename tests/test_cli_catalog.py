"""`xhelio catalog ...` through the real CLI entry point, with typer's CliRunner."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servers.hapi_server import HapiTestServer, make_info, synthetic_frame
from xhelio.catalog.index import open_catalog
from xhelio.cli.main import app
from xhelio.config import Settings

runner = CliRunner()


@pytest.fixture(scope="module")
def snapshot_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The snapshot index, built once for this module."""
    settings = Settings(home=tmp_path_factory.mktemp("snapshot-index"))
    open_catalog(settings).close()
    return settings.catalog_db


@pytest.fixture(autouse=True)
def fresh_index(snapshot_index: Path, xhelio_home: Path) -> None:
    """Each test gets its own copy of the snapshot index under XHELIO_HOME."""
    shutil.copyfile(snapshot_index, xhelio_home / "catalog.sqlite")


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["catalog", *args])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_search_prints_a_ranked_table() -> None:
    code, out = run("search", "ACE", "magnetic", "field", "--limit", "5")
    assert code == 0
    assert "AC_H0_MFI" in out and "BGSEc" in out
    assert "AC_OR_SSC" not in out


def test_search_json_and_mission_filter() -> None:
    code, out = run("search", "magnetic field", "--mission", "Wind", "-n", "4", "--json")
    assert code == 0
    hits = json.loads(out)
    assert len(hits) == 4
    assert all(h["mission_id"] == "wind" for h in hits)
    assert {"dataset_id", "title", "score", "matched_parameters"} <= set(hits[0])


def test_search_without_results_is_one_clean_error() -> None:
    code, out = run("search", "zzqqxx")
    assert code == 1
    assert "No dataset matches 'zzqqxx'" in out


def test_search_tolerates_fts_syntax() -> None:
    code, out = run("search", "B_GSE", '"(nT)*', "AND", "--json")
    assert code == 0
    assert isinstance(json.loads(out), list)


def test_show_lists_parameters_with_units_sizes_and_fills() -> None:
    code, out = run("show", "ac_h0_mfi")
    assert code == 0
    for text in ("AC_H0_MFI", "ACE", "1997-09-02", "PT16S", "BGSEc", "nT", "double"):
        assert text in out
    code, out = run("show", "AC_H0_MFI", "--json")
    payload = json.loads(out)
    bgse = next(p for p in payload["parameters"] if p["name"] == "BGSEc")
    assert bgse == {
        "name": "BGSEc",
        "type": "double",
        "units": "nT",
        "size": [3],
        "fill": "-9.999999848243207e+30",
        "description": "Magnetic Field Vector in GSE Cartesian coordinates (16 sec)",
    }
    assert payload["start"].startswith("1997-09-02T00:00:12")
    assert payload["cadence"] == "PT16S"


def test_show_unknown_dataset_suggests_close_ids() -> None:
    code, out = run("show", "AC_H0_MFX")
    assert code == 1
    assert "Unknown dataset 'AC_H0_MFX'" in out and "AC_H0_MFI" in out


def test_missions_table_and_json() -> None:
    code, out = run("missions")
    assert code == 0 and "Parker Solar Probe" in out and "66 missions" in out
    code, out = run("missions", "--json")
    missions = {m["id"]: m for m in json.loads(out)}
    assert len(missions) == 66
    assert "Parker Solar Probe" in missions["psp"]["aliases"]
    assert missions["ace"]["datasets"] == 33


def test_browse_hides_support_data_unless_all() -> None:
    code, out = run("browse", "ACE", "--json")
    assert code == 0
    science = {d["id"] for d in json.loads(out)}
    assert "AC_H0_MFI" in science and "AC_OR_SSC" not in science
    code, out = run("browse", "ace", "--all", "--json")
    assert "AC_OR_SSC" in {d["id"] for d in json.loads(out)}
    code, out = run("browse", "SolO")
    assert code == 0 and "SOLO_L2_MAG-RTN-NORMAL" in out


def test_browse_unknown_mission_is_one_clean_error() -> None:
    code, out = run("browse", "Atlantis")
    assert code == 1
    assert "Unknown mission 'Atlantis'" in out and "xhelio catalog missions" in out


def test_refresh_from_a_loopback_server() -> None:
    start, stop = "2024-01-01T00:00:00Z", "2024-01-01T01:00:00Z"
    with HapiTestServer(version="2.0") as server:
        info = make_info(start, stop, [("B_wombat", "nT", 3)])
        frame = synthetic_frame(start, stop, "PT1M", ["B_0", "B_1", "B_2"])
        server.add_dataset("XH_WOMBAT", info, frame, title="Wombat magnetometer test data")
        code, out = run("refresh", "--server", server.url)
    assert code == 0
    assert "1 listed, 1 added, 0 updated, 0 failed" in out
    code, out = run("search", "wombat", "--json")
    assert json.loads(out)[0]["dataset_id"] == "XH_WOMBAT"


def test_refresh_unreachable_server_is_one_clean_error() -> None:
    with HapiTestServer() as server:
        url = server.url
    code, out = run("refresh", "--server", url)
    assert code == 1
    assert "Cannot reach HAPI server" in out


def test_a_catalog_lookup_loads_neither_the_agents_nor_plotting(xhelio_home: Path) -> None:
    # Commands load lazily: a quick search must not pay for pydantic-ai, Plotly or pandas.
    script = (
        "import sys\n"
        "from xhelio.cli.main import main\n"
        "sys.argv = ['xhelio', 'catalog', 'search', 'ACE magnetic field']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as done:\n"
        "    assert not done.code, done.code\n"
        "heavy = [m for m in ('pydantic_ai', 'plotly', 'pandas') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    env = {**os.environ, "XHELIO_HOME": str(xhelio_home)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert "AC_H2_MFI" in done.stdout
    assert "HEAVY []" in done.stdout
