"""Where a body is: SPICE kernels first, the archives' position datasets when none covers it.

`Locator.heliocentric` gives a body's geometric state relative to the Sun in J2000 axes
from the kernels (the generic ones, its mission SPK, the user's own), and, when no kernel
covers the body or the time, or none can be had, from the archive position datasets, with
a note saying so. `Locator.track` turns two of those into what a user asks: the target as
seen from an observer, rotated into a frame, with distance and light time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from xhelio.ephemeris import frames, spice
from xhelio.ephemeris.archive import (
    AU_KM,
    ArchivePositions,
    NoArchivePositionError,
    seconds_since_epoch,
)
from xhelio.ephemeris.bodies import Body
from xhelio.ephemeris.kernels import KernelManager, KernelUnavailableError
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
    """A body's states relative to the Sun in J2000 (km, km/s), and where they came from."""

    states: np.ndarray
    source: str


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
    """Locates bodies from kernels (when a manager is given) or archive positions."""

    def __init__(
        self,
        kernels: KernelManager | None,
        archive: ArchivePositions | None,
        user_kernels: Sequence[Path] = (),
    ) -> None:
        self.kernels = kernels
        self.archive = archive
        self.user_kernels = list(user_kernels)
        self.notes: list[str] = []

    def heliocentric(self, body: Body, times: pd.DatetimeIndex) -> Heliocentric:
        """`body`'s states relative to the Sun at `times`, from kernels or else archives.

        Raises:
            UserError: neither kernels nor archives cover the body at those times.
        """
        if body.naif_id == 10:
            return Heliocentric(np.zeros((len(times), 6)), "")  # the origin: nothing to cite
        why = "no SPICE kernels (install xhelio[ephemeris])"
        if self.kernels is not None:
            try:
                return self._from_kernels(body, times)
            except (spice.NoCoverageError, KernelUnavailableError, ImportError) as exc:
                why = str(exc)
        if self.archive is None:
            raise UserError(f"Cannot locate {body.key}: {why}.")
        try:
            track = self.archive.heliocentric_hci(body, times)
        except NoArchivePositionError as exc:
            raise UserError(f"Cannot locate {body.key}: {why}; {exc}") from exc
        to_j2000 = np.transpose(frames.rotation("HCI", times), (0, 2, 1))
        position = frames.rotate(track.position, to_j2000)
        velocity = _derivative(position, times)
        source = f"{track.source} {track.dataset} (hourly positions, interpolated)"
        self.notes.append(f"{body.key}: no kernel covered the request ({why}); used {source}.")
        return Heliocentric(np.hstack([position, velocity]), source)

    def _from_kernels(self, body: Body, times: pd.DatetimeIndex) -> Heliocentric:
        assert self.kernels is not None
        paths = [*self.kernels.for_body(body), *self.user_kernels]
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

    def track(self, target: Body, observer: Body, times: pd.DatetimeIndex, frame: str) -> Track:
        """`target` seen from `observer` at `times` in `frame`.

        RTN is the observer's, or the target's when the observer is the Sun.
        """
        frame = frames.check_frame(frame)
        self.notes = []
        seen = self.heliocentric(target, times)
        origin = self.heliocentric(observer, times)
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
            [*(self.kernels.notes if self.kernels else []), *self.notes],
        )


def _derivative(position: np.ndarray, times: pd.DatetimeIndex) -> np.ndarray:
    if len(times) < 2:
        return np.full_like(position, np.nan)
    return np.gradient(position, seconds_since_epoch(times), axis=0)
