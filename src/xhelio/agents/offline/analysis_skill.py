"""Offline skill: the standard analysis methods asked for in words.

"minimum variance on the Wind field from 10:15 to 10:25 on 2015-03-17", "θBn of the
shock at 2015-03-17 04:00 from Wind", "PSD of the ACE field on 2020-01-01" and "plasma
beta from OMNI for March 2015": the series the request names are fetched as offline mode
reads them (`fetch_for`), the analysis tool runs on them, and the answer carries its
numbers, uncertainty, method and reference. Anything else is left to other readers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from xhelio.agents.offline.derived import derived_named
from xhelio.agents.turn import AssistantReply
from xhelio.language.spectra import is_spectral_density
from xhelio.timerange import find_time, format_time

if TYPE_CHECKING:
    from xhelio.agents.offline.skills import FetchedSeries, SkillHost

__all__ = ["answer"]

_MVA = re.compile(r"\b(?:minimum|maximum|min|max)[- ]variance\b|\bMVA[BE]?\b", re.I)
_SHOCK = re.compile(r"θ\s*_?\s*bn|\btheta[ _-]?bn\b|\bshock[- ]normal\b|\bshock\s+angle\b", re.I)
_PSD = re.compile(
    r"\bPSD\b|\bpower[- ]spectr(?:um|al[- ]density)\b|\bspectral[- ](?:density|index)\b", re.I
)
_PLASMA = re.compile(
    r"\bplasma[- ]beta\b|\bβ\b|\balfv[eé]n(?:ic)?[- ](?:speed|velocity|mach)\b|"
    r"\bmagnetosonic\b|\bmach[- ]numbers?\b|\bdynamic[- ]pressure\b|\bgyro[- ]?frequenc\w*|"
    r"\binertial[- ]lengths?\b",
    re.I,
)
_NUMBER = r"(\d+(?:\.\d+)?(?:e-?\d+)?)"
_BAND = re.compile(_NUMBER + r"\s*(?:-|to|and)\s*" + _NUMBER + r"\s*hz", re.I)
_CONSTRAINED = re.compile(r"constrain|⟨\s*bn\s*⟩|<\s*bn\s*>|bn\s*=\s*0|tangential", re.I)
_FIELD = re.compile(r"(?<!magnetic )\b(?:field|B|IMF)\b", re.I)
_MAGNETIC = re.compile(r"magnetic|\bIMF\b", re.I)
_NT = re.compile(r"^\s*nT\b", re.I)
_KMS = re.compile(r"km\s*/\s*s|km\s*s\^?-1", re.I)
_DENSITY = re.compile(r"cm|cc|/c\b", re.I)
_KELVIN = re.compile(r"^\s*(?:deg\s*)?K(?:elvin)?\s*$|\beV\b", re.I)
_QUANTITY = {
    "beta": re.compile(r"beta|β", re.I),
    "alfven_speed": re.compile(r"alfv[eé]n(?:ic)?[- ](?:speed|velocity)", re.I),
    "alfven_mach": re.compile(r"alfv[eé]n(?:ic)?[- ]mach", re.I),
    "magnetosonic_mach": re.compile(r"magnetosonic[- ]mach|mach", re.I),
    "dynamic_pressure": re.compile(r"dynamic[- ]pressure", re.I),
    "proton_gyrofrequency": re.compile(r"gyro", re.I),
    "ion_inertial_length": re.compile(r"inertial", re.I),
}


def _without(pattern: re.Pattern[str], text: str) -> str:
    rest = pattern.sub(" ", text)
    rest = re.sub(r"^\s*(?:of|on|for|from)\b", " ", rest.strip(), flags=re.I)
    return re.sub(r"\s+", " ", rest).strip()


def _field_words(text: str) -> str:
    """The text naming the magnetic field so the ordinary reader fetches it."""
    if _MAGNETIC.search(text):
        return text
    if _FIELD.search(text):
        return _FIELD.sub("magnetic field", text, count=1)
    return f"{text} magnetic field"


def _labels(host: SkillHost, fetched: FetchedSeries) -> list[tuple[str, str, int]]:
    """(label, unit, columns) of what was fetched."""
    out: list[tuple[str, str, int]] = []
    for label in fetched.labels:
        entry = host.workspace.context.store.get(label)
        unit = next((u for u in entry.units.values() if u), "")
        out.append((label, unit, len(entry.columns)))
    return out


def _pick(
    found: list[tuple[str, str, int]],
    unit: re.Pattern[str],
    vector: bool | None = None,
    strict: bool = False,
) -> str | None:
    """The first label in `unit`, preferring (or, if strict, requiring) vectors or not."""
    chosen = [f for f in found if unit.search(f[1])]
    if vector is not None:
        preferred = [f for f in chosen if (f[2] >= 3) == vector]
        chosen = preferred if strict else preferred or chosen
    return chosen[0][0] if chosen else None


def _reply(
    host: SkillHost,
    tool: str,
    args: dict[str, Any],
    fetched: FetchedSeries,
    lead: Callable[[dict[str, Any]], str] | None = None,
    note: str = "",
) -> AssistantReply:
    result = host.call_tool(tool, args)
    said = [*fetched.lines]
    if note:
        said.append(note)
    if not result.ok:
        said.append(f"The {tool.replace('_', ' ')} could not be computed: {result.error}")
        return AssistantReply("\n".join(said), error=result.error)
    payload = result.to_dict()
    if lead is not None:
        said.append(lead(payload))
    said.append(str(payload.get("answer", "")))
    failed = [c["detail"] for c in payload.get("checks", []) if not c.get("ok", True)]
    if failed:
        said.append("Checks: " + "; ".join(failed) + ".")
    assumptions = payload.get("assumptions", [])
    if assumptions:
        said.append("Assumed: " + "; ".join(str(a) for a in assumptions[:4]) + ".")
    stored = payload.get("stored", [])
    if stored:
        said.append("Stored: " + ", ".join(stored) + ".")
    return AssistantReply("\n".join(s for s in said if s))


def _nothing(fetched: FetchedSeries, what: str) -> AssistantReply:
    problems = " ".join(fetched.problems) or "nothing was fetched"
    return AssistantReply(f"No {what} to analyse: {problems}", error=problems)


def _variance(host: SkillHost, request: str) -> AssistantReply:
    fetched = host.fetch_for(_field_words(_without(_MVA, request)))
    field = _pick(_labels(host, fetched), _NT, vector=True, strict=True)
    if field is None:
        return _nothing(fetched, "magnetic field vectors")
    args: dict[str, Any] = {"label": field, "constrained": bool(_CONSTRAINED.search(request))}
    if fetched.time_range:
        args["time_range"] = fetched.time_range
    if re.search(r"\bmax(?:imum)?[- ]variance\b|\bMVAE\b", request, re.I):
        args["maximum"] = True
    return _reply(host, "minimum_variance", args, fetched)


def _shock(host: SkillHost, request: str) -> AssistantReply | None:
    found = find_time(request)
    if found.range is None:
        return None  # no time: not a request this skill can answer
    moment = found.range.start
    rest = _without(_SHOCK, request.replace(found.text or "", " "))
    rest = re.sub(r"\b(?:of\s+)?the\s+shock\b|\bat\b|\bfrom\b", " ", rest, flags=re.I).strip()
    around = timedelta(minutes=20)
    span = f"{format_time(moment - around)} to {format_time(moment + around)}"
    fetched = host.fetch_for(
        f"{rest} magnetic field, solar wind velocity and proton density {span}"
    )
    found_labels = _labels(host, fetched)
    field = _pick(found_labels, _NT, vector=True, strict=True)
    if field is None:
        return _nothing(fetched, "magnetic field vectors")
    velocity = _pick(found_labels, _KMS, vector=True, strict=True)
    density = _pick(found_labels, _DENSITY)
    method = re.search(r"\b(MC|VC|MX[123])\b", request)
    args: dict[str, Any] = {
        "field_label": field,
        "shock_time": format_time(moment),
        "method": method.group(1) if method else ("MX3" if velocity else "MC"),
    }
    if velocity:
        args["velocity_label"] = velocity
    if density:
        args["density_label"] = density
    note = "" if velocity else "No velocity vectors were found: magnetic coplanarity is used."
    return _reply(host, "shock_normal", args, fetched, note=note)


# "its PSD", "the PSD of that": the series already shown, completed from the session.
_ON_SCREEN = re.compile(r"\b(?:its|it|that|this|them|those|these)\b", re.I)


def _spectrum(host: SkillHost, request: str) -> AssistantReply:
    rest = _without(_PSD, request)
    fetched = host.fetch_for(rest if _ON_SCREEN.search(rest) else _field_words(rest))
    found = _labels(host, fetched)
    label = _pick(found, _NT, vector=True) or (found[0][0] if found else None)
    if label is None:
        return _nothing(fetched, "series")
    units = next((f[1] for f in found if f[0] == label), "")
    if is_spectral_density(units):
        return AssistantReply(
            "\n".join(
                [
                    *fetched.lines,
                    f"{label} is already a spectral density ({units}): shown as the catalog "
                    "holds it; no power spectral density was computed from it.",
                ]
            )
        )
    args: dict[str, Any] = {"label": label}
    band = _BAND.search(request)
    if band:
        args |= {"fmin_hz": float(band.group(1)), "fmax_hz": float(band.group(2))}
    return _reply(host, "power_spectrum", args, fetched)


def _plasma(host: SkillHost, request: str) -> AssistantReply | None:
    if derived_named(request):
        return None  # a derived quantity offline mode computes as a series (the `plan` package)
    rest = _without(_PLASMA, request)
    fetched = host.fetch_for(
        f"{rest} proton density, magnetic field magnitude, flow speed and proton temperature"
    )
    found = _labels(host, fetched)
    density = _pick(found, _DENSITY)
    if density is None:
        return _nothing(fetched, "density")
    args: dict[str, Any] = {"density_label": density}
    if (field := _pick(found, _NT, vector=False)) is not None:
        args["field_label"] = field
    if (speed := _pick(found, _KMS, vector=False)) is not None:
        args["velocity_label"] = speed
    if (temperature := _pick(found, _KELVIN)) is not None:
        args["temperature_label"] = temperature
    asked = next((name for name, words in _QUANTITY.items() if words.search(request)), None)

    def lead(payload: dict[str, Any]) -> str:
        value = payload.get("medians", {}).get(asked)
        if asked is None or value is None:
            return ""
        unit = payload.get("units", {}).get(asked, "")
        name = asked.replace("_", " ")
        stored = payload.get("stored", [])
        if stored:  # the asked quantity over time, as the ordinary reading would show it
            trace = {"type": "scatter", "data_label": f"{stored[0]}.{asked}", "name": name}
            figure = {"data": [trace], "layout": {"title": {"text": name}}}
            host.call_tool("render_plotly_json", {"figure": figure})
        return f"{name.capitalize()}: median {value:.3g} {unit}".rstrip() + "."

    return _reply(host, "plasma_quantities", args, fetched, lead)


_SKILLS: tuple[tuple[re.Pattern[str], Callable[[SkillHost, str], AssistantReply | None]], ...] = (
    (_MVA, _variance),
    (_SHOCK, _shock),
    (_PSD, _spectrum),
    (_PLASMA, _plasma),
)


def answer(assistant: SkillHost, request: str) -> AssistantReply | None:
    """Run the analysis method the request names on the data it names; None otherwise."""
    for pattern, handler in _SKILLS:
        if pattern.search(request):
            return handler(assistant, request)
    return None
