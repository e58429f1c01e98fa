"""Analysis tools: the standard methods of `xhelio.analysis` on stored data.

Each takes stored labels and time ranges, stores its series outputs as new entries
(plottable and exportable; their labels are in `stored`) and returns the method's typed
result: the numbers with their uncertainty, the method, its reference, the assumptions
and the preconditions checked. Registered through the `xhelio.tools` entry point.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr

from xhelio.analysis import frames, plasma, shock, spectra, timing, variance
from xhelio.analysis.checks import unit_scale
from xhelio.errors import UserError
from xhelio.timerange import format_time
from xhelio.tools.analysis_inputs import (
    Series,
    read_series,
    store_output,
    time_span,
    with_stored,
)
from xhelio.tools.context import ToolContext
from xhelio.tools.pitch_tools import pitch_angle_distribution
from xhelio.tools.registry import Produces, tool

__all__ = ["ANALYSIS_TOOLS"]

_STORED = Produces(result_field="stored")


def _label(given: str | None, source: str, suffix: str) -> str:
    return given.strip() if given and given.strip() else f"{source}.{suffix}"


@tool(
    "data_ops_compute",
    public=True,
    produces=_STORED,
    reads=("label",),
    time_args=("time_range",),
    result=variance.VarianceResult,
)
def minimum_variance(
    ctx: ToolContext,
    label: str,
    time_range: str | None = None,
    constrained: bool = False,
    maximum: bool = False,
    output_label: str | None = None,
) -> dict[str, Any]:
    """Minimum variance analysis (MVA) of a stored vector series, e.g. B across a current sheet.

    Returns the eigenvalues, the eigenvectors (L, M, N), the normal, λ2/λ3 with what it means
    for trusting the normal, the error cone and ⟨B·n⟩ ± error (Sonnerup & Scheible 1998,
    ISSI SR-001 ch. 8). Stores the series rotated into L, M, N.

    Args:
        label: Stored vector series (3 components), e.g. 'WI_H0_MFI.BGSE'.
        time_range: Interval analysed, e.g. '2015-03-17 10:15 to 10:25' (default: all).
        constrained: Impose ⟨B·n⟩ = 0 (tangential discontinuity).
        maximum: Maximum instead of minimum variance (e.g. of the electric field).
        output_label: Label of the L, M, N series (default '<label>.LMN').
    """
    series = read_series(ctx, label, time_range)
    b = series.vectors()
    result = variance.minimum_variance(
        b, series.times, constrained=constrained, maximum=maximum, unit=series.unit,
        frame=series.frame,
    )  # fmt: skip
    rotated = pd.DataFrame(
        b @ np.array(result.eigenvectors).T,
        index=pd.DatetimeIndex(series.times).tz_localize("UTC"),
        columns=["L", "M", "N"],
    )
    stored = store_output(
        ctx, _label(output_label, label, "LMN"), rotated, [series.entry],
        f"{label} in minimum-variance coordinates (L, M, N)", series.unit,
    )  # fmt: skip
    return with_stored(result, [stored])


def _moment(text: str) -> datetime:
    """The start of a time as people write it (UTC)."""
    return time_span(text).start


def _denser(side: shock.ShockSide, by_density: bool) -> float:
    """What tells the downstream side: its density, else its field strength."""
    if by_density and side.n is not None:
        return float(np.nanmean(side.n))
    return float(np.nanmean(np.linalg.norm(side.b, axis=1)))


def _sides(
    ctx: ToolContext,
    labels: dict[str, str | None],
    ranges: tuple[str, str],
) -> tuple[shock.ShockSide, shock.ShockSide, str | None, list[str]]:
    """Both sides' samples, each quantity put on the field's times."""
    sides: list[shock.ShockSide] = []
    frame: str | None = None
    notes: list[str] = []
    for span in ranges:
        field = read_series(ctx, str(labels["field"]), span)
        scale, check = unit_scale(field.unit, "magnetic field")
        notes.append(check.detail)
        frame = frame or field.frame
        parts: dict[str, Any] = {"b": field.vectors() * scale}
        for key, kind in (
            ("velocity", "velocity"),
            ("density", "density"),
            ("temperature", "temperature"),
        ):
            name = labels.get(key)
            if name:
                on, check = _plasma_on(ctx, field, name, span, kind)
                notes.append(check.detail)
                parts[key[0]] = on[:, :3] if key == "velocity" else on[:, 0]
        sides.append(shock.ShockSide.of(parts["b"], parts.get("v"), parts.get("d"), parts.get("t")))
    return sides[0], sides[1], frame, sorted(set(notes))


@tool(
    "data_ops_compute",
    public=True,
    reads=("field_label", "velocity_label", "density_label", "temperature_label"),
    time_args=("shock_time", "upstream_range", "downstream_range"),
    result=shock.ShockResult,
)
def shock_normal(
    ctx: ToolContext,
    field_label: str,
    shock_time: str | None = None,
    velocity_label: str | None = None,
    density_label: str | None = None,
    temperature_label: str | None = None,
    method: Literal["MC", "VC", "MX1", "MX2", "MX3"] = "MX3",
    window_minutes: float = 5.0,
    gap_minutes: float = 1.0,
    upstream: Literal["auto", "before", "after"] = "auto",
    upstream_range: str | None = None,
    downstream_range: str | None = None,
) -> dict[str, Any]:
    """Shock normal (MC, VC, MX1-3), θBn, shock speed from mass flux and the Rankine-Hugoniot check.

    Averages B (and V, n, T when given) over an upstream and a downstream interval: either
    `window_minutes` on each side of `shock_time` (leaving `gap_minutes` around it), or the
    explicit ranges (Schwartz 1998, ISSI SR-001 ch. 10). MC needs only B; VC and the mixed
    modes need V; the speed and R-H check need n (and T for momentum and energy).

    Args:
        field_label: Stored magnetic field vectors (nT).
        shock_time: When the shock passed, e.g. '2015-03-17 04:00'.
        velocity_label: Stored plasma velocity vectors (km/s), same frame.
        density_label: Stored proton density (cm^-3).
        temperature_label: Stored proton temperature (K or eV).
        method: MC (magnetic coplanarity), VC (velocity coplanarity), MX1, MX2, MX3 (mixed).
        window_minutes: Length of each side's averaging interval.
        gap_minutes: Time left out on each side of the shock.
        upstream: Which side is upstream: 'before' (a forward shock passing a spacecraft),
            'after', or 'auto' (the side with the lower density, else the weaker field).
        upstream_range: Explicit upstream interval (overrides shock_time).
        downstream_range: Explicit downstream interval (overrides shock_time).
    """
    labels = {"field": field_label, "velocity": velocity_label, "density": density_label,
              "temperature": temperature_label}  # fmt: skip
    if upstream_range and downstream_range:
        ranges = (upstream_range, downstream_range)
    elif shock_time:
        t = _moment(shock_time)
        gap, span = timedelta(minutes=gap_minutes), timedelta(minutes=window_minutes)
        before = f"{format_time(t - gap - span)} to {format_time(t - gap)}"
        after = f"{format_time(t + gap)} to {format_time(t + gap + span)}"
        ranges = (before, after) if upstream != "after" else (after, before)
    else:
        raise UserError("Give shock_time, or both upstream_range and downstream_range.")
    up, down, frame, notes = _sides(ctx, labels, ranges)
    if upstream == "auto" and not (upstream_range and downstream_range):
        by_density = up.n is not None and down.n is not None
        if _denser(up, by_density) > _denser(down, by_density):
            up, down, ranges = down, up, (ranges[1], ranges[0])
    result = shock.shock_normal(up, down, method, frame=frame)
    result.assumptions.append(f"upstream {ranges[0]}, downstream {ranges[1]}")
    result.assumptions.extend(notes)
    return with_stored(result, [])


def _plasma_on(ctx: ToolContext, field: Series, label: str, time_range: str | None, kind: str):
    other = read_series(ctx, label, time_range)
    factor, check = unit_scale(other.unit, kind)
    return other.on(field.times) * factor, check


@tool(
    "data_ops_compute",
    public=True,
    reads=("field_label", "velocity_label"),
    time_args=("time_range",),
    result=frames.HTResult,
)
def de_hoffmann_teller(
    ctx: ToolContext, field_label: str, velocity_label: str, time_range: str | None = None
) -> dict[str, Any]:
    """The de Hoffmann-Teller frame velocity V_HT ± error and its correlation coefficient.

    The field is put on the plasma's times (Khrabrov & Sonnerup 1998, ISSI SR-001 ch. 9).

    Args:
        field_label: Stored magnetic field vectors (nT).
        velocity_label: Stored plasma velocity vectors (km/s), same frame.
        time_range: Interval analysed, e.g. '2015-03-17 10:15 to 10:25'.
    """
    flow = read_series(ctx, velocity_label, time_range)
    b, check = _plasma_on(ctx, flow, field_label, time_range, "magnetic field")
    v_scale, v_check = unit_scale(flow.unit, "velocity")
    result = frames.de_hoffmann_teller(b[:, :3], flow.vectors() * v_scale, flow.times,
                                       frame=flow.frame)  # fmt: skip
    result.checks.extend([check, v_check])
    return with_stored(result, [])


@tool(
    "data_ops_compute",
    public=True,
    reads=("field_label", "velocity_label", "density_label"),
    time_args=("time_range",),
    result=frames.WalenResult,
)
def walen_test(
    ctx: ToolContext,
    field_label: str,
    velocity_label: str,
    density_label: str,
    time_range: str | None = None,
) -> dict[str, Any]:
    """Walén test: slope and correlation of the flow in the HT frame against the Alfvén velocity.

    A slope near ±1 with high correlation marks a rotational discontinuity, near 0 a
    tangential one (Khrabrov & Sonnerup 1998, ISSI SR-001 ch. 9 §9.4.2).

    Args:
        field_label: Stored magnetic field vectors (nT).
        velocity_label: Stored plasma velocity vectors (km/s), same frame.
        density_label: Stored proton density (cm^-3).
        time_range: Interval analysed, e.g. '2015-03-17 10:15 to 10:25'.
    """
    flow = read_series(ctx, velocity_label, time_range)
    b, b_check = _plasma_on(ctx, flow, field_label, time_range, "magnetic field")
    n, n_check = _plasma_on(ctx, flow, density_label, time_range, "density")
    v_scale, v_check = unit_scale(flow.unit, "velocity")
    result = frames.walen_test(b[:, :3], flow.vectors() * v_scale, n[:, 0], flow.times,
                               frame=flow.frame)  # fmt: skip
    result.checks.extend([b_check, n_check, v_check])
    return with_stored(result, [])


@tool(
    "data_ops_compute",
    public=True,
    time_args=("crossing_times",),
    result=timing.TimingResult,
)
def boundary_timing(
    ctx: ToolContext,
    crossing_times: list[str],
    positions_km: list[list[float]],
    normal: list[float] | None = None,
    time_error_s: float = 0.0,
    frame: str | None = None,
) -> dict[str, Any]:
    """Normal and speed of a planar boundary from when 2-4 spacecraft crossed it.

    With 4 spacecraft both are timed; with 3 the normal lies in their plane unless given;
    with 2 the normal must be given (Harvey 1998, ISSI SR-001 ch. 12).

    Args:
        crossing_times: One crossing time per spacecraft, e.g. '2015-10-16 13:07:02.2'.
        positions_km: Each spacecraft's [x, y, z] position (km) at the crossing, one frame.
        normal: A known normal (then only the speed is timed).
        time_error_s: The uncertainty of each crossing time (s).
        frame: The frame of the positions, e.g. 'GSE'.
    """
    times = np.array([np.datetime64(_moment(t).replace(tzinfo=None)) for t in crossing_times])
    result = timing.boundary_timing(
        positions_km, times, normal=normal, time_error_s=time_error_s, frame=frame
    )
    return with_stored(result, [])


@tool(
    "data_ops_compute",
    public=True,
    reads=("label_a", "label_b"),
    time_args=("time_range",),
    result=timing.LagResult,
)
def cross_correlation_lag(
    ctx: ToolContext,
    label_a: str,
    label_b: str,
    time_range: str | None = None,
    column_a: str | None = None,
    column_b: str | None = None,
    max_lag_s: float | None = None,
) -> dict[str, Any]:
    """The lag of series b behind series a at their peak cross-correlation (e.g. L1 to Earth).

    Args:
        label_a: First stored series.
        label_b: Second stored series (positive lag: b sees it later).
        time_range: Common interval, e.g. '2020-01-01 to 2020-01-02'.
        column_a: Column of a (default: its only column or its magnitude).
        column_b: Column of b (default: its only column or its magnitude).
        max_lag_s: Largest lag searched, seconds.
    """
    a = read_series(ctx, label_a, time_range, [column_a] if column_a else None)
    b = read_series(ctx, label_b, time_range, [column_b] if column_b else None)
    result = timing.cross_correlation_lag(a.times, a.scalar(), b.times, b.scalar(),
                                          max_lag_s=max_lag_s)  # fmt: skip
    return with_stored(result, [])


def _spectral_input(ctx: ToolContext, label: str, time_range: str | None, column: str | None):
    series = read_series(ctx, label, time_range, [column] if column else None)
    values = series.values if series.values.shape[1] in (1, 3) else series.values[:, :1]
    return series, values


@tool(
    "data_ops_compute",
    public=True,
    produces=_STORED,
    reads=("label",),
    time_args=("time_range",),
    result=spectra.PsdResult,
)
def power_spectrum(
    ctx: ToolContext,
    label: str,
    time_range: str | None = None,
    column: str | None = None,
    segment_s: float | None = None,
    confidence: float = 0.95,
    fmin_hz: float | None = None,
    fmax_hz: float | None = None,
    output_label: str | None = None,
) -> dict[str, Any]:
    """Welch power spectral density with chi-square confidence bands, and the spectral index.

    A vector's PSD is the trace (sum of its components'). With fmin_hz and fmax_hz the
    spectral index is fitted over that range. Stores the PSD (frequency, psd, lower, upper).

    Args:
        label: Stored series, e.g. 'AC_H0_MFI.BGSEc'.
        time_range: Interval analysed (default: all).
        column: One column (default: the series, or the trace of a vector).
        segment_s: Welch segment length in seconds (default: an eighth of the interval).
        confidence: Confidence level of the bands.
        fmin_hz: Lower end of the spectral index fit.
        fmax_hz: Upper end of the spectral index fit.
        output_label: Label of the stored PSD (default '<label>.PSD').
    """
    series, values = _spectral_input(ctx, label, time_range, column)
    result = spectra.welch_psd(series.times, values, segment_s=segment_s,
                               confidence=confidence, unit=series.unit)  # fmt: skip
    table = pd.DataFrame(
        {"psd": result.psd, "lower": result.lower, "upper": result.upper},
        index=pd.Index(result.frequency_hz, name="frequency_hz"),
    )
    stored = store_output(ctx, _label(output_label, label, "PSD"), table, [series.entry],
                          f"Welch PSD of {label}", result.unit)  # fmt: skip
    out = with_stored(result, [stored])
    for key in ("frequency_hz", "psd", "lower", "upper"):
        out.pop(key)
    if fmin_hz is not None and fmax_hz is not None:
        fit = spectra.spectral_index(result.frequency_hz, result.psd, fmin_hz, fmax_hz)
        out["spectral_index"] = fit.model_dump()
        out["answer"] = f"{result.answer} {fit.answer}"
    return out


def _store_grid(
    ctx: ToolContext, label: str, source: Series, seconds: Any, freqs: Any, power: Any,
    description: str,
) -> str:  # fmt: skip
    start = source.times[0].astype("datetime64[ns]")
    times = start + (np.asarray(seconds) * 1e9).astype("timedelta64[ns]")
    array = xr.DataArray(
        power, dims=("time", "frequency"), name="power",
        coords={"time": times, "frequency": np.asarray(freqs)},
    )  # fmt: skip
    array["frequency"].attrs["units"] = "Hz"
    unit = spectra.power_unit(source.unit)
    return store_output(ctx, label, array, [source.entry], description, unit)


@tool(
    "data_ops_compute",
    public=True,
    produces=_STORED,
    reads=("label",),
    time_args=("time_range",),
    result=spectra.SpectrogramResult,
)
def dynamic_spectrum(
    ctx: ToolContext,
    label: str,
    time_range: str | None = None,
    column: str | None = None,
    segment_s: float | None = None,
    output_label: str | None = None,
) -> dict[str, Any]:
    """Dynamic spectrum (spectrogram) of a stored series, stored as a time × frequency entry.

    Args:
        label: Stored series.
        time_range: Interval analysed (default: all).
        column: One column (default: the series, or the trace of a vector).
        segment_s: Segment length in seconds (default: 1/32 of the interval).
        output_label: Label of the stored spectrogram (default '<label>.spectrogram').
    """
    series, values = _spectral_input(ctx, label, time_range, column)
    seconds, freqs, power, result = spectra.dynamic_spectrum(series.times, values,
                                                             segment_s=segment_s)  # fmt: skip
    stored = _store_grid(ctx, _label(output_label, label, "spectrogram"), series, seconds,
                         freqs, power, f"Dynamic spectrum of {label}")  # fmt: skip
    out = with_stored(result, [stored])
    out.pop("frequency_hz")
    return out


@tool(
    "data_ops_compute",
    public=True,
    produces=_STORED,
    reads=("label",),
    time_args=("time_range",),
    result=spectra.WaveletResult,
)
def wavelet_power(
    ctx: ToolContext,
    label: str,
    time_range: str | None = None,
    column: str | None = None,
    output_label: str | None = None,
) -> dict[str, Any]:
    """Continuous wavelet power (complex Morlet) of a stored series, stored as time × frequency.

    Args:
        label: Stored series.
        time_range: Interval analysed (default: all).
        column: One column (default: the series, or the sum over a vector's components).
        output_label: Label of the stored power (default '<label>.wavelet').
    """
    series, values = _spectral_input(ctx, label, time_range, column)
    seconds, freqs, power, result = spectra.wavelet_power(series.times, values)
    stored = _store_grid(ctx, _label(output_label, label, "wavelet"), series, seconds, freqs,
                         power, f"Wavelet power of {label}")  # fmt: skip
    out = with_stored(result, [stored])
    out.pop("frequency_hz")
    out.pop("global_power")
    return out


@tool(
    "data_ops_compute",
    public=True,
    produces=_STORED,
    reads=("density_label", "field_label", "velocity_label", "temperature_label",
           "electron_temperature_label"),
    time_args=("time_range",),
    result=plasma.PlasmaResult,
)  # fmt: skip
def plasma_quantities(
    ctx: ToolContext,
    density_label: str,
    field_label: str | None = None,
    velocity_label: str | None = None,
    temperature_label: str | None = None,
    electron_temperature_label: str | None = None,
    time_range: str | None = None,
    output_label: str | None = None,
) -> dict[str, Any]:
    """Plasma β, Alfvén and magnetosonic speeds, Mach numbers, pressures, frequencies, lengths.

    Dynamic, magnetic, thermal and total pressure; gyrofrequencies and inertial lengths.
    Everything is put on the density's times; units are read from the entries and
    converted with astropy (the `analysis` extra). Stores every quantity as one table.

    Args:
        density_label: Stored proton density (cm^-3).
        field_label: Stored field magnitude or vectors (nT): speeds, β, frequencies.
        velocity_label: Stored bulk speed or velocity (km/s): Mach numbers, dynamic pressure.
        temperature_label: Stored proton temperature (K or eV): β, sound speed, pressures.
        electron_temperature_label: Stored electron temperature (K or eV).
        time_range: Interval (default: all), e.g. '2015-03'.
        output_label: Label of the stored table (default '<density_label>.plasma').
    """
    density = read_series(ctx, density_label, time_range)
    n_scale, n_check = unit_scale(density.unit, "density")
    inputs: dict[str, Any] = {}
    checks = [n_check]
    for key, name, kind in (
        ("field_nt", field_label, "magnetic field"),
        ("speed_km_s", velocity_label, "velocity"),
        ("proton_temperature_k", temperature_label, "temperature"),
        ("electron_temperature_k", electron_temperature_label, "temperature"),
    ):
        if name:
            values, check = _plasma_on(ctx, density, name, time_range, kind)
            inputs[key] = values if values.shape[1] == 3 else values[:, 0]
            checks.append(check)
    series, result = plasma.plasma_quantities(density.scalar() * n_scale, **inputs)
    result.checks.extend(checks)
    table = pd.DataFrame(series, index=pd.DatetimeIndex(density.times).tz_localize("UTC"))
    stored = store_output(ctx, _label(output_label, density_label, "plasma"), table,
                          [density.entry], "Plasma quantities", result.units)  # fmt: skip
    return with_stored(result, [stored])


ANALYSIS_TOOLS = [
    minimum_variance,
    shock_normal,
    de_hoffmann_teller,
    walen_test,
    boundary_timing,
    cross_correlation_lag,
    power_spectrum,
    dynamic_spectrum,
    wavelet_power,
    pitch_angle_distribution,
    plasma_quantities,
]
"""The analysis methods as tools."""
