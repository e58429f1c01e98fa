"""Ephemeris tools: where bodies are, separations, alignments, connectivity, frame changes.

Each stores its answer as a DataEntry (time-indexed, units per column) like a fetch, so it
can be plotted, computed on, exported and replayed in pipelines. Positions come from SPICE
kernels (generic and mission kernels fetched from NAIF, or the user's own) or, when no
kernel covers the request, from the archives' heliocentric position datasets or, for Earth
orbiters, from SSCWeb's HAPI server and the missions' orbit datasets; the result says
which and cites it. See docs/ephemeris.md.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

from xhelio.data.entry import DataEntry
from xhelio.ephemeris import frames
from xhelio.ephemeris.archive import ArchivePositions, seconds_since_epoch
from xhelio.ephemeris.bodies import Body, resolve_body
from xhelio.ephemeris.figure import Placed, configuration_figure
from xhelio.ephemeris.geometry import angle_between, footpoint_longitude, periods_within
from xhelio.ephemeris.kernels import KernelManager
from xhelio.ephemeris.locate import UNITS, Locator, Track, sample_times
from xhelio.ephemeris.orbits import OrbitPositions
from xhelio.errors import UserError
from xhelio.sources.base import DataSource
from xhelio.sources.known_servers import resolve_server
from xhelio.sources.registry import SourceSetup
from xhelio.sources.servers import HapiServerSource
from xhelio.timerange import TimeRange, parse_time_range
from xhelio.tools.context import ToolContext
from xhelio.tools.data_tools import entry_summary, frame_of
from xhelio.tools.registry import Produces, tool
from xhelio.tools.results import EntrySummary

__all__ = ["EPHEMERIS_TOOLS"]


@contextmanager
def _locator(ctx: ToolContext, kernels: list[str] | None) -> Generator[Locator]:
    """Kernels, CDAWeb's positions through the default source, and the Earth orbiters' orbits."""
    manager = KernelManager(ctx.settings)
    default = ctx.shared.source(ctx.settings.default_source)
    sscweb, own = _sscweb(ctx)
    try:
        yield Locator(
            manager,
            ArchivePositions([default]),
            manager.user_kernels(kernels or []),
            OrbitPositions(sscweb, default),
        )
    finally:
        if own:
            sscweb.close()


def _sscweb(ctx: ToolContext) -> tuple[DataSource, bool]:
    """SSCWeb's HAPI server, and whether it is ours to close.

    The registered source (configured or refreshed, behind the shared cache) when there
    is one, else one made from the known-servers registry.
    """
    try:
        return ctx.shared.source("sscweb"), False
    except UserError:
        server = resolve_server(ctx.settings, "sscweb")
        assert server is not None  # known_servers.json lists it
        setup = SourceSetup(server.name, ctx.settings)
        url, provider, thanks = server.url, server.provider, server.acknowledgement
        return HapiServerSource(setup, url, provider, thanks), True


def _label(given: str | None, *parts: str) -> str:
    return given or ".".join(["ephemeris", *(re.sub(r"\W+", "_", p) for p in parts)])


def _store(
    ctx: ToolContext,
    label: str,
    table: pd.DataFrame,
    units: dict[str, str],
    description: str,
    span: TimeRange,
    notes: list[str],
    sources: list[str],
    citations: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"notes": notes, "description": description}
    meta["ephemeris_sources"] = sources
    if citations:
        meta["citations"] = citations
    entry = DataEntry(
        label,
        table,
        units={c: units.get(c, "") for c in table.columns},
        description=description,
        fetched_range=(span.start.isoformat(), span.end.isoformat()),
        meta=meta,
    )
    ctx.store.put(entry)
    return {**entry_summary(entry), "notes": notes, "sources": sources}


def _default_frame(target: Body) -> str:
    """GSE for an Earth orbiter (its orbit is geocentric), else HCI."""
    return "GSE" if target.is_earth_orbiter else "HCI"


def _default_observer(frame: str) -> str:
    """Earth for the geocentric frames, the body of a body-fixed frame, else the Sun."""
    if frame.startswith("IAU_"):
        return frame.removeprefix("IAU_")
    return "EARTH" if frame in {"GSE", "GSM"} else "SUN"


@tool(
    "data_ops_fetch",
    produces=Produces(result_field="label"),
    time_args=("time_range",),
    file_args=("kernels",),
    result=EntrySummary,
    public=True,
)
def get_ephemeris(
    ctx: ToolContext,
    target: str,
    time_range: str,
    frame: str | None = None,
    observer: str | None = None,
    step: str | None = None,
    kernels: list[str] | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """Where a spacecraft or body was: position, velocity, distance and light time.

    Stores x, y, z (km), vx, vy, vz (km/s), distance (km and AU), longitude and latitude
    (deg, in the frame) and one-way light time (s) per time. Uses SPICE kernels (fetched
    from NAIF and cached) and, when no kernel covers the request, the archives'
    heliocentric position datasets (hourly) or, for Earth orbiters (MMS, THEMIS, Cluster,
    Van Allen Probes, Geotail, GOES, Polar...), SSCWeb's orbits and the missions' orbit
    datasets; the sources, notes and citations say which.

    Args:
        target: Spacecraft or body, e.g. PSP, Solar Orbiter, STEREO-A, MMS1, THEMIS-A,
            Earth, Mars, or a NAIF id with a user kernel.
        time_range: Time range, e.g. '2021-04-29' or '2022-02-20 to 2022-03-01'.
        frame: J2000, HCI, HEE, HAE, HEEQ, GSE, GSM, RTN (the observer's; the target's
            from the Sun) or a body-fixed IAU_<BODY> frame (default HCI; GSE for Earth
            orbiters).
        observer: Body the position is seen from (default: Sun; Earth for GSE/GSM; the
            body itself for IAU_<BODY>).
        step: Time between samples, e.g. '10min', '1h', '1D' (default: at most ~1000).
        kernels: Paths of the user's own SPICE kernels to load too.
        label: Label to store under (default ephemeris.TARGET.FRAME[.from_OBSERVER]).
    """
    seen = resolve_body(target)
    frame = frames.check_frame(frame or _default_frame(seen))
    span = parse_time_range(time_range)
    origin = resolve_body(observer or _default_observer(frame))
    with _locator(ctx, kernels) as locator:
        track = locator.track(seen, origin, sample_times(span, step), frame)
    suffix = [] if observer is None else [f"from_{origin.key}"]
    name = _label(label, seen.key, frame, *suffix)
    meaning = frames.FRAME_HELP.get(frame, "body-fixed")
    description = f"{seen.key} seen from {origin.key} in {frame} ({meaning})"
    return _store(
        ctx,
        name,
        track.table(),
        UNITS,
        description,
        span,
        track.notes,
        track.sources,
        track.citations,
    )


def _heliocentric_tracks(
    ctx: ToolContext, names: list[str], span: TimeRange, step: str | None, frame: str
) -> tuple[list[Body], list[Track]]:
    bodies = [resolve_body(n) for n in names]
    if len({b.key for b in bodies}) != len(bodies):
        raise UserError("Name different bodies: the same one was given twice.")
    times = sample_times(span, step)
    sun = resolve_body("SUN")
    with _locator(ctx, None) as locator:
        return bodies, [locator.track(b, sun, times, frame) for b in bodies]


@tool(
    "data_ops_compute",
    produces=Produces(result_field="label"),
    time_args=("time_range",),
    result=EntrySummary,
    public=True,
)
def spacecraft_separation(
    ctx: ToolContext,
    first: str,
    second: str,
    time_range: str,
    observer: str = "SUN",
    within_deg: float | None = None,
    step: str | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """Angle between two spacecraft or bodies seen from an observer, and alignment periods.

    Stores the angle at the observer (deg) and, in HEEQ (Stonyhurst), the longitude and
    latitude differences (second minus first, deg) per time. With within_deg, the answer
    lists the periods when the angle stayed within it: conjunctions (observer Sun: radial
    alignments; observer Earth: solar conjunctions seen from Earth).

    Args:
        first: First spacecraft or body, e.g. PSP.
        second: Second spacecraft or body, e.g. Earth or STEREO-A.
        time_range: Time range, e.g. '2023' or '2021-04-01 to 2021-05-01'.
        observer: Body the angle is measured at (default Sun).
        within_deg: Also list the periods when the angle is at most this (deg).
        step: Time between samples, e.g. '1h', '1D' (default: at most ~1000).
        label: Label to store under (default ephemeris.separation.FIRST.SECOND).
    """
    span = parse_time_range(time_range)
    names = [first, second] if resolve_body(observer).key == "SUN" else [first, second, observer]
    bodies, tracks = _heliocentric_tracks(ctx, names, span, step, "HEEQ")
    a, b = tracks[0].position, tracks[1].position
    if len(tracks) == 3:
        a, b = a - tracks[2].position, b - tracks[2].position
    one, two = tracks[0].table(), tracks[1].table()
    angles = angle_between(a, b)
    table = pd.DataFrame(
        {
            "angle": angles,
            "delta_longitude": ((two["longitude"] - one["longitude"] + 180) % 360 - 180).to_numpy(),
            "delta_latitude": (two["latitude"] - one["latitude"]).to_numpy(),
        },
        index=tracks[0].times,
    )
    notes = list(dict.fromkeys(n for t in tracks for n in t.notes))
    sources = list(dict.fromkeys(s for t in tracks for s in t.sources))
    where = resolve_body(observer).key
    name = _label(label, "separation", bodies[0].key, bodies[1].key)
    description = f"Angle between {bodies[0].key} and {bodies[1].key} seen from {where}"
    result = _store(
        ctx, name, table, dict.fromkeys(table.columns, "deg"), description, span, notes, sources
    )
    result["smallest_angle_deg"] = round(float(np.nanmin(angles)), 3)
    result["largest_angle_deg"] = round(float(np.nanmax(angles)), 3)
    if within_deg is not None:
        periods = periods_within(tracks[0].times, angles, within_deg)
        result["periods"] = [p.to_dict() for p in periods]
        if not periods:
            result["notes"] = [*notes, f"The angle never fell to {within_deg} deg or less."]
    return result


def _speeds(ctx: ToolContext, wind_speed: float | str, times: pd.DatetimeIndex) -> np.ndarray:
    """Wind speed (km/s) at `times`: a number, or a stored speed series interpolated."""
    if not isinstance(wind_speed, str):
        if not 100 <= wind_speed <= 3000:
            raise UserError(f"Solar wind speed {wind_speed} km/s is implausible; give 200-1000.")
        return np.full(len(times), float(wind_speed))
    frame = frame_of(ctx.store.get(wind_speed))
    if not isinstance(frame.index, pd.DatetimeIndex):
        raise UserError(f"{wind_speed} is not a time series of solar wind speed.")
    values = np.asarray(pd.to_numeric(frame.iloc[:, 0], errors="coerce"), dtype=float)
    plausible = np.isfinite(values) & (values > 100) & (values < 3000)
    if not plausible.any():
        raise UserError(f"{wind_speed} holds no plausible solar wind speeds (km/s).")
    known = seconds_since_epoch(pd.DatetimeIndex(frame.index))[plausible]
    return np.interp(seconds_since_epoch(times), known, values[plausible])


@tool(
    "data_ops_compute",
    produces=Produces(result_field="label"),
    time_args=("time_range",),
    reads=("wind_speed",),
    result=EntrySummary,
    public=True,
)
def magnetic_connectivity(
    ctx: ToolContext,
    bodies: list[str],
    time_range: str,
    wind_speed: float | str = 400.0,
    tolerance_deg: float = 10.0,
    step: str | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """Parker-spiral magnetic connectivity of spacecraft/bodies, with a configuration figure.

    For each body, the Stonyhurst (HEEQ) longitude of the footpoint on the source surface
    (2.5 solar radii) of the Parker spiral through it, for the given or measured wind
    speed; and, per time, the largest footpoint separation. Bodies are called connected
    when their footpoints lie within tolerance_deg. Draws the configuration (the Sun,
    the bodies and their spirals, seen from solar north) as the current figure.

    Args:
        bodies: Two or more spacecraft or bodies, e.g. ['Solar Orbiter', 'PSP', 'Earth'].
        time_range: Time range, e.g. '2022-02-25'.
        wind_speed: Solar wind speed in km/s, or the label of a stored speed series (its
            values, interpolated in time, are used for every body).
        tolerance_deg: Footpoints closer than this are called connected (deg).
        step: Time between samples, e.g. '1h' (default: at most ~1000).
        label: Label to store under (default ephemeris.connectivity.BODY1.BODY2...).
    """
    if len(bodies) < 2:
        raise UserError("Name at least two spacecraft or bodies to compare their connectivity.")
    span = parse_time_range(time_range)
    found, tracks = _heliocentric_tracks(ctx, bodies, span, step, "HEEQ")
    speeds = _speeds(ctx, wind_speed, tracks[0].times)
    table = pd.DataFrame(index=tracks[0].times)
    units: dict[str, str] = {}
    for body, track in zip(found, tracks, strict=True):
        rows = track.table()
        table[f"{body.key}_longitude"] = rows["longitude"].to_numpy()
        table[f"{body.key}_footpoint"] = footpoint_longitude(
            rows["longitude"].to_numpy(), rows["distance"].to_numpy(), speeds
        )
        units[f"{body.key}_longitude"] = units[f"{body.key}_footpoint"] = "deg"
    footpoints = table[[f"{b.key}_footpoint" for b in found]].to_numpy()
    spread = _spread(footpoints)
    table["footpoint_spread"] = spread
    table["wind_speed"] = speeds
    units.update(footpoint_spread="deg", wind_speed="km/s")
    notes = list(dict.fromkeys(n for t in tracks for n in t.notes))
    sources = list(dict.fromkeys(s for t in tracks for s in t.sources))
    keys = [b.key for b in found]
    name = _label(label, "connectivity", *keys)
    description = f"Parker-spiral footpoints (HEEQ longitude) of {', '.join(keys)}"
    result = _store(ctx, name, table, units, description, span, notes, sources)
    middle = len(table) // 2
    within = periods_within(tracks[0].times, spread, tolerance_deg)
    result["connected_periods"] = [p.to_dict() for p in within]
    result["at"] = pd.Timestamp(table.index[middle]).isoformat()
    result["footpoints_deg"] = {
        k: round(float(table[f"{k}_footpoint"].iloc[middle]), 1) for k in keys
    }
    result["connected"] = bool(table["footpoint_spread"].iloc[middle] <= tolerance_deg)
    placed = [
        Placed(
            body.key,
            float(track.table()["longitude"].iloc[middle]),
            float(np.linalg.norm(track.position[middle])),
            float(footpoints[middle, i]),
            float(speeds[middle]),
        )
        for i, (body, track) in enumerate(zip(found, tracks, strict=True))
    ]
    figure = ctx.plot.render(configuration_figure(placed, result["at"]))
    result["figure"] = figure.summary()
    return result


def _spread(longitudes: np.ndarray) -> np.ndarray:
    """Per row, the largest angular distance between any two longitudes (deg)."""
    widest = np.zeros(len(longitudes))
    for i in range(longitudes.shape[1]):
        for j in range(i + 1, longitudes.shape[1]):
            gap = np.abs((longitudes[:, i] - longitudes[:, j] + 180) % 360 - 180)
            widest = np.maximum(widest, gap)
    return widest


_FRAME_WORDS = re.compile(r"HEEQ|HEE|HAE|HCI|HGI|GSE|GSM|RTN|J2000")
"""Frame names as archives write them inside parameter names (BGSEc, B_RTN, BGSM)."""


def _frame_of_entry(entry: DataEntry) -> str:
    words = " ".join(str(x) for x in (entry.label, entry.source_parameter, entry.description) if x)
    found = {frames.check_frame(m) for m in _FRAME_WORDS.findall(words)}
    if len(found) != 1:
        raise UserError(
            f"Cannot tell which frame {entry.label} is in"
            + (f" (it mentions {', '.join(sorted(found))})" if found else "")
            + ": give from_frame."
        )
    return found.pop()


@tool(
    "data_ops_compute",
    produces=Produces(result_field="label"),
    reads=("label",),
    result=EntrySummary,
    public=True,
)
def transform_frame(
    ctx: ToolContext,
    label: str,
    to_frame: str,
    from_frame: str | None = None,
    spacecraft: str | None = None,
    columns: list[str] | None = None,
    output_label: str | None = None,
) -> dict[str, Any]:
    """Rotate a stored vector (e.g. a magnetic field) into another frame.

    Works for J2000, HCI, HEE, HAE, HEEQ, GSE, GSM and RTN (the spacecraft's, located
    by ephemeris). The source frame is read from the label or description (e.g. BGSEc is
    GSE) unless from_frame says it. Only directions change; magnitudes are kept.

    Args:
        label: Label of a stored vector with three components.
        to_frame: Frame to rotate into, e.g. GSM.
        from_frame: Frame the vector is in (default: read from its name).
        spacecraft: For RTN (either side): the spacecraft whose RTN frame it is.
        columns: The three component columns, when the entry has more than three.
        output_label: Label to store under (default LABEL_in_FRAME).
    """
    entry = ctx.store.get(label)
    table = frame_of(entry)
    chosen = columns or [str(c) for c in table.columns]
    if len(chosen) != 3 or any(c not in table.columns for c in chosen):
        raise UserError(
            f"{label} has columns {[str(c) for c in table.columns]}: name its three vector "
            "components with columns."
        )
    if not isinstance(table.index, pd.DatetimeIndex):
        raise UserError(f"{label} is not a time series; frames change with time.")
    source = frames.check_frame(from_frame) if from_frame else _frame_of_entry(entry)
    target = frames.check_frame(to_frame)
    times = pd.DatetimeIndex(table.index)
    center = None
    notes: list[str] = []
    if "RTN" in (source, target):
        if spacecraft is None:
            raise UserError("RTN is a spacecraft's frame: name the spacecraft.")
        with _locator(ctx, None) as locator:
            sc = locator.heliocentric(resolve_body(spacecraft), times)
        center = sc.states[:, :3]
        notes += [*locator.notes, f"RTN of {resolve_body(spacecraft).key} from {sc.source}."]
    into = frames.rotation(target, times, center)
    out_of = np.transpose(frames.rotation(source, times, center), (0, 2, 1))
    values = table[chosen].to_numpy(float)
    rotated = frames.rotate(frames.rotate(values, out_of), into)
    names = [f"{target}_{axis}" for axis in ("RTN" if target == "RTN" else "xyz")]
    result_table = pd.DataFrame(rotated, index=times, columns=names)
    unit = next((entry.units[c] for c in chosen if entry.units.get(c)), "")
    name = output_label or f"{label}_in_{target}"
    description = f"{entry.description or label} rotated from {source} to {target}"
    stored = DataEntry(
        name,
        result_table,
        units=dict.fromkeys(names, unit),
        description=description,
        source_dataset=entry.source_dataset,
        source_parameter=entry.source_parameter,
        fetched_range=entry.fetched_range,
        meta={**entry.meta, "notes": [*entry.meta.get("notes", []), *notes]},
    )
    ctx.store.put(stored)
    return {**entry_summary(stored), "notes": notes}


EPHEMERIS_TOOLS = [get_ephemeris, spacecraft_separation, magnetic_connectivity, transform_frame]
