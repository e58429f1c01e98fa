"""Offline skill: "where was X", "separation between X and Y", "were X and Y connected".

Claims a request only when it asks a geometry question in so many words (where / position
/ distance relative to another body, in a named frame, or as an ephemeris; separation /
angle between / conjunction / aligned; magnetically connected / connectivity) and names
the bodies the question needs; with no time it asks for one. A bare "where was X in T"
stays with the ordinary reading (the archive's position data, plotted), except for an
Earth orbiter (MMS, THEMIS, Cluster...): its answer is its geocentric orbit, in GSE unless
another frame is named.
Runs the ephemeris tools through the assistant's funnel, so the answers are stored
entries like any fetch, and says where the positions came from.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from xhelio.agents.turn import AssistantReply
from xhelio.ephemeris.archive import AU_KM
from xhelio.ephemeris.bodies import Body, bodies_in
from xhelio.ephemeris.frames import FRAMES
from xhelio.ephemeris.orbits import EARTH_RADIUS_KM
from xhelio.timerange import find_time

if TYPE_CHECKING:
    from xhelio.agents.offline.skills import SkillHost

__all__ = ["answer"]

_CONNECTED = re.compile(r"\b(magnetic(ally)?\s+connect\w*|connectivity|connected)\b", re.I)
_SEPARATION = re.compile(
    r"\b(separation|angle\s+between|angular\s+distance|conjunctions?|aligned|alignments?)\b",
    re.I,
)
_WITHIN = re.compile(r"\b(conjunctions?|aligned|alignments?|within)\b", re.I)
_POSITION = re.compile(
    r"\b(where\s+(was|were|is|are)|positions?\s+of|location\s+of|distance\s+(of|from|to|between)"
    r"|how\s+far|ephemeris|light\s+time)\b",
    re.I,
)
_GEOMETRY_ASKED = re.compile(r"\b(ephemeris|light\s+time|how\s+far)\b", re.I)
_RELATIVE = re.compile(r"\b(relative\s+to|from|seen\s+from|with\s+respect\s+to)\b", re.I)
_DEGREES = re.compile(r"within\s+(\d+(?:\.\d+)?)\s*(?:deg|degrees|°)", re.I)
_SPEED = re.compile(r"(\d{3,4})\s*km\s*/\s*s", re.I)
_FRAME = re.compile(r"\b(" + "|".join(FRAMES) + r")\b")


def answer(assistant: SkillHost, request: str) -> AssistantReply | None:
    """Answer a geometry question offline, or None when the request is not one."""
    bodies = bodies_in(request)
    if _CONNECTED.search(request) and len(bodies) >= 2:
        kind = "connectivity"
    elif _SEPARATION.search(request) and len(bodies) >= 2:
        kind = "separation"
    elif (
        _POSITION.search(request)
        and bodies
        and bodies[0].key != "SUN"
        and _geometric(request, bodies[0])
    ):
        kind = "position"
    else:
        return None
    time = find_time(request)
    if time.range is None:
        return AssistantReply(
            time.error
            or f"For which time? Say a date or range for the {kind} question, "
            "e.g. 'on 2021-04-29' or 'in 2023'.",
            clarification=True,
        )
    span = str(time.range)
    if kind == "connectivity":
        return _connectivity(assistant, request, bodies, span)
    if kind == "separation":
        return _separation(assistant, request, bodies, span)
    return _position(assistant, request, bodies, span)


def _geometric(request: str, target: Body) -> bool:
    """A position asked as geometry: an orbiter's, relative to a body, in a frame, ephemeris.

    A bare "where was Wind in 2018" is left to the ordinary reading, which plots the
    archive's position data; a bare "where was MMS1" is answered (its geocentric orbit).
    """
    relative = _RELATIVE.search(request) is not None and len(bodies_in(request)) > 1
    asked = _FRAME.search(request) is not None or bool(_GEOMETRY_ASKED.search(request))
    return relative or asked or _orbits_earth(target)


def _orbits_earth(body: Body) -> bool:
    """An Earth orbiter: its whereabouts are its geocentric orbit."""
    return body.is_earth_orbiter


def _said(payload: dict[str, Any]) -> list[str]:
    lines = [f"Positions from: {', '.join(payload.get('sources', [])) or 'unknown'}."]
    return lines + [f"Note: {n}" for n in payload.get("notes", [])]


def _failed(error: str | None) -> AssistantReply:
    text = error or "The geometry could not be computed."
    return AssistantReply(text, error=text)


def _connectivity(host: SkillHost, request: str, bodies: list[Body], span: str) -> AssistantReply:
    speed = _SPEED.search(request)
    args: dict[str, Any] = {"bodies": [b.key for b in bodies], "time_range": span}
    if speed is not None:
        args["wind_speed"] = float(speed.group(1))
    result = host.call_tool("magnetic_connectivity", args)
    if result.status == "error":
        return _failed(result.error)
    data = result.payload
    feet = ", ".join(f"{k} {v:.1f} deg" for k, v in data["footpoints_deg"].items())
    verdict = "were" if data["connected"] else "were not"
    wind = args.get("wind_speed", 400.0)
    lines = [
        f"At {data['at']}, {' and '.join(args['bodies'])} {verdict} magnetically connected "
        f"(Parker spiral, {wind:.0f} km/s; footpoints within 10 deg counts as connected).",
        f"Footpoint longitudes (HEEQ, source surface 2.5 Rsun): {feet}.",
    ]
    periods = data.get("connected_periods") or []
    if periods:
        lines.append(
            "Connected: " + "; ".join(f"{p['start']} to {p['end']}" for p in periods) + "."
        )
    lines += [f"Stored as {data['label']}; the configuration is drawn.", *_said(data)]
    return AssistantReply("\n".join(lines))


def _separation(host: SkillHost, request: str, bodies: list[Body], span: str) -> AssistantReply:
    args: dict[str, Any] = {"first": bodies[0].key, "second": bodies[1].key, "time_range": span}
    if len(bodies) > 2 and _RELATIVE.search(request):
        args["observer"] = bodies[2].key
    degrees = _DEGREES.search(request)
    if degrees is not None:
        args["within_deg"] = float(degrees.group(1))
    elif _WITHIN.search(request):
        args["within_deg"] = 10.0
    result = host.call_tool("spacecraft_separation", args)
    if result.status == "error":
        return _failed(result.error)
    data = result.payload
    seen = args.get("observer", "SUN").title()
    lines = [
        f"Angle between {args['first']} and {args['second']} seen from {seen}, {span}: "
        f"{data['smallest_angle_deg']:.1f} to {data['largest_angle_deg']:.1f} deg."
    ]
    if "within_deg" in args:
        periods = data.get("periods") or []
        listed = "; ".join(
            f"{p['start']} to {p['end']} (closest {p['smallest_angle_deg']:.1f} deg at {p['at']})"
            for p in periods
        )
        lines.append(f"Within {args['within_deg']:g} deg: {listed or 'never'}.")
    lines += [f"Stored as {data['label']}.", *_said(data)]
    return AssistantReply("\n".join(lines))


def _position(host: SkillHost, request: str, bodies: list[Body], span: str) -> AssistantReply:
    target, observers = bodies[0], bodies[1:] if _RELATIVE.search(request) else []
    frame_match = _FRAME.search(request)
    lines: list[str] = []
    for observer in observers or [None]:
        near = observer is None or _orbits_earth(observer)
        geocentric = _is_earth(observer) or (near and _orbits_earth(target))
        frame = frame_match.group(1) if frame_match else ("GSE" if geocentric else "HCI")
        args: dict[str, Any] = {"target": target.key, "time_range": span, "frame": frame}
        if observer is not None:
            args["observer"] = observer.key
        result = host.call_tool("get_ephemeris", args)
        if result.status == "error":
            return _failed(result.error)
        data = result.payload
        entry = host.workspace.context.store.get(data["label"])
        first = entry.data.iloc[0]
        seen = _seen_from(observer, frame)
        lines.append(
            f"{target.key} seen from {seen} in {frame} at {data.get('start')}: "
            f"{_distance(first['distance'])}, longitude {first['longitude']:.2f} deg, "
            f"latitude {first['latitude']:.2f} deg (x, y, z = {first['x']:.4g}, "
            f"{first['y']:.4g}, {first['z']:.4g} km). Stored as {data['label']}."
        )
        lines += _said(data)
    return AssistantReply("\n".join(dict.fromkeys(lines)))


def _seen_from(observer: Body | None, frame: str) -> str:
    """The observer as the tool chose it: the Earth for GSE/GSM, else the Sun."""
    if observer is not None:
        return observer.key
    return "EARTH" if frame in ("GSE", "GSM") else "the Sun"


def _distance(km: float) -> str:
    """A distance in Earth radii near the Earth, else in AU."""
    if km < 0.01 * AU_KM:
        return f"{km / EARTH_RADIUS_KM:.2f} Earth radii ({km:.0f} km)"
    return f"{km / AU_KM:.4f} AU"


def _is_earth(body: Body | None) -> bool:
    return body is not None and body.key == "EARTH"
