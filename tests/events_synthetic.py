"""Generated OMNI-like series with planted storms, shocks and SEP events (known answers)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class PlantedStorm:
    onset: pd.Timestamp
    minimum_time: pd.Timestamp
    minimum: float


def dst_with_storms(
    seed: int = 1, cadence: str = "1h"
) -> tuple[pd.Series, list[PlantedStorm], list[pd.Timestamp]]:
    """60 days of quiet Dst (noise about -8 nT) with planted storms and sub-threshold dips.

    Returns the series, the planted storms (all deeper than -50 nT) and the times of
    dips that only reach -35 nT (not storms at the -50 nT threshold).
    """
    rng = np.random.default_rng(seed)
    times = pd.date_range(
        "2015-01-01",
        periods=int(60 * 24 * pd.Timedelta("1h") / pd.Timedelta(cadence)),
        freq=cadence,
        tz="UTC",
    )
    hours = (times - times[0]).total_seconds().to_numpy() / 3600
    dst = -8 + rng.normal(0, 3, len(times))
    planted: list[PlantedStorm] = []
    for day, depth, main in (
        (5, -70, 6),
        (14, -140, 10),
        (22.5, -260, 14),
        (31, -55, 5),
        (44, -110, 8),
    ):
        onset_h = day * 24
        dst += _storm_shape(hours, onset_h, depth, main)
        planted.append(
            PlantedStorm(
                times[0] + pd.Timedelta(hours=onset_h),
                times[0] + pd.Timedelta(hours=onset_h + main),
                depth,
            )
        )
    dips = []
    for day in (9, 37, 52):
        dst += _storm_shape(hours, day * 24, -27, 4)
        dips.append(times[0] + pd.Timedelta(days=day))
    return pd.Series(dst, index=times, name="Dst"), planted, dips


def _storm_shape(hours: np.ndarray, onset: float, depth: float, main: float) -> np.ndarray:
    """+20 nT sudden commencement, linear main phase to `depth`, exponential recovery."""
    shape = np.zeros_like(hours)
    initial = (hours >= onset - 2) & (hours < onset)
    shape[initial] = 20
    falling = (hours >= onset) & (hours < onset + main)
    shape[falling] = 20 + (depth - 20) * (hours[falling] - onset) / main
    recovering = hours >= onset + main
    shape[recovering] = depth * np.exp(-(hours[recovering] - onset - main) / 12)
    return shape


def solar_wind_with_shocks(seed: int = 2) -> tuple[pd.DataFrame, list[tuple[pd.Timestamp, str]]]:
    """10 days of 1-minute |B|, V, n, T with planted fast forward/reverse shocks.

    Also plants a tangential-discontinuity-like jump (B and n up, V unchanged) and a
    slow speed ramp, which are not shocks.
    """
    rng = np.random.default_rng(seed)
    times = pd.date_range("2015-03-01", periods=10 * 1440, freq="1min", tz="UTC")
    n = len(times)
    b = np.full(n, 5.0)
    v = np.full(n, 400.0)
    dens = np.full(n, 5.0)
    temp = np.full(n, 8e4)
    planted: list[tuple[pd.Timestamp, str]] = []
    for day, kind in ((1.3, "FF"), (3.7, "FF"), (6.2, "FR"), (8.5, "FF")):
        i = int(day * 1440)
        after = slice(i, min(n, i + 600))
        before = slice(max(0, i - 600), i)
        if kind == "FF":
            b[after] *= 2.0
            dens[after] *= 2.5
            temp[after] *= 2.0
            v[after] += 80
        else:
            b[before] *= 2.0
            dens[before] *= 2.5
            temp[before] *= 2.0
            v[before] -= 70
        planted.append((times[i], kind))
    td = int(5.0 * 1440)
    b[td : td + 300] *= 1.8
    dens[td : td + 300] *= 1.6
    ramp = int(7.5 * 1440)
    v[ramp : ramp + 600] += np.linspace(0, 100, 600)
    v[ramp + 600 :] += 100
    frame = pd.DataFrame(
        {
            "B": b * (1 + rng.normal(0, 0.03, n)),
            "V": v + rng.normal(0, 4, n),
            "n": dens * (1 + rng.normal(0, 0.04, n)),
            "T": temp * (1 + rng.normal(0, 0.05, n)),
        },
        index=times,
    )
    return frame, planted


def proton_intensity_with_onsets(seed: int = 3) -> tuple[pd.Series, list[pd.Timestamp]]:
    """3 days of 1-minute Poisson counts, background 5, with two SEP events."""
    rng = np.random.default_rng(seed)
    times = pd.date_range("2012-05-17", periods=3 * 1440, freq="1min", tz="UTC")
    rate = np.full(len(times), 5.0)
    onsets = []
    for start, peak, length in ((1000, 400.0, 900), (2900, 120.0, 700)):
        rise = np.linspace(0, 1, 60)
        rate[start : start + 60] += peak * rise
        rate[start + 60 : start + length] += peak * np.exp(-np.arange(length - 60) / 120)
        onsets.append(times[start])
    return pd.Series(rng.poisson(rate).astype(float), index=times), onsets


def solar_wind_with_stream_interactions(
    seed: int = 5,
) -> tuple[pd.DataFrame, list[pd.Timestamp], list[pd.Timestamp]]:
    """40 days of hourly |B|, V, n, T (K) with planted SIRs and look-alikes that are not.

    Each SIR: slow wind (380 km/s, 8 cm^-3, 6e4 K, 5 nT) overtaken by a fast stream
    (650 km/s, 3 cm^-3, 2.5e5 K): density and field pile up ahead of the interface, where
    the density drops and the temperature rises; the stream decays over three days.
    Look-alikes: a density and field pulse with no speed change (a plasma sheet crossing)
    and a slow speed rise of 120 km/s with no compression. Returns the series, the
    planted interfaces and the look-alikes' times.
    """
    rng = np.random.default_rng(seed)
    times = pd.date_range("2008-01-01", periods=40 * 24, freq="1h", tz="UTC")
    h = np.arange(len(times), dtype=float)
    v, n, t, b = (
        np.full(len(h), 380.0),
        np.full(len(h), 8.0),
        np.full(len(h), 6e4),
        np.full(len(h), 5.0),
    )
    interfaces = []
    for day in (4, 13, 23):
        si = day * 24.0
        fast = (1 + np.tanh((h - si) / 1.0)) / 2 * np.clip(1 - (h - si - 72) / 72, 0, 1)
        rise = (1 + np.tanh((h - si) / 6.0)) / 2 * np.clip(1 - (h - si - 72) / 72, 0, 1)
        v += 270 * rise
        n = n * (1 - fast) + 3.0 * fast + 18 * np.exp(-(((h - si + 6) / 5) ** 2)) * (h < si)
        t = t * (1 - fast) + 2.5e5 * fast
        b += 10 * np.exp(-(((h - si) / 8) ** 2))
        interfaces.append(times[int(si)])
    lookalikes = [times[30 * 24], times[36 * 24]]
    n += 15 * np.exp(-(((h - 30 * 24) / 5) ** 2))
    b += 6 * np.exp(-(((h - 30 * 24) / 5) ** 2))
    v += 120 * np.clip((h - 35 * 24) / 48, 0, 1) * (h < 39 * 24)
    noise = lambda: 1 + rng.normal(0, 0.03, len(h))  # noqa: E731
    frame = pd.DataFrame(
        {"B": b * noise(), "V": v * noise(), "n": n * noise(), "T": t * noise()}, index=times
    )
    return frame, interfaces, lookalikes
