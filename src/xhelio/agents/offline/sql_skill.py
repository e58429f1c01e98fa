"""Offline SQL selections: "days when Dst < -100 in 2015", "hourly mean Bz per day as a table".

A small grammar reads two kinds of request and writes the SQL for `query_data`:

- a selection: which days/hours/months (or times) a quantity crossed a threshold, with
  conditions joined by "and" ("Dst below -100 and solar wind faster than 600 km/s");
  per period, "below" compares the period's minimum and "above" its maximum;
- an aggregation as a table: "hourly mean Bz per day", "daily max Kp as a table" (mean,
  average, max, min, median, sum, std), one row per period (and per day when asked).

Each quantity is fetched for the request's time range as offline mode reads it
(`fetch_for`); the answer shows the SQL and the table. A request that starts with
SELECT or WITH runs as it is. Anything else is not this skill's (None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xhelio.agents.turn import AssistantReply
from xhelio.data.entry import DataEntry
from xhelio.timerange import find_time

if TYPE_CHECKING:
    from xhelio.agents.offline.skills import SkillHost

__all__ = ["answer"]

_ROWS_SHOWN = 15
_LESS = r"below|under|less than|lower than|smaller than|slower than|weaker than|<=?"
_MORE = (
    r"above|over|greater than|more than|higher than|larger than|faster than|stronger than"
    r"|exceed(?:s|ed|ing)?|>=?"
)
_CONDITION = re.compile(
    rf"(?P<what>[\w |/.-]+?)\s+(?:(?:was|is|were|are|went|got|dropped|rose|fell)\s+)?"
    rf"(?P<op>{_LESS}|{_MORE})\s*(?P<value>[-+\u2212]?\d+(?:\.\d+)?)\s*(?P<unit>[a-z/]+)?",
    re.IGNORECASE,
)
_SELECTION = re.compile(
    r"^\W*(?:(?:which|what|list|find|show(?: me)?|give me|get)\s+(?:(?:the|all)\s+)?)?"
    r"(?P<period>days?|hours?|months?|times?|intervals?|periods?)\b"
    r"(?:\s+(?:in|of|during|from)\s+[^,;]*?)?"
    r"\s+(?:when|where|with|had|has|have|having|that|in which)\b",
    re.IGNORECASE,
)
_AGGREGATE = re.compile(
    r"\b(?P<cadence>hourly|daily|monthly)\s+(?P<func>mean|average|avg|max(?:imum)?|min(?:imum)?"
    r"|median|sum|std|standard deviation)\s+(?:of\s+)?(?P<what>[\w |/.-]+?)"
    r"(?:\s+per\s+(?P<per>day|month))?(?=\s+(?:as|in|for|during|from|over|on)\b|[.?!]|$)",
    re.IGNORECASE,
)
_TABLE = re.compile(r"\b(?:as a table|in a table|table|per day|per month)\b", re.IGNORECASE)
_RAW_SQL = re.compile(r"^\s*(?:sql:\s*)?(?P<sql>(?:select|with)\b.+)$", re.IGNORECASE | re.DOTALL)
_PERIODS = {
    "day": "day",
    "hour": "hour",
    "month": "month",
    "hourly": "hour",
    "daily": "day",
    "monthly": "month",
}
_FUNCS = {
    "mean": "avg",
    "average": "avg",
    "avg": "avg",
    "max": "max",
    "maximum": "max",
    "min": "min",
    "minimum": "min",
    "median": "median",
    "sum": "sum",
    "std": "stddev",
    "standard deviation": "stddev",
}


@dataclass(frozen=True)
class _Condition:
    what: str
    less: bool
    value: float
    unit: str


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _conditions(text: str) -> list[_Condition]:
    found: list[_Condition] = []
    for part in re.split(r"\band\b|,", text):
        match = _CONDITION.search(part)
        if match is None:
            continue
        what = re.sub(r"^.*\b(?:when|where|with|had|has|have|having|that)\s+", "", match["what"])
        what = re.sub(r"^(?:the|a|an)\s+", "", what.strip(), flags=re.IGNORECASE)
        value = float(match["value"].replace("\u2212", "-"))
        less = re.fullmatch(_LESS, match["op"], re.IGNORECASE) is not None
        if re.match(r"(?:faster|slower)", match["op"], re.IGNORECASE) and "speed" not in what:
            what += " speed"
        found.append(_Condition(what, less, value, match["unit"] or ""))
    return found


def _column(entry: DataEntry, what: str) -> str:
    """The value column `what` names best (a component letter or name), else the first."""
    columns = entry.columns
    words = {w.lower() for w in re.findall(r"\w+", what)}
    for column in columns:
        if column.lower() in words or column.lower().rsplit("_", 1)[-1] in words:
            return column
    tail = what.strip()[-1:].lower()
    for column in columns:
        if len(what.strip()) <= 3 and column.lower().endswith(tail):
            return column
    return columns[0]


def _fetch(host: SkillHost, what: str, when: str, unit: str = "") -> tuple[DataEntry | None, str]:
    """The entry fetched for `what`; of several, the first in `unit` when one is said."""
    fetched = host.fetch_for(f"{what} {when}".strip())
    if not fetched.labels:
        return None, "; ".join(fetched.problems) or f"could not tell which data '{what}' is"
    entries = [host.workspace.session.store.get(label) for label in fetched.labels]
    wanted = unit.replace(" ", "").lower()
    in_unit = [e for e in entries if wanted and _same_unit(e, wanted)]
    return (in_unit or entries)[0], ""


def _same_unit(entry: DataEntry, unit: str) -> bool:
    return any(u.replace(" ", "").lower() == unit for u in entry.units.values())


def _bucket(period: str) -> str:
    return f"date_trunc('{period}', time)"


def _selection_sql(period: str, picks: list[tuple[_Condition, DataEntry, str]]) -> str:
    if period not in ("day", "hour", "month"):
        (cond, entry, column), *_ = picks
        op = "<" if cond.less else ">"
        return (
            f"SELECT time, {_ident(column)} FROM {_ident(entry.label)} "
            f"WHERE {_ident(column)} {op} {cond.value:g} ORDER BY time"
        )
    ctes: list[str] = []
    outputs: list[str] = []
    wheres: list[str] = []
    for number, (cond, entry, column) in enumerate(picks, start=1):
        func = "min" if cond.less else "max"
        name = f"{func}_{column}"
        ctes.append(
            f"c{number} AS (SELECT {_bucket(period)} AS {period}, {func}({_ident(column)}) AS "
            f"{_ident(name)} FROM {_ident(entry.label)} GROUP BY 1)"
        )
        outputs.append(f"c{number}.{_ident(name)}")
        wheres.append(f"c{number}.{_ident(name)} {'<' if cond.less else '>'} {cond.value:g}")
    joins = " ".join(f"JOIN c{n} USING ({period})" for n in range(2, len(picks) + 1))
    return (
        f"WITH {', '.join(ctes)} SELECT c1.{period}, {', '.join(outputs)} FROM c1 {joins} "
        f"WHERE {' AND '.join(wheres)} ORDER BY {period}"
    ).replace("  ", " ")


def _aggregate_sql(match: re.Match[str], entry: DataEntry, column: str) -> str:
    period = _PERIODS[match["cadence"].lower()]
    func = _FUNCS[match["func"].lower()]
    name = _ident(f"{match['func'].lower()[:4].rstrip('i')}_{column}".replace(" ", "_"))
    value = f"{func}({_ident(column)}) AS {name}"
    per = (match["per"] or "").lower()
    if per and per != period:
        return (
            f"SELECT {_bucket(per)} AS {per}, {period}(time) AS {period}, {value} "
            f"FROM {_ident(entry.label)} GROUP BY 1, 2 ORDER BY 1, 2"
        )
    return (
        f"SELECT {_bucket(period)} AS {period}, {value} FROM {_ident(entry.label)} "
        "GROUP BY 1 ORDER BY 1"
    )


def _markdown(rows: list[dict[str, Any]], units: dict[str, str]) -> str:
    if not rows:
        return "(no rows)"
    columns = list(rows[0])
    head = [f"{c} ({units[c]})" if units.get(c) else c for c in columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(columns)]
    for row in rows[:_ROWS_SHOWN]:
        cells = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in row.values()]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _run(host: SkillHost, sql: str, notes: list[str]) -> AssistantReply:
    result = host.call_tool("query_data", {"sql": sql})
    if not result.ok:
        message = f"The SQL query failed: {result.error}\n\nSQL: {sql}"
        return AssistantReply(message, error=result.error)
    payload = result.payload
    rows: list[dict[str, Any]] = payload.get("preview") or []
    shown = f" (first {_ROWS_SHOWN})" if int(payload["points"]) > _ROWS_SHOWN else ""
    text = [
        f"{payload['points']} rows, stored as '{payload['label']}'{shown}:",
        _markdown(rows, payload.get("units") or {}),
        f"SQL: {payload['sql']}",
        *notes,
    ]
    return AssistantReply("\n\n".join(text))


def _selection(host: SkillHost, request: str, period: str, when: str) -> AssistantReply | None:
    conditions = _conditions(request)
    if not conditions:
        return None
    picks: list[tuple[_Condition, DataEntry, str]] = []
    notes: list[str] = []
    for cond in conditions:
        entry, problem = _fetch(host, cond.what, when, cond.unit)
        if entry is None:
            return AssistantReply(f"I could not fetch {cond.what}: {problem}", error=problem)
        column = _column(entry, cond.what)
        unit = entry.units.get(column, "")
        if cond.unit and unit and cond.unit.replace(" ", "") != unit.replace(" ", ""):
            notes.append(f"Note: {column} is in {unit}; {cond.value:g} was compared as is.")
        picks.append((cond, entry, column))
    return _run(host, _selection_sql(_PERIODS.get(period.rstrip("s"), "time"), picks), notes)


def answer(host: SkillHost, request: str) -> AssistantReply | None:
    """Answer a simple SQL selection or aggregation offline; None if it is not one."""
    raw = _RAW_SQL.match(request)
    if raw is not None:
        return _run(host, raw["sql"].strip(), [])
    found = find_time(request)
    when = found.text or ""
    aggregate = _AGGREGATE.search(request)
    if aggregate is not None and _TABLE.search(request):
        entry, problem = _fetch(host, aggregate["what"], when)
        if entry is None:
            return AssistantReply(
                f"I could not fetch {aggregate['what']}: {problem}", error=problem
            )
        return _run(host, _aggregate_sql(aggregate, entry, _column(entry, aggregate["what"])), [])
    selection = _SELECTION.search(request)
    if selection is None:
        return None
    rest = request[selection.end() :] if when == "" else request.replace(when, " ")
    return _selection(host, rest, selection["period"].lower(), when)
