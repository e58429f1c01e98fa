"""Geomagnetic storms from Dst or SYM-H, by the intensity classes of Gonzalez et al. (1994).

Gonzalez, W. D., et al. (1994), What is a geomagnetic storm?, J. Geophys. Res., 99(A4),
5771-5792, doi:10.1029/93JA02867: a storm is intense when Dst <= -100 nT, moderate when
-100 < Dst <= -50 nT and weak when -50 < Dst <= -30 nT at its minimum.

The rule applied here (each number is an argument and is stated in the result):
* a storm is a run of the index below the recovery level (default half the threshold)
  whose minimum reaches the threshold (default -50 nT); runs separated by less than
  `merge_hours` above the recovery level are one storm (a multi-step main phase);
* its minimum is the lowest value of that run (the peak of the storm);
* the main phase starts at the highest value within `onset_hours` before the run starts
  up to the minimum (this includes a sudden commencement);
* the recovery ends when the index first returns to the recovery level after the minimum,
  or after `max_recovery_hours` (then `recovery_complete` is false).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

from xhelio.events.model import EventList, make_event_list

__all__ = ["GONZALEZ_1994", "STORM_CLASSES", "detect_storms", "storm_class"]

GONZALEZ_1994 = (
    "Gonzalez, W. D., et al. (1994), What is a geomagnetic storm?, J. Geophys. Res., 99(A4), "
    "5771-5792, doi:10.1029/93JA02867"
)
STORM_CLASSES = (("intense", -100.0), ("moderate", -50.0), ("weak", -30.0))
"""Gonzalez et al. (1994) classes by the minimum of Dst (nT)."""


def storm_class(minimum: float) -> str:
    """'intense', 'moderate', 'weak' or 'below weak' for a Dst minimum (nT)."""
    return next((name for name, limit in STORM_CLASSES if minimum <= limit), "below weak")


def _runs(below: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) positions of the runs of True in `below`."""
    edges = np.diff(np.concatenate(([0], below.astype(np.int8), [0])))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    return [(int(a), int(b)) for a, b in zip(starts, stops, strict=True)]


def detect_storms(
    index: pd.Series,
    name: str = "storms",
    *,
    index_name: str = "Dst",
    threshold: float = -50.0,
    recovery_level: float | None = None,
    onset_hours: float = 12.0,
    merge_hours: float = 3.0,
    max_recovery_hours: float = 168.0,
    split_drop: float = 50.0,
    origin: str = "",
) -> EventList:
    """The storms of a Dst/SYM-H series (time index, nT), as an event list.

    Each event runs from main-phase onset (`start`) to the end of recovery (`end`), with
    `minimum_time`, `minimum` (nT), `class`, `main_phase_hours`, `recovery_hours` and
    `recovery_complete`.
    """
    recovery = threshold / 2 if recovery_level is None else recovery_level
    if recovery <= threshold:
        raise ValueError("recovery_level must be above the threshold (less negative).")
    times = pd.DatetimeIndex(index.index)
    values = index.to_numpy(dtype=float)
    runs = _merged(_runs(values < recovery), times, merge_hours)
    rows: list[dict[str, Any]] = []
    for first, last in runs:
        for storm in _split(values, first, last, threshold, split_drop):
            rows.append(_storm(times, values, storm, onset_hours, max_recovery_hours))
    method = {
        "definition": "Gonzalez et al. (1994) storm classes by the minimum of " + index_name,
        "index": index_name,
        "threshold_nT": threshold,
        "recovery_level_nT": recovery,
        "onset_lookback_hours": onset_hours,
        "merge_gap_hours": merge_hours,
        "max_recovery_hours": max_recovery_hours,
        "split_drop_nT": split_drop,
        "classes_nT": {name: limit for name, limit in STORM_CLASSES},
        "reference": GONZALEZ_1994,
    }
    columns = [
        "start",
        "end",
        "minimum_time",
        "minimum",
        "class",
        "main_phase_hours",
        "recovery_hours",
        "recovery_complete",
    ]
    return make_event_list(
        name,
        pd.DataFrame(rows, columns=columns),
        description=f"Geomagnetic storms with {index_name} minimum <= {threshold:g} nT",
        origin=origin,
        citation=GONZALEZ_1994,
        method=method,
    )


def _merged(
    runs: list[tuple[int, int]], times: pd.DatetimeIndex, merge_hours: float
) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    gap = np.timedelta64(int(merge_hours * 3600), "s")
    stamps = times.to_numpy(dtype="datetime64[ns]")
    for first, last in runs:
        if merged and stamps[first] - stamps[merged[-1][1]] <= gap:
            merged[-1] = (merged[-1][0], last)
        else:
            merged.append((first, last))
    return merged


@dataclass(frozen=True)
class _Span:
    """One storm's positions: from `first` to `last`, its minimum at `lowest`."""

    first: int
    last: int
    lowest: int
    continued: bool  # it starts where the previous storm's recovery was interrupted
    interrupted: bool  # a new storm began before it recovered


def _split(values: np.ndarray, first: int, last: int, threshold: float, drop: float) -> list[_Span]:
    """The storms of one run below the recovery level (see the module's rule)."""
    spans: list[_Span] = []
    start, lowest, peak = first, first, -1
    for i in range(first, last + 1):
        v = values[i]
        if peak < 0:
            if v < values[lowest]:
                lowest = i
            elif values[lowest] <= threshold < v and v >= values[lowest] + drop:
                peak = i
        elif v > values[peak]:
            peak = i
        elif v <= min(threshold, values[peak] - drop):
            spans.append(_Span(start, peak, lowest, start != first, True))
            start, lowest, peak = peak, i, -1
    if values[lowest] <= threshold:
        spans.append(_Span(start, last, lowest, start != first, False))
    return spans


def _storm(
    times: pd.DatetimeIndex,
    values: np.ndarray,
    span: _Span,
    onset_hours: float,
    max_recovery_hours: float,
) -> dict[str, Any]:
    first, last, lowest = span.first, span.last, span.lowest
    stamps = times.to_numpy(dtype="datetime64[ns]")

    def at(i: int) -> pd.Timestamp:
        return cast(pd.Timestamp, pd.Timestamp(stamps[i], tz="UTC"))

    lookback = np.timedelta64(int(onset_hours * 3600), "s")
    look_from = first if span.continued else int(np.searchsorted(stamps, stamps[first] - lookback))
    onset = look_from + int(np.argmax(values[look_from : lowest + 1]))
    limit = at(lowest) + pd.Timedelta(hours=max_recovery_hours)
    complete = not span.interrupted and last + 1 < len(times) and at(last + 1) <= limit
    end = min(at(last), limit) if span.interrupted or not complete else at(last + 1)
    minimum_time = at(lowest)
    return {
        "start": at(onset),
        "end": end,
        "minimum_time": minimum_time,
        "minimum": round(float(values[lowest]), 1),
        "class": storm_class(float(values[lowest])),
        "main_phase_hours": round((minimum_time - at(onset)).total_seconds() / 3600, 2),
        "recovery_hours": round((end - minimum_time).total_seconds() / 3600, 2),
        "recovery_complete": bool(complete),
    }
