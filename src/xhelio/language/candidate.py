"""A candidate (dataset, parameter) for a quantity, and what ranks datasets apart.

The order a scientist picks in (`rank_key`), a dataset's cadence (`cadence_of`), its
processing level (definitive, quick-look, burst: `level_rank`, `level_score`) and how
much of the requested time it covers (`time_coverage`). Used by `language.resolve`,
which scores candidates, and by `language.choice_notes`, which says why one was chosen.
Imports `catalog` and `timerange` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from xhelio.catalog.model import DatasetInfo
from xhelio.timerange import TimeRange

__all__ = [
    "NO_COVERAGE",
    "UNCOVERED",
    "Candidate",
    "cadence_of",
    "duration_seconds",
    "level_rank",
    "level_score",
    "product_cadence",
    "rank_key",
    "time_coverage",
]

_QUICKLOOK = re.compile(
    r"(?:^|_)(?:K[0-9P]|QL|LL0\d|RT|LB)(?:_|$)|PRELIM|quick-?look|low latency|beacon"
    r"|near[- ]real[- ]time",
    re.I,
)
_BURST = re.compile(r"BRST|burst|waveform|_WF_|_DBM_", re.I)
_DEFINITIVE = re.compile(r"(?:^|_)(?:L2|L3|H[0-9]|DEF)(?:_|-|$)", re.I)
_L1 = re.compile(r"(?:^|_)L1[AB]?(?:_|$)", re.I)
_SECONDARY = re.compile(r"AUX(?:_|-|$)|PARTMOMS|MERGED|COHO", re.I)
_ID_CADENCE = re.compile(
    r"(\d+)-?(SECONDS?|SEC|S|MINUTES?|MIN|M|HOURS?|HR|H|DAYS?|D)(?:_|-|$)", re.I
)
_CADENCE_UNITS = {"S": 1.0, "M": 60.0, "H": 3600.0, "D": 86400.0}
_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")
NO_COVERAGE = 20.0  # the demotion of a dataset with no data in the requested time
UNCOVERED = "no coverage of the requested time"


@dataclass(frozen=True)
class Candidate:
    """One (dataset, parameter) that can deliver a quantity, with why it ranked so."""

    dataset_id: str
    parameter: str
    units: str
    components: int
    score: float
    reason: str
    cadence_s: float | None = None
    notes: tuple[str, ...] = ()
    """What the answer must say about this choice (product words it lacks, a better-worded
    sibling left out for want of data in the requested time)."""
    said: int = 0
    """How many of the request's product words the dataset says, with data in the requested
    time (`products.variant_count`): it orders candidates before `score` does."""
    named: int = 0
    """How many of those are words naming a product ("RAD2", "FBK", "burst", "pitch angle
    distribution"; not a plain word such as "electron" in an id): they order first."""
    fit: float = 0.0
    """How far the parameter is what was asked, where that has levels (a spectrogram's
    axis, look direction and field: `spectra.asked_fit`; an ephemeris dataset for a
    position); 0 for other quantities."""
    exact: int = 0
    """How many of the product words named are said by the dataset as typed, not only
    by a vocabulary synonym: "STEP" typed, Wind's EPACT-STEP beats EPACT-LEMT."""
    quicklook: bool = False
    """Quick-look, low-latency, beacon or key-parameter data the request did not ask
    for: science-quality siblings saying as much of the request go first."""
    borrowed: bool = False
    """The quantity carried by another kind of instrument's dataset (a magnetic field in
    an ion spectrometer's file) or without data in the requested time: the datasets of
    the instrument that measures it go first, quick-look or not."""


def rank_key(c: Candidate) -> tuple[int, int, float, int, bool, bool, float, str]:
    """Best first: products named (as typed first), what was asked, words said, level.

    The instrument measuring the quantity goes before another instrument's copy of it,
    science data before quick-look data saying as much, then the score. A plain word
    said ("electron" in an id) never lifts one sensor's intensity over the omni spectrum
    asked; a product named ("RAD2", "FBK") is the one shown.
    """
    return (
        -c.named,
        -c.exact,
        -c.fit,
        -c.said,
        c.borrowed,
        c.quicklook,
        -c.score,
        c.dataset_id,
    )


def duration_seconds(text: str | None) -> float | None:
    """Seconds in an ISO-8601 duration such as PT1M or P1D (None if not one)."""
    match = _DURATION.match((text or "").strip().upper())
    if not match or not any(match.groups()):
        return None
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def _now() -> datetime:
    return datetime.now(UTC)


def cadence_of(info: DatasetInfo) -> float | None:
    """The dataset's cadence in seconds: from the catalog, else from its id ("1-MINUTE")."""
    known = duration_seconds(info.cadence)
    if known is not None:
        return known
    match = _ID_CADENCE.search(info.id.upper())
    if match is None:
        return None
    return float(match[1]) * _CADENCE_UNITS[match[2][0].upper()]


_TITLE_CADENCE = re.compile(
    r"\b(\d+(?:\.\d+)?)[- ]?(seconds?|sec|s|minutes?|min|hours?|hr|days?)\b"
    r"|\b(hourly|daily)\b",
    re.I,
)
_WORD_SECONDS = {"hourly": 3600.0, "daily": 86400.0}


def product_cadence(info: DatasetInfo) -> float | None:
    """The cadence a product already is: the catalog's, its id's, else its title's.

    A title naming one cadence ("1-Hour Level 2", "daily averaged fluxes") says what the
    product is; one naming several ("3 sec, 1 min, and hourly") says nothing.
    """
    known = cadence_of(info)
    if known is not None:
        return known
    found: set[float] = set()
    for match in _TITLE_CADENCE.finditer(info.title):
        if match[3]:
            found.add(_WORD_SECONDS[match[3].lower()])
        else:
            found.add(float(match[1]) * _CADENCE_UNITS[match[2][0].upper()])
    return found.pop() if len(found) == 1 else None


def level_rank(info: DatasetInfo) -> int:
    """0 definitive, 1 other, 2 quick-look, 3 burst: the order a scientist picks them."""
    text = f"{info.id} {info.title}"
    if _BURST.search(text):
        return 3
    if _QUICKLOOK.search(text):
        return 2
    return 0 if _DEFINITIVE.search(info.id) else 1


def level_score(info: DatasetInfo) -> float:
    """Definitive over quick-look, burst mode and level 1 last, the instrument's own data."""
    score = 0.0
    text = f"{info.id} {info.title}"
    for pattern, weight in (
        (_QUICKLOOK, -1.0),
        (_BURST, -2.5),
        (_DEFINITIVE, 0.3),
        (_SECONDARY, -0.5),
    ):
        if pattern.search(text if pattern is not _DEFINITIVE else info.id):
            score += weight
    if _L1.search(info.id):
        score -= 1.5
    return score


def time_coverage(info: DatasetInfo, time_range: TimeRange | None) -> tuple[float, list[str]]:
    """Penalty for covering little or none of the requested time."""
    if time_range is None or info.start is None or info.stop is None:
        return 0.0, []
    ongoing = info.stop >= _now() - timedelta(days=400)
    stop = max(info.stop, _now()) if ongoing else info.stop
    overlap = min(time_range.end, stop) - max(time_range.start, info.start)
    span = max(time_range.duration.total_seconds(), 1.0)
    fraction = max(overlap.total_seconds(), 0.0) / span
    if fraction <= 0:
        return -NO_COVERAGE, [UNCOVERED]
    return (-2.0 * (1 - fraction) if fraction < 0.99 else 0.0), []
