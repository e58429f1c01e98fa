"""SEP event onsets by the Poisson-CUSUM method of Huttunen-Heikinmaa et al. (2005).

Huttunen-Heikinmaa, K., Valtonen, E., and Laitinen, T. (2005), Proton and helium release
times in SEP events observed with SOHO/ERNE, Astron. Astrophys., 442, 673-685,
doi:10.1051/0004-6361:20042620. From the mean mu and standard deviation sigma of a
pre-event background, the out-of-control mean is mu_d = mu + 2 sigma; the CUSUM
S_i = max(0, x_i - k + S_(i-1)) uses k = (mu_d - mu) / (ln mu_d - ln mu) (rounded to an
integer when above 1), and the decision limit h = 1 when k < 1, else 2. The onset is the
first of `persistence` consecutive points with S above h (30 points of 1-minute data in
the paper). After an onset the search resumes once the intensity has been back under the
background mean + 2 sigma for `persistence` points.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from xhelio.errors import UserError
from xhelio.events.model import EventList, make_event_list

__all__ = ["HUTTUNEN_HEIKINMAA_2005", "cusum_parameters", "detect_sep_onsets"]

HUTTUNEN_HEIKINMAA_2005 = (
    "Huttunen-Heikinmaa, K., Valtonen, E., and Laitinen, T. (2005), Proton and helium "
    "release times in SEP events observed with SOHO/ERNE, A&A, 442, 673-685, "
    "doi:10.1051/0004-6361:20042620"
)


def cusum_parameters(mu: float, sigma: float, sigmas: float = 2.0) -> tuple[float, float]:
    """(k, h) of the Poisson-CUSUM for a background of mean `mu` and deviation `sigma`."""
    if mu <= 0 or sigma <= 0:
        raise UserError(
            "The background of the intensity is zero or constant; the Poisson-CUSUM needs "
            "a positive, varying background (choose another background window)."
        )
    mu_d = mu + sigmas * sigma
    k = (mu_d - mu) / (np.log(mu_d) - np.log(mu))
    k = float(round(k)) if k > 1 else float(k)
    return k, (1.0 if k < 1 else 2.0)


def _cusum(values: np.ndarray, k: float) -> np.ndarray:
    sums = np.empty_like(values)
    running = 0.0
    for i, x in enumerate(values):
        running = max(0.0, x - k + running)
        sums[i] = running
    return sums


def detect_sep_onsets(
    intensity: pd.Series,
    background: tuple[pd.Timestamp, pd.Timestamp],
    name: str = "sep-onsets",
    *,
    sigmas: float = 2.0,
    persistence: int = 30,
    origin: str = "",
) -> EventList:
    """Onsets of SEP events in a particle intensity series after its background window.

    Raises:
        UserError: the background window holds fewer than 10 samples or no variation.
    """
    times = pd.DatetimeIndex(intensity.index)
    quiet = intensity.loc[(times >= background[0]) & (times < background[1])]
    if len(quiet) < 10:
        raise UserError(
            f"The background window {background[0]} to {background[1]} holds {len(quiet)} "
            "samples; choose a quiet pre-event window with at least 10."
        )
    mu, sigma = float(np.mean(quiet.to_numpy(float))), float(np.std(quiet.to_numpy(float), ddof=1))
    k, h = cusum_parameters(mu, sigma, sigmas)
    after = intensity.loc[times >= background[1]]
    after_times = pd.DatetimeIndex(after.index)
    values = after.to_numpy(dtype=float)
    rows: list[dict[str, Any]] = []
    start = 0
    while start < len(values):
        found = _onset(_cusum(values[start:], k) > h, persistence)
        if found is None:
            break
        onset = start + found
        end = _back_to_quiet(values, onset, mu + sigmas * sigma, persistence)
        rows.append(
            {
                "start": after_times[onset],
                "end": after_times[min(end, len(values) - 1)],
                "onset_intensity": float(values[onset]),
                "peak_intensity": float(np.max(values[onset : end + 1])),
            }
        )
        start = end + 1
    method = {
        "definition": "Poisson-CUSUM onset (Huttunen-Heikinmaa et al. 2005)",
        "background": [str(background[0]), str(background[1])],
        "background_mean": mu,
        "background_std": sigma,
        "mu_d": mu + sigmas * sigma,
        "sigmas": sigmas,
        "k": k,
        "h": h,
        "persistence_points": persistence,
        "reference": HUTTUNEN_HEIKINMAA_2005,
    }
    return make_event_list(
        name,
        pd.DataFrame(rows, columns=["start", "end", "onset_intensity", "peak_intensity"]),
        description="SEP event onsets (Poisson-CUSUM)",
        origin=origin,
        citation=HUTTUNEN_HEIKINMAA_2005,
        method=method,
    )


def _onset(alarm: np.ndarray, persistence: int) -> int | None:
    """The first index of `persistence` consecutive True values."""
    if len(alarm) < persistence:
        return None
    runs = np.convolve(alarm.astype(np.int32), np.ones(persistence, np.int32), "valid")
    hits = np.flatnonzero(runs == persistence)
    return int(hits[0]) if len(hits) else None


def _back_to_quiet(values: np.ndarray, onset: int, level: float, persistence: int) -> int:
    """The last index before the intensity stays under `level` for `persistence` points."""
    quiet = _onset(values[onset:] < level, persistence)
    return len(values) - 1 if quiet is None else onset + quiet - 1
