"""Where a body is: SPICE kernels first, then the archives' heliocentric positions, then orbits.

`Locator.locate` gives a body's geometric state in J2000 axes: relative to the Sun from the
kernels (the generic ones, its mission SPK, the user's own) or, when no kernel covers the
body or the time or none can be had, from the archives' heliocentric position datasets;
for an Earth orbiter neither covers, relative to the Earth from its orbit source (SSCWeb,
the mission's orbit dataset, see `orbits`), rotated from GSE. Each fallback adds a note
saying why and what was used. `Locator.heliocentric` adds the Earth's position to a
geocentric state; `Locator.track` turns two states into what a user asks: the target as
seen from an observer, rotated into a frame, with distance and light time. A geocentric
target seen from the Earth (or another geocentric one) never needs the Earth's
heliocentric position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from xhelio.ephemeris import frames, spice
from xhelio.ephemeris.archive import (
    AU_KM,
    ArchivePositions,
    NoArchivePositionError,
    seconds_since_epoch,
)
from xhelio.ephemeris.bodies import Body, resolve_body
from xhelio.ephemeris.kernels import KernelManager, KernelUnavailableError
from xhelio.ephemeris.orbits import NoOrbitPositionError, OrbitPositions
from xhelio.errors import UserError
from xhelio.timerange import TimeRange

__all__ = ["LIGHT_SPEED_KM_S", "Heliocentric", "Locator", "Track", "sample_times"]

LIGHT_SPEED_KM_S = 299_792.458
_STEPS = ("1min", "5min", "10min", "30min", "1h", "6h", "12h", "1D", "7D", "30D")


def sample_times(
    time_range: TimeRange, step: str | None = None, most: int = 1000
) -> pd.DatetimeIndex:
    """Times from the range's start every `step`, up to its end.

    The default step is the finest of a ladder giving at most `most` points; a range
    shorter than the step gives its start alone.

    Raises:
        UserError: a step that is no time interval, or one giving more than 100000 times.
    """
    span_s = time_range.duration.total_seconds()
    if step is None:
        step = next((s for s in _STEPS if span_s / _step_seconds(s) <= most - 1), _STEPS[-1])
    try:
        step_s = _step_seconds(step)
    except ValueError as exc:
        raise UserError(f"Step {step!r} is not a time interval such as '10min' or '1h'.") from exc
    if step_s <= 0 or span_s / step_s > 100_000:
        raise UserError(f"Step {step!r} gives too many times over {time_range}; use a longer one.")
    start = pd.Timestamp(time_range.start)
    return pd.date_range(start, pd.Timestamp(time_range.end), freq=f"{step_s}s").as_unit("ns")


def _step_seconds(step: str) -> float:
    return float(pd.to_timedelta(step).total_seconds())


@dataclass
class Heliocentric:
    """A body's states in J2000 (km, km/s), where they came from, and their origin."""

    states: np.ndarray
    source: str
    center: str = "SUN"
    """SUN, or EARTH for an Earth orbiter located by its orbit source."""
    citations: tuple[dict[str, Any], ...] = ()
    """How to credit the datasets the states came from (orbit sources)."""


@dataclass
class Track:
    """A target seen from an observer, in one frame."""

    target: str
    observer: str
    frame: str
    times: pd.DatetimeIndex
    position: np.ndarray
    velocity: np.ndarray
    sources: list[str] = field(default_factory=list[str])
    notes: list[str] = field(default_factory=list[str])
    citations: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    def table(self) -> pd.DataFrame:
        """One row per time: position, velocity, distance, longitude, latitude, light time."""
        x, y, z = self.position.T
        distance = np.linalg.norm(self.position, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            latitude = np.degrees(np.arcsin(z / distance))
        return pd.DataFrame(
            {
                "x": x,
                "y": y,
                "z": z,
                "vx": self.velocity[:, 0],
                "vy": self.velocity[:, 1],
                "vz": self.velocity[:, 2],
                "distance": distance,
                "distance_au": distance / AU_KM,
                "longitude": np.degrees(np.arctan2(y, x)),
                "latitude": latitude,
                "light_time": distance / LIGHT_SPEED_KM_S,
            },
            index=self.times,
        )


UNITS = {
    "x": "km",
    "y": "km",
    "z": "km",
    "vx": "km/s",
    "vy": "km/s",
    "vz": "km/s",
    "distance": "km",
    "distance_au": "AU",
    "longitude": "deg",
    "latitude": "deg",
    "light_time": "s",
}


class Locator:
    """Locates bodies from kernels (when a manager is given), archive positions or orbits."""

    def __init__(
        self,
        kernels: KernelManager | None,
        archive: ArchivePositions | None,
        user_kernels: Sequence[Path] = (),
        orbits: OrbitPositions | None = None,
    ) -> None:
        self.kernels = kernels
        self.archive = archive
        self.orbits = orbits
        self.user_kernels = list(user_kernels)
        self.notes: list[str] = []

    def locate(self, body: Body, times: pd.DatetimeIndex) -> Heliocentric:
        """`body`'s states at `times`: from kernels, else heliocentric archives, else orbits.

        Raises:
            UserError: nothing covers the body at those times (the message says why each
                source could not).
        """
        if body.naif_id == 10:
            return Heliocentric(np.zeros((len(times), 6)), "")  # the origin: nothing to cite
        why = self._no_kernel_reason(body)
        if why is None:
            try:
                return self._from_kernels(body, times)
            except (spice.NoCoverageError, KernelUnavailableError, ImportError) as exc:
                why = str(exc)
        reasons = [why]
        readers = [self._from_archive, self._from_orbits]
        if body.is_earth_orbiter:  # a minute-resolution orbit beats hourly AU positions
            readers.reverse()
        for reader in readers:
            try:
                located = reader(body, times, why)
            except (NoArchivePositionError, NoOrbitPositionError) as exc:
                reasons.append(str(exc))
                continue
            if located is not None:
                return located
        if len(reasons) == 1:
            reasons.append(f"no archive serves positions of {body.key}")
        raise UserError(f"Cannot locate {body.key}: {'; '.join(reasons)}.")

    def _no_kernel_reason(self, body: Body) -> str | None:
        """Why kernels are not tried for `body`, or None when they are."""
        if self.kernels is None:
            return "no SPICE kernels (install xhelio[ephemeris])"
        if body.naif_id is None:
            return f"NAIF assigns {body.key} no id, so no kernel can locate it"
        if not body.has_kernel and not self.user_kernels:
            return f"no SPICE kernel of {body.key} is published (give one with --kernel)"
        return None

    def _from_archive(self, body: Body, times: pd.DatetimeIndex, why: str) -> Heliocentric | None:
        if self.archive is None or body.position_prefix is None:
            return None
        track = self.archive.heliocentric_hci(body, times)
        to_j2000 = np.transpose(frames.rotation("HCI", times), (0, 2, 1))
        position = frames.rotate(track.position, to_j2000)
        velocity = _derivative(position, times)
        source = f"{track.source} {track.dataset} (hourly positions, interpolated)"
        self.notes.append(f"{body.key}: no kernel covered the request ({why}); used {source}.")
        return Heliocentric(np.hstack([position, velocity]), source)

    def _from_orbits(self, body: Body, times: pd.DatetimeIndex, why: str) -> Heliocentric | None:
        if self.orbits is None or not body.is_earth_orbiter:
            return None
        track = self.orbits.geocentric_gse(body, times)
        to_j2000 = np.transpose(frames.rotation("GSE", times), (0, 2, 1))
        position = frames.rotate(track.position, to_j2000)
        velocity = _derivative(position, times)
        source = f"{track.source} {track.dataset} (geocentric GSE orbit, interpolated)"
        self.notes.append(f"{body.key}: no kernel covered the request ({why}); used {source}.")
        states = np.hstack([position, velocity])
        return Heliocentric(states, source, "EARTH", (track.citation,))

    def heliocentric(self, body: Body, times: pd.DatetimeIndex) -> Heliocentric:
        """`body`'s states relative to the Sun at `times` (a geocentric one plus the Earth's).

        Raises:
            UserError: nothing covers the body (or the Earth, for an orbiter) at those times.
        """
        return self._about_sun(self.locate(body, times), times)

    def _about_sun(self, located: Heliocentric, times: pd.DatetimeIndex) -> Heliocentric:
        if located.center == "SUN":
            return located
        earth = self.locate(resolve_body("EARTH"), times)
        sources = ", ".join(s for s in (located.source, earth.source) if s)
        cited = located.citations + earth.citations
        return Heliocentric(located.states + earth.states, sources, "SUN", cited)

    def _from_kernels(self, body: Body, times: pd.DatetimeIndex) -> Heliocentric:
        assert self.kernels is not None and body.naif_id is not None
        stamps: list[datetime] = list(times.to_pydatetime())
        paths = [*self.kernels.for_body(body, stamps[0], stamps[-1]), *self.user_kernels]
        names = ", ".join(p.name for p in paths[2:])
        with self.kernels.loaded(paths):
            ets = spice.ephemeris_times(times)
            try:
                return Heliocentric(spice.states(body.naif_id, 10, ets), f"SPICE ({names})")
            except spice.NoCoverageError:
                barycentre = body.naif_id // 100
                if not (400 < body.naif_id < 1000 and body.naif_id % 100 == 99):
                    raise
                # de440s carries Mars..Pluto as system barycentres only (planet + moons).
                states = spice.states(barycentre, 10, ets)
        return Heliocentric(states, f"SPICE ({names}; {body.key} system barycentre)")

    def body_fixed(self, frame: str, times: pd.DatetimeIndex) -> np.ndarray:
        """Rotations from J2000 into a body-fixed IAU_<BODY> frame (needs the generic kernels).

        Raises:
            UserError: no kernels can be had, or they do not define the frame.
        """
        if self.kernels is None:
            raise UserError(f"Frame {frame} needs SPICE kernels (install xhelio[ephemeris]).")
        try:
            paths = [*self.kernels.generic(), *self.user_kernels]
            with self.kernels.loaded(paths):
                return spice.body_fixed_rotation(frame, spice.ephemeris_times(times))
        except (KernelUnavailableError, ImportError) as exc:
            raise UserError(f"Frame {frame} needs SPICE kernels: {exc}") from exc

    def _pair(
        self, target: Body, observer: Body, times: pd.DatetimeIndex, frame: str
    ) -> tuple[Heliocentric, Heliocentric]:
        """Both bodies' states about one origin: the Earth when neither needs the Sun's.

        The Earth itself is the origin there (zeros); RTN needs heliocentric states.
        """
        others = [None if b.key == "EARTH" else self.locate(b, times) for b in (target, observer)]
        if frame != "RTN" and all(o is None or o.center == "EARTH" for o in others):
            earth = Heliocentric(np.zeros((len(times), 6)), "", "EARTH")
            return others[0] or earth, others[1] or earth
        suns = [
            self.locate(resolve_body("EARTH"), times) if o is None else self._about_sun(o, times)
            for o in others
        ]
        return suns[0], suns[1]

    def track(self, target: Body, observer: Body, times: pd.DatetimeIndex, frame: str) -> Track:
        """`target` seen from `observer` at `times` in `frame`.

        RTN is the observer's, or the target's when the observer is the Sun.
        """
        frame = frames.check_frame(frame)
        self.notes = []
        seen, origin = self._pair(target, observer, times, frame)
        relative = seen.states - origin.states
        if frame.startswith("IAU_"):
            matrices = self.body_fixed(frame, times)
        else:
            center = origin if observer.naif_id != 10 else seen
            matrices = frames.rotation(frame, times, center=center.states[:, :3])
        sources = list(dict.fromkeys(s for s in (seen.source, origin.source) if s))
        return Track(
            target.key,
            observer.key,
            frame,
            times,
            frames.rotate(relative[:, :3], matrices),
            frames.rotate(relative[:, 3:], matrices),
            sources,
            list(dict.fromkeys([*(self.kernels.notes if self.kernels else []), *self.notes])),
            [*seen.citations, *origin.citations],
        )


def _derivative(position: np.ndarray, times: pd.DatetimeIndex) -> np.ndarray:
    if len(times) < 2:
        return np.full_like(position, np.nan)
    return np.gradient(position, seconds_since_epoch(times), axis=0)
