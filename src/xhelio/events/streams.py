"""Stream interaction regions (SIRs) and their stream interfaces, by the signatures of Jian et al.

Jian, L., Russell, C. T., Luhmann, J. G. & Skoug, R. M. (2006), Properties of stream
interactions at one AU during 1995-2004, Solar Physics 239, 337-392,
doi:10.1007/s11207-006-0132-3, identify an SIR by: an increase of the solar wind speed;
a pile-up of the total perpendicular pressure Pt = B²/2μ0 + Σ n k T, decreasing
gradually on both sides; an increase then a decrease of the density; an increase of the
temperature; and, at its stream interface, the density dropping as the temperature
rises. Jian et al. judged these by eye; the thresholds here are ours and each is an
argument stated in the result:

* a Pt peak: the largest Pt within ±`peak_window_hours`, at least `pt_ratio` times the
  running median of Pt over `background_hours` (protons only: n k T with the proton
  temperature; electrons are not included);
* a speed increase: the 3-hour mean speed rises by at least `dv_kms` from its lowest in
  the `peak_window_hours` before the peak to its highest in those after it;
* the SIR runs while Pt stays above half way from the background to the peak;
* its stream interface is the hour within it where the density falls and the
  temperature rises most (n before/after times T after/before, over 2 hours); none is given
  when no hour has both.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd

from xhelio.errors import UserError
from xhelio.events.model import EventList, make_event_list

__all__ = ["JIAN_2006", "detect_stream_interactions", "total_pressure"]

JIAN_2006 = (
    "Jian, L., Russell, C. T., Luhmann, J. G. & Skoug, R. M. (2006), Properties of stream "
    "interactions at one AU during 1995-2004, Solar Physics 239, 337-392, "
    "doi:10.1007/s11207-006-0132-3"
)
_MU0 = 4e-7 * np.pi
_KB = 1.380649e-23


def total_pressure(
    field_nt: pd.Series, density_cm3: pd.Series, temperature_k: pd.Series
) -> pd.Series:
    """Pt = B²/2μ0 + n k T (nPa) from |B| (nT), proton density (cm^-3) and temperature (K)."""
    magnetic = (field_nt * 1e-9) ** 2 / (2 * _MU0)
    thermal = density_cm3 * 1e6 * _KB * temperature_k
    return (magnetic + thermal) * 1e9


def detect_stream_interactions(
    field: pd.Series,
    speed: pd.Series,
    density: pd.Series,
    temperature: pd.Series,
    name: str = "stream-interactions",
    *,
    dv_kms: float = 100.0,
    pt_ratio: float = 2.0,
    peak_window_hours: float = 24.0,
    background_hours: float = 120.0,
    origin: str = "",
) -> EventList:
    """SIRs in |B| (nT), V (km/s), n (cm^-3) and proton T (K), averaged to one hour.

    Each event runs over the Pt pile-up (`start`, `end`) with `pt_peak_time`, `pt_max`
    (nPa), `pt_ratio`, `v_before`, `v_after`, `dv` (km/s) and `stream_interface` (a time,
    or empty when the density/temperature signature is missing).
    """
    inputs = {"B": field, "V": speed, "n": density, "T": temperature}
    grid = pd.DataFrame({k: s.resample("1h").mean() for k, s in inputs.items()})
    grid = grid.interpolate(limit=3)
    window = max(2, round(peak_window_hours))
    if len(grid) < 4 * window:
        raise UserError(
            f"Too little data to look for stream interactions ({len(grid)} hours); fetch at "
            f"least {4 * window} hours."
        )
    column = {k: cast(pd.Series, grid[k]) for k in inputs}
    pt = total_pressure(column["B"], column["n"], column["T"])
    background = cast(
        pd.Series, pt.rolling(round(background_hours), center=True, min_periods=window).median()
    )
    peaks = pt == pt.rolling(2 * window + 1, center=True, min_periods=window).max()
    speed3 = cast(pd.Series, column["V"].rolling(3, center=True, min_periods=1).mean())
    before = cast(pd.Series, speed3.rolling(window + 1, min_periods=window // 2).min())
    backward = cast(pd.Series, speed3.iloc[::-1])
    after = cast(pd.Series, backward.rolling(window + 1, min_periods=window // 2).max().iloc[::-1])
    found = peaks & (pt >= pt_ratio * background) & (after - before >= dv_kms)
    rows = [
        _sir(grid, pt, background, int(i), float(before.iloc[i]), float(after.iloc[i]))
        for i in np.flatnonzero(found.fillna(False).to_numpy(bool))
    ]
    method = {
        "definition": "SIR signatures of Jian et al. (2006): speed increase, total "
        "perpendicular pressure pile-up, density drop and temperature rise at the interface",
        "dV_min_km_s": dv_kms,
        "Pt_peak_over_background_min": pt_ratio,
        "peak_window_hours": peak_window_hours,
        "background_median_hours": background_hours,
        "edges": "Pt half way from background to peak",
        "Pt": "B²/2μ0 + n k T with the proton temperature (no electrons)",
        "cadence": "1 hour means",
        "reference": JIAN_2006,
    }
    columns = ["start", "end", "stream_interface", "pt_peak_time", "pt_max", "pt_ratio",
               "v_before", "v_after", "dv"]  # fmt: skip
    return make_event_list(
        name,
        pd.DataFrame(rows, columns=columns),
        description="Stream interaction regions with their stream interfaces",
        origin=origin,
        citation=JIAN_2006,
        method=method,
    )


def _sir(
    grid: pd.DataFrame,
    pt: pd.Series,
    background: pd.Series,
    peak: int,
    v_before: float,
    v_after: float,
) -> dict[str, Any]:
    level = float(background.iloc[peak] + (pt.iloc[peak] - background.iloc[peak]) / 2)
    above = (pt >= level).to_numpy(bool)
    first, last = peak, peak
    while first > 0 and above[first - 1]:
        first -= 1
    while last + 1 < len(above) and above[last + 1]:
        last += 1
    n, t = grid["n"].to_numpy(float), grid["T"].to_numpy(float)
    interface = None
    best = 0.0
    for i in range(max(first, 1), min(last, len(n) - 2) + 1):
        falls, rises = n[i - 1] / n[i + 1], t[i + 1] / t[i - 1]
        if falls > 1 and rises > 1 and falls * rises > best:
            best, interface = falls * rises, grid.index[i]
    return {
        "start": grid.index[first],
        "end": grid.index[last],
        "stream_interface": interface,
        "pt_peak_time": grid.index[peak],
        "pt_max": round(float(pt.iloc[peak]), 4),
        "pt_ratio": round(float(pt.iloc[peak] / background.iloc[peak]), 2),
        "v_before": round(v_before, 1),
        "v_after": round(v_after, 1),
        "dv": round(v_after - v_before, 1),
    }
