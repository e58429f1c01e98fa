"""SSCWeb-like orbit datasets for a loopback HAPI server (the ephemeris fallback tests).

SSCWeb's HAPI server (hapi-server.org/servers/SSCWeb/hapi, HAPI 2.0, CSV only) serves one
dataset per spacecraft, named by SSCWeb's satellite id (``mms1``, ``themisa``), with the
position in several frames in Earth radii (``R_E``, fill ``1e31``) and day-of-year times
(``2017-192T00:00:00Z``). The stand-in serves the same layout: a made-up orbit given in
GSE, and the J2000 and GSM columns derived from it with xhelio's own frame rotations, so
a test can check that a position read in GSE comes out right in another frame.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from servers.hapi_server import HapiTestServer, make_info

EARTH_RADIUS_KM = 6371.2
FRAMES = ("J2K", "GSE", "GSM")


def orbit_gse_re(times: pd.DatetimeIndex, radius_re: float, phase_deg: float) -> np.ndarray:
    """A tilted circular orbit around the Earth in GSE (Earth radii), period 1 day."""
    seconds = (times - times[0]).total_seconds().to_numpy()
    angle = np.radians(phase_deg) + 2 * np.pi * seconds / 86400.0
    return np.stack(
        [
            radius_re * np.cos(angle),
            radius_re * np.sin(angle) * 0.8,
            radius_re * np.sin(angle) * 0.6,
        ],
        axis=1,
    )


def frame_columns(times: pd.DatetimeIndex, gse: np.ndarray) -> dict[str, np.ndarray]:
    """The GSE vectors in each of FRAMES (rotated with xhelio.ephemeris.frames)."""
    from xhelio.ephemeris import frames

    to_gse = frames.rotation("GSE", times)
    j2k = np.einsum("nji,nj->ni", to_gse, gse)  # transpose: GSE -> J2000
    gsm = frames.rotate(j2k, frames.rotation("GSM", times))
    return {"J2K": j2k, "GSE": gse, "GSM": gsm}


def sscweb_info(start: str, stop: str, name: str) -> dict[str, Any]:
    """An /info as SSCWeb's server writes it (the position parameters of each frame)."""
    params = [(f"{axis}_{frame}", "R_E", None) for frame in FRAMES for axis in "XYZ"]
    info = make_info(start, stop, [*params, ("Radius", "R_E", None)], cadence="PT60S", fill="1e31")
    info["parameters"][0]["length"] = 18
    info["description"] = f"{name} ephemeris"
    info["resourceURL"] = "https://sscweb.gsfc.nasa.gov/"
    return info


def serve_orbit(
    server: HapiTestServer,
    sscweb_id: str,
    name: str,
    day: str,
    radius_re: float = 10.0,
    phase_deg: float = 0.0,
) -> pd.DataFrame:
    """Serve `sscweb_id` over `day` and the next (1-minute cadence); return what is served."""
    start = pd.Timestamp(day, tz="UTC")
    times = pd.date_range(start, start + pd.Timedelta(days=2), freq="60s", inclusive="left")
    gse = orbit_gse_re(times, radius_re, phase_deg)
    columns = frame_columns(times, gse)
    table: dict[str, np.ndarray] = {}
    for frame in FRAMES:
        for k, axis in enumerate("XYZ"):
            table[f"{axis}_{frame}"] = columns[frame][:, k]
    table["Radius"] = np.linalg.norm(gse, axis=1)
    frame = pd.DataFrame(table, index=times.rename("time"))
    stop = (start + pd.Timedelta(days=2)).isoformat()
    server.add_dataset(sscweb_id, sscweb_info(start.isoformat(), stop, name), frame, name)
    return frame
