"""The wire format between the sandbox executor and its worker process: no pickle.

A message is one length-prefixed frame on a pipe. Its body is a JSON header followed by
zero or more binary blobs; tables and arrays travel as Arrow IPC streams, never pickle,
so the parent never runs code chosen by the worker while decoding a reply.

DataFrames keep their index (including a tz-aware UTC DatetimeIndex and its frequency),
column names, dtypes and NaNs. DataArrays are sent as their values plus one blob per
coordinate, with dims, shapes, name and JSON-safe attrs (the array's and each
coordinate's, e.g. the units of spectrogram bins) in the header.

Results are data, not instructions: `check_result` is applied to every result, in the
worker (early, clear errors) and again in the parent (authoritative), so nothing the
session later saves and reloads can break it. Attributes are kept only when their name
is on an allowlist and their value is a short string, a finite number or a bool (netCDF
decoding keys such as `scale_factor`, `calendar` or `_FillValue`, and `units` that
read as CF time units, are dropped with a note); column labels, index names, the
DataArray name, dims and coordinate names must be short strings without NUL (and,
for DataArrays, without "/" and distinct from each other, as netCDF requires);
`DataFrame.attrs` is dropped. The executor also counts the whole reply (labels and
attrs included) against the result cap.

Imports nothing from xhelio: the worker loads it before its guards go up.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import select
import struct
import time
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import xarray as xr

__all__ = [
    "MAX_HEADER_BYTES",
    "FrameError",
    "FrameTimeout",
    "FrameTooLarge",
    "ResultRejected",
    "check_result",
    "complete_frame_size",
    "decode_value",
    "encode_value",
    "pack_message",
    "read_frame",
    "read_frame_blocking",
    "split_frame",
    "unpack_message",
    "write_frame",
    "write_frame_blocking",
]

_LENGTH = struct.Struct("!Q")
_CHUNK = 1 << 20
MAX_HEADER_BYTES = 4 * 1024 * 1024  # a reply's JSON header: stdout, warnings, attrs

MAX_LABEL_CHARS = 256
MAX_NAME_CHARS = 128
MAX_COLUMNS = 10_000
MAX_ATTRS = 64
MAX_ATTR_STRING_CHARS = 1_024
# Attribute names a result may carry: descriptive only. Anything a netCDF/CF reader acts
# on (scale_factor, add_offset, _FillValue, missing_value, calendar, dtype, _Unsigned,
# coordinates, bounds, compress, ...) is not on the list.
ALLOWED_ATTRS = frozenset(
    {
        "units", "long_name", "standard_name", "description", "label", "comment",
        "source", "history", "title", "note", "notes", "frame", "coordinate_system",
        "instrument", "mission", "dataset", "parameter", "method", "operation",
        "FIELDNAM", "CATDESC", "LABLAXIS", "UNITS", "VAR_TYPE", "DISPLAY_TYPE",
        "SCALETYP", "VAR_NOTES", "DICT_KEY", "MONOTON", "LABL_PTR_1",
    }
)  # fmt: skip
_CF_TIME_UNITS = re.compile(r"\bsince\b", re.IGNORECASE)


class FrameError(Exception):
    """The peer closed the pipe or sent a malformed or oversized frame."""


class FrameTooLarge(FrameError):
    """A frame announced a body larger than the reader accepts."""


class ResultRejected(ValueError):
    """A result breaks a limit on labels, names or structure (see `check_result`)."""


class FrameTimeout(Exception):
    """The deadline passed before a whole frame was sent or received."""


def _wait(fd: int, deadline: float, for_write: bool) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise FrameTimeout
    readable, writable, _ = select.select(
        [] if for_write else [fd], [fd] if for_write else [], [], remaining
    )
    if not readable and not writable:
        raise FrameTimeout


def write_frame(fd: int, data: bytes, deadline: float) -> None:
    """Write one frame to a non-blocking pipe, giving up at `deadline` (monotonic)."""
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        _wait(fd, deadline, for_write=True)
        try:
            sent = os.write(fd, view[:_CHUNK])
        except BlockingIOError:
            continue
        except OSError as exc:
            raise FrameError(f"pipe closed while writing: {exc}") from exc
        view = view[sent:]


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    buffer = bytearray()
    while len(buffer) < size:
        if deadline is not None:
            _wait(fd, deadline, for_write=False)
        try:
            chunk = os.read(fd, min(_CHUNK, size - len(buffer)))
        except BlockingIOError:
            continue
        except OSError as exc:
            raise FrameError(f"pipe closed while reading: {exc}") from exc
        if not chunk:
            raise FrameError("the other side closed the pipe")
        buffer += chunk
    return bytes(buffer)


def read_frame(fd: int, deadline: float, max_bytes: int) -> bytes:
    """Read one frame from a non-blocking pipe, refusing bodies over `max_bytes`."""
    (size,) = _LENGTH.unpack(_read_exact(fd, _LENGTH.size, deadline))
    if size > max_bytes:
        raise FrameTooLarge(f"a {size}-byte message is over the {max_bytes}-byte cap")
    return _read_exact(fd, size, deadline)


def write_frame_blocking(fd: int, data: bytes) -> None:
    """Write one frame to a blocking pipe (worker side)."""
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view[:_CHUNK]) :]


def split_frame(data: bytes) -> tuple[bytes, bytes]:
    """Split one whole frame off the front of `data`: (its body, the bytes after it)."""
    if len(data) < _LENGTH.size:
        raise FrameError("reply shorter than its length prefix")
    (size,) = _LENGTH.unpack_from(data)
    end = _LENGTH.size + size
    if end > len(data):
        raise FrameError(f"reply cut short: {len(data) - _LENGTH.size} of {size} bytes")
    return data[_LENGTH.size : end], data[end:]


def complete_frame_size(data: bytearray) -> int | None:
    """Bytes taken by the first frame of `data` (prefix included), None while incomplete."""
    if len(data) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack_from(data)
    total = _LENGTH.size + size
    return total if len(data) >= total else None


def read_frame_blocking(fd: int, max_bytes: int) -> bytes:
    """Read one frame from a blocking pipe (worker side)."""
    (size,) = _LENGTH.unpack(_read_exact(fd, _LENGTH.size, None))
    if size > max_bytes:
        raise FrameError(f"a {size}-byte message is over the {max_bytes}-byte cap")
    return _read_exact(fd, size, None)


def pack_message(header: dict[str, Any], blobs: list[bytes]) -> bytes:
    """Join a JSON header and binary blobs into one frame body."""
    head = json.dumps({**header, "blob_sizes": [len(b) for b in blobs]}).encode()
    return b"".join([_LENGTH.pack(len(head)), head, *blobs])


def unpack_message(body: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """Split a frame body into its JSON header and blobs, checking every length."""
    if len(body) < _LENGTH.size:
        raise FrameError("message shorter than its header length")
    (head_size,) = _LENGTH.unpack_from(body)
    end = _LENGTH.size + head_size
    try:
        header = json.loads(body[_LENGTH.size : end])
    except (ValueError, UnicodeDecodeError) as exc:
        raise FrameError(f"message header is not JSON: {exc}") from exc
    sizes = header.get("blob_sizes") if isinstance(header, dict) else None
    if not isinstance(sizes, list) or not all(isinstance(s, int) and s >= 0 for s in sizes):
        raise FrameError("message header has no valid blob_sizes")
    blobs: list[bytes] = []
    for size in sizes:
        blobs.append(body[end : end + size])
        end += size
    if end != len(body):
        raise FrameError("message blobs do not match their declared sizes")
    return header, blobs  # pyright: ignore[reportUnknownVariableType]


def _table_to_ipc(table: Any) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _ipc_to_table(blob: bytes, check: bool) -> Any:
    table = pa.ipc.open_stream(pa.py_buffer(blob)).read_all()
    if check:
        # Data from the worker is untrusted: a crafted buffer must not be read blindly.
        table.validate(full=True)
    return table


def _array_to_ipc(values: np.ndarray[Any, Any]) -> bytes:
    flat = np.ascontiguousarray(values).reshape(-1)
    return _table_to_ipc(pa.table({"v": pa.array(flat)}))


def _ipc_to_array(blob: bytes, shape: list[int], check: bool) -> np.ndarray[Any, Any]:
    column = _ipc_to_table(blob, check).column(0)
    values = column.to_numpy()
    expected = int(np.prod(shape)) if shape else 1
    if values.size != expected:
        raise FrameError(f"array blob has {values.size} values, header says {expected}")
    return values.reshape(shape)


def _json_safe(attrs: dict[Any, Any]) -> dict[str, Any]:
    safe: dict[str, Any] = {}
    for key, value in attrs.items():
        item = value.item() if isinstance(value, np.generic) else value
        if isinstance(item, str | int | float | bool) or item is None:
            safe[str(key)] = item
    return safe


def _encode_frame(frame: pd.DataFrame) -> tuple[dict[str, Any], list[bytes]]:
    header: dict[str, Any] = {"kind": "dataframe"}
    if isinstance(frame.index, pd.DatetimeIndex) and frame.index.freq is not None:
        header["freq"] = frame.index.freqstr
    table = pa.Table.from_pandas(frame, preserve_index=None, nthreads=1)
    return header, [_table_to_ipc(table)]


def _encode_array(array: xr.DataArray) -> tuple[dict[str, Any], list[bytes]]:
    coords: list[dict[str, Any]] = []
    blobs = [_array_to_ipc(np.asarray(array.values))]
    for name, coord in array.coords.items():
        coords.append(
            {
                "name": str(name),
                "dims": [str(d) for d in coord.dims],
                "shape": list(coord.shape),
                "attrs": _json_safe(dict(coord.attrs)),
            }
        )
        blobs.append(_array_to_ipc(np.asarray(coord.values)))
    header: dict[str, Any] = {
        "kind": "dataarray",
        "name": None if array.name is None else str(array.name),
        "dims": [str(d) for d in array.dims],
        "shape": list(array.shape),
        "attrs": _json_safe(dict(array.attrs)),
        "coords": coords,
    }
    return header, blobs


def encode_value(value: pd.DataFrame | xr.DataArray) -> tuple[dict[str, Any], list[bytes]]:
    """Encode a DataFrame or DataArray as header fields plus Arrow IPC blobs."""
    if isinstance(value, pd.DataFrame):
        return _encode_frame(value)
    return _encode_array(value)


def _decode_frame(header: dict[str, Any], blobs: list[bytes], check: bool) -> pd.DataFrame:
    frame = _ipc_to_table(blobs[0], check).to_pandas(use_threads=False)
    freq = header.get("freq")
    if isinstance(freq, str) and isinstance(frame.index, pd.DatetimeIndex):
        # Values that no longer conform to the frequency are kept without it.
        with contextlib.suppress(ValueError):
            frame.index = pd.DatetimeIndex(frame.index, freq=freq)
    return frame


def _decode_array(header: dict[str, Any], blobs: list[bytes], check: bool) -> xr.DataArray:
    coords_meta = header.get("coords", [])
    if not isinstance(coords_meta, list) or len(blobs) != len(coords_meta) + 1:
        raise FrameError("DataArray header and blobs disagree")
    values = _ipc_to_array(blobs[0], list(header["shape"]), check)
    coords: dict[str, tuple[tuple[str, ...], np.ndarray[Any, Any], dict[str, Any]]] = {}
    for meta, blob in zip(coords_meta, blobs[1:], strict=True):
        coord_values = _ipc_to_array(blob, list(meta["shape"]), check)
        coord_attrs = meta.get("attrs")
        coords[str(meta["name"])] = (
            tuple(str(d) for d in meta["dims"]),
            coord_values,
            coord_attrs if isinstance(coord_attrs, dict) else {},
        )
    name = header.get("name")
    attrs = header.get("attrs")
    return xr.DataArray(
        values,
        dims=[str(d) for d in header["dims"]],
        coords=coords,
        name=name if isinstance(name, str) else None,
        attrs=attrs if isinstance(attrs, dict) else {},
    )


def decode_value(
    header: dict[str, Any], blobs: list[bytes], *, check: bool = False
) -> pd.DataFrame | xr.DataArray:
    """Rebuild a DataFrame or DataArray; `check=True` fully validates untrusted buffers."""
    try:
        if header.get("kind") == "dataframe" and len(blobs) == 1:
            return _decode_frame(header, blobs, check)
        if header.get("kind") == "dataarray" and blobs:
            return _decode_array(header, blobs, check)
    except (pa.ArrowException, KeyError, TypeError, ValueError) as exc:
        raise FrameError(f"undecodable {header.get('kind')} data: {exc}") from exc
    raise FrameError(f"unknown data kind {header.get('kind')!r}")


def _check_label(label: object, what: str, limit: int) -> str:
    text = label if isinstance(label, str) else repr(label)
    if len(text) > limit:
        raise ResultRejected(f"{what} has {len(text)} characters (at most {limit})")
    if "\x00" in text:
        raise ResultRejected(f"{what} contains a NUL character")
    return text


def _attr_problem(key: object, value: object) -> str | None:
    """Why an attribute is dropped, or None when it is kept."""
    if not isinstance(key, str) or key not in ALLOWED_ATTRS:
        return "name not on the allowlist"
    item = value.item() if isinstance(value, np.generic) else value
    if isinstance(item, bool):
        return None
    if isinstance(item, int):
        return None if -(2**63) <= item < 2**63 else "integer out of range"
    if isinstance(item, float):
        return None if math.isfinite(item) else "not a finite number"
    if not isinstance(item, str):
        return f"a {type(item).__name__} value"
    if len(item) > MAX_ATTR_STRING_CHARS or "\x00" in item:
        return "string too long or with NUL"
    if key.lower() == "units" and _CF_TIME_UNITS.search(item):
        return "CF time units"
    return None


def clean_attrs(attrs: dict[Any, Any], where: str, notes: list[str]) -> dict[str, Any]:
    """The allowlisted attributes of `attrs`; a note names the ones dropped."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in list(attrs.items()):
        problem = _attr_problem(key, value)
        if problem is None and len(kept) < MAX_ATTRS:
            kept[str(key)] = value.item() if isinstance(value, np.generic) else value
        else:
            dropped.append(f"{str(key)[:40]!r} ({problem or 'too many attributes'})")
    if dropped:
        shown = ", ".join(dropped[:8]) + (" ..." if len(dropped) > 8 else "")
        notes.append(
            f"attributes of {where} dropped (results carry descriptive attrs only): {shown}"
        )
    return kept


def _check_frame(frame: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    if frame.shape[1] > MAX_COLUMNS:
        raise ResultRejected(f"the result has {frame.shape[1]} columns (at most {MAX_COLUMNS})")
    for label in frame.columns:
        _check_label(label, "a column label", MAX_LABEL_CHARS)
    for axis in (frame.index, frame.columns):
        for name in axis.names:
            if name is not None:
                _check_label(name, "an index name", MAX_LABEL_CHARS)
    if frame.attrs:
        notes.append("DataFrame.attrs dropped (results carry no frame-level attributes)")
        frame = frame.copy(deep=False)
        frame.attrs = {}
    return frame


def _check_array(array: xr.DataArray, notes: list[str]) -> xr.DataArray:
    names: list[str] = []
    if array.name is not None:
        if not isinstance(array.name, str):
            raise ResultRejected("the DataArray name must be a string")
        names.append(array.name)
    names += [str(d) for d in array.dims]
    for name in names:
        _check_label(name, f"the name {name[:40]!r}...", MAX_NAME_CHARS)
        if "/" in name or not name.strip():
            raise ResultRejected(f"the name {name[:40]!r} is empty or contains '/'")
    for coord_name in array.coords:
        coord = _check_label(coord_name, "a coordinate name", MAX_NAME_CHARS)
        if "/" in coord or not coord.strip():
            raise ResultRejected(f"the coordinate name {coord[:40]!r} is empty or contains '/'")
        if array.name is not None and coord == array.name:
            raise ResultRejected(f"the DataArray name {coord[:40]!r} is also a coordinate name")
    cleaned = array.copy(deep=False)
    cleaned.attrs = clean_attrs(dict(array.attrs), "the result", notes)
    for coord_name, coord in array.coords.items():
        kept = clean_attrs(dict(coord.attrs), f"coordinate {str(coord_name)[:40]!r}", notes)
        cleaned.coords[coord_name].attrs = kept
    return cleaned


def check_result(
    value: pd.DataFrame | xr.DataArray,
) -> tuple[pd.DataFrame | xr.DataArray, list[str]]:
    """Apply the result limits: the cleaned value and notes on what was dropped.

    Raises:
        ResultRejected: a label or name is too long or malformed; the message says which.
    """
    notes: list[str] = []
    if isinstance(value, pd.DataFrame):
        return _check_frame(value, notes), notes
    return _check_array(value, notes), notes
