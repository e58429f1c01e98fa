"""Fetching into the DataStore: validate, clamp, fetch through the cache, report.

`DataFetcher.fetch(dataset, parameters, time_range)` is the one path by which fetched
data enters a session, used by the CLI, the tools and (later) the agents. It checks ids
against the source's description of the dataset, parses and clamps the time range to the
dataset's availability, skips parameters already in memory for that range, fetches
through the chosen source (wrapped in the fragment cache), stores `DATASET.PARAM` entries
and returns a `FetchReport` per parameter. The dataset's description comes from the
source (`info`), its citation from the source's `cite`, so any registered source works
the same way.
Imports catalog, sources and data modules only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import xarray as xr

from xhelio.catalog.index import Catalog
from xhelio.catalog.model import ONGOING_WINDOW, DatasetInfo, ParameterInfo
from xhelio.data.arrays import entry_from_parameter
from xhelio.data.cleaning import apply_valid_range
from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore
from xhelio.errors import (
    DataUnavailableError,
    SessionMemoryError,
    UnknownParameterError,
    XhelioError,
)
from xhelio.sources.base import (
    Citation,
    DataSource,
    ParameterData,
    ProgressCallback,
    drop_duplicate_times,
)
from xhelio.sources.dims import split_support_columns
from xhelio.sources.sizing import cadence_seconds, estimate_request, human_bytes, total_columns
from xhelio.timerange import TimeRange, format_time, parse_time_range

__all__ = [
    "DataFetcher",
    "FetchReport",
    "check_memory_budget",
    "clamp_to_availability",
    "data_end_note",
    "entry_from_parameter",
]


@dataclass
class FetchReport:
    """What one parameter fetch produced, for people and models."""

    label: str
    dataset: str
    parameter: str
    points: int
    start: str | None
    stop: str | None
    cadence: str | None
    nan_fraction: float
    all_nan_columns: list[str]
    columns: list[str]
    units: str
    requested: str
    already_loaded: bool = False
    notes: list[str] = field(default_factory=list[str])
    dims: dict[str, int] = field(default_factory=dict[str, int])
    """Sizes of the non-time dimensions of 2-D and higher data (empty otherwise)."""

    def to_dict(self) -> dict[str, object]:
        """Return a JSON-able summary."""
        shape: dict[str, object] = {"dims": self.dims} if self.dims else {}
        return {
            "status": "ok",
            "label": self.label,
            "dataset": self.dataset,
            "parameter": self.parameter,
            "points": self.points,
            "start": self.start,
            "stop": self.stop,
            "cadence": self.cadence,
            "nan_fraction": round(self.nan_fraction, 4),
            "all_nan_columns": self.all_nan_columns,
            "columns": self.columns,
            "units": self.units,
            **shape,
            "requested": self.requested,
            "already_loaded": self.already_loaded,
            "notes": self.notes,
        }


def clamp_to_availability(
    info: DatasetInfo, time_range: TimeRange, now: datetime | None = None
) -> tuple[TimeRange, str | None]:
    """Fit `time_range` into the dataset's coverage; return the range and a note if changed.

    Raises `DataUnavailableError` naming the available range when nothing overlaps.
    Unknown coverage passes the request through unchanged (fail-open).
    """
    now = now or datetime.now(UTC)
    start, stop = info.start, info.stop
    if start is None and stop is None:
        return time_range, None
    ongoing = stop is not None and stop >= now - ONGOING_WINDOW
    lo = time_range.start if start is None else max(time_range.start, start)
    hi = time_range.end if (stop is None or ongoing) else min(time_range.end, stop)
    if hi <= lo:
        span = f"{_fmt(start)} to {'present' if ongoing or stop is None else _fmt(stop)}"
        raise DataUnavailableError(
            f"{info.id} has no data in {time_range}: it covers {span}. "
            "Pick a time range inside that window."
        )
    if lo == time_range.start and hi == time_range.end:
        return time_range, None
    clamped = TimeRange(lo, hi)
    note = (
        f"Requested {time_range} extends beyond {info.id}'s coverage "
        f"({_fmt(start)} to {_fmt(stop)}); fetched {clamped} instead."
    )
    return clamped, note


def data_end_note(
    info: DatasetInfo,
    label: str,
    data: ParameterData,
    requested: TimeRange,
    now: datetime | None = None,
) -> str | None:
    """Say where the data stops when it stops well before the requested end.

    "Well before": by more than three steps of the data (or an hour, whichever is
    longer), and the dataset itself goes on after the last record (its stop date is
    later, or unknown, or recent enough to be still producing). A dataset whose coverage
    ends there is whole and gets no note. When the source could not prove its answer
    complete (`ParameterData.proven_until`), the note says that part is asked again.
    """
    index = pd.DatetimeIndex(data.frame.index)
    if not len(index):
        return None
    last: datetime = index[-1:].to_pydatetime()[0]
    step = cadence_seconds(info.cadence) or _median_step(index) or 0.0
    slack = timedelta(seconds=max(3 * step, 3600.0))
    now = now or datetime.now(UTC)
    ongoing = info.stop is None or info.stop >= now - ONGOING_WINDOW
    end = requested.end if ongoing or info.stop is None else min(requested.end, info.stop)
    if end - last <= slack:
        return None
    goes_on = "is still producing data" if ongoing else f"goes on to {_fmt(info.stop)}"
    note = (
        f"{label} stops at {format_time(last)}, {_human_span(requested.end - last)} before "
        f"the requested end {format_time(requested.end)}, while the dataset {goes_on}."
    )
    if data.proven_until is not None:
        return (
            f"{note} The server's answer could not be proven complete after "
            f"{format_time(data.proven_until)} (it may have been cut): that part is not "
            "cached, and the next fetch asks for it again."
        )
    if end > now - timedelta(days=2):
        return f"{note} Data this recent may not have reached the archive yet."
    return f"{note} The server sent nothing after that time (a gap in the data)."


def _median_step(index: pd.DatetimeIndex) -> float | None:
    """Median seconds between records, None with fewer than two."""
    if len(index) < 2:
        return None
    return float(np.median(np.diff(index.as_unit("ns").asi8))) / 1e9


def _human_span(span: timedelta) -> str:
    """A span as days, hours or minutes, rounded: '10 days', '5 h', '40 min'."""
    seconds = span.total_seconds()
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:.0f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.0f} h"
    return f"{max(1.0, seconds / 60):.0f} min"


def _stamp(t: object) -> str:
    moment = pd.Timestamp(t)  # type: ignore[arg-type]
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _key(time_range: TimeRange) -> tuple[str, str]:
    return (time_range.start.isoformat(), time_range.end.isoformat())


def _fmt(t: datetime | None) -> str:
    return "unknown" if t is None else format_time(t)


def _cadence(index: pd.DatetimeIndex) -> str | None:
    if len(index) < 2:
        return None
    step = pd.Series(index).diff().median()
    if pd.isna(step):
        return None
    seconds = pd.Timedelta(step).total_seconds()
    return _human_seconds(seconds)


def _human_seconds(seconds: float) -> str:
    if seconds >= 86400 and seconds % 86400 == 0:
        return f"{int(seconds // 86400)} d"
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{int(seconds // 3600)} h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{int(seconds // 60)} min"
    return f"{seconds:g} s"


def _entry_dims(entry: DataEntry) -> dict[str, int]:
    """Sizes of the non-time dimensions of an array entry, as the report shows them."""
    if not isinstance(entry.data, xr.DataArray):
        return {}
    return {str(d): int(n) for d, n in zip(entry.data.dims[1:], entry.data.shape[1:], strict=True)}


def _report(entry: DataEntry, data: ParameterData, requested: TimeRange) -> FetchReport:
    # Per-record bin columns travel in the source frame; they are not data to report.
    frame, _ = split_support_columns(data.frame)
    values = frame.to_numpy(dtype=float) if frame.size else np.empty((0, 0))
    nan_fraction = float(np.isnan(values).mean()) if values.size else 1.0
    dims = _entry_dims(entry)
    # An array entry is one named quantity: its cells are not columns a person would name.
    all_nan = (
        ([entry.label] if values.size and bool(np.isnan(values).all()) else [])
        if dims
        else [str(c) for c in frame.columns if bool(frame[c].isna().all())]
    )
    index = pd.DatetimeIndex(frame.index)
    return FetchReport(
        label=entry.label,
        dataset=entry.source_dataset or "",
        parameter=data.name,
        points=len(frame),
        start=_stamp(index[0]) if len(index) else None,
        stop=_stamp(index[-1]) if len(index) else None,
        cadence=_cadence(index),
        nan_fraction=nan_fraction,
        all_nan_columns=all_nan,
        columns=list(entry.columns) if dims else [str(c) for c in frame.columns],
        units=data.units,
        requested=str(requested),
        dims=dims,
    )


def check_memory_budget(
    catalog: Catalog,
    info: DatasetInfo,
    names: Sequence[str],
    time_range: TimeRange,
    budget_bytes: int,
) -> None:
    """Refuse (SessionMemoryError) a load whose estimated size exceeds `budget_bytes`.

    The message gives the estimate, the longest range that fits and, when the catalog
    has one, a coarser dataset of the same instrument with the same parameters.
    """
    columns = total_columns([_components(info, n) for n in names])
    estimate = estimate_request(info.cadence, time_range, columns)
    if estimate is None or estimate.bytes <= budget_bytes:
        return
    fits = _round_down(timedelta(seconds=budget_bytes / estimate.bytes_per_second))
    shorter = TimeRange(time_range.start, time_range.start + fits)
    coarser = _coarser_dataset(catalog, info, names, time_range, budget_bytes)
    hint = f" or a coarser dataset such as {coarser}" if coarser else " or a coarser dataset"
    raise SessionMemoryError(
        f"{info.id} {', '.join(names)} over {time_range} is about "
        f"{human_bytes(estimate.bytes)} in memory ({estimate.rows:,} rows at "
        f"{info.cadence}), more than the session budget of {human_bytes(budget_bytes)} "
        f"(XHELIO_SESSION_MEMORY_MB). Ask for a shorter range (e.g. {shorter}){hint}; "
        "or write it to a file with `xhelio fetch ... --out FILE`, which streams."
    )


def _round_down(span: timedelta) -> timedelta:
    """A readable span no longer than `span`: whole days, hours or minutes."""
    for unit in (timedelta(days=1), timedelta(hours=1), timedelta(minutes=1)):
        if span >= 2 * unit:
            return span // unit * unit
    return max(span, timedelta(seconds=1))


def _components(info: DatasetInfo, name: str) -> int:
    param = info.parameter(name)
    return 1 if param is None else max(1, param.components)


def _coarser_dataset(
    catalog: Catalog, info: DatasetInfo, names: Sequence[str], time_range: TimeRange, budget: int
) -> str | None:
    """A dataset of the same mission and instrument, with these parameters, that fits."""
    if not info.mission_id:
        return None
    try:
        candidates = catalog.browse(info.mission_id)
    except XhelioError:
        return None
    best: tuple[float, str] | None = None
    for other in candidates:
        if other.id == info.id or other.instrument != info.instrument:
            continue
        if any(other.parameter(n) is None for n in names):
            continue
        columns = total_columns([_components(other, n) for n in names])
        estimate = estimate_request(other.cadence, time_range, columns)
        if estimate is None or estimate.bytes > budget:
            continue
        if best is None or estimate.cadence_s < best[0]:
            best = (estimate.cadence_s, f"{other.id} ({other.cadence})")
    return None if best is None else best[1]


class DataFetcher:
    """Fetch dataset parameters into a DataStore with validation and reporting."""

    def __init__(
        self,
        catalog: Catalog,
        source: DataSource,
        store: DataStore,
        memory_budget_bytes: int | None = None,
    ) -> None:
        self.catalog = catalog
        self.source = source
        self.store = store
        self.memory_budget_bytes = memory_budget_bytes
        """Largest estimated size one fetch may load (None: no limit)."""

    def fetch(
        self,
        dataset_id: str,
        parameters: Sequence[str],
        time_range: str | TimeRange,
        progress: ProgressCallback | None = None,
        valid_range: bool = False,
    ) -> list[FetchReport]:
        """Fetch `parameters` of `dataset_id` over `time_range` into the store.

        Fill values are NaN. With `valid_range`, values outside VALIDMIN/VALIDMAX are
        masked too and each report says how many; by default they are kept (valid
        ranges mask real data often enough that doing it silently is wrong).
        """
        info = self.source.info(dataset_id)
        names = self._resolve_parameters(info, parameters)
        requested = (
            time_range if isinstance(time_range, TimeRange) else parse_time_range(time_range)
        )
        clamped, note = clamp_to_availability(info, requested)
        reports: list[FetchReport] = []
        wanted: list[str] = []
        for name in names:
            label = f"{info.id}.{name}"
            if self._loaded(label, clamped):
                reports.append(self._repeat_report(label, name, clamped))
            else:
                wanted.append(name)
        if wanted:
            if self.memory_budget_bytes is not None:
                check_memory_budget(self.catalog, info, wanted, clamped, self.memory_budget_bytes)
            fetched = self.source.fetch(info.id, wanted, clamped, progress)
            self._remember_variables(info, [fetched[name] for name in wanted])
            citation = self._citation(info.id)
            for name in wanted:
                data = drop_duplicate_times(fetched[name], f"{info.id}.{name}")
                cleaning_note = None
                if valid_range:
                    data, _, cleaning_note = apply_valid_range(data)
                entry = entry_from_parameter(info.id, data, info, citation)
                entry.fetched_range = _key(clamped)
                if data.proven_until is not None:
                    entry.meta["proven_until"] = format_time(data.proven_until)
                if cleaning_note:
                    entry.meta.setdefault("notes", []).append(cleaning_note)
                self.store.put(entry)
                report = _report(entry, data, clamped)
                if note:
                    report.notes.append(note)
                report.notes.extend(data.notes)
                stops = data_end_note(info, entry.label, data, clamped)
                if stops:
                    report.notes.append(stops)
                if cleaning_note:
                    report.notes.append(cleaning_note)
                # What the source did to the data (leap seconds mapped, ...) is said once.
                report.notes.extend(str(n) for n in data.meta.get("notes") or [])
                if report.all_nan_columns:
                    report.notes.append(
                        f"Warning: {', '.join(report.all_nan_columns)} of {entry.label} "
                        "are all NaN (fill values) in this range; the data is stored but "
                        "holds no valid samples. Try another parameter or dataset."
                    )
                reports.append(report)
        return reports

    def _loaded(self, label: str, clamped: TimeRange) -> bool:
        """Whether `label` is in memory for this range, proven whole (so not fetched again)."""
        if not self.store.has(label):
            return False
        entry = self.store.get(label)
        return entry.fetched_range == _key(clamped) and "proven_until" not in entry.meta

    def _citation(self, dataset_id: str) -> Citation | None:
        """The source's citation; a failure to cite never loses the fetched data."""
        try:
            return self.source.cite(dataset_id)
        except XhelioError:
            return None

    def _remember_variables(self, info: DatasetInfo, fetched: Sequence[ParameterData]) -> None:
        """Add variables read from a file but unknown to the catalog (support data)."""
        new = [d for d in fetched if info.parameter(d.name) is None]
        if not new:
            return
        added = tuple(
            ParameterInfo(
                name=d.name,
                units=d.units,
                description=d.description,
                size=tuple(int(x["size"]) for x in d.meta.get("dims") or []) or None,
            )
            for d in new
        )
        try:
            listed = self.catalog.dataset(info.id)  # as the catalog has it, not as the source says
            self.catalog.upsert([replace(listed, parameters=(*listed.parameters, *added))])
        except Exception:
            return

    def _resolve_parameters(self, info: DatasetInfo, parameters: Sequence[str]) -> list[str]:
        available = [p.name for p in info.data_parameters]
        names: list[str] = []
        for requested in parameters:
            param = info.parameter(requested)
            if param is None and getattr(self.source, "fetches_unlisted_variables", False):
                # A file source reads every variable by name (support data, quality flags,
                # uncertainties): the file, not the catalog, has the last word.
                if requested not in names:
                    names.append(requested)
                continue
            if param is None or param.is_time:
                raise UnknownParameterError(info.id, requested, available)
            if param.name not in names:
                names.append(param.name)
        return names

    def _repeat_report(self, label: str, name: str, clamped: TimeRange) -> FetchReport:
        entry = self.store.get(label)
        data = entry.data
        points = entry.points
        index: pd.DatetimeIndex | None = None
        if isinstance(data, pd.DataFrame):
            index = pd.DatetimeIndex(data.index)
        elif data.ndim and pd.api.types.is_datetime64_any_dtype(data[data.dims[0]].dtype):
            index = pd.DatetimeIndex(data[data.dims[0]].to_numpy())
        return FetchReport(
            label=label,
            dataset=entry.source_dataset or "",
            parameter=name,
            points=points,
            start=_stamp(index[0]) if index is not None and points else None,
            stop=_stamp(index[-1]) if index is not None and points else None,
            cadence=_cadence(index) if index is not None else None,
            nan_fraction=float(np.isnan(np.asarray(entry.data, dtype=float)).mean())
            if points
            else 1.0,
            all_nan_columns=[],
            columns=entry.columns,
            units=next(iter(entry.units.values()), ""),
            requested=str(clamped),
            already_loaded=True,
            notes=[f"{label} is already in memory for {clamped}; not fetched again."],
            dims=_entry_dims(entry),
        )
