"""Event tables as text: CSV, AMDA time tables (ASCII) and HAPI CSV with a JSON header.

AMDA time table (ASCII): `#` header lines of `Key: value;` (Name, Description, Historic,
Creation Date...), then one interval a line: two ISO 8601 times separated by blanks,
optionally followed by more columns. HAPI CSV: `#`-prefixed JSON header (its
`parameters` give the column names; the first is the time), then comma-separated rows;
an event list served over HAPI has its start as the time and a stop parameter. Plain CSV:
a header row naming the start and end columns (start/begin/onset, end/stop).
"""

from __future__ import annotations

import io
import json
from typing import Any

import pandas as pd

from xhelio.errors import UserError
from xhelio.events.model import EventList, column, make_event_list

__all__ = [
    "END_NAMES",
    "START_NAMES",
    "read_amda",
    "read_csv",
    "read_hapi_csv",
    "with_iso_times",
    "write_amda",
    "write_csv",
    "write_hapi_csv",
]

START_NAMES = ("start", "begin", "start_time", "starttime", "tstart", "onset", "time", "epoch")
END_NAMES = ("end", "stop", "end_time", "stop_time", "endtime", "stoptime", "tstop", "tend")


def _iso(series: pd.Series) -> list[str]:
    return ["" if pd.isna(t) else t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z" for t in series]


def with_iso_times(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` with every time column written as ISO 8601 UTC text."""
    table = frame.copy()
    for name in table.columns:
        if isinstance(table[name].dtype, pd.DatetimeTZDtype):
            table[name] = _iso(column(table, str(name)))
    return table


def _pick(columns: list[str], names: tuple[str, ...]) -> str | None:
    lowered = {c.strip().lower().replace(" ", "_"): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), None)


def _as_events(table: pd.DataFrame, name: str, origin: str, **meta: Any) -> EventList:
    columns = [str(c) for c in table.columns]
    start = _pick(columns, START_NAMES)
    end = _pick(columns, END_NAMES)
    if start is None:
        raise UserError(
            f"No start column in {origin}: name one of {', '.join(START_NAMES[:6])} "
            f"(the table has {', '.join(columns[:8])})."
        )
    renamed = table.rename(columns={start: "start", **({end: "end"} if end else {})})
    return make_event_list(name, renamed, origin=origin, **meta)


def read_csv(text: str, name: str, origin: str) -> EventList:
    """A CSV table with a header row naming its start (and end) columns."""
    try:
        table = pd.read_csv(io.StringIO(text), comment=None, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise UserError(f"{origin} is not a readable CSV table: {exc}") from None
    return _as_events(table, name, origin)


def read_amda(text: str, name: str, origin: str) -> EventList:
    """An AMDA time table (ASCII): `# Key: value;` header lines, then start stop rows."""
    header: dict[str, str] = {}
    rows: list[list[str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            key, sep, value = line.lstrip("#").partition(":")
            if sep:
                header[key.strip().lower()] = value.strip().rstrip(";").strip()
            continue
        fields = line.split()
        if len(fields) < 2:
            raise UserError(
                f"{origin} line {number} has {len(fields)} field; an AMDA time table line "
                "is 'START STOP' (two ISO 8601 times)."
            )
        rows.append(fields)
    if not rows:
        raise UserError(f"{origin} holds no intervals (only comments or nothing).")
    width = max(len(r) for r in rows)
    extra = [f"column{i}" for i in range(3, width + 1)]
    table = pd.DataFrame(
        [r + [""] * (width - len(r)) for r in rows], columns=["start", "end", *extra]
    )
    return make_event_list(
        header.get("name") or name,
        table,
        description=header.get("description") or header.get("short description", ""),
        origin=origin,
        citation=header.get("historic", ""),
    )


def read_hapi_csv(text: str, name: str, origin: str) -> EventList:
    """A HAPI CSV response with its `#` JSON header (event lists served over HAPI)."""
    header_lines = [ln[1:] for ln in text.splitlines() if ln.startswith("#")]
    body = "\n".join(ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#"))
    try:
        info: dict[str, Any] = json.loads("\n".join(header_lines))
    except json.JSONDecodeError as exc:
        raise UserError(f"{origin}: its '#' header is not HAPI JSON ({exc.msg}).") from None
    names: list[str] = []
    for parameter in info.get("parameters", []):
        size = parameter.get("size") or [1]
        count = int(size[0]) if isinstance(size, list) and size else 1
        base = str(parameter["name"])
        names.extend([base] if count == 1 else [f"{base}_{i}" for i in range(count)])
    if not names:
        raise UserError(f"{origin}: the HAPI header lists no parameters.")
    table = pd.read_csv(io.StringIO(body), header=None, names=names)
    table = table.rename(columns={names[0]: "start"})
    return _as_events(table, name, origin, description=str(info.get("description", "")))


def write_csv(events: EventList) -> str:
    """The list as CSV: start, end (ISO 8601 UTC), then the attributes."""
    return with_iso_times(events.frame).to_csv(index=False)


def write_amda(events: EventList) -> str:
    """The list as an AMDA ASCII time table (the attributes are not part of that format)."""
    lines = [
        "# Time Table generated by xhelio;",
        f"# Name: {events.name};",
        f"# Description: {' '.join(events.description.split())};",
        f"# Historic: {' '.join((events.citation or events.origin).split())};",
    ]
    lines += [
        f"{s} {e}"
        for s, e in zip(
            _iso(column(events.frame, "start")), _iso(column(events.frame, "end")), strict=True
        )
    ]
    return "\n".join(lines) + "\n"


def write_hapi_csv(events: EventList) -> str:
    """The list as HAPI CSV: a JSON header (start as the time, stop, attributes), then rows."""
    parameters: list[dict[str, Any]] = [
        {"name": "start", "type": "isotime", "units": "UTC", "length": 24},
        {"name": "stop", "type": "isotime", "units": "UTC", "length": 24},
    ]
    for attribute in events.attributes:
        numeric = pd.api.types.is_numeric_dtype(column(events.frame, attribute))
        parameters.append({"name": attribute, "type": "double" if numeric else "string"})
    header = {"HAPI": "3.1", "description": events.description, "parameters": parameters}
    table = with_iso_times(events.frame)
    text = json.dumps(header, indent=1)
    prefixed = "\n".join("#" + line for line in text.splitlines())
    return prefixed + "\n" + table.to_csv(index=False, header=False)
