"""`xhelio tool NAME ARGS --session ID` end to end: real HAPI on loopback, sandbox, render."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import xarray as xr
from typer.testing import CliRunner

from servers.hapi_server import HapiTestServer
from xhelio.cli.main import app

runner = CliRunner()


@pytest.fixture
def ace_server(real_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HapiTestServer]:
    with HapiTestServer(version="2.0") as server:
        server.add_hapi_csv(real_data / "cdaweb_hapi_AC_H2_MFI_all_1997-09-02.csv")
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        yield server


def tool(name: str, args: dict[str, Any] | str, session: str = "s1") -> tuple[int, dict[str, Any]]:
    raw = args if isinstance(args, str) else json.dumps(args)
    result = runner.invoke(app, ["tool", name, raw, "--session", session])
    try:
        payload = json.loads(result.stdout)
    except json.JSONDecodeError:
        payload = {"stdout": result.stdout, "stderr": result.stderr}
    return result.exit_code, payload


def test_fetch_compute_plot_export_across_invocations(
    ace_server: HapiTestServer, xhelio_home: Path
) -> None:
    code, fetched = tool(
        "fetch_data",
        {"dataset_id": "AC_H2_MFI", "parameter_id": "BGSEc", "time_range": "1997-09-02"},
    )
    assert code == 0, fetched
    assert fetched["label"] == "AC_H2_MFI.BGSEc"
    assert fetched["points"] == 24
    assert fetched["units"] == "nT"
    code, mag = tool(
        "fetch_data",
        {"dataset_id": "AC_H2_MFI", "parameter_id": "Magnitude", "time_range": "1997-09-02"},
    )
    assert code == 0, mag

    # A second process-level invocation sees the stored data (session persisted).
    code, computed = tool(
        "custom_operation",
        {
            "source_labels": ["AC_H2_MFI.BGSEc"],
            "code": "result = np.sqrt((df ** 2).sum(axis=1)).to_frame('Bmag')",
            "output_label": "Bmag",
            "description": "field magnitude",
            "units": "nT",
        },
    )
    assert code == 0, computed
    assert computed["is_timeseries"] is True and computed["points"] == 24
    assert computed["units"] == {"Bmag": "nT"}

    code, described = tool("describe_data", {"label": "Bmag"})
    assert code == 0
    expected = pd.read_csv(
        Path(__file__).resolve().parents[2]
        / "shared/data/real/cdaweb_hapi_AC_H2_MFI_all_1997-09-02.csv",
        comment="#",
        header=None,
    )
    day = expected[expected[0].str.startswith("1997-09-02")]
    bmag = np.sqrt((day[[2, 3, 4]] ** 2).sum(axis=1))
    # Statistics are rounded to a hundredth of the data's spread (describe_data).
    step = (bmag.max() - bmag.min()) / 100
    assert described["columns"]["Bmag"]["max"] == pytest.approx(bmag.max(), abs=step)
    assert described["cadence_s"] == 3600

    code, rendered = tool(
        "render_plotly_json",
        {
            "figure": {
                "data": [
                    {"type": "scatter", "data_label": "AC_H2_MFI.BGSEc"},
                    {"type": "scatter", "data_label": "Bmag", "yaxis": "y2"},
                ],
                "layout": {"title": {"text": "ACE field"}},
            }
        },
    )
    assert code == 0, rendered
    assert rendered["panels"] == 2
    assert len(rendered["traces"]) == 4  # three components plus |B|

    code, exported = tool(
        "manage_plot", {"action": "export", "format": "html", "filename": "ace.html"}
    )
    assert code == 0, exported
    path = Path(exported["path"])
    assert path.exists() and path.parent.name == "exports"
    assert str(path).startswith(str(xhelio_home))

    code, state = tool("manage_plot", {"action": "get_state"})
    assert code == 0
    assert len(state["figure"]["data"]) == 4
    assert len(state["figure"]["data"][0]["y"]) == 24

    code, listing = tool("list_fetched_data", {})
    labels = [e["label"] for e in listing["entries"]]
    assert labels == ["AC_H2_MFI.BGSEc", "AC_H2_MFI.Magnitude", "Bmag"]


def test_repeated_fetch_is_detected(ace_server: HapiTestServer) -> None:
    args = {"dataset_id": "AC_H2_MFI", "parameter_id": "Magnitude", "time_range": "1997-09-02"}
    assert tool("fetch_data", args)[0] == 0
    before = len(ace_server.data_requests())
    code, again = tool("fetch_data", args)
    assert code == 0
    assert again["already_loaded"] is True
    assert len(ace_server.data_requests()) == before


def test_errors_exit_nonzero_with_a_clear_message(ace_server: HapiTestServer) -> None:
    code, bad = tool(
        "fetch_data", {"dataset_id": "AC_H2_MFX", "parameter_id": "B", "time_range": "1997-09-02"}
    )
    assert code == 1 and bad["type"] == "UnknownDatasetError" and "AC_H2_MFI" in bad["message"]
    code, bad_param = tool(
        "fetch_data",
        {"dataset_id": "AC_H2_MFI", "parameter_id": "Bogus", "time_range": "1997-09-02"},
    )
    assert code == 1 and "Magnitude" in bad_param["message"]
    code, bad_time = tool(
        "fetch_data",
        {"dataset_id": "AC_H2_MFI", "parameter_id": "Magnitude", "time_range": "next blue moon"},
    )
    assert code == 1 and bad_time["type"] == "BadTimeRangeError"
    code, missing = tool("preview_data", {"label": "nothing"})
    assert code == 1 and missing["type"] == "UnknownLabelError"
    code, unknown = tool("no_such_tool", {})
    assert code == 1 and "fetch_data" in unknown["message"]
    result = runner.invoke(app, ["tool", "list_fetched_data", "{not json", "--session", "s1"])
    assert result.exit_code == 1 and "not valid JSON" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_writes_outside_the_export_folder_are_refused(
    ace_server: HapiTestServer, xhelio_home: Path
) -> None:
    args = {"dataset_id": "AC_H2_MFI", "parameter_id": "Magnitude", "time_range": "1997-09-02"}
    assert tool("fetch_data", args)[0] == 0
    code, escaped = tool(
        "save_data", {"label": "AC_H2_MFI.Magnitude", "filename": "../../escape.csv"}
    )
    assert code == 1 and "inside" in escaped["message"]
    assert not list(xhelio_home.rglob("escape.csv"))
    code, saved = tool("save_data", {"label": "AC_H2_MFI.Magnitude", "format": "csv"})
    assert code == 0
    text = Path(saved["path"]).read_text().splitlines()
    # Fetched data keeps its units in the header and ISO 8601 UTC times (data.outputs).
    assert text[0] == "time,Magnitude [nT]" and text[1].startswith("1997-09-02T00:00:00")
    assert Path(saved["path"] + ".meta.json").exists()


def test_hostile_code_is_contained_and_session_continues(ace_server: HapiTestServer) -> None:
    args = {"dataset_id": "AC_H2_MFI", "parameter_id": "BGSEc", "time_range": "1997-09-02"}
    assert tool("fetch_data", args)[0] == 0
    code, hostile = tool(
        "custom_operation",
        {
            "source_labels": ["AC_H2_MFI.BGSEc"],
            "code": "result = pd.read_csv('/etc/passwd')",
            "output_label": "x",
        },
    )
    assert code == 1 and hostile["type"] == "SandboxError" and hostile["category"] == "validation"
    code, fine = tool(
        "custom_operation",
        {"source_labels": ["AC_H2_MFI.BGSEc"], "code": "result = df * 2", "output_label": "double"},
    )
    assert code == 0 and fine["points"] == 24


def _saved(label: str, fmt: str) -> Path:
    code, saved = tool("save_data", {"label": label, "format": fmt})
    assert code == 0, saved
    return Path(saved["path"])


def _computed(code: str, label: str, units: dict[str, str] | str) -> dict[str, Any]:
    args = {"source_labels": ["AC_H2_MFI.BGSEc"], "code": code, "output_label": label}
    done, result = tool("custom_operation", {**args, "description": label, "units": units})
    assert done == 0, result
    return result


def test_a_computed_timeseries_keeps_its_units_in_every_format(
    ace_server: HapiTestServer,
) -> None:
    args = {"dataset_id": "AC_H2_MFI", "parameter_id": "BGSEc", "time_range": "1997-09-02"}
    assert tool("fetch_data", args)[0] == 0
    # Components keep the source's nT; the ratio's unit is unknown: units are partial.
    _computed("result = df.assign(ratio=df['BGSEc_0'] / df['BGSEc_1'])", "B_ratio", {})
    csv = _saved("B_ratio", "csv")
    header = csv.read_text().splitlines()[0]
    assert header == "time,BGSEc_0 [nT],BGSEc_1 [nT],BGSEc_2 [nT],ratio"
    table = pd.read_csv(csv, index_col="time", parse_dates=True)
    assert len(table) == 24 and isinstance(table.index, pd.DatetimeIndex)
    assert str(table.index.tz) == "UTC"
    assert table["ratio"].to_numpy() == pytest.approx(
        (table["BGSEc_0 [nT]"] / table["BGSEc_1 [nT]"]).to_numpy()
    )
    sidecar = json.loads(Path(f"{csv}.meta.json").read_text())
    meaning = sidecar["parameters"]["B_ratio"]
    assert meaning["column_units"]["BGSEc_0"] == "nT" and meaning["column_units"]["ratio"] == ""
    # Computed in the sandbox from ACE data: it cites its input's dataset.
    assert [c["dataset"] for c in sidecar["citations"]] == ["AC_H2_MFI"]

    parquet = _saved("B_ratio", "parquet")
    schema = pq.read_schema(parquet)
    assert schema.field("BGSEc_2").metadata == {b"units": b"nT"}
    assert not schema.field("ratio").metadata
    back = pd.read_parquet(parquet)
    assert isinstance(back.index, pd.DatetimeIndex) and back.index.name == "time"
    assert str(back.index.tz) == "UTC"
    assert back["ratio"].to_numpy() == pytest.approx(table["ratio"].to_numpy())

    with xr.open_dataset(_saved("B_ratio", "netcdf")) as opened:
        assert opened["BGSEc_1"].attrs["units"] == "nT" and opened["ratio"].attrs["units"] == ""
        assert opened["ratio"].dims == ("time",) and opened.sizes["time"] == 24
        assert pd.Timestamp(opened["time"].values[0]) == pd.Timestamp("1997-09-02T00:00:00")
        assert opened.attrs["doi"] == "10.48322/fh85-fj47"  # the input dataset's DOI


def test_a_frequency_spectrum_and_a_data_array_round_trip(ace_server: HapiTestServer) -> None:
    args = {"dataset_id": "AC_H2_MFI", "parameter_id": "BGSEc", "time_range": "1997-09-02"}
    assert tool("fetch_data", args)[0] == 0
    spectrum = (
        "x = df['BGSEc_0'].fillna(0).to_numpy()\n"
        "result = pd.DataFrame({'PSD': np.abs(np.fft.rfft(x)) ** 2},"
        " index=pd.Index(np.fft.rfftfreq(len(x), 3600.0), name='frequency'))"
    )
    assert _computed(spectrum, "B_psd", {"PSD": "nT^2/Hz"})["is_timeseries"] is False
    csv = _saved("B_psd", "csv")
    assert csv.read_text().splitlines()[0] == "frequency,PSD [nT^2/Hz]"
    table = pd.read_csv(csv, index_col="frequency")
    assert table.index.to_numpy() == pytest.approx(np.fft.rfftfreq(24, 3600.0))
    back = pd.read_parquet(_saved("B_psd", "parquet"))
    assert back.index.name == "frequency"
    assert back["PSD"].to_numpy() == pytest.approx(table["PSD [nT^2/Hz]"].to_numpy())
    with xr.open_dataset(_saved("B_psd", "netcdf")) as opened:
        assert opened["PSD"].dims == ("frequency",) and opened["PSD"].attrs["units"] == "nT^2/Hz"
        assert opened["PSD"].to_numpy() == pytest.approx(back["PSD"].to_numpy())

    array = (
        "result = xr.DataArray(df.to_numpy(), dims=('time', 'component'), name='B',"
        " coords={'time': df.index.tz_localize(None), 'component': ['x', 'y', 'z']})"
    )
    assert _computed(array, "B_array", "nT")["kind"] == "array"
    with xr.open_dataset(_saved("B_array", "netcdf")) as opened:
        assert opened["B"].dims == ("time", "component") and opened["B"].attrs["units"] == "nT"
        assert list(opened["component"].values) == ["x", "y", "z"]
        assert opened["B"].shape == (24, 3)
        assert opened.attrs["dataset"] == "AC_H2_MFI"  # inherited from its input
    header = _saved("B_array", "csv").read_text().splitlines()[0]
    assert header == "time,B[component=x] [nT],B[component=y] [nT],B[component=z] [nT]"
