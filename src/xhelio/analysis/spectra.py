"""Spectral analysis: Welch PSD with confidence bands, index, dynamic spectrum, wavelets.

The PSD's bands come from the chi-square distribution; the spectral index is fitted over
a chosen range; the dynamic spectrum is a spectrogram; wavelet power uses the Morlet.

References: P. D. Welch (1967), IEEE Trans. Audio Electroacoust. 15, 70-73 (the
averaged periodogram); D. B. Percival & A. T. Walden (1993), *Spectral Analysis for
Physical Applications*, Cambridge, §6.17 (equivalent degrees of freedom of overlapped
segments, eq. 292b, and the chi-square confidence interval, eq. 255a); C. Torrence &
G. P. Compo (1998), BAMS 79, 61-78 (wavelet power with the Morlet wavelet).
All methods need uniform sampling: series are put on their median cadence, short gaps
are interpolated linearly and the fraction interpolated is reported.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import numpy.typing as npt
import pywt
from pydantic import Field
from scipy import signal, stats

from xhelio.analysis.checks import FloatArray, sampling_checks, seconds
from xhelio.analysis.report import AnalysisResult, Check
from xhelio.errors import UserError

__all__ = [
    "PSD_REFERENCE",
    "WAVELET_REFERENCE",
    "IndexResult",
    "PsdResult",
    "SpectrogramResult",
    "WaveletResult",
    "dynamic_spectrum",
    "power_unit",
    "spectral_index",
    "uniform_series",
    "wavelet_power",
    "welch_psd",
]

PSD_REFERENCE = (
    "Welch, P. D. (1967), IEEE Trans. Audio Electroacoust. 15, 70-73; confidence bands "
    "from the chi-square distribution with the equivalent degrees of freedom of "
    "Percival, D. B. & Walden, A. T. (1993), Spectral Analysis for Physical Applications, "
    "§6.17 (eqs. 255a, 292b)"
)
INDEX_REFERENCE = (
    "least-squares line in log10(P)-log10(f) over the chosen range (a power law P ∝ f^α); "
    "PSD from " + PSD_REFERENCE
)
WAVELET_REFERENCE = (
    "Torrence, C. & Compo, G. P. (1998), A practical guide to wavelet analysis, Bull. "
    "Amer. Meteor. Soc. 79, 61-78 (Morlet wavelet power), computed with PyWavelets"
)
MAX_GAP_FRACTION = 0.1


class PsdResult(AnalysisResult):
    """PSD per frequency with its lower and upper confidence bounds."""

    frequency_hz: list[float] = Field(default_factory=list[float])
    psd: list[float] = Field(default_factory=list[float])
    lower: list[float] = Field(default_factory=list[float])
    upper: list[float] = Field(default_factory=list[float])
    confidence: float
    dof: float
    step_s: float
    unit: str


class IndexResult(AnalysisResult):
    """Spectral index α of P ∝ f^α over [fmin, fmax] with its standard error."""

    index: float
    index_error: float
    fmin_hz: float
    fmax_hz: float
    points: int


class SpectrogramResult(AnalysisResult):
    """Dynamic spectrum: power (time × frequency) of a series."""

    frequency_hz: list[float] = Field(default_factory=list[float])
    segment_s: float
    columns: int


class WaveletResult(AnalysisResult):
    """Wavelet power (time × frequency) and its time-average (global) spectrum."""

    frequency_hz: list[float] = Field(default_factory=list[float])
    global_power: list[float] = Field(default_factory=list[float])
    peak_frequency_hz: float


def power_unit(unit: str) -> str:
    """The unit of a power spectral density of a series in `unit`: nT -> nT²/Hz.

    A compound unit is squared whole: "km/s" -> "(km/s)²/Hz", "nT GSM" -> "(nT GSM)²/Hz".
    """
    if not unit.strip():
        return "1/Hz"
    return f"{unit}²/Hz" if re.fullmatch(r"[A-Za-zμΩ]+", unit) else f"({unit})²/Hz"


def uniform_series(
    times: npt.ArrayLike, values: npt.ArrayLike
) -> tuple[FloatArray, FloatArray, float, list[Check]]:
    """The series (n,) or (n, k) on its median cadence, as (k, grid), gaps interpolated.

    Raises:
        UserError: fewer than 16 samples, or more than 10% of the grid missing.
    """
    x = np.asarray(values, dtype=np.float64)
    x = x.reshape(len(x), -1)
    t = seconds(times)
    checks = sampling_checks(times, x)
    keep = np.isfinite(x).all(axis=1)
    if keep.sum() < 16:
        raise UserError("Spectral analysis needs at least 16 valid samples.")
    t, x = t[keep], x[keep]
    step = float(np.median(np.diff(t)))
    grid = np.arange(t[0], t[-1] + step / 2, step)
    after = np.clip(np.searchsorted(t, grid), 0, len(t) - 1)
    before = np.clip(after - 1, 0, len(t) - 1)
    nearest = np.minimum(np.abs(t[after] - grid), np.abs(t[before] - grid))
    missing = float(np.mean(nearest > step / 2))
    if missing > MAX_GAP_FRACTION:
        raise UserError(
            f"{missing:.0%} of the uniform grid has no sample (gaps): spectra need uniform "
            "sampling; choose an interval without gaps."
        )
    checks.append(
        Check(
            name="uniform sampling",
            ok=missing <= 0.01,
            detail=f"put on a {step:g} s grid; {missing:.1%} of it interpolated across gaps",
        )
    )
    return grid, np.array([np.interp(grid, t, column) for column in x.T]), step, checks


def _welch_dof(window: FloatArray, segments: int, shift: int) -> float:
    """Equivalent degrees of freedom of Welch's estimate (Percival & Walden eq. 292b)."""
    energy = float(np.sum(window**2))
    total = 0.0
    for m in range(1, segments):
        lag = m * shift
        if lag >= len(window):
            break
        rho = float(np.sum(window[: len(window) - lag] * window[lag:])) / energy
        total += (1 - m / segments) * rho**2
    return 2 * segments / (1 + 2 * total)


def welch_psd(
    times: npt.ArrayLike,
    values: npt.ArrayLike,
    *,
    segment_s: float | None = None,
    confidence: float = 0.95,
    unit: str = "",
) -> PsdResult:
    """Welch power spectral density (Hann window, 50% overlap) with chi-square bands.

    Reference: Welch (1967); degrees of freedom and confidence interval per Percival &
    Walden (1993) §6.17.

    Args:
        times: Sample times (datetime64 or seconds).
        values: The series.
        segment_s: Segment length in seconds (default: an eighth of the series).
        confidence: Confidence level of the band, e.g. 0.95.
        unit: The series' unit (the PSD is in unit²/Hz).
    """
    if not 0 < confidence < 1:
        raise UserError("confidence must be between 0 and 1, e.g. 0.95.")
    _, x, step, checks = uniform_series(times, values)
    samples = x.shape[1]
    nperseg = int(segment_s / step) if segment_s else max(16, samples // 8)
    nperseg = max(8, min(nperseg, samples))
    shift = nperseg // 2
    f, p = signal.welch(x, fs=1 / step, window="hann", nperseg=nperseg, noverlap=nperseg - shift)
    p = p.sum(axis=0)  # one series, or the trace of a vector's spectral matrix
    segments = 1 + (samples - nperseg) // shift
    window = np.asarray(signal.get_window("hann", nperseg), dtype=np.float64)
    dof = _welch_dof(window, segments, shift)
    alpha = 1 - confidence
    lower = dof * p / stats.chi2.ppf(1 - alpha / 2, dof)
    upper = dof * p / stats.chi2.ppf(alpha / 2, dof)
    f, p, lower, upper = f[1:], p[1:], lower[1:], upper[1:]  # drop the mean (f = 0)
    peak = int(np.argmax(p))
    text = (
        f"Welch PSD{' (trace of ' + str(len(x)) + ' components)' if len(x) > 1 else ''} "
        f"of {samples} samples at {step:g} s: {segments} Hann segments of "
        f"{nperseg * step:g} s, {dof:.1f} degrees of freedom; the {confidence:.0%} band is "
        f"×{lower[0] / p[0]:.2f} to ×{upper[0] / p[0]:.2f} of each estimate. Peak at "
        f"{f[peak]:.3g} Hz ({p[peak]:.3g} {power_unit(unit) if unit else 'per Hz'}). "
        f"Method: {PSD_REFERENCE}."
    )
    return PsdResult(
        method="Welch power spectral density",
        reference=PSD_REFERENCE,
        assumptions=[
            "a stationary series over the interval; Hann window, 50% overlap, mean removed "
            "per segment",
            *(
                [
                    "a vector's PSD is the trace (sum of its components' PSDs); the band "
                    "keeps one component's degrees of freedom (conservative)"
                ]
                if len(x) > 1
                else []
            ),
        ],
        checks=checks,
        answer=text,
        frequency_hz=f.tolist(),
        psd=p.tolist(),
        lower=lower.tolist(),
        upper=upper.tolist(),
        confidence=confidence,
        dof=float(dof),
        step_s=step,
        unit=power_unit(unit),
    )


def spectral_index(
    frequency_hz: npt.ArrayLike, psd: npt.ArrayLike, fmin_hz: float, fmax_hz: float
) -> IndexResult:
    """The spectral index α of P ∝ f^α fitted over [fmin_hz, fmax_hz], with its error.

    Args:
        frequency_hz: Frequencies of the PSD.
        psd: The PSD.
        fmin_hz: Lowest frequency fitted.
        fmax_hz: Highest frequency fitted.
    """
    f = np.asarray(frequency_hz, dtype=np.float64)
    p = np.asarray(psd, dtype=np.float64)
    if not 0 < fmin_hz < fmax_hz:
        raise UserError("The fit range needs 0 < fmin < fmax.")
    keep = (f >= fmin_hz) & (f <= fmax_hz) & (p > 0) & np.isfinite(p)
    if keep.sum() < 3:
        raise UserError(
            f"Only {int(keep.sum())} PSD points between {fmin_hz:g} and {fmax_hz:g} Hz; "
            f"the PSD covers {f.min():.3g}-{f.max():.3g} Hz."
        )
    fit: Any = stats.linregress(np.log10(f[keep]), np.log10(p[keep]))
    slope, error = float(fit.slope), float(fit.stderr)
    text = (
        f"Spectral index {slope:.2f} ± {error:.2f} between {fmin_hz:.3g} and {fmax_hz:.3g} Hz "
        f"({int(keep.sum())} points; Kolmogorov −5/3 ≈ −1.67). Method: {INDEX_REFERENCE}."
    )
    return IndexResult(
        method="spectral index fit",
        reference=INDEX_REFERENCE,
        assumptions=[
            "a power law over the range; neighbouring Welch estimates are correlated, so "
            "the error is a lower bound"
        ],
        checks=[],
        answer=text,
        index=slope,
        index_error=error,
        fmin_hz=fmin_hz,
        fmax_hz=fmax_hz,
        points=int(keep.sum()),
    )


def dynamic_spectrum(
    times: npt.ArrayLike, values: npt.ArrayLike, *, segment_s: float | None = None
) -> tuple[FloatArray, FloatArray, FloatArray, SpectrogramResult]:
    """Spectrogram of a series: (segment centre times in s from start, frequencies, power).

    Power from the first frequency above 0 Hz (each segment's mean is removed).

    Args:
        times: Sample times (datetime64 or seconds).
        values: The series.
        segment_s: Segment length in seconds (default: 1/32 of the series, ≥ 16 samples).
    """
    grid, x, step, checks = uniform_series(times, values)
    nperseg = int(segment_s / step) if segment_s else max(16, x.shape[1] // 32)
    nperseg = max(8, min(nperseg, x.shape[1]))
    f, t, power = signal.spectrogram(
        x, fs=1 / step, window="hann", nperseg=nperseg, noverlap=nperseg // 2
    )
    # Each segment's mean is removed: the 0 Hz bin holds nothing, and a frequency axis
    # drawn on a log scale (decades of frequency) has no place for it.
    f, power = f[1:], power[:, 1:, :]
    result = SpectrogramResult(
        method="dynamic spectrum (spectrogram)",
        reference=PSD_REFERENCE,
        assumptions=["stationary within each segment; Hann window, 50% overlap"],
        checks=checks,
        answer=f"Dynamic spectrum: {len(t)} columns of {nperseg * step:g} s, {len(f)} "
        f"frequencies up to {f[-1]:.3g} Hz. Method: {PSD_REFERENCE}.",
        frequency_hz=f.tolist(),
        segment_s=nperseg * step,
        columns=len(t),
    )
    return t + grid[0], f, power.sum(axis=0).T, result


def wavelet_power(
    times: npt.ArrayLike,
    values: npt.ArrayLike,
    *,
    frequencies_hz: npt.ArrayLike | None = None,
    wavelet: str = "cmor1.5-1.0",
) -> tuple[FloatArray, FloatArray, FloatArray, WaveletResult]:
    """Continuous wavelet power |W|² (time × frequency) with the complex Morlet wavelet.

    Reference: Torrence & Compo (1998), computed with pywt.cwt.

    Args:
        times: Sample times (datetime64 or seconds).
        values: The series.
        frequencies_hz: Frequencies to analyse (default: 48 log-spaced from 4 samples to
            a quarter of the interval).
        wavelet: A PyWavelets continuous wavelet name.
    """
    grid, x, step, checks = uniform_series(times, values)
    if frequencies_hz is None:
        top = 1 / (4 * step)
        bottom = 4 / (x.shape[1] * step)
        freqs = np.geomspace(top, bottom, 48)
    else:
        freqs = np.asarray(frequencies_hz, dtype=np.float64)
    centre = pywt.central_frequency(wavelet)
    scales = centre / (freqs * step)
    power: Any = sum(
        np.abs(pywt.cwt(c - c.mean(), scales, wavelet, sampling_period=step)[0]) ** 2 for c in x
    )
    power = (
        power / scales[:, None]
    )  # Liu et al. (2007) bias rectification: peaks comparable across scales
    global_power = power.mean(axis=1)
    peak = float(freqs[int(np.argmax(global_power))])
    result = WaveletResult(
        method="continuous wavelet power (complex Morlet)",
        reference=WAVELET_REFERENCE,
        assumptions=[
            "edges within about one period of the ends are affected by the cone of influence"
        ],
        checks=checks,
        answer=f"Wavelet power: the global spectrum peaks at {peak:.3g} Hz (period "
        f"{1 / peak:.3g} s). Method: {WAVELET_REFERENCE}.",
        frequency_hz=freqs.tolist(),
        global_power=global_power.tolist(),
        peak_frequency_hz=peak,
    )
    return grid, freqs, np.asarray(power).T, result
