"""The small grammar of wishes: durations, operations, plot styling, exports, discovery.

Each function reads one kind of wish from request text and returns plain values (or the
spans it used, so `parse.py` can mask them before looking for missions and time ranges).
Nothing here knows the catalog or the tools. Imports only `agents.offline.intent`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xhelio.agents.offline.intent import DiscoveryWish, Layout, OperationWish

__all__ = [
    "Duration",
    "find_colours",
    "find_discovery",
    "find_durations",
    "find_export",
    "find_hints",
    "find_layout",
    "find_operations",
    "find_title",
    "format_seconds",
    "wants_log",
    "wants_plot",
]

_UNIT_SECONDS = {
    "ms": 0.001, "millisecond": 0.001, "msec": 0.001,
    "s": 1.0, "sec": 1.0, "second": 1.0,
    "m": 60.0, "min": 60.0, "minute": 60.0,
    "h": 3600.0, "hr": 3600.0, "hour": 3600.0,
    "d": 86400.0, "day": 86400.0,
    "w": 604800.0, "wk": 604800.0, "week": 604800.0,
}  # fmt: skip
_LONG_UNITS = [u for u in _UNIT_SECONDS if len(u) > 1]
_UNIT_WORDS = "|".join(sorted((f"{u}s?" for u in _UNIT_SECONDS), key=len, reverse=True))
_LONG_UNIT_WORDS = "|".join(sorted((f"{u}s?" for u in _LONG_UNITS), key=len, reverse=True))
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "five": 5, "ten": 10, "fifteen": 15, "thirty": 30}
# Digits may touch any unit ("10min", "5 s"); spelled numbers need a separate unit word
# ("an hour", "ten-minute"), so "and" is never "an" + "d".
_DURATION = re.compile(
    rf"(?<![\w.])(?:(?P<n>\d+(?:\.\d+)?)\s*-?\s*(?P<unit>{_UNIT_WORDS})"
    rf"|(?P<word>an?|one|two|three|five|ten|fifteen|thirty)[\s-]+(?P<long>{_LONG_UNIT_WORDS}))\b",
    re.IGNORECASE,
)
# A duration right after these words is the length of a time range, not of an operation.
_TIME_RANGE_LEAD = re.compile(r"\b(?:last|past|previous|prior|recent|first|next)\s*$", re.I)
_CADENCE_WORDS = {"hourly": 3600.0, "daily": 86400.0, "minutely": 60.0}


@dataclass(frozen=True)
class Duration:
    """A length of time written in the text, with where it was written."""

    seconds: float
    text: str
    start: int
    end: int


def format_seconds(seconds: float) -> str:
    """A compact human duration: '10 min', '1 h', '30 s', '2 d'."""
    for size, unit in ((86400.0, "d"), (3600.0, "h"), (60.0, "min")):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)} {unit}"
    return f"{seconds:g} s"


def find_durations(text: str) -> list[Duration]:
    """Operation-like durations ("10 minutes", "1-hour") that are not part of "last 3 days"."""
    found: list[Duration] = []
    for match in _DURATION.finditer(text):
        if _TIME_RANGE_LEAD.search(text[: match.start()]):
            continue
        if match["n"]:
            count, unit = float(match["n"]), match["unit"].lower()
        else:
            word = match["word"].lower()
            count, unit = float(_NUMBER_WORDS.get(word, 1)), match["long"].lower()
        unit = unit if unit in _UNIT_SECONDS else unit[:-1]
        if count > 0:
            found.append(Duration(count * _UNIT_SECONDS[unit], match[0], *match.span()))
    return found


def _near(durations: list[Duration], start: int, end: int, reach: int = 30) -> Duration | None:
    """The duration closest to [start, end) within `reach` characters, if any."""
    best: tuple[int, Duration] | None = None
    for d in durations:
        gap = max(d.start - end, start - d.end, 0)
        if gap <= reach and (best is None or gap < best[0]):
            best = (gap, d)
    return best[1] if best else None


_SMOOTH = re.compile(
    r"\bsmooth\w*|\b(?:running|moving|rolling|sliding|boxcar)[- ](?:average|mean|avg|median)s?"
    r"|\bboxcar\b|\blow[- ]?pass\b|\brunning[- ]average\w*",
    re.I,
)
_RESAMPLE = re.compile(
    r"\bresampl\w*|\brebin\w*|\b(?:bins?|binned)\b|\bdownsampl\w*"
    r"|\baverag\w*\b|\bmeans\b|\bmean values\b|\bcadence\b|\bresolution\b"
    r"|\bhourly\b|\bdaily\b|\bminutely\b",
    re.I,
)
_DERIVATIVE = re.compile(
    r"\bderivative\b|\brate of change\b|\bd\s*/\s*dt\b|\bd[a-z]+\s*/\s*dt\b|\bdifferentiat\w*|"
    r"\btime[- ]derivative\b",
    re.I,
)
_DIFFERENCE = re.compile(r"\bdifference\b|\bminus\b|\bsubtract\w*|\bdiff\b", re.I)
_RATIO = re.compile(r"\bratio\b|\bdivided by\b|\bdivide\b", re.I)


def find_operations(text: str, durations: list[Duration]) -> list[OperationWish]:
    """Operations asked for, in the order a scientist means them (smooth, resample, ...)."""
    ops: list[OperationWish] = []
    smooth = _SMOOTH.search(text)
    used: set[int] = set()
    if smooth:
        window = _near(durations, *smooth.span())
        if window is not None:
            used.add(window.start)
        ops.append(_smooth_wish(window))
    for match in _RESAMPLE.finditer(text):
        word = match[0].lower()
        if smooth and match.start() < smooth.end() and match.end() > smooth.start():
            continue
        free = [d for d in durations if d.start not in used]
        window = _near(free, *match.span(), reach=25)
        if word in _CADENCE_WORDS and window is None:
            seconds = _CADENCE_WORDS[word]
            ops.append(OperationWish("resample", f"{word} averages", seconds))
            break
        if window is not None:
            ops.append(
                OperationWish(
                    "resample", f"{format_seconds(window.seconds)} averages", window.seconds
                )
            )
            break
    if _DERIVATIVE.search(text):
        ops.append(OperationWish("derivative", "time derivative"))
    if _RATIO.search(text):
        ops.append(OperationWish("ratio", "ratio of the two series"))
    elif _DIFFERENCE.search(text):
        ops.append(OperationWish("difference", "difference of the two series"))
    return ops


def _smooth_wish(window: Duration | None) -> OperationWish:
    if window is None:
        return OperationWish("smooth", "smoothed", None, explicit_window=False)
    text = f"smoothed over {format_seconds(window.seconds)}"
    return OperationWish("smooth", text, window.seconds)


_NO_PLOT = re.compile(
    r"\b(?:no|without(?: a)?|don'?t|do not|never)\s+(?:plot|plotting|figure|graph|chart)\w*"
    r"|\b(?:just|only)\s+(?:fetch|load|download|get)\b|\bfetch only\b",
    re.I,
)
_SEPARATE = re.compile(
    r"\bseparate(?:ly)?\b|\bstack(?:ed)?\b|\bsub-?plots?\b|\bown panels?\b|\bdifferent panels\b"
    r"|\bpanels\b|\bone (?:panel|plot) (?:each|per)\b|\bsplit\b|\bone above the other\b",
    re.I,
)
_OVERLAY = re.compile(
    r"\boverla(?:y\w*|id)|\bsame (?:panel|plot|axes|axis|graph|figure)\b|\bsuperimpos\w*"
    r"|\bon top of each other\b|\btogether\b|\bone panel\b|\bsingle panel\b|\bon one plot\b",
    re.I,
)
_EACH = re.compile(r"\bone (?:panel|plot) (?:each|per|for each)\b|\bunderneath\b|\bbelow\b", re.I)
_LOG = re.compile(r"\blog(?:arithmic)?[- ]?(?:scale|axis|y|plot)?\b|\bsemi-?log\w*|\blog10\b", re.I)
_TITLE_QUOTED = re.compile(
    r"\btitle[ds]?\b(?:\s+(?:it|the plot|the figure|as|with|to))*\s*[:=]?\s*"
    r"[\"\u201c'\u2018](?P<title>[^\"\u201d'\u2019]+)[\"\u201d'\u2019]",
    re.I,
)
_TITLE_BARE = re.compile(
    r"\btitle[ds]?\b(?:\s+(?:it|the plot|the figure|as|with|to))*\s*[:=]?\s*"
    r"(?P<title>[^,;.!?]+?)\s*(?=$|[,;!?]|\.(?:\s|$)|\s+(?:and|in|with|using)\s)",
    re.I,
)
_COLOURS = (
    "red", "blue", "green", "black", "orange", "purple", "magenta", "cyan", "grey", "gray",
    "brown", "pink", "yellow", "navy", "teal", "olive", "maroon", "violet", "darkblue",
    "darkred", "darkgreen", "crimson", "turquoise", "indigo", "lime",
)  # fmt: skip
_COLOUR = re.compile(rf"\b(?:{'|'.join(_COLOURS)})\b|#[0-9a-f]{{6}}\b", re.I)


def wants_plot(text: str) -> bool:
    """False when the request says not to plot ("just fetch", "no plot")."""
    return _NO_PLOT.search(text) is None


def find_layout(text: str) -> Layout:
    """Overlay, separate panels, or 'auto' when the request does not say."""
    if _EACH.search(text):
        return "separate"
    if _OVERLAY.search(text):
        return "overlay"
    if _SEPARATE.search(text):
        return "separate"
    return "auto"


def wants_log(text: str) -> bool:
    """Whether a logarithmic y axis is asked for."""
    return _LOG.search(text) is not None


def find_title(text: str) -> tuple[str | None, tuple[int, int] | None]:
    """The plot title asked for and its span in the text (to mask it from other parsing)."""
    match = _TITLE_QUOTED.search(text) or _TITLE_BARE.search(text)
    if not match or not match["title"].strip():
        return None, None
    return match["title"].strip(), match.span()


def find_colours(text: str) -> tuple[str, ...]:
    """Colour names or #rrggbb codes, in the order written."""
    return tuple(m[0].lower() for m in _COLOUR.finditer(text))


_FIGURE_FORMAT = re.compile(r"\b(png|pdf|html)\b", re.I)
_DATA_FORMAT = re.compile(r"\b(csv|parquet|netcdf|nc)\b", re.I)
_SAVE_VERB = re.compile(r"\b(?:save|export|write|download|store)\w*\b|\bas an? \w+ file\b", re.I)
_FILENAME = re.compile(r"\b[\w\-]+\.(?:png|pdf|html|csv|parquet|nc)\b", re.I)


def find_export(text: str) -> tuple[str | None, str | None, str | None]:
    """(figure format, figure file name, data format) of a save/export wish."""
    filename_match = _FILENAME.search(text)
    filename = filename_match[0] if filename_match else None
    if not _SAVE_VERB.search(text) and filename is None:
        return None, None, None
    figure = _FIGURE_FORMAT.search(text)
    data = _DATA_FORMAT.search(text)
    data_format = None
    if data:
        data_format = {"nc": "netcdf"}.get(data[1].lower(), data[1].lower())
    figure_format = figure[1].lower() if figure else None
    figure_file = None
    if filename and filename.lower().endswith((".png", ".pdf", ".html")):
        figure_file = filename
        figure_format = filename.rsplit(".", 1)[1].lower()
    if (
        figure_format is None
        and data_format is None
        and re.search(r"\b(?:plot|figure|image|picture|graph)\b", text, re.I)
    ):
        figure_format = "png"
    return figure_format, figure_file, data_format


_DATASET_WORDS = re.compile(r"\bdata ?sets?\b|\bdata products?\b|\binstruments?\b", re.I)
_MISSION_WORDS = re.compile(r"\bmissions\b|\bspacecraft\b|\bobservatories\b|\bprobes\b", re.I)
_LIST_VERBS = re.compile(
    r"\b(?:list|what|which|show|browse|available|have|has|offer|are there|tell me)\b", re.I
)
_SEARCH_VERBS = re.compile(r"\b(?:search|find|look(?:ing)? for|look up|locate)\b", re.I)
_PARAMETER_WORDS = re.compile(
    r"\bparameters?\b|\bvariables?\b|\bparams\b|\bcontents?\b|\bcolumns\b|\bdescribe\b"
    r"|\bwhat(?:'s| is) in\b",
    re.I,
)
_AVAILABILITY_WORDS = re.compile(
    r"\bavailab\w*|\bcoverage\b|\bwhen (?:does|do|is|are|did)\b|\bwhat time range\b", re.I
)


def find_discovery(
    text: str, has_mission: bool, has_dataset: bool, has_quantity: bool, has_time: bool
) -> DiscoveryWish | None:
    """A catalog question, when the request asks about datasets rather than for data."""
    if has_dataset and _PARAMETER_WORDS.search(text) and not has_time:
        return DiscoveryWish("parameters")
    if has_dataset and _AVAILABILITY_WORDS.search(text) and not has_time:
        return DiscoveryWish("availability")
    asks_datasets = _DATASET_WORDS.search(text) is not None
    if _SEARCH_VERBS.search(text) and (asks_datasets or not has_time):
        return DiscoveryWish("search")
    if asks_datasets and (has_quantity or not has_mission) and _LIST_VERBS.search(text):
        return DiscoveryWish("search" if has_quantity else "missions")
    if asks_datasets and has_mission and not has_time:
        return DiscoveryWish("browse")
    if (
        _MISSION_WORDS.search(text)
        and not has_mission
        and not has_time
        and _LIST_VERBS.search(text)
    ):
        return DiscoveryWish("search" if has_quantity else "missions")
    if has_mission and not has_quantity and not has_time and _AVAILABILITY_WORDS.search(text):
        return DiscoveryWish("browse")
    return None


_HINT_WORD = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
_NOT_HINTS = frozenset(
    {"GSE", "GSM", "RTN", "SRF", "GCI", "HCI", "HGI", "IMF", "DOY", "UT", "UTC", "AND", "THE"}
)


def find_hints(text: str, claimed: list[tuple[int, str]]) -> tuple[str, ...]:
    """Words that may name an instrument ("EPAM", "3DP", "SPAN-I", "fgm").

    `text` has missions and times masked already; `claimed` are (position, text) of the
    quantity words, which never count. The resolver matches these against dataset ids
    and title acronyms, so an ordinary word simply matches nothing.
    """
    for position, words in claimed:
        if position >= 0 and text[position : position + len(words)] == words:
            text = text[:position] + " " * len(words) + text[position + len(words) :]
    found = [
        w
        for w in _HINT_WORD.findall(text)
        if len(w) >= 3 and not w.isdigit() and w.upper() not in _NOT_HINTS
    ]
    return tuple(dict.fromkeys(found))
