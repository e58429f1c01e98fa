"""Ephemeris: generated kernels, kernel checks, loopback archives, frames, the Parker spiral.

Generated SPKs against spkpos, a loopback NAIF, the archive fallback over the test HAPI
server, frames against known geometry, connectivity against the closed form.
"""

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
    NaifStandIn,
    circular_states,
    earth_states,
    leapseconds,
    naif_stand_in,
    write_spk,
)
from servers.hapi_server import HapiTestServer, make_info
from xhelio.config import load_settings
from xhelio.ephemeris import frames
from xhelio.ephemeris.archive import ArchivePositions
from xhelio.ephemeris.bodies import resolve_body
from xhelio.ephemeris.geometry import (
    angle_between,
    footpoint_longitude,
    periods_within,
    spiral_line,
)
from xhelio.ephemeris.kernels import KernelError, KernelManager
from xhelio.ephemeris.locate import Locator
from xhelio.sources.hapi import HapiSource

KERNEL_TIMES = pd.date_range("2021-04-27", "2021-05-03", freq="1h", tz="UTC")
DAY = pd.date_range("2021-04-29", "2021-04-30", freq="1h", tz="UTC")


@pytest.fixture(scope="module")
def planets_spk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("kernels")
    return write_spk(
        folder / "planets.bsp",
        {
            399: (KERNEL_TIMES, earth_states(KERNEL_TIMES)),
            4: (KERNEL_TIMES, circular_states(KERNEL_TIMES, 1.52, 100.0)),
        },
    )


@pytest.fixture(scope="module")
def probe_spk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mission")
    return write_spk(
        folder / "spp_nom_20180812_v042.bsp",
        {-96: (KERNEL_TIMES, circular_states(KERNEL_TIMES, 0.4, 30.0))},
    )


@pytest.fixture
def naif(planets_spk: Path, probe_spk: Path) -> Iterator[NaifStandIn]:
    with naif_stand_in() as archive:
        archive.add("generic_kernels/pck/pck00011.tpc", MINIMAL_PCK.encode())
        archive.add("generic_kernels/pck/pck00010.tpc", MINIMAL_PCK.encode())
        archive.add("generic_kernels/spk/planets/de440s.bsp", planets_spk.read_bytes())
        archive.add(f"{PSP_SPK}/spp_nom_20180812_20300101_v041.bsp", probe_spk.read_bytes())
        archive.add(f"{PSP_SPK}/spp_nom_20180812_20300101_v042.bsp", probe_spk.read_bytes())
        yield archive


def _manager(url: str) -> KernelManager:
    return KernelManager(load_settings(naif_url=url, http_retries=0))


def test_a_generated_kernel_gives_what_spkpos_gives(naif: NaifStandIn, probe_spk: Path) -> None:
    import spiceypy

    track = Locator(_manager(naif.url), None).track(
        resolve_body("Parker Solar Probe"), resolve_body("earth"), DAY, "J2000"
    )
    spiceypy.furnsh([leapseconds(), str(probe_spk)])
    try:
        spiceypy.furnsh(str(naif_planets(naif)))
        ets = [spiceypy.str2et(t.strftime("%Y-%m-%dT%H:%M:%S")) for t in DAY]
        expected, light = spiceypy.spkpos("-96", ets, "J2000", "NONE", "399")
    finally:
        spiceypy.kclear()
    assert np.allclose(track.position, expected, rtol=0, atol=1e-3)
    assert np.allclose(track.table()["light_time"], light, rtol=1e-9)
    assert any("spp_nom_20180812_20300101_v042.bsp" in s for s in track.sources)  # the newest one


def naif_planets(naif: NaifStandIn) -> Path:
    path = Path(load_settings(naif_url=naif.url).cache_dir) / "spice" / "de440s.bsp"
    assert path.is_file()
    return path


def test_downloads_are_kept_and_used_offline(naif: NaifStandIn) -> None:
    url = naif.url
    Locator(_manager(url), None).track(resolve_body("psp"), resolve_body("sun"), DAY, "HCI")
    downloads = [r for r in naif.requests if r.endswith(".bsp")]
    assert sorted(downloads) == [
        f"/{PSP_SPK}/spp_nom_20180812_20300101_v042.bsp",
        "/generic_kernels/spk/planets/de440s.bsp",
    ]
    offline = _manager("http://127.0.0.1:9/naif")
    track = Locator(offline, None).track(resolve_body("psp"), resolve_body("sun"), DAY, "HCI")
    assert np.allclose(track.table()["distance_au"], 0.4 * AU_KM / 149_597_870.7)
    assert any("unreachable" in note and "cached" in note for note in track.notes)


def test_an_html_page_saved_as_a_kernel_is_refused(naif: NaifStandIn) -> None:
    naif.files.pop(f"{PSP_SPK}/spp_nom_20180812_20300101_v042.bsp")
    naif.files.pop(f"{PSP_SPK}/spp_nom_20180812_20300101_v041.bsp")
    naif.add(
        f"{PSP_SPK}/spp_nom_20180812_20300101_v043.bsp",
        b"<!DOCTYPE html><html><body>Please log in</body></html>",
    )
    manager = _manager(naif.url)
    with pytest.raises(KernelError, match="HTML page"):
        manager.newest(resolve_body("psp").kernel)  # type: ignore[arg-type]
    assert not list(manager.folder.glob("spp_nom_*"))  # nothing half-kept


def test_a_mission_split_by_period_loads_the_files_covering_the_request(
    naif: NaifStandIn, tmp_path: Path
) -> None:
    folder = "pds/data/co-s_j_e_v-spice-6-v1.0/cosp_1000/data/spk"
    before = pd.date_range("2021-04-20", "2021-04-27", freq="1h", tz="UTC")
    early = write_spk(tmp_path / "a.bsp", {-82: (before, circular_states(before, 9.0, 0.0))})
    covering = write_spk(
        tmp_path / "b.bsp", {-82: (KERNEL_TIMES, circular_states(KERNEL_TIMES, 9.5, 0.0))}
    )
    naif.add(f"{folder}/210601R_SCPSE_21110_21117.bsp", early.read_bytes())  # Apr 20-27
    naif.add(f"{folder}/210602R_SCPSE_21117_21123.bsp", covering.read_bytes())  # Apr 27-May 3
    naif.add(f"{folder}/210603R_SCPSE_21123_21130.bsp", early.read_bytes())  # May 3-10
    track = Locator(_manager(naif.url), None).track(
        resolve_body("Cassini"), resolve_body("sun"), DAY, "J2000"
    )
    assert np.allclose(track.table()["distance_au"], 9.5 * AU_KM / 149_597_870.7)
    fetched = [r.rsplit("/", 1)[-1] for r in naif.requests if "SCPSE" in r]
    assert fetched == ["210602R_SCPSE_21117_21123.bsp"]


def test_period_names_are_read_as_two_digit_years_and_days() -> None:
    from datetime import datetime

    from xhelio.ephemeris.kernels import overlapping

    names = ["100528R_helios1_74345_81272.bsp", "160707AP_helios1_81272_86074.bsp", "x.bsp"]
    assert overlapping(names, datetime(1976, 4, 17), datetime(1976, 4, 18)) == names[:1]
    assert overlapping(names, datetime(1981, 9, 29), datetime(1981, 9, 29)) == names[:2]
    assert overlapping(names, datetime(1990, 1, 1), datetime(1990, 1, 2)) == []


def test_user_kernels_are_checked_and_used(
    naif: NaifStandIn, tmp_path: Path, probe_spk: Path
) -> None:
    page = tmp_path / "mission.bsp"
    page.write_text("<html><head><title>Sign in</title></html>")
    manager = _manager(naif.url)
    with pytest.raises(KernelError, match="is not a SPICE kernel"):
        manager.user_kernels([page])
    own = write_spk(
        tmp_path / "own.bsp", {-999: (KERNEL_TIMES, circular_states(KERNEL_TIMES, 2.0, 0))}
    )
    locator = Locator(manager, None, manager.user_kernels([own]))
    track = locator.track(resolve_body("-999"), resolve_body("sun"), DAY, "J2000")
    assert np.allclose(track.table()["distance"], 2.0 * AU_KM)


def _position_server(server: HapiTestServer, prefix: str, radius_au: float, lon0: float) -> None:
    times = pd.date_range("2021-04-20", "2021-05-10", freq="1h", tz="UTC", name="time")
    hours = np.arange(len(times))
    frame = pd.DataFrame(
        {
            "RAD_AU": radius_au + 0 * hours,
            "HGI_LAT": 3.0 + 0 * hours,
            "HGI_LON": (lon0 + 0.5 * hours) % 360,
        },
        index=times,
    )
    info = make_info(
        "2021-04-20T00:00:00Z",
        "2021-05-10T00:00:00Z",
        [("RAD_AU", "AU", None), ("HGI_LAT", "deg", None), ("HGI_LON", "deg", None)],
        cadence="PT1H",
    )
    server.add_dataset(f"{prefix}_HELIO1HR_POSITION", info, frame)


def test_without_kernels_the_archive_positions_are_used_and_said() -> None:
    with HapiTestServer(version="2.0") as server:
        _position_server(server, "PSP", 0.3, 100.0)
        source = HapiSource(load_settings(hapi_url=server.url, http_retries=0))
        archive = ArchivePositions([source])
        locator = Locator(_manager("http://127.0.0.1:9/naif"), archive)
        track = locator.track(resolve_body("PSP"), resolve_body("SUN"), DAY, "HCI")
        source.close()
    table = track.table()
    assert np.allclose(table["distance_au"], 0.3, atol=1e-9)
    assert np.allclose(table["latitude"], 3.0, atol=1e-6)
    expected_lon = (100.0 + 0.5 * (np.arange(len(DAY)) + 9 * 24) + 180) % 360 - 180
    assert np.allclose(table["longitude"], expected_lon, atol=1e-6)
    assert any("PSP_HELIO1HR_POSITION" in s for s in track.sources)
    assert any("no kernel covered" in note for note in track.notes)


def test_no_kernel_and_no_archive_is_one_clear_error() -> None:
    with HapiTestServer(version="2.0") as server:
        source = HapiSource(load_settings(hapi_url=server.url, http_retries=0))
        locator = Locator(_manager("http://127.0.0.1:9/naif"), ArchivePositions([source]))
        with pytest.raises(Exception, match="Cannot locate PSP"):
            locator.track(resolve_body("PSP"), resolve_body("SUN"), DAY, "HCI")
        source.close()


def test_earth_in_hee_lies_on_the_x_axis_and_the_sun_in_gse(naif: NaifStandIn) -> None:
    locator = Locator(_manager(naif.url), None)
    earth = locator.track(resolve_body("earth"), resolve_body("sun"), DAY, "HEE").table()
    assert np.allclose(earth["distance_au"], 1.007, atol=2e-3)  # late April
    assert np.all(np.abs(earth[["y", "z"]].to_numpy()) < 1e3)  # km, of 1.5e8
    sun = locator.track(resolve_body("sun"), resolve_body("earth"), DAY, "GSE").table()
    assert np.all(sun["x"] > 1.5e8) and np.all(np.abs(sun[["y", "z"]].to_numpy()) < 1e3)


def test_gse_and_gsm_share_x_and_turn_about_it_as_the_dipole_does() -> None:
    # GSM turns GSE about X until the dipole axis lies in X-Z (Hapgood 1992). At the June
    # solstice near 16:50 UT the northern dipole pole (~72.7 W) faces the Sun: the axis is
    # already in X-Z, the angle ~0. At an equinox the spin axis leans 23.4 deg sideways and
    # the dipole's 9.3 deg offset adds or subtracts over the day: ~14 to ~33 deg.
    times = pd.DatetimeIndex(["2020-06-21T16:50"], tz="UTC").append(
        pd.date_range("2020-03-20", periods=24, freq="1h", tz="UTC")
    )
    gse = frames.rotation("GSE", times)
    gsm = frames.rotation("GSM", times)
    assert np.allclose(gse[:, 0], gsm[:, 0], atol=1e-6)
    turn = np.degrees(np.arccos(np.einsum("ni,ni->n", gse[:, 2], gsm[:, 2])))
    assert turn[0] < 2
    assert 30 < turn[1:].max() < 35 and 11 < turn[1:].min() < 17
    # Round trip: GSE -> GSM -> GSE is the identity.
    vector = np.tile([3.0, -4.0, 12.0], (len(times), 1))
    in_gsm = frames.rotate(frames.rotate(vector, np.transpose(gse, (0, 2, 1))), gsm)
    back = frames.rotate(frames.rotate(in_gsm, np.transpose(gsm, (0, 2, 1))), gse)
    assert np.allclose(back, vector)


def test_interpolated_rotations_match_exact_ones() -> None:
    times = pd.date_range("2021-03-01", "2021-03-03", freq="7min", tz="UTC")
    interpolated = frames.rotation("GSM", times)
    exact = frames.rotation("GSM", times[[5, 200, 400]])
    assert np.allclose(interpolated[[5, 200, 400]], exact, atol=2e-4)


def test_unknown_frames_and_bodies_are_named() -> None:
    with pytest.raises(frames.UnknownFrameError, match="Known: J2000"):
        frames.check_frame("GSX")
    with pytest.raises(Exception, match="Unknown body or spacecraft 'Enterprise'"):
        resolve_body("Enterprise")
    assert frames.check_frame("hgi") == "HCI"
    assert frames.check_frame("iau_mars") == "IAU_MARS"


def test_parker_footpoint_matches_the_closed_form() -> None:
    # 1 AU at 400 km/s from 2.5 solar radii: Omega = 2 pi / 25.38 d = 2.86545e-6 rad/s;
    # (1.495979e8 - 1.73925e6) km / 400 km/s = 369646 s; lag 1.05920 rad = 60.688 deg.
    footpoint = footpoint_longitude(np.array([10.0]), np.array([AU_KM]), 400.0)
    assert footpoint[0] == pytest.approx(70.688, abs=1e-2)
    radius, longitude = spiral_line(float(footpoint[0]), 400.0, AU_KM)
    assert radius[-1] == pytest.approx(AU_KM) and longitude[-1] == pytest.approx(10.0)
    # Faster wind, straighter spiral: smaller lag.
    assert footpoint_longitude(np.array([10.0]), np.array([AU_KM]), 800.0)[0] < 45


def test_separation_and_alignment_periods() -> None:
    a = np.array([[1.0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0]])
    b = np.array([[0.0, 1, 0], [1, 0.05, 0], [1, 0.01, 0], [0, 1, 0]])
    angles = angle_between(a, b)
    assert np.allclose(angles, [90, 2.862, 0.573, 90], atol=1e-3)
    index = pd.date_range("2022-01-01", periods=4, freq="1D", tz="UTC")
    periods = periods_within(index, angles, 5.0)
    assert [(p.start.day, p.end.day, p.at.day) for p in periods] == [(2, 3, 3)]


def test_a_planet_the_ephemeris_has_as_a_barycentre_is_located_by_it(naif: NaifStandIn) -> None:
    track = Locator(_manager(naif.url), None).track(
        resolve_body("Mars"), resolve_body("sun"), DAY, "J2000"
    )
    assert np.allclose(track.table()["distance_au"], 1.52 * AU_KM / 149_597_870.7)
    assert any("MARS system barycentre" in s for s in track.sources)


def test_body_fixed_frames_come_from_the_planetary_constants(naif: NaifStandIn) -> None:
    # The test PCK puts the Earth's pole on J2000's Z: the body-fixed frame spins about it.
    locator = Locator(_manager(naif.url), None)
    psp, earth = resolve_body("psp"), resolve_body("earth")
    inertial = locator.track(psp, earth, DAY, "J2000").position
    fixed = locator.track(psp, earth, DAY, "IAU_EARTH").position
    assert np.allclose(fixed[:, 2], inertial[:, 2], atol=1e-3)
    assert np.allclose(np.linalg.norm(fixed, axis=1), np.linalg.norm(inertial, axis=1))
    turned = np.degrees(
        np.arctan2(inertial[:, 1], inertial[:, 0]) - np.arctan2(fixed[:, 1], fixed[:, 0])
    )
    hourly = np.diff(np.unwrap(np.radians(turned)))
    assert np.allclose(np.degrees(hourly), 360.9856235 / 24, atol=0.01)  # sidereal spin
    with pytest.raises(Exception, match="IAU_VULCAN"):
        locator.track(psp, earth, DAY, "IAU_VULCAN")
