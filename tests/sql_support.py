"""A session's worth of entries for the SQL tests: Dst and ACE hourly for 2015, storms."""

from __future__ import annotations

import numpy as np
import pandas as pd

from xhelio.data.entry import DataEntry

DST = "OMNI2_H0_MRG1HR.DST1800"
HOURS = pd.date_range("2015-01-01", "2015-12-31 23:00", freq="h", tz="UTC")
STORM_DAYS = ("2015-03-17", "2015-06-22", "2015-12-20")


def dst_entry() -> DataEntry:
    """Quiet Dst (-10 nT) with three storm days dipping below -100 nT."""
    values = np.full(len(HOURS), -10.0)
    for depth, day in zip((-222.0, -204.0, -155.0), STORM_DAYS, strict=True):
        first = pd.Timestamp(day, tz="UTC")
        values[np.asarray((first <= HOURS) & (first + pd.Timedelta(hours=6) > HOURS))] = depth
    frame = pd.DataFrame({"DST1800": values}, index=HOURS)
    return DataEntry(DST, frame, {"DST1800": "nT"}, "Dst index", "OMNI2_H0_MRG1HR", "DST1800")


def ace_entry() -> DataEntry:
    """Bz cycling through the day and a solar wind speed that is fast on two storm days."""
    bz = -5.0 * np.sin(np.arange(len(HOURS)) * 2 * np.pi / 24)
    speed = np.full(len(HOURS), 400.0)
    for day in STORM_DAYS[:2]:
        speed[HOURS.normalize() == pd.Timestamp(day, tz="UTC")] = 700.0
    frame = pd.DataFrame({"Bz": bz, "V": speed}, index=HOURS)
    return DataEntry("ace", frame, {"Bz": "nT", "V": "km/s"}, "ACE test data")


def storms_entry() -> DataEntry:
    """An event list: one row per storm with start, stop and minimum Dst."""
    frame = pd.DataFrame(
        {
            "start": pd.to_datetime(list(STORM_DAYS), utc=True),
            "stop": pd.to_datetime(list(STORM_DAYS), utc=True) + pd.Timedelta(hours=6),
            "min_dst": [-222.0, -204.0, -155.0],
        }
    )
    return DataEntry("events.storms", frame, {"min_dst": "nT"}, "storms", is_timeseries=False)


def session_entries() -> list[DataEntry]:
    """The three entries of the SQL tests' session."""
    return [dst_entry(), ace_entry(), storms_entry()]
