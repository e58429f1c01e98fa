"""Offline event requests: import a list, find storms/shocks/SIRs, superposed epoch.

Understood (anything else returns None so the ordinary reading runs):
* "import events from events.csv [as NAME] [and save it]";
* "find geomagnetic storms in 2003", "storms in 2015 with Dst below -100 nT", "SYM-H
  storms in March 2015": fetch Dst (or SYM-H) for the time, detect, list them;
* "list shocks in Wind data for March 2015": fetch |B|, speed, density, temperature of
  the mission (OMNI when none is named), detect fast shocks;
* "find stream interaction regions (SIRs, CIRs, stream interfaces) in 2008": the same
  inputs, detect SIRs and their stream interfaces (Jian et al. 2006 signatures);
* "superposed epoch of OMNI Bz for the storms in 2015 with Dst below -100 nT" (or "for
  the 2015 storms in my list", or a shipped/session list): the events, then the quantity
  over their span, then the epoch analysis and its figure.
Everything runs as tool calls through the session's funnel, so it is traced and replayable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xhelio.agents.turn import AssistantReply

if TYPE_CHECKING:
    from xhelio.agents.offline.skills import SkillHost

__all__ = ["answer", "parse_event_request"]

_FILE = r"(?P<path>[^\s'\"]+\.(?:csv|txt|xml|vot|votable))"
_IMPORT = re.compile(
    r"\b(?:import|load|read|open)\b[^.]*?\b(?:events?|event\s+list|time\s*table|catalog(?:ue)?)\b"
    r"[^.]*?\bfrom\s+['\"]?" + _FILE,
    re.I,
)
_IMPORT_FILE = re.compile(r"\bimport\s+['\"]?" + _FILE, re.I)
_AS = re.compile(r"\b(?:as|named|called)\s+['\"]?(?P<name>[A-Za-z0-9][\w.\-]*)", re.I)
_SAVE = re.compile(r"\b(?:and\s+)?save\b", re.I)
_SEA = re.compile(r"\bsuperposed[- ]epoch\b|\bepoch\s+analysis\b|\bcomposite\s+of\b", re.I)
_SEA_PARTS = re.compile(
    r"\b(?:superposed[- ]epoch(?:\s+analysis)?|epoch\s+analysis|composite)\s+(?:of\s+)?"
    r"(?P<quantity>.+?)\s+(?:for|around|over|across)\s+(?:the\s+|all\s+|my\s+)?(?P<events>.+)$",
    re.I,
)
_STORMS = re.compile(r"\b(?:geomagnetic\s+|magnetic\s+)?storms?\b", re.I)
_SHOCKS = re.compile(r"\b(?:interplanetary\s+|ip\s+)?shocks?\b", re.I)
_STREAMS = re.compile(
    r"\bstream\s+(?:interaction\s+regions?|interactions?|interfaces?)\b"
    r"|\bco-?rotating\s+interaction\s+regions?\b",
    re.I,
)
_STREAM_ACRONYM = re.compile(r"\b[SC]IRs?\b")  # case-sensitive: "sir" is a word
_ASK = re.compile(r"\b(?:find|list|detect|identify|show|which|search|look\s+for|get|were)\b", re.I)
_THRESHOLD = re.compile(
    r"\b(?:with\s+)?(?:dst|sym-?h|minimum)?\s*(?:below|under|less\s+than|lower\s+than|<=?|"
    r"beyond|deeper\s+than|stronger\s+than)\s*(?P<value>[-\u2212]?\d+(?:\.\d+)?)\s*nT\b",
    re.I,
)
_CLASS = {"intense": -100.0, "strong": -100.0, "moderate": -50.0, "weak": -30.0}
_CLASS_WORD = re.compile(r"\b(intense|strong|moderate|weak)\b", re.I)
_SAVED = re.compile(r"\b(?:my|saved)\b", re.I)
_TIME_CLAUSE = re.compile(r"\b(?:for|in|during|on|from|between|of)\b", re.I)
_MISSION = re.compile(
    r"\b(?:in|from|with|using)\s+(?P<mission>[A-Za-z][\w\- ]{0,20}?)\s+data\b", re.I
)


@dataclass(frozen=True)
class EventRequest:
    """What an event request asks for.

    Attributes:
        kind: 'import', 'storms', 'shocks', 'streams' or 'epoch'.
        path: For import: the file.
        name: The list's name when the request gives one.
        save: Save the list to the user's lists.
        threshold: For storms: the Dst/SYM-H threshold (nT).
        index: For storms: 'Dst' or 'SYM-H'.
        mission: For shocks: whose data.
        time_text: The time the request names, as written.
        quantity: For epoch: the quantity text, e.g. 'OMNI Bz'.
        events_text: For epoch: the events phrase.
    """

    kind: str
    path: str = ""
    name: str | None = None
    save: bool = False
    threshold: float = -50.0
    index: str = "Dst"
    mission: str = "OMNI"
    time_text: str = ""
    quantity: str = ""
    events_text: str = ""


def _time_text(text: str) -> str:
    """The last 'for/in/during ... <digits>' clause of `text`, without its preposition."""
    for match in reversed(list(_TIME_CLAUSE.finditer(text))):
        rest = text[match.end() :].strip(" .?!")
        if re.search(r"\d", rest):
            return rest
    return ""


def _threshold(text: str) -> tuple[float, str]:
    """The storm threshold a text asks for (default -50 nT) and the text without it."""
    found = _THRESHOLD.search(text)
    if found is not None:
        value = -abs(float(found["value"].replace("\u2212", "-")))
        return value, (text[: found.start()] + text[found.end() :]).strip()
    word = _CLASS_WORD.search(text)
    if word is not None and _STORMS.search(text):
        return _CLASS[word[1].lower()], text.replace(word[0], " ")
    return -50.0, text


def parse_event_request(request: str) -> EventRequest | None:
    """What `request` asks of event lists, or None when it is not an event request."""
    text = " ".join(request.split())
    if (found := _IMPORT.search(text) or _IMPORT_FILE.search(text)) is not None:
        named = _AS.search(text[found.end() :])
        return EventRequest(
            "import",
            path=found["path"],
            name=named["name"] if named else None,
            save=bool(_SAVE.search(text)),
        )
    if _SEA.search(text):
        parts = _SEA_PARTS.search(text)
        if parts is None:
            return None
        events_text = parts["events"].strip(" .?!")
        threshold, rest = _threshold(events_text)
        index = "SYM-H" if re.search(r"sym-?h", events_text, re.I) else "Dst"
        return EventRequest(
            "epoch",
            threshold=threshold,
            index=index,
            time_text=_time_text(" for " + rest),
            quantity=parts["quantity"].strip(),
            events_text=events_text,
        )
    if not _ASK.search(text):
        return None
    if _STORMS.search(text):
        threshold, rest = _threshold(text)
        index = "SYM-H" if re.search(r"sym-?h", text, re.I) else "Dst"
        return EventRequest("storms", threshold=threshold, index=index, time_text=_time_text(rest))
    streams = _STREAMS.search(text) or _STREAM_ACRONYM.search(text)
    if streams or _SHOCKS.search(text):
        mission = _MISSION.search(text)
        return EventRequest(
            "streams" if streams else "shocks",
            mission=mission["mission"].strip() if mission else "OMNI",
            time_text=_time_text(text),
        )
    return None


def answer(assistant: SkillHost, request: str) -> AssistantReply | None:
    """Run an event request with tools; None when `request` is not one."""
    asked = parse_event_request(request)
    if asked is None:
        return None
    if asked.kind == "import":
        args: dict[str, Any] = {"path": asked.path, "save": asked.save}
        if asked.name:
            args["name"] = asked.name
        return _listed(assistant, "import_events", args, "Imported")
    if asked.kind == "storms" and not asked.time_text:
        return _ask_time("storms", "in 2003")
    if asked.kind == "storms":
        return _storms(assistant, asked, f"storms-{_slug(asked.time_text)}")[0]
    if asked.kind in ("shocks", "streams"):
        return _solar_wind_events(assistant, asked)
    return _epoch(assistant, asked)


def _ask_time(what: str, example: str) -> AssistantReply:
    return AssistantReply(
        f"Which time should I look for {what} in? e.g. '{example}'.", clarification=True
    )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "events"


def _failed(what: str, result: Any) -> AssistantReply:
    message = f"{what} failed: {result.error}"
    return AssistantReply(message, error=message)


def _listed(assistant: SkillHost, tool: str, args: dict[str, Any], verb: str) -> AssistantReply:
    result = assistant.call_tool(tool, args)
    if not result.ok:
        return _failed(verb, result)
    return AssistantReply(_describe(result.payload, verb))


def _describe(summary: dict[str, Any], verb: str) -> str:
    lines = [f"{verb} {summary['count']} events as {summary['label']}."]
    method = summary.get("method") or {}
    if method:
        shown = ", ".join(
            f"{k}={v}" for k, v in method.items() if k not in ("reference", "definition")
        )
        lines.append(f"Method: {method.get('definition', '')} ({shown}).")
    if summary.get("citation"):
        lines.append(f"Reference: {summary['citation']}")
    for event in summary.get("events", [])[:20]:
        extras = ", ".join(f"{k} {v}" for k, v in event.items() if k not in ("start", "end"))
        lines.append(f"- {event['start']} to {event['end']}" + (f" ({extras})" if extras else ""))
    if summary["count"] > 20:
        lines.append(f"... and {summary['count'] - 20} more (see {summary['label']}).")
    return "\n".join(lines)


def _storms(
    assistant: SkillHost, asked: EventRequest, name: str
) -> tuple[AssistantReply, dict[str, Any] | None]:
    what = "SYM-H index" if asked.index == "SYM-H" else "OMNI Dst index"
    fetched = assistant.fetch_for(f"{what} {asked.time_text}")
    if not fetched.labels:
        problems = "; ".join(fetched.problems) or "nothing matched"
        return AssistantReply(
            f"Could not fetch {what} for {asked.time_text}: {problems}", error=problems
        ), None
    args = {"label": fetched.labels[0], "threshold": asked.threshold, "name": name}
    result = assistant.call_tool("detect_storms", args)
    if not result.ok:
        return _failed("Storm detection", result), None
    return AssistantReply(_describe(result.payload, "Found")), result.payload


_DETECTORS = {
    "shocks": ("detect_shocks", ("field", "speed", "density"), "shocks"),
    "streams": (
        "detect_stream_interactions",
        ("field", "speed", "density", "temperature"),
        "stream interactions",
    ),
}
"""kind: (tool, inputs it needs, what the events are called in a reply)."""


def _solar_wind_events(assistant: SkillHost, asked: EventRequest) -> AssistantReply:
    """Shocks or stream interactions: fetch |B|, V, n, T of the mission, then detect."""
    tool_name, needed, called = _DETECTORS[asked.kind]
    if not asked.time_text:
        return _ask_time(called, "for March 2015")
    labels: dict[str, str] = {}
    for key, words in (
        ("field", "magnetic field magnitude"),
        ("speed", "solar wind speed"),
        ("density", "proton density"),
        ("temperature", "proton temperature"),
    ):
        fetched = assistant.fetch_for(f"{asked.mission} {words} {asked.time_text}")
        if fetched.labels:
            labels[key] = fetched.labels[0]
    missing = [k for k in needed if k not in labels]
    if missing:
        return AssistantReply(
            f"Could not fetch {', '.join(missing)} of {asked.mission} for {asked.time_text}; "
            f"finding {called} needs {', '.join(needed)}.",
            error="missing inputs",
        )
    slug = "shocks" if asked.kind == "shocks" else "stream-interactions"
    args = {**labels, "name": f"{slug}-{_slug(asked.mission + ' ' + asked.time_text)}"}
    return _listed(assistant, tool_name, args, "Found")


def _epoch(assistant: SkillHost, asked: EventRequest) -> AssistantReply:
    epoch = "start"
    if _SAVED.search(asked.events_text) or not _STORMS.search(asked.events_text):
        loaded = assistant.call_tool("load_event_list", {"name": asked.events_text})
        if not loaded.ok:
            return _failed("Finding the event list", loaded)
        summary = loaded.payload
        intro = _describe(summary, "Using")
    elif not asked.time_text:
        return _ask_time("storms", "for the storms in 2015")
    else:
        reply, found = _storms(assistant, asked, f"storms-{_slug(asked.time_text)}")
        if found is None:
            return reply
        summary, intro, epoch = found, reply.text, "minimum_time"
    if not summary["count"]:
        return AssistantReply(intro + "\nNo events, so no superposed epoch.")
    span = f"{summary['first_start'][:10]} to {summary['last_end'][:10]}"
    # the events' own time when detected for it; else the span of the list's events
    when = asked.time_text if epoch == "minimum_time" else span
    fetched = assistant.fetch_for(f"{asked.quantity} {when}")
    if not fetched.labels:
        problems = "; ".join(fetched.problems) or "nothing matched"
        return AssistantReply(
            f"{intro}\nCould not fetch {asked.quantity}: {problems}", error=problems
        )
    args = {"events": summary["label"], "label": fetched.labels[0], "epoch": epoch}
    result = assistant.call_tool("superposed_epoch", args)
    if not result.ok:
        return _failed("Superposed epoch", result)
    done = result.payload
    zero = done.get("at_epoch_zero", {})
    return AssistantReply(
        f"{intro}\nSuperposed epoch of {fetched.labels[0]} around {done['events_with_data']} of "
        f"{done['events']} events (epoch = {epoch}, bins of {done['bin_minutes']:g} min, "
        f"{done['window_hours'][0]:g} to +{done['window_hours'][1]:g} h): at epoch 0 the mean is "
        f"{zero.get('mean')} and the median {zero.get('median')} (n = {zero.get('count')}). "
        f"Stored as {done['label']}; figure: {done['figure_file']}.\nMethod: {done['method']}."
    )
