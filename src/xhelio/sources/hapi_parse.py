"""Pure HAPI format handling: /info to `DatasetInfo`, CSV and binary bodies to arrays.

No I/O here: `hapi.py` does the HTTP. Parsing is vectorised (pyarrow CSV reader, Arrow
ISO-8601 casts, numpy structured dtypes), never per-row Python. Also splits a time range
by a HAPI `maxRequestDuration`. Imports only `catalog.model`, `timerange` and `errors`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from xhelio.catalog.hapi_info import dataset_from_hapi_info, hapi_times_to_ns, parse_hapi_time
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.errors import ServerError, TruncatedResponseError
from xhelio.timerange import TimeRange

__all__ = [
    "ChunkArrays",
    "column_names",
    "dataset_info_from_hapi",
    "duration_offset",
    "format_hapi_time",
    "mask_fill",
    "parse_binary",
    "parse_csv",
    "parse_hapi_time",
    "record_size",
    "split_time_range",
    "take_time_notes",
]

_DURATION = re.compile(
    r"^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?"
    r"(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# ISTP fills are about -1e31; a CDAWeb server may print them float32-rounded or not.
_BIG_FILL = 1e30
# A fill declared as "-0.0" is a tiny ISTP FILLVAL (DE-2's -1e-31) printed with too few
# digits; values this close to zero on the negative side are that fill, never data.
_TINY_FILL = 1e-20


@dataclass(frozen=True)
class ChunkArrays:
    """One parsed response: times (datetime64[ns], UTC) and a 2-D array per parameter."""

    times: np.ndarray
    values: dict[str, np.ndarray]


def format_hapi_time(t: datetime) -> str:
    """Format a UTC datetime as a HAPI request time (seconds, or microseconds if any)."""
    t = t.astimezone(UTC)
    if t.microsecond:
        return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def duration_offset(text: str) -> pd.DateOffset:
    """Turn an ISO-8601 duration (P1D, PT12H, P1Y2M) into a calendar-aware offset."""
    match = _DURATION.match(text.strip())
    if not match or text.strip() in {"P", "PT"} or text.strip().endswith("T"):
        raise ServerError(
            f"The server gave maxRequestDuration {text!r}, which is not an ISO-8601 "
            "duration. Report this to the server's operators."
        )
    y, mo, w, d, h, mi = (int(g) if g else 0 for g in match.groups()[:6])
    seconds = float(match.group(7) or 0)
    return pd.DateOffset(
        years=y,
        months=mo,
        weeks=w,
        days=d,
        hours=h,
        minutes=mi,
        seconds=int(seconds),
        microseconds=round((seconds - int(seconds)) * 1e6),
    )


def split_time_range(time_range: TimeRange, max_duration: str | None) -> list[TimeRange]:
    """Split `time_range` into consecutive pieces no longer than `max_duration`."""
    if not max_duration:
        return [time_range]
    offset = duration_offset(max_duration)
    pieces: list[TimeRange] = []
    start = time_range.start
    while start < time_range.end:
        stop = min(_add_offset(start, offset), time_range.end)
        if stop <= start:
            raise ServerError(f"maxRequestDuration {max_duration!r} is zero; cannot split.")
        pieces.append(TimeRange(start, stop))
        start = stop
    return pieces


def _add_offset(t: datetime, offset: pd.DateOffset) -> datetime:
    """`t + offset` with calendar months and years, as an aware datetime."""
    shifted = pd.Timestamp(t) + offset
    return _EPOCH + timedelta(microseconds=pd.Timestamp(shifted).as_unit("ns").value // 1000)


def dataset_info_from_hapi(dataset_id: str, info: dict[str, Any], title: str = "") -> DatasetInfo:
    """Build a `DatasetInfo` from a HAPI /info response (the catalog's one parser)."""
    if not isinstance(info.get("parameters"), list) or not info.get("parameters"):
        raise ServerError(f"The /info answer for '{dataset_id}' lists no parameters.")
    base = DatasetInfo(id=dataset_id, title=title) if title else None
    return dataset_from_hapi_info(dataset_id, info, base)


def column_names(param: ParameterInfo) -> list[str]:
    """Column names of a parameter: its name, its labels, or ``{name}_{i}`` (0-based)."""
    n = param.components
    if not param.size:
        return [param.name]
    if param.labels and len(param.labels) == n and len(set(param.labels)) == n:
        return list(param.labels)
    return [f"{param.name}_{i}" for i in range(n)]


def mask_fill(values: np.ndarray, fill: str | None) -> np.ndarray:
    """Return float values with the fill value (exact or float32-rounded) set to NaN."""
    out = np.array(values, dtype=np.float64, order="C")
    if fill is None:
        return out
    try:
        fill_value = float(fill)
    except ValueError:
        return out
    if np.isnan(fill_value):
        return out
    if fill_value <= -_BIG_FILL:
        # -1e31 vs -9.999999848243207e+30: the same fill at float32 precision, and no real
        # value is anywhere near 1e30, so one comparison covers both spellings.
        bad = out <= fill_value * (1 - 1e-6)
    elif fill_value >= _BIG_FILL:
        bad = out >= fill_value * (1 - 1e-6)
    elif fill_value == 0.0 and np.signbit(fill_value):
        # Real zeros (+0.0) stay data: DE-2 ion drifts are exactly 0 now and then.
        bad = ((out == 0.0) & np.signbit(out)) | ((out < 0.0) & (out > -_TINY_FILL))
    else:
        bad = out == fill_value
        rounded = float(np.float32(fill_value))
        if rounded != fill_value:
            bad |= out == rounded
    np.copyto(out, np.nan, where=bad)
    return out


def _times_to_ns(strings: Any) -> np.ndarray:
    """Vectorised HAPI isotime parse to int64 nanoseconds since the epoch.

    `strings` is a pyarrow string array (pyarrow ships no type stubs, hence Any). The
    common full form goes through Arrow's cast; every other form of the spec (date only,
    day of year, hours or minutes only, leap seconds) through `hapi_times_to_ns`.
    """
    strings = pc.call_function("utf8_trim", [strings], pc.TrimOptions(characters=" \x00"))
    try:
        cast = pc.cast(strings, pa.timestamp("ns", tz="UTC"))
        return np.asarray(cast.cast(pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    values = strings.to_numpy(zero_copy_only=False)
    times, leap = hapi_times_to_ns(values)
    if leap:
        _add_note(
            f"{leap} time(s) fell in a leap second (23:59:60); each was mapped to the next "
            "second (00:00:00 plus its fraction), since UTC datetimes cannot hold 60 s."
        )
    return times


# Leap-second notes of recent parses, read by `take_time_notes`. Parsing may run on a
# decoder thread, so the list is shared (under a lock), not thread-local.
_NOTES_LOCK = threading.Lock()
_NOTES: list[str] = []


def _add_note(note: str) -> None:
    with _NOTES_LOCK:
        _NOTES.append(note)


def take_time_notes() -> list[str]:
    """Return and clear the time notes (leap seconds mapped) of the parses so far."""
    with _NOTES_LOCK:
        notes = list(dict.fromkeys(_NOTES))
        _NOTES.clear()
    return notes


def _strip_header(body: bytes) -> bytes:
    """Drop leading '#' header lines (HAPI include=header)."""
    if not body.startswith(b"#"):
        return body
    pos = 0
    while body.startswith(b"#", pos):
        nl = body.find(b"\n", pos)
        if nl < 0:
            return b""
        pos = nl + 1
    return body[pos:]


def parse_csv(body: bytes, params: Sequence[ParameterInfo], what: str) -> ChunkArrays:
    """Parse a HAPI CSV body (time column then each parameter's components)."""
    body = _strip_header(body)
    names = ["time"]
    types: dict[str, pa.DataType] = {}
    for k, p in enumerate(params):
        for i in range(p.components):
            col = f"c{k}_{i}"
            names.append(col)
            types[col] = pa.string() if p.type == "string" else pa.float64()
    if not body or body.isspace():
        return ChunkArrays(np.empty(0, np.int64), {p.name: _empty(p) for p in params})
    try:
        # Reading time as text then casting is ~2x faster than Arrow's CSV timestamp parser.
        table = _read_csv_table(body, names, {"time": pa.string(), **types})
    except pa.ArrowInvalid as exc:
        raise ServerError(f"Could not parse the CSV answer for {what}: {exc}") from exc
    times = _times_to_ns(table.column("time").combine_chunks())
    values: dict[str, np.ndarray] = {}
    for k, p in enumerate(params):
        cols = [table.column(f"c{k}_{i}").to_numpy() for i in range(p.components)]
        block = np.column_stack(cols) if cols else np.empty((len(times), 0))
        values[p.name] = block if p.type == "string" else mask_fill(block, p.fill)
    return ChunkArrays(times, values)


def _read_csv_table(body: bytes, names: list[str], types: dict[str, Any]) -> Any:
    """Read CSV bytes with Arrow (zero-copy buffer); returns a pyarrow Table."""
    return pa_csv.read_csv(
        pa.BufferReader(body),
        read_options=pa_csv.ReadOptions(column_names=names, block_size=4 << 20),
        parse_options=pa_csv.ParseOptions(newlines_in_values=False),
        convert_options=pa_csv.ConvertOptions(column_types=types, strings_can_be_null=False),
    )


def _binary_dtype(time_length: int, params: Sequence[ParameterInfo]) -> np.dtype[np.void]:
    """Structured dtype of one HAPI binary record; fields p0, p1, ... per parameter."""
    fields: list[tuple[str, str, tuple[int, ...]]] = [("time", f"S{time_length}", ())]
    for k, p in enumerate(params):
        shape = p.size or ()
        if p.type == "double":
            base = "<f8"
        elif p.type == "integer":
            base = "<i4"
        else:
            raise ServerError(
                f"Parameter '{p.name}' has type {p.type!r}, which xhelio reads only as CSV; "
                "ask for format=csv."
            )
        fields.append((f"p{k}", base, shape))
    return np.dtype(fields)


def record_size(time_length: int, params: Sequence[ParameterInfo]) -> int:
    """Bytes per record of a HAPI binary answer with these parameters."""
    return _binary_dtype(time_length, params).itemsize


def parse_binary(
    body: bytes, time_length: int, params: Sequence[ParameterInfo], what: str
) -> ChunkArrays:
    """Parse a HAPI binary body: fixed-size records of ASCII time then little-endian values."""
    dtype = _binary_dtype(time_length, params)
    if len(body) % dtype.itemsize:
        raise TruncatedResponseError(
            f"The binary answer for {what} is {len(body)} bytes, not a whole number of "
            f"{dtype.itemsize}-byte records: the stream was cut. Retry the request."
        )
    records = np.frombuffer(body, dtype=dtype)
    n = len(records)
    raw_times = np.ascontiguousarray(records["time"])
    offsets = np.arange(n + 1, dtype=np.int32) * time_length
    strings = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(raw_times))
    times = _times_to_ns(strings)
    values: dict[str, np.ndarray] = {}
    for k, p in enumerate(params):
        block = records[f"p{k}"].reshape(n, p.components)
        values[p.name] = mask_fill(block, p.fill)
    return ChunkArrays(times, values)


def _empty(p: ParameterInfo) -> np.ndarray:
    return np.empty((0, p.components), dtype=object if p.type == "string" else np.float64)
