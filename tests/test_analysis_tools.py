"""The analysis tools on stored entries: what they read, store and return."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from analysis_cases import rotation, shock_sides
from xhelio.config import load_settings
from xhelio.data.entry import DataEntry
from xhelio.errors import UserError
from xhelio.tools.analysis_tools import ANALYSIS_TOOLS
from xhelio.tools.registry import Tool
from xhelio.tools.workspace import Workspace, open_workspace

TOOLS = {t.name: t for t in ANALYSIS_TOOLS}


@pytest.fixture
def ws() -> Iterator[Workspace]:
    workspace = open_workspace(settings=load_settings(), ephemeral=True)
    yield workspace
    workspace.close()


def call(ws: Workspace, name: str, **args: Any) -> dict[str, Any]:
    tool: Tool = TOOLS[name]
    checked = tool.arguments.model_validate(args).model_dump(exclude_unset=True)
    result = tool.function(ws.context, **checked)
    assert isinstance(result, dict)
    tool.result.model_validate(result)  # the declared result model holds
    return result


def put(ws: Workspace, label: str, values: np.ndarray, columns: list[str], unit: str,
        start: str = "2015-03-17T10:00", step: str = "1s") -> None:  # fmt: skip
    index = pd.date_range(start, periods=len(values), freq=step, tz="UTC")
    frame = pd.DataFrame(values.reshape(len(values), -1), index=index, columns=columns)
    ws.context.store.put(DataEntry(label, frame, dict.fromkeys(columns, unit), "", "DS", label))


def test_minimum_variance_tool_stores_lmn_and_answers_with_the_reference(ws) -> None:
    rng = np.random.default_rng(1)
    z = np.linspace(-3, 3, 1200)
    lmn = np.column_stack([20 * np.tanh(z), 6 / np.cosh(z), np.full(1200, 2.0)])
    r = rotation()
    put(ws, "WI_H0_MFI.BGSE", lmn @ r + rng.normal(scale=0.3, size=(1200, 3)),
        ["BGSE_x", "BGSE_y", "BGSE_z"], "nT")  # fmt: skip
    out = call(ws, "minimum_variance", label="WI_H0_MFI.BGSE",
               time_range="2015-03-17 10:00 to 10:20")  # fmt: skip
    assert abs(abs(float(np.dot(out["normal"], r[2]))) - 1) < 1e-3
    assert out["frame"] == "GSE" and out["ratio"] > 10 and "Sonnerup" in out["reference"]
    assert out["stored"] == ["WI_H0_MFI.BGSE.LMN"]
    stored = ws.context.store.get("WI_H0_MFI.BGSE.LMN")
    assert list(stored.columns) == ["L", "M", "N"] and stored.units["N"] == "nT"
    with pytest.raises(UserError, match="covers"):
        call(ws, "minimum_variance", label="WI_H0_MFI.BGSE", time_range="2016-01-01")


def test_shock_tool_finds_upstream_by_density_and_recovers_theta_bn(ws) -> None:
    r = rotation(7)
    up, down = shock_sides(r[0], r[1], speed_km_s=80.0, samples=600)
    # An outbound crossing: downstream first, upstream after 10:10.
    for label, part, cols, unit in (("B", 0, ["Bx", "By", "Bz"], "nT"),
                                    ("V", 1, ["Vx", "Vy", "Vz"], "km/s"),
                                    ("N", 2, ["n"], "cm^-3"), ("T", 3, ["T"], "K")):  # fmt: skip
        put(ws, label, np.concatenate([down[part], up[part]]), cols, unit)
    out = call(ws, "shock_normal", field_label="B", velocity_label="V", density_label="N",
               temperature_label="T", shock_time="2015-03-17 10:10")  # fmt: skip
    assert out["theta_bn_deg"] == pytest.approx(60, abs=0.1)
    assert out["shock_speed_km_s"] == pytest.approx(80, abs=1)
    assert out["rankine_hugoniot"]["satisfied"]
    assert any("upstream 2015-03-17T10:11" in a for a in out["assumptions"])


def test_spectral_tools_store_a_psd_and_a_spectrogram(ws) -> None:
    rng = np.random.default_rng(2)
    t = np.arange(4096)
    x = np.sin(2 * np.pi * 0.05 * t) + 0.1 * rng.normal(size=4096)
    put(ws, "AC.B", x, ["Bx"], "nT")
    out = call(ws, "power_spectrum", label="AC.B", fmin_hz=0.1, fmax_hz=0.4)
    assert "psd" not in out and out["dof"] > 2 and "spectral_index" in out
    psd = ws.context.store.get("AC.B.PSD")
    assert not psd.is_timeseries and list(psd.columns) == ["psd", "lower", "upper"]
    assert abs(float(psd.data["psd"].idxmax()) - 0.05) < 0.01  # type: ignore[arg-type]
    call(ws, "dynamic_spectrum", label="AC.B")
    spectrogram = ws.context.store.get("AC.B.spectrogram")
    assert isinstance(spectrogram.data, xr.DataArray)
    assert spectrogram.data.dims == ("time", "frequency") and spectrogram.is_timeseries
    out = call(ws, "wavelet_power", label="AC.B")
    assert out["peak_frequency_hz"] == pytest.approx(0.05, rel=0.08)


def test_plasma_tool_puts_inputs_on_the_density_times(ws) -> None:
    pytest.importorskip("astropy")
    put(ws, "OMNI.N", np.full(60, 5.0), ["proton_density"], "n/cc", step="1min")
    put(ws, "OMNI.B", np.full(120, 5.0), ["F"], "nT", step="30s")
    put(ws, "OMNI.V", np.full(60, 400.0), ["flow_speed"], "km/s", step="1min")
    put(ws, "OMNI.T", np.full(60, 1e5), ["T"], "Deg K", step="1min")
    out = call(ws, "plasma_quantities", density_label="OMNI.N", field_label="OMNI.B",
               velocity_label="OMNI.V", temperature_label="OMNI.T")  # fmt: skip
    assert out["medians"]["beta"] == pytest.approx(0.694, abs=0.002)
    table = ws.context.store.get("OMNI.N.plasma")
    assert table.units["dynamic_pressure"] == "nPa" and table.points == 60


def test_walen_and_ht_tools_on_an_alfvenic_interval(ws) -> None:
    rng = np.random.default_rng(3)
    b = np.column_stack([20 * np.sin(np.linspace(0, 3, 300)), 20 * np.cos(np.linspace(0, 3, 300)),
                         np.full(300, 5.0)])  # fmt: skip
    vht = np.array([-350.0, 20.0, 10.0])
    va = b * 1e-9 / np.sqrt(4e-7 * np.pi * 8e6 * 1.67262192e-27) / 1e3
    put(ws, "B", b + rng.normal(scale=0.05, size=b.shape), ["Bx", "By", "Bz"], "nT")
    put(ws, "V", vht + va, ["Vx", "Vy", "Vz"], "km/s")
    put(ws, "N", np.full(300, 8.0), ["n"], "cm^-3")
    ht = call(ws, "de_hoffmann_teller", field_label="B", velocity_label="V")
    assert ht["correlation"] > 0.99
    walen = call(ws, "walen_test", field_label="B", velocity_label="V", density_label="N")
    assert walen["slope"] == pytest.approx(1.0, abs=0.05) and "rotational" in walen["verdict"]


def test_timing_and_lag_tools(ws) -> None:
    out = call(ws, "boundary_timing",
               crossing_times=["2015-10-16 13:07:00", "2015-10-16 13:07:10",
                               "2015-10-16 13:07:20", "2015-10-16 13:07:05"],
               positions_km=[[0, 0, 0], [500, 0, 0], [0, 1000, 0], [0, 0, 250]])  # fmt: skip
    assert out["speed_km_s"] == pytest.approx(1 / np.linalg.norm([1 / 50, 1 / 50, 1 / 50]))
    x = np.convolve(np.random.default_rng(4).normal(size=700), np.ones(10) / 10, "same")
    put(ws, "A", x[100:], ["a"], "nT")
    put(ws, "Bl", x[88:688], ["b"], "nT")
    lag = call(ws, "cross_correlation_lag", label_a="A", label_b="Bl", max_lag_s=60)
    assert lag["lag_s"] == pytest.approx(12, abs=1)


def test_pitch_angle_tool_needs_a_pitch_angle_dimension(ws) -> None:
    times = pd.date_range("2015-03-17", periods=5, freq="12s").to_numpy()
    pa = np.linspace(7.5, 172.5, 12)
    energy = np.array([100.0, 300.0, 1000.0])
    values = np.broadcast_to(np.cos(np.radians(pa))[None, :, None] ** 2, (5, 12, 3)).copy()
    array = xr.DataArray(values, dims=("time", "pitch_angle", "energy"), name="flux",
                         coords={"time": times, "pitch_angle": pa, "energy": energy})  # fmt: skip
    ws.context.store.put(DataEntry("WI_3DP.PAD", array, {"flux": "1/cm2/s/sr/eV"}))
    out = call(ws, "pitch_angle_distribution", label="WI_3DP.PAD", energy_min=200, energy_max=2000)
    assert out["anisotropy"] > 0.3 and out["energy_range"] == [300.0, 1000.0]
    put(ws, "flat", np.ones(10), ["x"], "")
    with pytest.raises(UserError, match="angle-resolved"):
        call(ws, "pitch_angle_distribution", label="flat")


def test_the_tools_are_public_on_the_python_api() -> None:
    from xhelio.api.assistant import Assistant

    with Assistant(load_settings()) as xh:
        sid = xh.new_session("analysis")
        with xh.hub.checkout(sid) as entry:
            assert entry.workspace is not None
            z = np.linspace(-3, 3, 120)
            b = np.column_stack([20 * np.tanh(z), 6 / np.cosh(z), np.full(120, 2.0)])
            put(entry.workspace, "B", b @ rotation(), ["Bx", "By", "Bz"], "nT")
        result = xh.call_tool(sid, "minimum_variance", {"label": "B"})
        assert result.ok and result.payload["stored"] == ["B.LMN"]
        assert "Sonnerup" in result.payload["reference"]
        failed = xh.call_tool(sid, "minimum_variance", {"label": "nothing"})
        assert not failed.ok and "nothing" in (failed.error or "")
