"""Positions of Earth orbiters without kernels: SSCWeb over HAPI, then the missions' datasets.

NASA's Satellite Situation Center computes the orbits of some 200 Earth orbiters (MMS,
THEMIS/ARTEMIS, Cluster, the Van Allen Probes, Geotail, GOES, Polar...). Its HAPI server
(hapi-server.org, `sources/known_servers.json` entry ``sscweb``) serves one dataset per
spacecraft, named by SSCWeb's satellite id (``mms1``, ``themisa``, ``rbspa``), with the
position in several frames: ``X_GSE``, ``Y_GSE``, ``Z_GSE`` in Earth radii among them.
When SSCWeb cannot answer, the mission's own CDAWeb orbit dataset is asked through the
default source (e.g. ``MMS1_MEC_SRVY_L2_EPHT89D`` ``mms1_mec_r_gse`` in km,
``THA_OR_SSC`` ``XYZ_GSE`` in Earth radii). Either way the answer is a geocentric GSE
position in km, interpolated linearly onto the requested times; `locate` rotates it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

import numpy as np
import pandas as pd

from xhelio.ephemeris.archive import interpolated
from xhelio.ephemeris.bodies import Body
from xhelio.errors import (
    DataUnavailableError,
    ServerError,
    UnknownDatasetError,
    UnknownParameterError,
    UserError,
    XhelioError,
)
from xhelio.sources.base import Citation, DataSource
from xhelio.timerange import TimeRange

__all__ = ["EARTH_RADIUS_KM", "NoOrbitPositionError", "OrbitPositions", "OrbitTrack"]

EARTH_RADIUS_KM = 6371.2
"""The Earth radius SSCWeb and CDAWeb's SSC orbit datasets use as their unit."""
_SSCWEB_PARAMETERS = ("X_GSE", "Y_GSE", "Z_GSE")
_KM_PER_UNIT = {
    "km": 1.0,
    "re": EARTH_RADIUS_KM,
    "r_e": EARTH_RADIUS_KM,
    "earth radii": EARTH_RADIUS_KM,
}
_MARGIN = timedelta(hours=2)
"""Read this much before and after the request, so interpolation spans its ends."""
_FILL_ABOVE_KM = 1e20
"""Larger values are fills (SSCWeb writes 1e31), whichever unit they came in."""


class NoOrbitPositionError(UserError):
    """No orbit source serves a body over a time range."""


@dataclass(frozen=True)
class OrbitTrack:
    """Geocentric GSE positions (km) of an Earth orbiter, and where they came from."""

    position: np.ndarray
    dataset: str
    source: str
    citation: dict[str, Any]
    """How to credit the dataset (provider, address, dataset, acknowledgement...)."""


@dataclass(frozen=True)
class _Candidate:
    source: DataSource
    dataset: str
    parameters: tuple[str, ...]


class OrbitPositions:
    """Reads Earth orbiters' positions from SSCWeb, then from the missions' datasets."""

    def __init__(self, sscweb: DataSource | None, missions: DataSource | None) -> None:
        self.sscweb = sscweb
        self.missions = missions

    def _candidates(self, body: Body) -> list[_Candidate]:
        found: list[_Candidate] = []
        if self.sscweb is not None and body.sscweb is not None:
            found.append(_Candidate(self.sscweb, body.sscweb, _SSCWEB_PARAMETERS))
        if self.missions is not None:
            found += [_Candidate(self.missions, o.dataset, (o.parameter,)) for o in body.orbit]
        return found

    def geocentric_gse(self, body: Body, times: pd.DatetimeIndex) -> OrbitTrack:
        """(n, 3) GSE positions of `body` at `times`, in km.

        Raises:
            NoOrbitPositionError: no source serves the body over the times (the message
                says what each source answered).
        """
        candidates = self._candidates(body)
        if not candidates:
            raise NoOrbitPositionError(f"No orbit source serves positions of {body.key}.")
        stamps = list(times.to_pydatetime())
        span = TimeRange(stamps[0] - _MARGIN, stamps[-1] + _MARGIN)
        problems: list[str] = []
        for candidate in candidates:
            where = f"{candidate.source.name} {candidate.dataset}"
            try:
                track = _read(candidate, span)
            except (UnknownDatasetError, UnknownParameterError, DataUnavailableError) as exc:
                problems.append(f"{where}: {exc}")
                continue
            except ServerError as exc:
                problems.append(f"{where}: the server did not answer ({exc})")
                continue
            position = interpolated(track.dropna(), times)
            if position is not None:
                cited = _citation(candidate)
                return OrbitTrack(position, candidate.dataset, candidate.source.name, cited)
            problems.append(f"{where}: does not span the times asked")
        raise NoOrbitPositionError(
            f"No orbit source covers {body.key} from {stamps[0].isoformat()} to "
            f"{stamps[-1].isoformat()} ({'; '.join(problems)})."
        )


def _read(candidate: _Candidate, span: TimeRange) -> pd.DataFrame:
    """The candidate's positions over `span` as x, y, z columns in km (fills dropped).

    Raises:
        DataUnavailableError: the dataset gave no three components in a known length unit.
    """
    found = candidate.source.fetch(candidate.dataset, list(candidate.parameters), span)
    columns: list[pd.DataFrame] = []
    for name in candidate.parameters:
        data = found[name]
        scale = _KM_PER_UNIT.get(data.units.strip().lower())
        if scale is None:
            raise DataUnavailableError(
                f"{name} is in {data.units or 'no unit'!r}, not km or Earth radii"
            )
        columns.append(data.frame.astype(float) * scale)
    frame = pd.concat(columns, axis=1)
    if frame.shape[1] != 3:
        raise DataUnavailableError(f"{', '.join(candidate.parameters)} is no 3-vector")
    frame.columns = ["x", "y", "z"]
    return frame.where(frame.abs() < _FILL_ABOVE_KM)


def _citation(candidate: _Candidate) -> dict[str, Any]:
    """The source's citation of the dataset; its name and the dataset when it cannot say."""
    try:
        found = candidate.source.cite(candidate.dataset)
    except XhelioError:
        found = Citation(candidate.source.name, "", candidate.dataset)
    return {k: v for k, v in asdict(found).items() if v}
