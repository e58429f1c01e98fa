"""Offline skill: planetary requests ("Juno magnetometer at Jupiter 2016-08-27") from PDS.

A request is taken when it names a mission of the planetary vocabulary
(`vocabulary.planetary`) of which the CDAWeb catalog has no science data (Juno, Galileo,
Mars Express...), or any of its missions with the word PDS, a planet-centred frame (KSM,
MSO...), or a planetary target (Jupiter, Saturn, Titan...) at a time CDAWeb holds none
of that mission's data for: "Cassini magnetometer 2004-07-01" and "Voyager 1 field at
Saturn 1980-11-12" stay CDAWeb's (it serves them then), "Cassini MAG at Saturn
2005-02-15" is PDS's (CDAWeb's Cassini field ends in 2004). Then the datasets of the
"pds" source are searched (``search_datasets`` through the funnel, restricted to that
mission) with the request's words and its targets' words; the first whose coverage holds
the range and whose fields are known is fetched (``fetch_data`` with ``source="pds"``):
the magnetic field components (nT) when the request is about the field, else the fields
its words name, else its first few; and plotted. Every step is a traced tool call, so
the session log, its pipeline and the citation (NASA PDS PPI) are as for any fetch.

Without a time range the reply asks for one and says the dataset's coverage; with no
PDS dataset covering the range it says which datasets exist and when.

Imports `agents`, `sources.pds.catalog`, `timerange` and `vocabulary` modules.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from xhelio.agents.turn import AssistantReply
from xhelio.catalog.model import DatasetInfo
from xhelio.errors import UserError, XhelioError
from xhelio.sources.pds.catalog import load_catalog
from xhelio.timerange import TimeRange, find_time
from xhelio.vocabulary.planetary import PlanetaryMission, load_planetary

if TYPE_CHECKING:
    from xhelio.agents.offline.skills import SkillHost

__all__ = ["answer"]

_MAGNETIC = re.compile(r"\b(mag|magnetometer|magnetic|fgm|imf|b[xyzrtn]?|\|b\|)\b", re.I)
_FILLER = re.compile(
    r"\b(plot|show|me|the|at|on|in|for|of|from|data|and|please|fetch|get|during|near|"
    r"around|what|was|were|is)\b",
    re.IGNORECASE,
)
_PDS = re.compile(r"\bPDS\b|\bPPI\b", re.IGNORECASE)
_MAX_PARAMETERS = 4
_DAY = timedelta(days=1)


def _claimed(host: SkillHost, request: str) -> PlanetaryMission | None:
    vocabulary = load_planetary()
    named = vocabulary.mission_in(request)
    if named is None:
        return None
    mission, words = named
    if _PDS.search(request) or vocabulary.planet_frames.search(request):
        return mission
    catalog = host.workspace.context.catalog
    try:
        science = catalog.browse(catalog.mission(words).id)
    except UserError:
        science = []
    if not science:  # no CDAWeb science data of it (Galileo has only ephemerides there)
        return mission
    # "Pioneer Venus solar wind": the planet in the mission's own name is no target.
    if not vocabulary.targets_in(request.replace(words, " ")):
        return None
    # A body named: CDAWeb's own data when it has the mission's data for the time asked.
    wanted = find_time(request).range
    if wanted is not None and any(_covers(info, wanted) for info in science):
        return None
    return mission


def _query(text: str, mission: PlanetaryMission) -> str:
    """Search words of a request whose time words are blanked out."""
    targets = " ".join(t.query for t in load_planetary().targets_in(text))
    words = " ".join(_FILLER.sub(" ", text).split())
    if _MAGNETIC.search(text):
        words += " magnetometer"
    return f"{words} {targets} {mission.names[0]}".strip()


def _covers(info: DatasetInfo, wanted: TimeRange) -> bool:
    """Whether the catalog's coverage (whole days) holds the range; unknown is no."""
    if info.start is None or info.stop is None:
        return False
    return info.start < wanted.end and info.stop + _DAY > wanted.start


def _parameters(info: DatasetInfo, request: str) -> list[str]:
    data = [p for p in info.data_parameters if p.units.lower() not in {"km", "au", "deg"}]
    if _MAGNETIC.search(request):
        field = [p.name for p in data if p.units.lower() == "nt"]
        if field:
            return field[:_MAX_PARAMETERS]
    words = set(re.findall(r"[a-z0-9]+", request.lower()))
    named = [p.name for p in data if set(re.findall(r"[a-z0-9]+", p.name.lower())) & words]
    return (named or [p.name for p in data])[:_MAX_PARAMETERS]


def _candidates(host: SkillHost, query: str, mission: PlanetaryMission) -> list[DatasetInfo]:
    args = {"query": query, "mission": mission.mission_id, "limit": 50}
    found = host.call_tool("search_datasets", args).to_dict().get("results") or []
    catalog = load_catalog()
    infos = [catalog.get(str(r["dataset_id"])) for r in found if r.get("source") == "pds"]
    known = [d.info for d in infos if d is not None and d.info.data_parameters]
    if _MAGNETIC.search(query):  # the field asked for: datasets holding it (nT) first
        known.sort(key=lambda i: not any(p.units.lower() == "nt" for p in i.data_parameters))
    return known


def answer(host: SkillHost, request: str) -> AssistantReply | None:
    """Fetch and plot the PDS data a planetary request names; None when not one."""
    mission = _claimed(host, request)
    if mission is None:
        return None
    try:
        load_catalog()
    except XhelioError as exc:
        return AssistantReply(f"{mission.names[0]} data comes from NASA PDS: {exc.message}")
    when = find_time(request)  # the one time grammar: encounters by name, clock ranges...
    timeless = request
    for start, end in when.spans:
        timeless = timeless[:start] + " " * (end - start) + timeless[end:]
    query = _query(timeless, mission)
    candidates = _candidates(host, query, mission)
    if not candidates:
        return AssistantReply(
            f"No PDS PPI dataset of {mission.names[0]} matches '{query}'. "
            "`xhelio catalog search` lists what PDS has.",
            clarification=True,
        )
    if when.range is None and when.error:
        return AssistantReply(when.error, clarification=True)
    if when.range is None:
        best = candidates[0]
        return AssistantReply(
            f"For which time? {best.id} ({best.title}) covers {_span(best)}.",
            clarification=True,
        )
    covering = [info for info in candidates if _covers(info, when.range)]
    if not covering:
        listed = "; ".join(f"{i.id}: {_span(i)}" for i in candidates[:3])
        return AssistantReply(
            f"No PDS dataset of {mission.names[0]} matching '{query}' covers "
            f"{when.range}. Closest: {listed}.",
            clarification=True,
        )
    return _fetch_and_plot(host, covering[0], request, when.text or str(when.range))


def _span(info: DatasetInfo) -> str:
    start = info.start.date().isoformat() if info.start else "?"
    stop = info.stop.date().isoformat() if info.stop else "?"
    return f"{start} to {stop}"


def _fetch_and_plot(
    host: SkillHost, info: DatasetInfo, request: str, time_text: str
) -> AssistantReply:
    labels: list[str] = []
    lines = [f"From NASA PDS PPI: {info.id} ({info.title})."]
    for name in _parameters(info, request):
        args = {"dataset_id": info.id, "parameter_id": name, "time_range": time_text}
        result: dict[str, Any] = host.call_tool("fetch_data", {**args, "source": "pds"}).to_dict()
        if result.get("status", "ok") != "ok":
            lines.append(f"{name}: {result.get('message', 'could not be fetched')}")
            continue
        labels.append(str(result["label"]))
        units = f" {result['units']}" if result.get("units") else ""
        lines.append(f"Fetched {result['label']}: {result.get('points', '?')} points{units}.")
    if not labels:
        return AssistantReply("\n".join(lines), error="nothing could be fetched from PDS")
    figure = {
        "data": [{"type": "scatter", "data_label": label} for label in labels],
        "layout": {"title": {"text": info.title}},
    }
    plotted = host.call_tool("render_plotly_json", {"figure": figure}).to_dict()
    if plotted.get("status", "ok") == "ok":
        lines.append(f"Plotted {len(labels)} series.")
    else:
        lines.append(f"The plot failed: {plotted.get('message', '')}")
    return AssistantReply("\n".join(lines))
