"""Pitch-angle distributions from raw look directions: the tool on generated products.

The products are built the way CDF/HAPI products arrive in the store (dims named after
their DEPEND variables, angle centres as coordinates), with a flux that depends on the
pitch angle only, so each bin's value is known to lie between the flux at its edges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from xhelio.config import load_settings
from xhelio.data.entry import DataEntry
from xhelio.errors import UserError
from xhelio.tools.analysis_tools import ANALYSIS_TOOLS
from xhelio.tools.workspace import Workspace, open_workspace

TOOL = next(t for t in ANALYSIS_TOOLS if t.name == "pitch_angle_distribution")
START = pd.Timestamp("2015-03-17T10:00", tz="UTC")
PHI = np.arange(11.25, 360, 22.5)
COLATITUDE = np.arange(11.25, 180, 22.5)
ENERGY = np.array([30.0, 300.0, 3000.0])


def beam(alpha: np.ndarray) -> np.ndarray:
    """A beam along B: high at 0°, flat 1 beyond 90° (asymmetric, so conventions show)."""
    return 1 + 4 * np.clip(np.cos(alpha), 0, None) ** 2


@pytest.fixture
def ws() -> Iterator[Workspace]:
    workspace = open_workspace(settings=load_settings(), ephemeral=True)
    yield workspace
    workspace.close()


def call(ws: Workspace, **args: Any) -> dict[str, Any]:
    checked = TOOL.arguments.model_validate(args).model_dump(exclude_unset=True)
    result = TOOL.function(ws.context, **checked)
    TOOL.result.model_validate(result)
    return result


def field(seconds: np.ndarray) -> np.ndarray:
    """A field turning slowly in the x-z plane (GSE, nT)."""
    angle = 0.004 * seconds
    return np.column_stack([5 * np.sin(angle), np.zeros_like(angle), 5 * np.cos(angle)])


def put_field(ws: Workspace, label: str = "MMS1_FGM.B_GSE") -> None:
    seconds = np.arange(0, 400.0)
    index = START + pd.to_timedelta(seconds, unit="s")
    frame = pd.DataFrame(field(seconds), index=index, columns=["Bx_GSE", "By_GSE", "Bz_GSE"])
    ws.context.store.put(DataEntry(label, frame, dict.fromkeys(frame.columns, "nT"), "", "DS"))


def _look(phi: np.ndarray, polar: np.ndarray, elevation: bool) -> np.ndarray:
    p, t = np.radians(phi), np.radians(polar)
    if elevation:
        return np.stack([np.cos(t) * np.cos(p), np.cos(t) * np.sin(p), np.sin(t)], axis=-1)
    return np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1)


def gridded_product(
    shape: Callable[[np.ndarray], np.ndarray] = beam,
    *,
    elevation: bool = False,
    angles_are_velocity: bool = False,
) -> xr.DataArray:
    """(time, energy, phi, theta) like an MMS FPI distribution; 30 eV is isotropic 100."""
    seconds = np.arange(2.0, 390.0, 4.0)
    polar = 90 - COLATITUDE if elevation else COLATITUDE
    grid_phi, grid_polar = np.meshgrid(PHI, polar, indexing="ij")
    look = _look(grid_phi, grid_polar, elevation)  # (phi, theta, 3)
    velocity = look if angles_are_velocity else -look
    b = field(seconds)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    alpha = np.arccos(np.clip(np.einsum("pqk,tk->tpq", velocity, b), -1, 1))
    flux = np.repeat(shape(alpha)[:, None], len(ENERGY), axis=1)
    flux[:, 0] = 100.0
    times = (START.tz_convert(None) + pd.to_timedelta(seconds, unit="s")).to_numpy()
    dims = ("time", "mms1_des_energy_brst", "mms1_des_phi_brst", "mms1_des_theta_brst")
    return xr.DataArray(
        flux, dims=dims, name="dist",
        coords={"time": times, dims[1]: ENERGY, dims[2]: PHI, dims[3]: polar},
    )  # fmt: skip


def _store(ws: Workspace, label: str, array: xr.DataArray) -> None:
    ws.context.store.put(DataEntry(label, array, {"dist": "s^3/cm^6"}, "", "DS"))


def _assert_bins_follow(out: dict[str, Any], shape: Callable[[np.ndarray], np.ndarray]) -> None:
    centres = np.array(out["pitch_angle_deg"])
    half = (centres[1] - centres[0]) / 2
    for centre, value in zip(centres, out["mean_distribution"], strict=True):
        edges = np.radians(np.linspace(centre - half, centre + half, 50))
        assert shape(edges).min() - 1e-9 <= value <= shape(edges).max() + 1e-9, centre


def test_a_gridded_distribution_with_the_field_gives_the_known_pad(ws) -> None:
    put_field(ws)
    _store(ws, "MMS1_FPI.dist", gridded_product())
    out = call(ws, label="MMS1_FPI.dist", field_label="MMS1_FGM.B_GSE", energy_min=100, bins=9)
    _assert_bins_follow(out, beam)
    assert out["anisotropy"] > 0.2 and out["energy_range"] == [300.0, 3000.0]
    assert out["stored"] == ["MMS1_FPI.dist.PAD"]
    pad = ws.context.store.get("MMS1_FPI.dist.PAD").data
    assert isinstance(pad, xr.DataArray) and pad.dims == ("time", "pitch_angle")
    assert pad.sizes == {"time": 97, "pitch_angle": 9}
    said = " ".join(out["assumptions"])
    for words in ("look direction", "colatitude", "degrees", "MMS1_FGM.B_GSE", "GSE"):
        assert words in said, words


def test_elevation_angles_and_velocity_directions_are_read_as_stated(ws) -> None:
    put_field(ws)
    _store(ws, "latitudes", gridded_product(elevation=True))
    out = call(ws, label="latitudes", field_label="MMS1_FGM.B_GSE", energy_min=100, bins=6)
    _assert_bins_follow(out, beam)
    assert "elevation" in " ".join(out["assumptions"])
    _store(ws, "velocities", gridded_product(angles_are_velocity=True))
    out = call(ws, label="velocities", field_label="MMS1_FGM.B_GSE", energy_min=100, bins=6,
               angles_are="velocity")  # fmt: skip
    _assert_bins_follow(out, beam)
    wrong = call(ws, label="velocities", field_label="MMS1_FGM.B_GSE", energy_min=100, bins=6)
    assert wrong["mean_distribution"][0] < wrong["mean_distribution"][-1]  # the beam flipped


def test_a_list_of_look_directions_with_their_own_angles(ws) -> None:
    gridded = gridded_product()
    flat = gridded.stack(look=("mms1_des_phi_brst", "mms1_des_theta_brst"))
    phi = flat["mms1_des_phi_brst"].to_numpy()
    theta = flat["mms1_des_theta_brst"].to_numpy()
    array = xr.DataArray(
        flat.to_numpy(), dims=("time", "energy", "look"), name="dist",
        coords={"time": gridded["time"], "energy": ENERGY, "look_phi": ("look", phi),
                "look_theta": ("look", theta)},
    )  # fmt: skip
    put_field(ws)
    _store(ws, "WI_3DP.el", array)
    out = call(ws, label="WI_3DP.el", field_label="MMS1_FGM.B_GSE", energy_min=100, bins=9)
    _assert_bins_follow(out, beam)


def test_what_a_look_direction_pad_needs_is_said(ws) -> None:
    _store(ws, "MMS1_FPI.dist", gridded_product())
    with pytest.raises(UserError, match="field_label"):
        call(ws, label="MMS1_FPI.dist")
    put_field(ws)
    energies = gridded_product().isel(mms1_des_phi_brst=0, mms1_des_theta_brst=0)
    _store(ws, "omni_spectrum", energies)
    with pytest.raises(UserError, match="azimuth"):
        call(ws, label="omni_spectrum", field_label="MMS1_FGM.B_GSE")
    put_field(ws, "B_RTN")
    _store(ws, "PSP_SPAN.dist_GSE", gridded_product())
    with pytest.raises(UserError, match="frame"):
        call(ws, label="PSP_SPAN.dist_GSE", field_label="B_RTN")


def test_angles_per_record_and_a_field_gap_are_handled_and_said(ws) -> None:
    gridded = gridded_product()
    flat = gridded.stack(look=("mms1_des_phi_brst", "mms1_des_theta_brst"))
    times = gridded.sizes["time"]
    phi = np.tile(flat["mms1_des_phi_brst"].to_numpy(), (times, 1))
    theta = np.tile(flat["mms1_des_theta_brst"].to_numpy(), (times, 1))
    array = xr.DataArray(
        flat.to_numpy(), dims=("time", "energy", "look"), name="dist",
        coords={"time": gridded["time"], "energy": ENERGY,
                "phi_centers": (("time", "look"), phi), "theta_centers": (("time", "look"), theta)},
    )  # fmt: skip
    seconds = np.arange(0, 200.0)  # the field covers only the first half of the product
    index = START + pd.to_timedelta(seconds, unit="s")
    frame = pd.DataFrame(field(seconds), index=index, columns=["Bx", "By", "Bz"])
    ws.context.store.put(DataEntry("B", frame, dict.fromkeys(frame.columns, "nT"), "", "DS"))
    _store(ws, "per_record", array)
    out = call(ws, label="per_record", field_label="B", energy_min=100, bins=9)
    _assert_bins_follow(out, beam)
    failed = {c["name"]: c["detail"] for c in out["checks"] if not c["ok"]}
    assert "field" in failed and "no field" in failed["field"]
    pad = ws.context.store.get("per_record.PAD").data
    assert isinstance(pad, xr.DataArray) and bool(np.isnan(pad.to_numpy()[-1]).all())


def test_polar_angles_within_0_to_90_are_flagged_as_ambiguous(ws) -> None:
    put_field(ws)
    half = gridded_product().isel(mms1_des_theta_brst=slice(0, 4))  # colatitudes 11-79°
    _store(ws, "upper", half)
    out = call(ws, label="upper", field_label="MMS1_FGM.B_GSE", energy_min=100, bins=6)
    failed = [c["detail"] for c in out["checks"] if not c["ok"]]
    assert any("polar='elevation'" in d for d in failed)
    said = call(ws, label="upper", field_label="MMS1_FGM.B_GSE", polar="colatitude")
    assert not [c for c in said["checks"] if c["name"] == "polar angle" and not c["ok"]]
