"""The analysis methods as sandboxed code and exported scripts call them: `analysis.*`.

Generated code sees a module named `analysis` whose functions take what the code has
at hand (a DataFrame with a time index, or arrays) and return plain values: dicts of
numbers with the method, reference, assumptions and checks, or a DataFrame/DataArray for
spectra. No pydantic object enters the sandbox. Plasma quantities need astropy (the
`analysis` extra), which the sandbox does not load; use the plasma_quantities tool.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import xarray as xr

from xhelio.analysis import frames, geoframes, shock, spectra, timing, variance

__all__ = [
    "boundary_timing",
    "cross_correlation_lag",
    "de_hoffmann_teller",
    "dynamic_spectrum",
    "minimum_variance",
    "rotate_frame",
    "sandbox_module",
    "shock_normal",
    "spectral_index",
    "walen_test",
    "warm_up",
    "wavelet_power",
    "welch_psd",
]

Values = pd.DataFrame | pd.Series | npt.ArrayLike


def _split(values: Values, times: npt.ArrayLike | None = None) -> tuple[Any, np.ndarray]:
    """(times, values): a frame's time index is its times."""
    if isinstance(values, pd.DataFrame | pd.Series) and isinstance(values.index, pd.DatetimeIndex):
        index = values.index.tz_convert(None) if values.index.tz is not None else values.index
        return (times if times is not None else index.to_numpy()), values.to_numpy(np.float64)
    return times, np.asarray(values, dtype=np.float64)


def minimum_variance(
    vectors: Values, constrained: bool = False, maximum: bool = False
) -> dict[str, Any]:
    """Minimum variance analysis of (n, 3) vectors (Sonnerup & Scheible 1998, ISSI SR-001 ch. 8).

    Returns a dict: normal, eigenvalues, eigenvectors, ratio (λ2/λ3), quality, cone_deg,
    mean_normal_component(_error), method, reference, assumptions, checks, answer.
    """
    times, data = _split(vectors)
    return variance.minimum_variance(
        data, times, constrained=constrained, maximum=maximum
    ).model_dump()


def shock_normal(
    b_up: Values,
    b_down: Values,
    v_up: Values | None = None,
    v_down: Values | None = None,
    n_up: Values | None = None,
    n_down: Values | None = None,
    t_up: Values | None = None,
    t_down: Values | None = None,
    method: str = "MX3",
) -> dict[str, Any]:
    """Shock normal (MC, VC, MX1-3), θBn, speed and R-H check (Schwartz 1998, ISSI SR-001 ch. 10).

    Samples of each side: B (nT), V (km/s), n (cm^-3), T (K). Returns a dict with normal,
    normal_error_deg, theta_bn_deg, shock_speed_km_s, rankine_hugoniot, answer, ....
    """

    def arr(x: Values | None) -> np.ndarray | None:
        return None if x is None else _split(x)[1]

    up = shock.ShockSide.of(_split(b_up)[1], arr(v_up), arr(n_up), arr(t_up))
    down = shock.ShockSide.of(_split(b_down)[1], arr(v_down), arr(n_down), arr(t_down))
    known = shock.METHODS.index(method) if method in shock.METHODS else -1
    return shock.shock_normal(up, down, shock.METHODS[known]).model_dump()


def de_hoffmann_teller(b: Values, v: Values) -> dict[str, Any]:
    """De Hoffmann-Teller velocity (Khrabrov & Sonnerup 1998, ISSI SR-001 ch. 9).

    b (nT) and v (km/s) are (n, 3) on the same times.
    """
    times, field = _split(b)
    return frames.de_hoffmann_teller(field, _split(v)[1], times).model_dump()


def walen_test(b: Values, v: Values, n: Values) -> dict[str, Any]:
    """Walén test slope and correlation (Khrabrov & Sonnerup 1998, ISSI SR-001 §9.4.2)."""
    times, field = _split(b)
    return frames.walen_test(field, _split(v)[1], _split(n)[1].ravel(), times).model_dump()


def boundary_timing(
    positions_km: npt.ArrayLike, times: npt.ArrayLike, normal: npt.ArrayLike | None = None
) -> dict[str, Any]:
    """Boundary normal and speed from 2-4 spacecraft crossings (Harvey 1998, ISSI SR-001 ch. 12)."""
    return timing.boundary_timing(positions_km, times, normal=normal).model_dump()


def cross_correlation_lag(a: Values, b: Values, max_lag_s: float | None = None) -> dict[str, Any]:
    """Lag (s) of series b behind series a (both with a time index) at peak correlation."""
    ta, xa = _split(a)
    tb, xb = _split(b)
    return timing.cross_correlation_lag(ta, xa, tb, xb, max_lag_s=max_lag_s).model_dump()


def welch_psd(
    values: Values, segment_s: float | None = None, confidence: float = 0.95
) -> pd.DataFrame:
    """Welch PSD with chi-square confidence bands: a DataFrame indexed by frequency (Hz).

    Columns psd, lower, upper; a vector's PSD is its trace. Reference: Welch (1967),
    Percival & Walden (1993) §6.17.
    """
    times, data = _split(values)
    result = spectra.welch_psd(times, data, segment_s=segment_s, confidence=confidence)
    return pd.DataFrame(
        {"psd": result.psd, "lower": result.lower, "upper": result.upper},
        index=pd.Index(result.frequency_hz, name="frequency_hz"),
    )


def spectral_index(psd: pd.DataFrame, fmin_hz: float, fmax_hz: float) -> dict[str, Any]:
    """Spectral index (± error) of a `welch_psd` result between fmin_hz and fmax_hz."""
    column = psd["psd"] if "psd" in psd.columns else psd.iloc[:, 0]
    return spectra.spectral_index(
        psd.index.to_numpy(), column.to_numpy(), fmin_hz, fmax_hz
    ).model_dump()


def _grid(start: Any, seconds: np.ndarray, freqs: np.ndarray, power: np.ndarray) -> xr.DataArray:
    times = np.datetime64(start, "ns") + (seconds * 1e9).astype("timedelta64[ns]")
    return xr.DataArray(power, dims=("time", "frequency"), name="power",
                        coords={"time": times, "frequency": freqs})  # fmt: skip


def dynamic_spectrum(values: Values, segment_s: float | None = None) -> xr.DataArray:
    """Spectrogram (time × frequency DataArray) of a series with a time index."""
    times, data = _split(values)
    seconds, freqs, power, _ = spectra.dynamic_spectrum(times, data, segment_s=segment_s)
    return _grid(times[0], seconds, freqs, power)


def wavelet_power(values: Values) -> xr.DataArray:
    """Morlet wavelet power (time × frequency DataArray) of a series with a time index."""
    times, data = _split(values)
    seconds, freqs, power, _ = spectra.wavelet_power(times, data)
    return _grid(times[0], seconds, freqs, power)


def rotate_frame(vectors: pd.DataFrame, source: str, target: str) -> pd.DataFrame:
    """A vector (time index, 3 columns) rotated between GEI, GEO, GSE, GSM and SM (Hapgood 1992)."""
    return geoframes.rotate_frame(vectors, source, target)


def sandbox_module() -> ModuleType:
    """The `analysis` module sandboxed code sees: these functions only."""
    module = ModuleType("analysis", __doc__)
    for name in __all__:
        if name not in {"sandbox_module", "warm_up"}:
            setattr(module, name, globals()[name])
    return module


def warm_up() -> None:
    """Call every function once, so no import happens later (the sandbox refuses them)."""
    index = pd.date_range("2024-01-01", periods=256, freq="1s")
    t = np.arange(256.0)
    b = pd.DataFrame(
        {"x": np.tanh(t / 40 - 3), "y": np.cos(t / 30), "z": 0.1 + np.sin(t / 7) / 50}, index=index
    )
    minimum_variance(b, constrained=True)
    shock_normal(b[:100] + 0.5, b[150:] * 2, b[:100], b[150:] * 1.5, b["z"][:100] + 1,
                 b["z"][150:] + 3, b["z"][:100] + 1e5, b["z"][150:] + 1e6)  # fmt: skip
    walen_test(b + np.array([0.0, 0.0, 1.0]), b * 3, b["z"] + 1)
    boundary_timing(np.eye(4, 3) * 100, np.array([0.0, 1.0, 2.0, 3.0]))
    cross_correlation_lag(b["x"], b["y"])
    spectral_index(welch_psd(b), 0.01, 0.4)
    dynamic_spectrum(b["y"])
    wavelet_power(b["y"][:64])
    rotate_frame(b, "GSE", "GSM")
