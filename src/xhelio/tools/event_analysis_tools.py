"""Event analysis tools: storm, shock and SEP-onset detection, per-event fetch, epochs.

Each detector states its definition, reference and every threshold in its result (the
`method` of the list it stores as events.NAME). `superposed_epoch` stores the statistics
per epoch bin and writes its figure.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from xhelio.analysis.checks import unit_scale
from xhelio.data.entry import DataEntry
from xhelio.errors import UserError
from xhelio.events.epoch import epoch_figure
from xhelio.events.epoch import superposed_epoch as stack_epochs
from xhelio.events.model import EventList, column, entry_label
from xhelio.events.sep import detect_sep_onsets as find_sep_onsets
from xhelio.events.series import magnitude, numeric_series
from xhelio.events.shocks import detect_shocks as find_shocks
from xhelio.events.storms import detect_storms as find_storms
from xhelio.events.streams import detect_stream_interactions as find_stream_interactions
from xhelio.tools.context import ToolContext
from xhelio.tools.data_tools import frame_of
from xhelio.tools.event_tools import keep_event_list, resolve_event_list
from xhelio.tools.registry import Produces, tool

__all__ = ["EVENT_ANALYSIS_TOOLS"]

_LABEL = Produces(result_field="label")


@tool("data_ops_compute", produces=_LABEL, reads=("label",), public=True)
def detect_storms(
    ctx: ToolContext,
    label: str,
    column: str | None = None,
    threshold: float = -50.0,
    recovery_level: float | None = None,
    name: str = "storms",
) -> dict[str, Any]:
    """Find geomagnetic storms in stored Dst or SYM-H (Gonzalez et al. 1994 classes).

    Each storm has main-phase onset (start), minimum time and value, class (weak,
    moderate, intense), main-phase and recovery durations, and recovery end (end). The
    definition and every threshold are in the result's method.

    Args:
        label: The stored Dst/SYM-H data, e.g. 'OMNI2_H0_MRG1HR.DST1800'.
        column: Its column when it has several.
        threshold: Storm when the index reaches this (nT): -30 weak, -50 moderate, -100 intense.
        recovery_level: Recovery ends above this (nT); default half the threshold.
        name: The list's name; stored as events.NAME.
    """
    series = numeric_series(frame_of(ctx.store.get(label)), label, column)
    index_name = "SYM-H" if "sym" in f"{label} {column or ''}".lower() else "Dst"
    events = find_storms(
        series,
        name,
        index_name=index_name,
        threshold=threshold,
        recovery_level=recovery_level,
        origin=f"detected in {label}",
    )
    return keep_event_list(ctx, events)


@tool(
    "data_ops_compute",
    produces=_LABEL,
    reads=("field", "speed", "density", "temperature"),
    public=True,
)
def detect_shocks(
    ctx: ToolContext,
    field: str,
    speed: str,
    density: str,
    temperature: str | None = None,
    name: str = "shocks",
) -> dict[str, Any]:
    """Find fast forward/reverse interplanetary shocks from jumps in |B|, V, n (and T).

    Criteria of the Heliospheric Shock Database (Kilpua et al. 2015): B and n ratios
    >= 1.2, T ratio >= 1/1.5, speed jump >= 20 km/s, on 8-minute means either side.
    Vector data (B or V with 3 components) is turned into its magnitude.

    Args:
        field: Stored magnetic field label (|B| or a 3-component vector, nT).
        speed: Stored bulk speed label (km/s; a vector becomes its magnitude).
        density: Stored proton density label (cm^-3).
        temperature: Stored proton temperature label (optional, any unit).
        name: The list's name; stored as events.NAME.
    """
    frames = {
        k: frame_of(ctx.store.get(v)) for k, v in {"B": field, "V": speed, "n": density}.items()
    }
    temp = magnitude(frame_of(ctx.store.get(temperature)), "T") if temperature else None
    events = find_shocks(
        magnitude(frames["B"], "B"),
        magnitude(frames["V"], "V"),
        magnitude(frames["n"], "n"),
        temp,
        name,
        origin=f"detected in {field}, {speed}, {density}",
    )
    return keep_event_list(ctx, events)


@tool(
    "data_ops_compute",
    produces=_LABEL,
    reads=("field", "speed", "density", "temperature"),
    public=True,
)
def detect_stream_interactions(
    ctx: ToolContext,
    field: str,
    speed: str,
    density: str,
    temperature: str,
    dv_kms: float = 100.0,
    pt_ratio: float = 2.0,
    name: str = "stream-interactions",
) -> dict[str, Any]:
    """Find stream interaction regions (SIRs/CIRs) and their stream interfaces.

    Signatures of Jian et al. (2006): a speed increase of at least dv_kms around a peak of
    the total perpendicular pressure Pt = B²/2μ0 + n k T at least pt_ratio times its
    5-day running median; the stream interface is where the density drops as the
    temperature rises. On hourly means; every threshold is in the result's method.

    Args:
        field: Stored magnetic field label (|B| or a 3-component vector, nT).
        speed: Stored bulk speed label (km/s; a vector becomes its magnitude).
        density: Stored proton density label (cm^-3).
        temperature: Stored proton temperature label (K or eV).
        dv_kms: Smallest speed increase across the region (km/s).
        pt_ratio: Smallest Pt peak over its running median.
        name: The list's name; stored as events.NAME.
    """
    labels = {"B": field, "V": speed, "n": density, "T": temperature}
    series = {k: magnitude(frame_of(ctx.store.get(v)), k) for k, v in labels.items()}
    scale, _ = unit_scale(next(iter(ctx.store.get(temperature).units.values()), ""), "temperature")
    events = find_stream_interactions(
        series["B"], series["V"], series["n"], series["T"] * scale, name,
        dv_kms=dv_kms, pt_ratio=pt_ratio, origin=f"detected in {field}, {speed}, {density}, "
        f"{temperature}",
    )  # fmt: skip
    return keep_event_list(ctx, events)


@tool("data_ops_compute", produces=_LABEL, reads=("label",), public=True)
def detect_sep_onsets(
    ctx: ToolContext,
    label: str,
    background_start: str,
    background_end: str,
    column: str | None = None,
    name: str = "sep-onsets",
) -> dict[str, Any]:
    """Find SEP event onsets in a particle intensity by Poisson-CUSUM (Huttunen-Heikinmaa 2005).

    Args:
        label: Stored intensity or count rate (one channel, or name it with column).
        background_start: Start of a quiet pre-event window (ISO 8601).
        background_end: Its end; onsets are searched after it.
        column: The channel when the data has several.
        name: The list's name; stored as events.NAME.
    """
    series = numeric_series(frame_of(ctx.store.get(label)), label, column)
    window = (_utc(background_start), _utc(background_end))
    events = find_sep_onsets(series, window, name, origin=f"detected in {label}")
    return keep_event_list(ctx, events)


def _utc(text: str) -> pd.Timestamp:
    """`text` as a UTC time; a clear error when it is not one."""
    try:
        moment = pd.Timestamp(text)
    except ValueError:
        raise UserError(f"'{text}' is not a time; write it as ISO 8601.") from None
    if not isinstance(moment, pd.Timestamp):  # NaT
        raise UserError(f"'{text}' is not a time; write it as ISO 8601.")
    return moment.tz_localize("UTC") if moment.tzinfo is None else moment.tz_convert("UTC")


def _epochs(events: EventList, epoch: str) -> pd.DatetimeIndex:
    if epoch not in events.frame.columns:
        raise UserError(
            f"The list {events.name} has no '{epoch}'; use start, end or one of "
            f"{events.attributes}."
        )
    times = pd.to_datetime(column(events.frame, epoch), utc=True, errors="coerce", format="ISO8601")
    if times.isna().any():
        raise UserError(f"'{epoch}' of {events.name} is not a time for every event.")
    return pd.DatetimeIndex(times)


@tool("data_ops_fetch", produces=_LABEL, reads=("events",), public=True)
def fetch_for_events(
    ctx: ToolContext,
    events: str,
    dataset_id: str,
    parameter_id: str,
    before_hours: float = 24.0,
    after_hours: float = 72.0,
    epoch: str = "start",
    source: str | None = None,
) -> dict[str, Any]:
    """Fetch one parameter around every event of a list, into one stored series.

    Args:
        events: The event list (name, events.NAME label, saved or shipped list).
        dataset_id: Dataset id, e.g. OMNI_HRO_1MIN.
        parameter_id: Parameter, e.g. BZ_GSM.
        before_hours: Hours before each event's epoch.
        after_hours: Hours after it.
        epoch: The time of each event to centre on: start, end or a time attribute.
        source: The data source (default from settings).
    """
    chosen = resolve_event_list(ctx, events)
    times = _epochs(chosen, epoch)
    fetcher = ctx.fetcher(source)
    pieces: list[pd.DataFrame] = []
    notes: list[str] = []
    units = ""
    for i, zero in enumerate(times):
        start, stop = (
            zero - pd.Timedelta(hours=before_hours),
            zero + pd.Timedelta(hours=after_hours),
        )
        span = f"{start.isoformat()} to {stop.isoformat()}"
        try:
            report = fetcher.fetch(dataset_id, [parameter_id], span)[0]
        except UserError as exc:
            notes.append(f"event {i + 1} ({zero}): {exc}")
            continue
        entry = ctx.store.get(report.label)
        units = report.units or units
        frame = frame_of(entry)
        pieces.append(frame.loc[(frame.index >= start) & (frame.index < stop)])
    if not pieces:
        raise UserError("No data was fetched around any event: " + "; ".join(notes[:3]))
    joined = pd.concat(pieces)
    combined = joined.loc[~joined.index.duplicated()].sort_index()
    label = f"{entry_label(chosen.name)}.{dataset_id}.{parameter_id}"
    ctx.store.put(
        DataEntry(
            label,
            combined,
            dict.fromkeys(combined.columns, units),
            f"{dataset_id} {parameter_id} around the events of {chosen.name}",
            dataset_id,
            parameter_id,
        )
    )
    return {
        "label": label,
        "events": len(times),
        "fetched": len(pieces),
        "points": len(combined),
        "notes": notes,
    }


@tool("data_ops_compute", produces=_LABEL, reads=("events", "label"), public=True)
def superposed_epoch(
    ctx: ToolContext,
    events: str,
    label: str,
    column: str | None = None,
    epoch: str = "start",
    before_hours: float = 24.0,
    after_hours: float = 72.0,
    bin_minutes: float = 60.0,
    output_label: str | None = None,
) -> dict[str, Any]:
    """Superposed-epoch analysis of stored data around the events of a list, with its figure.

    Per epoch bin: mean, median, quartiles and the number of events with data. Stored as
    a table (index epoch_hours); the figure (mean and median lines, quartile band, events
    per bin) becomes the session's current figure, is written as HTML to the export folder
    and returned as Plotly JSON.

    Args:
        events: The event list (name, events.NAME label, saved or shipped list).
        label: The stored data to stack, e.g. 'OMNI_HRO_1MIN.BZ_GSM'.
        column: Its column when it has several.
        epoch: Each event's zero time: start, end or a time attribute (e.g. minimum_time).
        before_hours: Hours before the epoch.
        after_hours: Hours after it.
        bin_minutes: Width of the epoch bins in minutes.
        output_label: Label of the result (default: sea.LIST.COLUMN).
    """
    chosen = resolve_event_list(ctx, events)
    entry = ctx.store.get(label)
    series = numeric_series(frame_of(entry), label, column)
    result = stack_epochs(series, _epochs(chosen, epoch), before_hours, after_hours, bin_minutes)
    quantity = column or str(series.name or label)
    unit = entry.units.get(quantity, next(iter(entry.units.values()), ""))
    out = output_label or f"sea.{chosen.name.replace(' ', '_')}.{quantity}"
    ctx.store.put(
        DataEntry(
            out,
            result.table,
            dict.fromkeys(["mean", "median", "q25", "q75"], unit),
            f"superposed epoch of {label} around {chosen.name} ({epoch})",
            is_timeseries=False,
            meta={"method": "superposed epoch (Chree 1913)"},
        )
    )
    title = (
        f"Superposed epoch: {quantity} around {chosen.name} (epoch = {epoch}, n = {result.used})"
    )
    figure = epoch_figure(result, quantity, unit, title)
    path = ctx.export_dir / f"{out.replace('/', '_')}.html"
    figure.write_html(path, include_plotlyjs="cdn")
    figure_json = json.loads(str(figure.to_json()))
    ctx.plot.render(figure_json)  # the session's figure: the web app and exports show it
    table = result.table
    return {
        "label": out,
        "events": len(chosen),
        "events_with_data": result.used,
        "bins": len(table),
        "epoch": epoch,
        "bin_minutes": bin_minutes,
        "window_hours": [-before_hours, after_hours],
        "figure_file": str(path),
        "figure": figure_json,
        "at_epoch_zero": _row(table, int(abs(table.index.to_numpy()).argmin())),
        "method": "superposed epoch (Chree 1913): per-event bin means, then mean, median, "
        "quartiles and counts across events",
    }


def _row(table: pd.DataFrame, position: int) -> dict[str, float | None]:
    values = table.iloc[position]
    return {
        "epoch_hours": float(table.index[position]),
        **{str(k): (None if pd.isna(v) else float(v)) for k, v in values.items()},
    }


EVENT_ANALYSIS_TOOLS = [
    detect_storms,
    detect_shocks,
    detect_stream_interactions,
    detect_sep_onsets,
    fetch_for_events,
    superposed_epoch,
]
