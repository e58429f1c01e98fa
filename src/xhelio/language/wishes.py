"""The small grammar of wishes: durations, operations, plot styling, exports, discovery.

Each function reads one kind of wish from request text and returns plain values (or the
spans it used, so `parse.py` can mask them before looking for missions and time ranges).
Nothing here knows the catalog or the tools. Imports only `language.intent` and
`language.operations` (the operation words of the vocabulary).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xhelio.language.intent import DiscoveryWish, Layout, OperationKind, OperationWish
from xhelio.language.operations import (
    derived_spans,
    describe_statistic,
    detrend_kind,
    frame_rotation,
    named_operations,
    per_unit_cadence,
    ratio_slashes,
    running_statistic,
    scale_factor,
    statistic_near,
    statistics_near,
    transform,
    whole_window_statistics,
)

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
# "3-hourly", "6 hourly": the count of a cadence word; never a date's day ("2015-03-17
# hourly", "March 17 hourly", "17.03.2015 hourly").
_COUNT_BEFORE = re.compile(r"(?<![\w\-/.:])(\d{1,2})(?:-| )?$")
_MONTH_BEFORE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+$", re.I
)


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
    r"\bresampl\w*|\brebin\w*|\b(?:bins?|binned|windows?|intervals|blocks|chunks)\b|\bdownsampl\w*"
    r"|\baverag\w*\b|\bmeans\b|\bmean values\b|\bcadence\b|\bresolution\b"
    r"|\bhourly\b|\bdaily\b|\bminutely\b",
    re.I,
)
_DIFFERENCE = re.compile(r"\bdifference\b|\bminus\b|\bsubtract\w*|\bdiff\b", re.I)
_RATIO = re.compile(r"\bratio\b|\bdivided by\b|\bdivide\b", re.I)


# The words a spectral estimate's segment length is written next to ("1 hr welch
# segments", "welch with 10 min segments", "FFT length of 5 minutes").
_SEGMENT = re.compile(
    r"\bsegments?\b|\bnperseg\b|\bwelch\b|\b(?:FFT|fourier)\s+(?:length|window)s?\b", re.I
)


def _segment(text: str, durations: list[Duration], used: set[int]) -> Duration | None:
    """The stated segment length of a spectral estimate, if a duration is written by it."""
    free = [d for d in durations if d.start not in used]
    for match in _SEGMENT.finditer(text):
        if (found := _near(free, *match.span(), reach=12)) is not None:
            return found
    return None


def _spectral_wishes(
    kinds: set[str], text: str, durations: list[Duration], used: set[int]
) -> list[OperationWish]:
    """The spectral estimates asked for, each with its segment length when one is stated."""
    segment = _segment(text, durations, used)
    if segment is not None:
        used.add(segment.start)
    out: list[OperationWish] = []
    for key, label in _SPECTRAL:
        if key not in kinds:
            continue
        if segment is not None and key != "wavelet":
            said = f"{label} in {format_seconds(segment.seconds)} segments"
            out.append(OperationWish(key, said, window_s=segment.seconds))
        else:
            out.append(OperationWish(key, label))
    return out


_SPECTRAL: tuple[tuple[OperationKind, str], ...] = (
    ("psd", "Welch power spectral density"),
    ("dynamic_power", "dynamic spectrum (sliding FFT)"),
    ("wavelet", "wavelet power (Morlet)"),
)


def find_operations(text: str, durations: list[Duration]) -> list[OperationWish]:
    """Operations asked for, in the order a scientist means them (smooth, resample, ...).

    Each keeps the parameters the request states: the running window's length and
    statistic ("20-minute boxcar", "rolling median over 1 h"), the cadence and statistic
    of a resampling ("10-minute bins", "hourly maxima", "95th percentile per day"), the
    trend a detrend removes.
    """
    named = named_operations(text)
    kinds = {key for key, _, _ in named}
    smooth = _SMOOTH.search(text)
    running = running_statistic(text)
    used: set[int] = set()
    detrends = [(start, end) for key, start, end in named if key == "detrend"]
    ops = _window_wishes(text, durations, (smooth, running), detrends, used)
    resample = _resample_wish(text, durations, used, (smooth, running))
    if resample is not None:
        ops.append(resample)
    if not any(op.detail == "running" for op in ops):
        for start, end in detrends:
            trend = detrend_kind(text, start, end)
            ops.append(OperationWish("detrend", f"{trend} trend removed", detail=trend))
    if "derivative" in kinds:
        ops.append(OperationWish("derivative", "time derivative"))
    if "integral" in kinds:
        ops.append(OperationWish("integral", "time integral (cumulative, trapezoid rule)"))
    for key in dict.fromkeys(key for key, _, _ in named):
        if (element_wise := transform(key)) is not None:
            ops.append(OperationWish("transform", element_wise.label, detail=key))
    if (scale := scale_factor(text)) is not None:
        said = f"{'divided' if scale[0][0] == '/' else 'multiplied'} by {scale[0][2:]}"
        ops.append(OperationWish("scale", said, detail=scale[0]))
        named.append(("scale", scale[1], scale[2]))
    if (rotation := frame_rotation(text)) is not None:
        source, target = rotation[:2]
        ops.append(OperationWish("rotate", f"rotated into {target}", detail=f"{source}>{target}"))
    ops += _spectral_wishes(kinds, text, durations, used)
    ops += _whole_window_wish(text, durations, ops, named)
    if "cross_correlation" in kinds:
        ops.append(OperationWish("cross_correlation", "cross-correlation with lag"))
    # a derived quantity's own words ("alpha-to-proton ratio") are no ratio of two series
    named += [("derived", a, b) for a, b in derived_spans(text)]
    if "percent_difference" in kinds:
        ops.append(OperationWish("percent_difference", "percent difference of the two series"))
    elif ratio_slashes(text) or any(not _inside(m.span(), named) for m in _RATIO.finditer(text)):
        ops.append(OperationWish("ratio", "ratio of the two series"))
    elif any(not _inside(m.span(), named) for m in _DIFFERENCE.finditer(text)):
        ops.append(OperationWish("difference", "difference of the two series"))
    return ops


def _whole_window_wish(
    text: str,
    durations: list[Duration],
    ops: list[OperationWish],
    named: list[tuple[str, int, int]],
) -> list[OperationWish]:
    """Statistics no window or bin computes, over the whole interval ("median Bz", "peak V")."""
    done = {s for op in ops if op.kind in ("smooth", "resample") for s in op.detail.split(",")}
    masked = [(d.start, d.end) for d in durations] + [(a, b) for _, a, b in named]
    statistics = whole_window_statistics(text, done, masked)
    if not statistics:
        return []
    names = [describe_statistic("" if s == "mean" else s) for s in statistics]
    said = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return [
        OperationWish("statistics", f"{said} over the whole interval", detail=",".join(statistics))
    ]


def _window_wishes(
    text: str,
    durations: list[Duration],
    smoothing: tuple[re.Match[str] | None, tuple[str, int, int] | None],
    detrends: list[tuple[int, int]],
    used: set[int],
) -> list[OperationWish]:
    """The running window asked for, or the running mean a removal takes away.

    "smoothed over 1 h" smooths; "with the 1-hour running mean subtracted" and "anomaly
    from the 27-day mean" remove a running mean of that length (a high-pass). Durations
    taken are added to `used`.
    """
    smooth, running = smoothing
    if smooth or running:
        start, end = running[1:] if running else smooth.span() if smooth else (0, 0)
        window = _near(durations, start, end)
        if window is not None:
            used.add(window.start)
        statistic = running[0] if running else ""
        points = _near_points(text, start, end) if window is None else None
        wish = _smooth_wish(window, statistic, points)
        if not statistic and any(_same_clause(text, (start, end), d) for d in detrends):
            return [_running_mean_removed(wish)]
        return [wish]
    for start, end in detrends:
        if (mean := _mean_after_duration(text, durations, start, end)) is not None:
            used.add(mean.start)
            what = f"running mean over {format_seconds(mean.seconds)}"
            return [_running_mean_removed(OperationWish("smooth", what, mean.seconds))]
    return []


def _same_clause(text: str, a: tuple[int, int], b: tuple[int, int], reach: int = 60) -> bool:
    """Whether two spans are within `reach` characters with no comma or ';' between."""
    between = text[min(a[1], b[1]) : max(a[0], b[0])]
    return len(between) <= reach and not re.search("[,;]", between)


_MEAN_WORD = re.compile(
    r"[\s-]*(?:(?:running|moving|rolling|sliding)[\s-]+)?(?:mean|average)\b", re.I
)


def _mean_after_duration(
    text: str, durations: list[Duration], start: int, end: int
) -> Duration | None:
    """A duration written as a mean's length ("27-day mean") in the removal's clause, if any."""
    for d in durations:
        mean = _MEAN_WORD.match(text, d.end)
        if mean is not None and _same_clause(text, (d.start, mean.end()), (start, end)):
            return d
    return None


def _running_mean_removed(smooth: OperationWish) -> OperationWish:
    """The detrend removing the running mean that `smooth` would compute (its window kept)."""
    return OperationWish(
        "detrend",
        smooth.text.replace("smoothed", "running mean") + " removed",
        smooth.window_s,
        smooth.explicit_window,
        "running",
        smooth.window_points,
    )


def _inside(span: tuple[int, int], named: list[tuple[str, int, int]]) -> bool:
    """Whether `span` is part of a named operation ("subtract the mean" is a detrend)."""
    return any(start <= span[0] and span[1] <= end for _, start, end in named)


_POINTS = re.compile(r"(?<![\w.])(?P<n>\d+)[\s-]*(?:points?|samples?|pts?)\b", re.I)


def _near_points(text: str, start: int, end: int, reach: int = 30) -> int | None:
    """A window written in samples ("5-point running mean") near [start, end), if any."""
    for match in _POINTS.finditer(text):
        if max(match.start() - end, start - match.end(), 0) <= reach and int(match["n"]) > 0:
            return int(match["n"])
    return None


def _resample_wish(
    text: str,
    durations: list[Duration],
    used: set[int],
    smoothing: tuple[re.Match[str] | None, tuple[str, int, int] | None],
) -> OperationWish | None:
    """A resampling to the cadence the request states, with its statistic, or None.

    The cadence is "one value per day", a resampling word near a duration ("10-minute
    bins") or a cadence word ("hourly"), or a statistic next to a duration or a "per
    <unit>" ("3-hour median", "maximum per day"). The statistic is the one written next
    to the cadence ("daily minimum", "hourly maxima"), else the mean.
    """
    smooth, running = smoothing
    taken = [s.span() for s in (smooth,) if s] + [r[1:] for r in (running,) if r]
    masked = [(d.start, d.end) for d in durations] + taken
    free = [d for d in durations if d.start not in used]

    def wish(seconds: float, start: int, end: int) -> OperationWish:
        near = statistics_near(text, start, end, masked)
        statistics: tuple[str, ...] = near[0] if near else ("",)
        names = [_plural(describe_statistic(s)) for s in statistics]
        name = "averages" if statistics == ("",) else " and ".join(names)
        what = f"{format_seconds(seconds)} {name}"
        # several statistics of the same bins ("daily mean and max"): "mean,max"
        detail = (
            ",".join(s or "mean" for s in statistics)
            if len(statistics) > 1
            else "".join(statistics)
        )
        return OperationWish("resample", what, seconds, detail=detail)

    per_unit = per_unit_cadence(text)
    if per_unit is not None:
        return wish(*per_unit)
    for match in _RESAMPLE.finditer(text):
        word = match[0].lower()
        if any(match.start() < end and match.end() > start for start, end in taken):
            continue
        if word in _CADENCE_WORDS:
            # A cadence word says its own cadence, times a count written onto it
            # ("3-hourly"), never a product's cadence further off ("OMNI 1-min, hourly").
            count = _COUNT_BEFORE.search(text, 0, match.start())
            if count and _MONTH_BEFORE.search(text, 0, count.start()):
                count = None
            start = count.start() if count else match.start()
            times = float(count[1]) if count else 1.0
            return wish(times * _CADENCE_WORDS[word], start, match.end())
        window = _near(free, *match.span(), reach=25)
        if window is not None:
            span = (min(match.start(), window.start), max(match.end(), window.end))
            return wish(window.seconds, *span)
    bare = per_unit_cadence(text, bare=True)
    if bare is not None and statistic_near(text, *bare[1:], masked, reach=12):
        return wish(*bare)
    for d in free:  # "3-hour median of ...": the statistic right after the duration
        near = statistic_near(text, d.start, d.end, masked, reach=2)
        if near is not None and near[1] >= d.end:
            return wish(d.seconds, d.start, d.end)
    return None


def _plural(name: str) -> str:
    """The statistic's name for several values: "maximum" -> "maxima", "mean" -> "means"."""
    return {"maximum": "maxima", "minimum": "minima"}.get(name, f"{name}s")


def _smooth_wish(
    window: Duration | None, statistic: str = "", points: int | None = None
) -> OperationWish:
    detail = statistic
    what = f"running {describe_statistic(detail)}" if detail else "smoothed"
    if points is not None:
        return OperationWish(
            "smooth", f"{what} over {points} points", detail=detail, window_points=points
        )
    if window is None:
        return OperationWish("smooth", what, None, explicit_window=False, detail=detail)
    text = f"{what} over {format_seconds(window.seconds)}"
    return OperationWish("smooth", text, window.seconds, detail=detail)


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
# "log10 of the density" is a transform of the values, not a log axis.
_LOG = re.compile(
    r"\blog(?:arithmic)?[- ]?(?:scale|axis|y|plot)?\b(?!\s*(?:of\b|\())|\bsemi-?log\w*"
    r"|\blog10\b(?!\s*(?:of\b|\())",
    re.I,
)
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


# Words a request may hold besides missions, quantities and times without naming anything
# to fetch ("show me ACE and Wind data during the storm").
_FILLER_WORDS = """a an and or the of for from on in at to by with between during around near over
    show plot display draw get fetch give load see view me us please can could you i we
    want would like let lets let's compare comparison overlay vs versus against both all
    their its it this that data measurements observations overview summary conditions
    parameters solar wind plasma upstream what was were how did does look looked like
    storm event period time interval day days spacecraft mission probe probes and/or
    proton protons ion ions plots plotting quick quicklook key"""
_FILLER = frozenset(_FILLER_WORDS.split())
_WORD = re.compile(r"(?<![\w])[A-Za-z0-9][\w+/'-]*")


def find_unplaced(text: str, known: re.Pattern[str] | None = None) -> tuple[str, ...]:
    """Words of `text` (missions and times masked) that name nothing offline mode knows.

    A request naming missions and no quantity gets the solar wind overview, but not
    when it names something else ("ACE neutron monitor counts", "oxygen charge state"):
    that is asked about. `known` matches further words to ignore (instrument names).
    """
    words = [
        w
        for w in _WORD.findall(text)
        if w.lower().strip("'") not in _FILLER and any(c.isalpha() for c in w)
    ]
    return tuple(w for w in words if known is None or not known.fullmatch(w))
