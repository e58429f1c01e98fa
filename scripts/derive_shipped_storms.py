"""Re-derive the shipped storm list from the hourly OMNI file in the shared real data.

Usage: python scripts/derive_shipped_storms.py OMNI_CSV OUT_CSV
The rule is xhelio.events.storms.detect_storms with its defaults (Gonzalez et al. 1994,
Dst minimum <= -50 nT); tests/test_events_detect.py checks the shipped file matches.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from xhelio.events.storms import detect_storms
from xhelio.events.text_formats import write_csv


def derive(omni_csv: Path) -> str:
    """The storm list, as CSV, of the OMNI file's Dst."""
    table = pd.read_csv(omni_csv)
    times = pd.to_datetime(table["Time"], utc=True)
    dst = pd.Series(table["Dst"].to_numpy(float), index=times)
    return write_csv(detect_storms(dst, "omni-dst-storms-1999-2001"))


if __name__ == "__main__":
    Path(sys.argv[2]).write_text(derive(Path(sys.argv[1])), encoding="utf-8")
