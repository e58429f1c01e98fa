"""The answer composer: how every answer reads, whichever assistant wrote it.

`compose_answer` is applied to every turn's answer (`api.turns.build_response`: the LLM
agents, the offline interpreter, the Python API, REST, MCP and the CLI):

- time ranges read as people write them, inclusive: "2000-07-14 to 2000-07-17", never the
  end-exclusive "2000-07-14T00:00:00Z to 2000-07-18T00:00:00Z" the tools use;
- a line is said once (an error repeated by several layers shows once).

`readable_range(start, stop)` is the range formatter itself, for writers that build their
own text (the offline assistant's answers can call it directly).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = ["compose_answer", "readable_range"]

_ISO = r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]00:?00)?"
_RANGE = re.compile(rf"\b({_ISO})(\s*(?:to|\u2013|\u2014|-{{1,2}})\s*)({_ISO})(?![\d:+-]|\.\d)")


def _parse(text: str) -> datetime | None:
    cleaned = text.strip().replace(" ", "T").replace("Z", "+00:00")
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _at_midnight(moment: datetime) -> bool:
    return moment.hour == moment.minute == moment.second == moment.microsecond == 0


def readable_range(start: datetime, stop: datetime) -> str:
    """`start`..`stop` (end-exclusive, UTC) as an inclusive range a scientist would write.

    Whole days read as dates ("2000-07-14 to 2000-07-17", one day as "2000-07-14");
    anything finer keeps its clock time, to the minute (or second) it needs, with "UTC".
    """
    if _at_midnight(start) and _at_midnight(stop) and stop > start:
        last = stop - timedelta(days=1)
        if last.date() == start.date():
            return f"{start:%Y-%m-%d}"
        return f"{start:%Y-%m-%d} to {last:%Y-%m-%d}"
    fmt = "%Y-%m-%d %H:%M:%S" if start.second or stop.second else "%Y-%m-%d %H:%M"
    if start.date() == stop.date():
        return f"{start.strftime(fmt)} to {stop.strftime(fmt[9:])} UTC"
    return f"{start.strftime(fmt)} to {stop.strftime(fmt)} UTC"


def _rewrite(match: re.Match[str]) -> str:
    first, second = match.group(1), match.group(3)
    if "T" not in first + second and " " not in first.strip() + second.strip():
        return match.group(0)  # plain dates were written by a person: already inclusive
    start, stop = _parse(first), _parse(second)
    if start is None or stop is None or stop <= start:
        return match.group(0)
    return readable_range(start, stop)


def _each_line_once(text: str) -> str:
    seen: set[str] = set()
    out: list[str] = []
    for line in text.split("\n"):
        key = line.strip()
        if key and len(key) > 20 and key in seen:
            continue
        seen.add(key)
        out.append(line)
    return "\n".join(out)


def compose_answer(text: str) -> str:
    """`text` with readable inclusive time ranges and each (long) line said once."""
    if not text:
        return text
    return _each_line_once(_RANGE.sub(_rewrite, text))
