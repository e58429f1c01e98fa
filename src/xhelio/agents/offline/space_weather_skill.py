"""Offline answers from NOAA SWPC and NASA DONKI, through the web API tools, without a model.

Takes a request only when it clearly asks for one of these products:

* the Kp forecast ("what did NOAA SWPC forecast for Kp yesterday", "Kp forecast");
* the current Kp index ("current Kp index", "latest planetary K index");
* the current solar wind at L1 ("solar wind right now");
* SWPC alerts ("NOAA space weather alerts this week");
* DONKI event lists, when DONKI is named: CMEs, flares, geomagnetic storms, SEP events,
  interplanetary shocks, notifications ("which CMEs did DONKI list in the week of
  2024-05-08", "solar flares last week from DONKI"). "That week"/"then" reuse the time
  of the data already in the session.

The time is read by the offline time grammar; DONKI gets the days it covers. The answer
lists what the service gave, says which rows are observed, estimated or predicted, and
ends with the sources (the composer). Registered as the ``space_weather`` offline skill.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pandas as pd

from xhelio.agents.turn import AssistantReply
from xhelio.timerange import TimeRange, find_time
from xhelio.tools.compose_tools import compose

if TYPE_CHECKING:
    from xhelio.agents.offline.skills import SkillHost

__all__ = ["answer"]

_MAX_LINES = 25


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_NOW = r"(?:current|currently|latest|now|right now|today'?s?|present|at the moment)"
_KP = r"(?:\bkp\b|planetary k[- ]index)"
_DONKI = _rx(r"\bdonki\b")
_THAT_TIME = _rx(r"\b(?:that|the same) (?:week|day|time|period|interval|month)\b|\bthen\b")


@dataclass(frozen=True)
class _Product:
    """One product a request may ask for: how it is recognised, called and told."""

    api: str
    endpoint: str
    cue: re.Pattern[str]
    tell: Callable[[pd.DataFrame, TimeRange | None], list[str]]
    needs_donki: bool = False


def _value(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _time(stamp: Any) -> str:
    return pd.Timestamp(stamp).strftime("%Y-%m-%d %H:%M UTC")


def _within(frame: pd.DataFrame, span: TimeRange | None) -> pd.DataFrame:
    if span is None or not isinstance(frame.index, pd.DatetimeIndex):
        return frame
    inside = (frame.index >= span.start) & (frame.index < span.end)
    return frame.loc[inside]


def _tell_forecast(frame: pd.DataFrame, span: TimeRange | None) -> list[str]:
    rows = _within(frame, span) if span is not None else frame[frame["observed"] == "predicted"]
    if rows.empty:
        return ["The SWPC Kp forecast product holds no rows for that time."]
    lines = [
        f"- {_time(t)}: Kp {_value(r['kp'])} ({r['observed']}"
        + (f", {r['noaa_scale']}" if _value(r.get("noaa_scale")) else "")
        + ")"
        for t, r in rows.iterrows()
    ]
    kinds = ", ".join(sorted({str(k) for k in rows["observed"]}))
    head = f"NOAA SWPC Kp per 3 hours ({kinds}); highest Kp {_value(rows['kp'].max())}:"
    return [head, *lines]


def _tell_kp(frame: pd.DataFrame, span: TimeRange | None) -> list[str]:
    rows = _within(frame, span)
    if rows.empty:
        return ["The SWPC planetary K index product holds no rows for that time."]
    last = rows.iloc[-1]
    text = f"Latest planetary Kp from NOAA SWPC: {_value(last['Kp'])} for the 3 hours from"
    lines = [f"{text} {_time(rows.index[-1])} (estimated from {_value(last['station_count'])} "]
    lines[0] += f"stations); highest over the product's span: {_value(rows['Kp'].max())}."
    return lines


def _tell_plasma(frame: pd.DataFrame, span: TimeRange | None) -> list[str]:
    rows = _within(frame, span).dropna(how="all")
    if rows.empty:
        return ["The SWPC solar wind product holds no valid rows for that time."]
    last = rows.iloc[-1]
    return [
        f"Solar wind at L1 (NOAA SWPC real-time, {_time(rows.index[-1])}): speed "
        f"{_value(last['speed'])} km/s, density {_value(last['density'])} cm^-3, temperature "
        f"{_value(last['temperature'])} K."
    ]


def _tell_alerts(frame: pd.DataFrame, span: TimeRange | None) -> list[str]:
    rows = _within(frame, span)
    if rows.empty:
        return ["SWPC issued no alerts, watches or warnings in that time."]
    lines = [f"NOAA SWPC issued {len(rows)} message{'s' * (len(rows) != 1)}:"]
    for t, r in rows.iloc[::-1].iterrows():
        lines.append(f"- {_time(t)} {r['product_id']}: {_headline(str(r['message']))}")
    return lines


_MESSAGE_HEADER = _rx(r"^\s*(?:space weather message code|serial number|issue time)\b")


def _headline(message: str) -> str:
    """The first line of an SWPC message after its header (code, serial, issue time)."""
    lines = (ln.strip() for ln in message.splitlines())
    return next((ln for ln in lines if ln and not _MESSAGE_HEADER.match(ln)), "")[:120]


_EVENT_FIELDS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "CME": (("speed", "", " km/s"), ("sourceLocation", "from ", ""), ("type", "type ", "")),
    "FLR": (("classType", "class ", ""), ("peakTime", "peak ", ""), ("sourceLocation", "at ", "")),
    "GST": (("maxKp", "max Kp ", ""),),
    "SEP": (("instruments", "seen by ", ""),),
    "IPS": (("location", "at ", ""),),
    "notifications": (("messageType", "", ""),),
}


def _event_teller(
    endpoint: str, one: str, noun: str
) -> Callable[[pd.DataFrame, TimeRange | None], list[str]]:
    def tell(frame: pd.DataFrame, _span: TimeRange | None) -> list[str]:
        lines = [f"NASA DONKI lists {len(frame)} {noun if len(frame) > 1 else one}:"]
        for t, r in frame.iterrows():
            bits = [
                f"{pre}{_value(r.get(name))}{post}"
                for name, pre, post in _EVENT_FIELDS[endpoint]
                if _value(r.get(name))
            ]
            ident = r.iloc[0]
            lines.append(f"- {_time(t)} {ident}" + (f": {', '.join(bits)}" if bits else ""))
        return lines

    return tell


_PRODUCTS: tuple[_Product, ...] = (
    _Product(
        "swpc",
        "kp_forecast",
        _rx(rf"{_KP}.*\b(?:forecast|predict)\w*|\b(?:forecast|predict)\w*\b.*{_KP}"),
        _tell_forecast,
    ),
    _Product("swpc", "planetary_k_index", _rx(rf"\b{_NOW}\b.*{_KP}|{_KP}.*\b{_NOW}\b"), _tell_kp),
    _Product(
        "swpc",
        "solar_wind_plasma_1day",
        _rx(rf"\b{_NOW}\b.*\bsolar wind\b|\bsolar wind\b.*\b{_NOW}\b"),
        _tell_plasma,
    ),
    _Product(
        "swpc",
        "alerts",
        _rx(r"\b(?:swpc|noaa|space weather)\b.*\b(?:alerts?|warnings?|watch(?:es)?)\b"),
        _tell_alerts,
    ),
    *(
        _Product("donki", endpoint, _rx(cue), _event_teller(endpoint, *nouns), needs_donki=True)
        for endpoint, cue, nouns in (
            ("CME", r"\bcmes?\b|coronal mass ejections?", ("CME", "CMEs")),
            ("FLR", r"\bflares?\b", ("solar flare", "solar flares")),
            ("GST", r"geomagnetic storms?|\bstorms?\b", ("geomagnetic storm", "storms")),
            ("SEP", r"\bseps?\b|solar energetic particle", ("SEP event", "SEP events")),
            ("IPS", r"interplanetary shocks?|\bshocks?\b", ("interplanetary shock", "shocks")),
            ("notifications", r"notifications?", ("notification", "notifications")),
        )
    ),
)


def _product(request: str) -> _Product | None:
    for product in _PRODUCTS:
        if product.needs_donki and not _DONKI.search(request):
            continue
        if product.cue.search(request):
            return product
    return None


def _session_span(host: SkillHost) -> TimeRange | None:
    """The time of the newest data in the session that has one (for "that week")."""
    for entry in reversed(list(host.workspace.session.store)):
        if entry.fetched_range is not None:
            start, end = (datetime.fromisoformat(v) for v in entry.fetched_range)
            if end - start < timedelta(days=7):
                end = start + timedelta(days=7)
            return TimeRange(start, end)
    return None


def _donki_dates(span: TimeRange) -> dict[str, str]:
    last = span.end - timedelta(microseconds=1)
    return {"startDate": f"{span.start:%Y-%m-%d}", "endDate": f"{max(last, span.start):%Y-%m-%d}"}


def answer(assistant: SkillHost, request: str) -> AssistantReply | None:
    """Answer a SWPC or DONKI request through the tools; None when it is not one."""
    product = _product(request)
    if product is None:
        return None
    found = find_time(request, datetime.now(UTC))
    span = found.range
    if span is None and _THAT_TIME.search(request):
        span = _session_span(assistant)
        if span is None:
            text = "Which dates do you mean? Say e.g. 'the week of 2024-05-08'."
            return AssistantReply(text, clarification=True)
    params = _donki_dates(span) if product.api == "donki" and span is not None else {}
    result = assistant.call_tool(
        "call_api", {"api": product.api, "endpoint": product.endpoint, "params": params}
    )
    if not result.ok:
        message = result.error or "the call failed"
        return AssistantReply(f"I could not ask {product.api.upper()}: {message}", error=message)
    if not result.labels:
        dates = f" from {params['startDate']} to {params['endDate']}" if params else ""
        text = f"{product.api.upper()} lists nothing for {product.endpoint}{dates}."
        return AssistantReply(compose(text, assistant.workspace.session.store, []))
    store = assistant.workspace.session.store
    frame = store.get(result.labels[0]).data
    assert isinstance(frame, pd.DataFrame)
    lines = product.tell(frame, span if product.api == "swpc" else None)
    if len(lines) > _MAX_LINES:
        lines = [*lines[:_MAX_LINES], f"... and {len(lines) - _MAX_LINES} more."]
    lines.append(f"Stored as {result.labels[0]}.")
    return AssistantReply(compose("\n".join(lines), store, result.labels))
