"""Interplanetary shocks from jumps of B, V, n (and T), by the Heliospheric Shock Database rule.

Kilpua, E. K. J., et al. (2015), Properties and drivers of fast interplanetary shocks near
the orbit of the Earth (1995-2013), J. Geophys. Res. Space Physics, 120, 4112-4125,
doi:10.1002/2015JA021138, and the Heliospheric Shock Database (ipshocks.fi) that grew
from it, screen for fast shocks with these downstream/upstream jumps:

* fast forward shock: B2/B1 >= 1.2, n2/n1 >= 1.2, T2/T1 >= 1/1.5 and V2 - V1 >= 20 km/s;
* fast reverse shock: B1/B2 >= 1.2, n1/n2 >= 1.2, T1/T2 >= 1/1.5 and V2 - V1 >= 20 km/s
  (1 = before, 2 = after the time in question; a reverse shock's downstream comes first).

The upstream and downstream values here are means over `window_minutes` on each side,
leaving out `gap_minutes` next to the candidate time (the shock ramp). Candidate times
meeting every criterion form runs; each run gives one shock at its largest B jump, and
shocks closer than one window are one shock. Every ratio and threshold is in the result.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd

from xhelio.errors import UserError
from xhelio.events.model import EventList, make_event_list

__all__ = ["KILPUA_2015", "detect_shocks"]

KILPUA_2015 = (
    "Kilpua, E. K. J., et al. (2015), Properties and drivers of fast interplanetary shocks "
    "near the orbit of the Earth (1995-2013), J. Geophys. Res. Space Physics, 120, "
    "4112-4125, doi:10.1002/2015JA021138; Heliospheric Shock Database, ipshocks.fi"
)


def _side_means(grid: pd.DataFrame, window: int, gap: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Means over `window` samples before (ending `gap` before) and after each sample."""
    need = max(1, window // 2)
    before = cast(pd.DataFrame, grid.rolling(window, min_periods=need).mean()).shift(gap + 1)
    reversed_grid = grid.iloc[::-1]
    after = cast(pd.DataFrame, reversed_grid.rolling(window, min_periods=need).mean()).iloc[::-1]
    return before, after.shift(-(gap + 1))


def detect_shocks(
    field: pd.Series,
    speed: pd.Series,
    density: pd.Series,
    temperature: pd.Series | None = None,
    name: str = "shocks",
    *,
    b_ratio: float = 1.2,
    n_ratio: float = 1.2,
    t_ratio: float = 1 / 1.5,
    dv_kms: float = 20.0,
    window_minutes: float = 8.0,
    gap_minutes: float = 1.0,
    origin: str = "",
) -> EventList:
    """Fast forward and reverse shocks in |B| (nT), V (km/s), n (cm^-3) and T (any unit).

    The series are averaged onto a common grid at the cadence of the field data (at
    least one minute). Each event (start = end = the shock time) has `type` (FF/FR) and
    the upstream/downstream values and ratios.
    """
    series = {"B": field, "V": speed, "n": density}
    if temperature is not None:
        series["T"] = temperature
    steps = np.diff(field.index.to_numpy(dtype="datetime64[ns]")).astype(np.int64)
    cadence = cast(
        pd.Timedelta,
        pd.Timedelta(max(60_000_000_000, int(np.median(steps)) if len(steps) else 0), "ns"),
    )
    grid = pd.DataFrame({k: v.resample(cadence).mean() for k, v in series.items()})
    if len(grid) < 4:
        raise UserError("Too few samples to look for shocks; fetch a longer interval.")
    step_minutes = cadence.total_seconds() / 60
    window = max(2, round(window_minutes / step_minutes))
    gap = round(gap_minutes / step_minutes)
    up, down = _side_means(grid, window, gap)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = down / up
    dv = down["V"] - up["V"]
    t_ok_ff = ratio["T"] >= t_ratio if "T" in grid else True
    t_ok_fr = (1 / ratio["T"]) >= t_ratio if "T" in grid else True
    forward = (ratio["B"] >= b_ratio) & (ratio["n"] >= n_ratio) & t_ok_ff & (dv >= dv_kms)
    reverse = (1 / ratio["B"] >= b_ratio) & (1 / ratio["n"] >= n_ratio) & t_ok_fr & (dv >= dv_kms)
    rows: list[dict[str, Any]] = []
    for kind, mask, strength in (("FF", forward, ratio["B"]), ("FR", reverse, 1 / ratio["B"])):
        rows += _shocks(
            kind, mask.fillna(False).to_numpy(bool), cast(pd.Series, strength), up, down
        )
    rows = _separated(sorted(rows, key=lambda r: r["start"]), cadence * window)
    method = {
        "definition": "fast forward/reverse shock jump criteria of the Heliospheric Shock "
        "Database (Kilpua et al. 2015)",
        "B_ratio_min": b_ratio,
        "n_ratio_min": n_ratio,
        "T_ratio_min": round(t_ratio, 4) if temperature is not None else "not used (no T)",
        "dV_min_km_s": dv_kms,
        "window_minutes": window_minutes,
        "gap_minutes": gap_minutes,
        "cadence": str(cadence),
        "reference": KILPUA_2015,
    }
    if window * step_minutes > 2 * window_minutes:
        method["note"] = (
            f"The data cadence ({cadence}) is coarser than the {window_minutes:g}-minute "
            f"means; {window} samples were averaged each side, so weak shocks may be missed."
        )
    columns = [
        "start",
        "end",
        "type",
        "B_up",
        "B_down",
        "n_up",
        "n_down",
        "V_up",
        "V_down",
        "B_ratio",
        "n_ratio",
        "dV",
    ]
    columns += ["T_ratio"] if temperature is not None else []
    return make_event_list(
        name,
        pd.DataFrame(rows, columns=columns),
        description="Fast interplanetary shocks (forward FF, reverse FR)",
        origin=origin,
        citation=KILPUA_2015,
        method=method,
    )


def _shocks(
    kind: str,
    mask: np.ndarray,
    strength: pd.Series,
    up: pd.DataFrame,
    down: pd.DataFrame,
) -> list[dict[str, Any]]:
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    rows: list[dict[str, Any]] = []
    values = strength.to_numpy(dtype=float)
    for first, stop in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
        at = int(first) + int(np.nanargmax(values[first:stop]))
        u, d = up.iloc[at], down.iloc[at]
        # a reverse shock's downstream is the side before it
        lo, hi = (u, d) if kind == "FF" else (d, u)
        row: dict[str, Any] = {
            "start": strength.index[at],
            "end": strength.index[at],
            "type": kind,
            "B_up": round(float(lo["B"]), 3),
            "B_down": round(float(hi["B"]), 3),
            "n_up": round(float(lo["n"]), 3),
            "n_down": round(float(hi["n"]), 3),
            "V_up": round(float(u["V"] if kind == "FF" else d["V"]), 2),
            "V_down": round(float(d["V"] if kind == "FF" else u["V"]), 2),
            "B_ratio": round(float(hi["B"] / lo["B"]), 3),
            "n_ratio": round(float(hi["n"] / lo["n"]), 3),
            "dV": round(float(d["V"] - u["V"]), 2),
        }
        if "T" in up.columns:
            row["T_ratio"] = round(float(hi["T"] / lo["T"]), 3)
        rows.append(row)
    return rows


def _separated(rows: list[dict[str, Any]], spacing: pd.Timedelta) -> list[dict[str, Any]]:
    """Keep the strongest (largest B ratio) of shocks closer than `spacing`."""
    kept: list[dict[str, Any]] = []
    for row in rows:
        if kept and row["start"] - kept[-1]["start"] < spacing:
            if row["B_ratio"] > kept[-1]["B_ratio"]:
                kept[-1] = row
            continue
        kept.append(row)
    return kept
