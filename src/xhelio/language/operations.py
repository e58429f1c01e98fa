"""Operation words of a request: which operation, with which stated parameters.

The words live in the vocabulary (`[[operation]]`, `[[statistic]]` and `[[declined]]` in
`vocabulary/domain.toml`); this module reads them and answers small questions about a
request: which operations it names (in text order), which statistic a running window
computes ("running median", "moving standard deviation"), the statistic of a resampling
("hourly maxima", "95th percentile per day"), whether a trend to remove is linear or the
mean, a cadence written per unit ("one value per day", "maximum per 3 hours"), the
quantity an operation's notation names ("SYM-H" of "dSYM-H/dt"), the clock times a side
result is computed over ("PSD over 13:00-13:10"), and which operations it asks for that
are declined (each with the reason said in the answer).
Imports only `vocabulary`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from itertools import pairwise

from xhelio.vocabulary import load_vocabulary, read_table

__all__ = [
    "Declined",
    "Operand",
    "Transform",
    "declined_operations",
    "derived_spans",
    "describe_statistic",
    "detrend_kind",
    "frame_rotation",
    "named_operations",
    "operand_spans",
    "operation_spans",
    "operation_windows",
    "per_unit_cadence",
    "ratio_slashes",
    "running_statistic",
    "scale_factor",
    "statistic_near",
    "statistics_near",
    "transform",
    "whole_window_statistics",
]


@dataclass(frozen=True)
class Declined:
    """An operation asked for that offline mode does not do, and why."""

    label: str
    reason: str


@dataclass(frozen=True)
class Transform:
    """An element-wise transform ("log10", "z-score"): its words, sandbox code and unit."""

    key: str
    label: str
    code: str
    units: str
    """"same" (the input's unit), "log10" (log10 of it) or the unit itself ("1")."""
    needs: str = ""
    """The unit (a regex) the input must be in: a unit conversion ("nT" to "T")."""


@cache
def transform(key: str) -> Transform | None:
    """The `[[operation]]` row of `key` when it is an element-wise transform (has code)."""
    for row in read_table("domain.toml").get("operation", []):
        if row["key"] == key and "code" in row:
            return Transform(
                key, str(row["label"]), str(row["code"]), str(row["units"]), row.get("needs", "")
            )
    return None


@dataclass(frozen=True)
class _Words:
    key: str
    words: re.Pattern[str]
    reason: str = ""
    threshold: bool = False
    """A time beyond a threshold ("how long was Bz below -10"), never a window statistic."""


@cache
def _rows(name: str) -> tuple[_Words, ...]:
    return tuple(
        _Words(
            str(r.get("key") or r["label"]),
            re.compile(r["words"], re.I),
            r.get("reason", ""),
            bool(r.get("threshold", False)),
        )
        for r in read_table("domain.toml").get(name, [])
    )


def _table(name: str) -> tuple[_Words, ...]:
    """The rows of a vocabulary table; for `statistic`, those a window or bin computes."""
    return tuple(w for w in _rows(name) if not w.threshold)


def _operation_matches(text: str) -> list[tuple[str, re.Match[str]]]:
    """Each vocabulary operation's matches, without those inside a derived quantity's words.

    "dPhi/dt" is the Newell coupling function, not the derivative of a "Phi".
    """
    named = derived_spans(text)
    found = [
        (op.key, m)
        for op in _table("operation")
        for m in op.words.finditer(text)
        if not any(a <= m.start() and m.end() <= b for a, b in named)
    ]
    # Words inside a longer operation's words are that operation's: the "power spectrum"
    # of "dynamic power spectrum" is no Welch PSD.
    return [
        (key, m)
        for key, m in found
        if not any(
            other != key and o.start() <= m.start() and m.end() <= o.end() and o.span() != m.span()
            for other, o in found
        )
    ]


def named_operations(text: str) -> list[tuple[str, int, int]]:
    """(operation key, start, end) of each vocabulary operation the text names, in order.

    The first place each operation is named counts.
    """
    first: dict[str, tuple[str, int, int]] = {}
    for key, match in _operation_matches(text):
        if key not in first or match.start() < first[key][1]:
            first[key] = (key, *match.span())
    return sorted(first.values(), key=lambda f: f[1])


@dataclass(frozen=True)
class Operand:
    """The quantity an operation names inside its own notation ("Bz" of "dBz/dt")."""

    key: str
    start: int
    end: int
    written: tuple[int, int]
    """The span of the whole notation ("dBz/dt")."""

    def affixes(self) -> list[tuple[int, int]]:
        """The spans of the notation around the operand ("d" and "/dt" of "dBz/dt")."""
        return [(self.written[0], self.start), (self.end, self.written[1])]


def operand_spans(text: str) -> list[Operand]:
    """The operands written inside operation notation, in text order.

    Leibniz notation ("dSYM-H/dt", "d|B|/dt", "d(Dst)/dt") names its quantity between
    "d" and "/dt": that text is a quantity to read, not an operation word. Brackets
    around it are part of the notation.
    """
    found: list[Operand] = []
    for key, match in _operation_matches(text):
        if "operand" not in match.re.groupindex or match["operand"] is None:
            continue
        start, end = match.span("operand")
        if text[start] == "(" and text[end - 1] == ")":
            start, end = start + 1, end - 1
        found.append(Operand(key, start, end, match.span()))
    return sorted(found, key=lambda o: o.start)


# "running sum" and "running total" are a time integral, not a window.
_WINDOW_WORD = re.compile(
    r"\b(?:running(?!\s+(?:sum|total))|moving|rolling|sliding|boxcar)\b[- ]?", re.I
)
# A running statistic named as a filter: "median filter", "median-filtered", "filtered
# with a 5-point median", "boxcar filter".
_FILTER = re.compile(
    r"\b(?:median|mean|average|boxcar)[- ]?filter(?:s|ed|ing)?\b"
    r"|\bfiltered\s+with\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,2}?(?:median|mean|average|boxcar)\b",
    re.I,
)


def _statistic(key: str, match: re.Match[str]) -> str:
    """The statistic as operations carry it: "" for the mean, "p95" for a percentile."""
    if key == "percentile":
        return f"p{float(match['q']):g}"
    return "" if key == "mean" else key


_STATISTIC_NAMES = {"": "mean", "median": "median", "std": "standard deviation",
                    "var": "variance", "min": "minimum", "max": "maximum"}  # fmt: skip


def describe_statistic(statistic: str) -> str:
    """The statistic in words: "" -> "mean", "p95" -> "95th percentile"."""
    kind, _, value = statistic.partition(":")
    if value:  # "below:-10" -> "time below -10"
        return f"time {kind} {value}"
    if statistic.startswith("p"):
        q = statistic[1:]
        last = q[-1]
        suffix = (
            "th"
            if q.endswith(("11", "12", "13"))
            else {"1": "st", "2": "nd", "3": "rd"}.get(last, "th")
        )
        return f"{q}{suffix} percentile"
    return _STATISTIC_NAMES[statistic]


def running_statistic(text: str) -> tuple[str, int, int] | None:
    """The statistic of a running window and its span ("rolling median" -> "median").

    Only a statistic written right after the window word counts, so "running 10 min
    average" is a mean and never a minimum. "boxcar" and "smoothed" are means ("").
    """
    for window in _WINDOW_WORD.finditer(text):
        for stat in _table("statistic"):
            match = stat.words.match(text, window.end())
            if match is not None:
                return _statistic(stat.key, match), window.start(), match.end()
        return "", *window.span()
    if (filtered := _FILTER.search(text)) is not None:  # "3-point median filter"
        return ("median" if "median" in filtered[0].lower() else ""), *filtered.span()
    return None


def statistic_near(
    text: str, start: int, end: int, masked: list[tuple[int, int]], reach: int = 25
) -> tuple[str, int, int] | None:
    """The statistic written next to [start, end) and its span, or None.

    "hourly maxima", "3-hour median", "95th percentile per day": the closest statistic
    word within `reach` characters ("" is the mean, "p95" a percentile). Words inside
    `masked` (the durations, so the "min" of "10 min" is never a minimum) do not count.
    """
    best: tuple[int, str, int, int] | None = None
    for stat in _table("statistic"):
        for match in stat.words.finditer(text):
            if any(a < match.end() and match.start() < b for a, b in masked):
                continue
            gap = max(match.start() - end, start - match.end(), 0)
            if gap <= reach and (best is None or gap < best[0]):
                best = (gap, _statistic(stat.key, match), *match.span())
    return best[1:] if best is not None else None


# What joins statistics asked together: "mean and max", "min, median and max", "min/max".
_JOINER = re.compile(r"\s*(?:,\s*(?:and\s+)?|\band\b|&|/|\+|\bor\b)\s*(?:the\s+)?", re.I)


def statistics_near(
    text: str, start: int, end: int, masked: list[tuple[int, int]], reach: int = 25
) -> tuple[tuple[str, ...], int, int] | None:
    """The statistics written next to [start, end), with the ones joined to it, and span.

    "daily mean and max" -> ("", "max"); "hourly min, median and max" -> ("min",
    "median", "max"): the closest statistic (as `statistic_near`) and every statistic
    joined to it by "and", a comma, "&" or a slash, in text order, without repeats.
    """
    near = statistic_near(text, start, end, masked, reach)
    if near is None:
        return None
    found = sorted(
        (match.start(), match.end(), _statistic(stat.key, match))
        for stat in _table("statistic")
        for match in stat.words.finditer(text)
        if not any(a < match.end() and match.start() < b for a, b in masked)
    )
    at = next(i for i, f in enumerate(found) if f[:2] == (near[1], near[2]))
    first = last = at
    while first > 0 and _joined(text, found[first - 1][1], found[first][0]):
        first -= 1
    while last + 1 < len(found) and _joined(text, found[last][1], found[last + 1][0]):
        last += 1
    statistics = tuple(dict.fromkeys(f[2] for f in found[first : last + 1]))
    return statistics, found[first][0], found[last][1]


def _joined(text: str, end: int, start: int) -> bool:
    return end <= start and _JOINER.fullmatch(text, end, start) is not None


_TRENDS = re.compile(r"\b(?P<mean>mean|average)\b|\b(?P<linear>linear|trend\w*)\b", re.I)


def detrend_kind(text: str, start: int, end: int) -> str:
    """'mean' when the words around [start, end) remove the mean, else 'linear'."""
    around = text[max(0, start - 20) : end + 20]
    match = _TRENDS.search(around)
    return "mean" if match is not None and match["mean"] else "linear"


_UNIT_SECONDS = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0, "week": 604800.0}
_PER_UNIT = re.compile(
    r"\b(?:one|a|1|single)\s+(?:value|point|sample|average|mean|number|datum|measurement)s?"
    r"\s+(?:per|a|an|every|each|for each)\s+(?:(?P<n>\d+(?:\.\d+)?)[\s-]*)?"
    r"(?P<u>second|sec|minute|min|hour|hr|day|week)s?\b",
    re.I,
)
# "maximum per day", "median for each 3 hours": a cadence only when a statistic is next to it.
_PER_BARE = re.compile(
    r"\b(?:per|each|every|for each|a)\s+(?:(?P<n>\d+(?:\.\d+)?)[\s-]*)?"
    r"(?P<u>second|sec|minute|min|hour|hr|day|week)s?\b",
    re.I,
)
_SHORT_UNITS = {"sec": "second", "min": "minute", "hr": "hour"}


def per_unit_cadence(text: str, *, bare: bool = False) -> tuple[float, int, int] | None:
    """A cadence written as a count per unit ("one value per day" -> 86400 s) and its span.

    `bare` also reads "per day" and "every 3 hours" without "one value" (the caller
    checks that a statistic goes with it).
    """
    match = _PER_UNIT.search(text) or (_PER_BARE.search(text) if bare else None)
    if match is None:
        return None
    unit = match["u"].lower()
    count = float(match["n"]) if match["n"] else 1.0
    return count * _UNIT_SECONDS[_SHORT_UNITS.get(unit, unit)], *match.span()


_CADENCE_WORD = re.compile(r"\b(?:hourly|daily|minutely|weekly)\b", re.I)


def operation_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the operation words ("hourly", "95th percentile", "per day", "Te/Ti").

    They name a computation, never an instrument or a dataset: the parser masks them
    before reading hints and accounts for them as operation words.
    """
    spans = [m.span() for rx in (_CADENCE_WORD, _WINDOW_WORD, _PER_UNIT, _PER_BARE)
             for m in rx.finditer(text)]  # fmt: skip
    spans += [m.span() for t in ("statistic", "declined") for w in _rows(t)
              for m in w.words.finditer(text)]  # fmt: skip
    operands = {o.written: o for o in operand_spans(text)}
    for _, match in _operation_matches(text):
        operand = operands.get(match.span())
        spans += operand.affixes() if operand else [match.span()]
    spans += [(start, end) for _, start, end in _percentile_lists(text)]
    spans += [m.span() for m in _SCALE.finditer(text)]
    return spans + [m.span() for m in _ratio_matches(text)]


# "5th, 50th and 95th percentiles", "5/50/95 percentiles", "percentiles (5/50/95)".
_NUMBER = r"\d{1,2}(?:\.\d+)?(?:st|nd|rd|th)?"
_LIST_JOIN = r"\s*(?:,\s*(?:and\s+)?|/|&|\band\b|\bor\b)\s*"
_PERCENTILES_BEFORE = re.compile(
    rf"\b(?P<qs>{_NUMBER}(?:{_LIST_JOIN}{_NUMBER})+)[- ]?(?:percentiles?|pct|%iles?)\b", re.I
)
_PERCENTILES_AFTER = re.compile(
    rf"\bpercentiles?\s*(?:\(\s*)?(?P<qs>{_NUMBER}(?:{_LIST_JOIN}{_NUMBER})*)\s*\)?(?!\s*-?\s*\d)",
    re.I,
)
# "peak of the storm", "the peak time": a moment, not the maximum of a series.
_PEAK_MOMENT = re.compile(
    r"peaks?\s+(?:time\b|of\s+(?:the\s+|a\s+|this\s+|that\s+)?(?:storm|event|activity|flare|"
    r"cme|shock|substorm|main\s+phase|cycle|eruption)s?\b)",
    re.I,
)
# "27-day mean", "5 minute average": the mean of a window, not of the whole interval.
_AFTER_DURATION = re.compile(
    r"(?:\d\s*-?\s*[a-z]*|\b(?:hour|minute|day|second|week)\w*)\s*-?\s*$", re.I
)


# "the 10 min", "5-min": a duration, never the minimum.
_AFTER_NUMBER = re.compile(r"\d\s*-?\s*$")
# "solar max", "the solar cycle 24 minimum": an epoch of the cycle, never a statistic.
_AFTER_SOLAR = re.compile(r"\bsolar\s+(?:cycle\s+(?:\d{1,2}\s+)?)?$", re.I)


def _number(text: str) -> float:
    """A number as written ("-10", or with the minus sign U+2212 and a space)."""
    return float(text.replace("\u2212", "-").replace(" ", ""))


def _percentile_lists(text: str) -> list[tuple[tuple[str, ...], int, int]]:
    """Percentiles written as a list ("5th, 50th and 95th percentiles"): keys and span."""
    found: list[tuple[tuple[str, ...], int, int]] = []
    for rx in (_PERCENTILES_BEFORE, _PERCENTILES_AFTER):
        for match in rx.finditer(text):
            numbers = re.findall(r"\d{1,2}(?:\.\d+)?", match["qs"])
            if numbers:
                found.append((tuple(f"p{float(q):g}" for q in numbers), *match.span()))
    return found


def whole_window_statistics(
    text: str, done: set[str], masked: list[tuple[int, int]]
) -> tuple[str, ...]:
    """Statistics the text asks of the whole interval: named, but no window or bin computes.

    "mean, median and std of Bz", "peak solar wind speed", "min Dst", "5th, 50th and
    95th percentiles of |B|" -> ("mean", "median", "std"), ("max",), ("min",), ("p5",
    "p50", "p95"). `done` holds the statistics of the request's windows and bins ("" the
    mean); words inside `masked` (durations, other operations) do not count, nor "peak"
    as a moment ("peak of the storm") or the mean of a window ("27-day mean"). A mean
    counts only written as the statistic ("mean of", "average X", "mean, max"), never
    inside another phrase ("mean charge state" is a parameter, "mean removed" a detrend).
    """
    lists = _percentile_lists(text)
    found: list[tuple[int, str, int]] = [
        (start, key, end) for keys, start, end in lists for key in keys
    ]
    for stat in _table("statistic"):
        for match in stat.words.finditer(text):
            start, end = match.span()
            if any(a < end and start < b for a, b in masked):
                continue
            if any(a <= start and end <= b for _, a, b in lists):
                continue
            key = _statistic(stat.key, match) or "mean"
            if key == "min" and _AFTER_NUMBER.search(text, 0, start):
                continue
            if key in ("min", "max") and _AFTER_SOLAR.search(text, 0, start):
                continue
            if match[0].lower().startswith("peak") and _PEAK_MOMENT.match(text, start):
                continue
            if key == "mean" and _AFTER_DURATION.search(text, 0, start):
                continue
            found.append((start, key, end))
    for stat in _rows("statistic"):
        if stat.threshold:
            found += [(m.start(), f"{stat.key}:{_number(m['v']):g}", m.end())
                      for m in stat.words.finditer(text)]  # fmt: skip
    found.sort()
    keys = [key for _, key, _ in found if key not in done and not (key == "mean" and "" in done)]
    if "mean" in keys and not _mean_asked(text, found):
        keys = [k for k in keys if k != "mean"]
    return tuple(dict.fromkeys(keys))


_MEAN_AS_STATISTIC = re.compile(
    r"\b(?:mean|average|avg)\b\s+(?:value\s+)?(?:of|for)\b"
    r"|^\W*(?:the\s+|an?\s+)?(?:mean|average|avg)\b(?!\s+(?:charge|free|field))"
    r"|\b(?:what|how\s+much)\b[^.?]{0,20}\b(?:mean|average|avg)\b"
    r"|\b(?:mean|average|avg)\b[^.;]{0,60}\bover\s+(?:the\s+)?(?:whole|entire|full|day|"
    r"interval|period|event|storm|window|\d)",
    re.I,
)


def _mean_asked(text: str, found: list[tuple[int, str, int]]) -> bool:
    """Whether a mean is asked as a statistic: joined to another one, or written as one."""
    keys = {key for _, key, _ in found}
    if len(keys) > 1 and any(
        a[1] == "mean" or b[1] == "mean" for a, b in pairwise(found) if _joined(text, a[2], b[0])
    ):
        return True
    return _MEAN_AS_STATISTIC.search(text) is not None


# "PSD of Bz over 13:00-13:10": the clock times a side result is computed over.
_CLOCK = r"(?:[01]?\d|2[0-3]):[0-5]\d"
_DURING = re.compile(
    rf"[^.;:]{{0,40}}?(?P<lead>\b(?:over|between|from|during|for|in)\s+(?:the\s+)?)"
    rf"(?P<a>{_CLOCK})\s*(?:UTC?\s*)?(?:-|\u2013|to|and|until|till)\s*(?P<b>{_CLOCK})"
    r"(?:\s*UTC?\b)?",
    re.I,
)
# Operations computed over a part of the plotted interval (their tools take a time range).
_OVER_A_PART = ("psd", "cross_correlation")


def operation_windows(text: str) -> list[tuple[str, tuple[str, str], int, int]]:
    """Clock times written right after an operation's words, and their span.

    "PSD of Bz over 13:00-13:10" -> ("psd", ("13:00", "13:10"), start, end): the
    operation is computed over that part of the day; the span (from "over") is not the
    request's time range. Only operations whose result is a side result.
    """
    found: list[tuple[str, tuple[str, str], int, int]] = []
    for key, _, end in named_operations(text):
        match = _DURING.match(text, end) if key in _OVER_A_PART else None
        if match is not None:
            found.append((key, (match["a"], match["b"]), match.start("lead"), match.end()))
    return found


_MOVE = r"\b(?:rotat|transform|convert|express|chang)\w*\b"


@cache
def _rotations() -> tuple[re.Pattern[str], ...]:
    """Rotation phrases: "rotate B from GSE into GSM", "B in SM, converted from GSE"."""
    frames = "|".join(sorted(load_vocabulary().frames, key=len, reverse=True))
    frame = rf"(?:the\s+)?(?P<{{}}>(?-i:{frames}))(?:\s+(?:frame|coordinates|coords|system))?\b"
    source, target = frame.format("source"), frame.format("target")
    return (
        re.compile(rf"{_MOVE}[^.;?]{{0,60}}?(?:\bfrom\s+{source}\s+)?\b(?:in)?to\s+{target}", re.I),
        re.compile(rf"\bin(?:to)?\s+{target}[^.;?]{{0,30}}?{_MOVE}\s+from\s+{source}", re.I),
    )


def frame_rotation(text: str) -> tuple[str, str, int, int] | None:
    """(source frame or "", target frame, span) of a rotation the text asks for, or None.

    "rotate B from GSE into GSM" -> ("GSE", "GSM", ...); "rotate BGSE into GSM" -> ("",
    "GSM", ...): the source is then the frame of the vector fetched.
    """
    for rx in _rotations():
        match = rx.search(text)
        if match is not None:
            return (match["source"] or "").upper(), match["target"].upper(), *match.span()
    return None


_FACTOR = r"(?P<f>[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?![\w.:/-])"
_SCALE = re.compile(
    rf"\b(?P<verb>scal(?:e|ed|ing)|multipl(?:y|ied|ying)|divid(?:e|ed|ing))\b"
    rf"(?:\s+(?!by\b)[^\s.;?]+){{0,5}}?\s+by\s+(?:a\s+factor\s+(?:of\s+)?)?{_FACTOR}",
    re.I,
)


def scale_factor(text: str) -> tuple[str, int, int] | None:
    """The scaling asked ("scale Bz by 1e-9" -> "* 1e-9", "divide it by 2" -> "/ 2"), and span.

    The number as typed, after its operator; "divided by the density" is a ratio of two
    series, not a scaling (only a number counts).
    """
    match = _SCALE.search(text)
    if match is None or float(match["f"]) == 0.0:
        return None
    operator = "/" if match["verb"].lower().startswith("divid") else "*"
    return f"{operator} {match['f']}", *match.span()


def declined_operations(text: str) -> list[Declined]:
    """Operations the text asks for that offline mode does not do, in vocabulary order."""
    return [Declined(d.key, d.reason) for d in _table("declined") if d.words.search(text)]


@cache
def _slash_ratio() -> re.Pattern[str]:
    """Two quantity symbols joined by a slash: "Te/Ti", "T_perp / T_par", "Bz/|B|"."""
    rows = read_table("quantities.toml").get("quantity", [])
    letters = "".join(sorted({str(r["symbol"]).upper() for r in rows if r.get("symbol")}))
    side = rf"\|[{letters}]\||[{letters}](?:_?[a-z]{{1,5}}|_?[A-Z]{{1,3}})?"
    return re.compile(rf"(?<![\w|/.+-])(?:{side})\s*(?P<slash>/)\s*(?:{side})(?![\w|/+-])")


def ratio_slashes(text: str) -> list[int]:
    """Positions of the slashes that write a ratio of two quantities ("Te/Ti", "Bz/|B|").

    A unit ("km/s", "nT/s"), a list of missions ("STA/STB") or a path is no ratio: both
    sides must be a quantity's symbol (from `vocabulary/quantities.toml`), with a species,
    component or subscript after it, or its magnitude bars.
    """
    return [m.start("slash") for m in _ratio_matches(text)]


def derived_spans(text: str) -> list[tuple[int, int]]:
    """Spans of derived quantities' words ("Na/Np", "alpha-to-proton ratio", "Pth/Pb")."""
    return [m.span() for d in load_vocabulary().derived for m in d.words.finditer(text)]


def _ratio_matches(text: str) -> list[re.Match[str]]:
    named = derived_spans(text)
    matches = _slash_ratio().finditer(text)
    # "Na/Np" is the derived alpha/proton ratio, computed as such
    return [m for m in matches if not any(a <= m.start("slash") < b for a, b in named)]
