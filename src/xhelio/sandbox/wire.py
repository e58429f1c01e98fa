"""The wire format between the sandbox executor and its worker process: no pickle.

A message is one length-prefixed frame on a pipe. Its body is a JSON header followed by
zero or more binary blobs; tables and arrays travel as Arrow IPC streams, never pickle,
so the parent never runs code chosen by the worker while decoding a reply.

DataFrames keep their index (including a tz-aware UTC DatetimeIndex and its frequency),
column names, dtypes and NaNs. DataArrays are sent as their values plus one blob per
coordinate, with dims, shapes, name and JSON-safe attrs (the array's and each
coordinate's, e.g. the units of spectrogram bins) in the header.

Results are data, not instructions: `results.check_result` (re-exported here) is applied
to every result, in the worker and again in the parent; hostile Arrow blobs are checked
by `arrow_check` before they are decoded.

Every length, count and shape read from a message is checked before it is used: the
JSON header is at most MAX_HEADER_BYTES and parsed only when its structure is small
(`bounded_json`), blobs are at most `max_blobs`, a DataArray has at most MAX_COORDS
coordinates and MAX_DIMS dims, and every decoding error is a `FrameError`.

Imports from xhelio only `sandbox.arrow_check`, `sandbox.bounded_json` and
`sandbox.results`: the worker loads it before its guards go up.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import struct
import time
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import xarray as xr

from xhelio.sandbox import arrow_check
from xhelio.sandbox.bounded_json import JsonRefused, loads_bounded
from xhelio.sandbox.results import MAX_COORDS, MAX_DIMS, MAX_ROWS, ResultRejected, check_result

__all__ = [
    "FRAME_PREFIX",
    "MAX_HEADER_BYTES",
    "FrameError",
    "FrameTimeout",
    "FrameTooLarge",
    "ResultRejected",
    "check_blobs",
    "check_result",
    "decode_value",
    "encode_value",
    "pack_message",
    "read_exact",
    "read_frame",
    "read_frame_blocking",
    "split_frame",
    "unpack_message",
    "writable",
    "write_all",
    "write_frame",
    "write_frame_blocking",
]

FRAME_PREFIX = struct.Struct("!Q")  # a frame: its body length, then the body
_CHUNK = 1 << 20
MAX_HEADER_BYTES = 4 * 1024 * 1024  # a reply's JSON header: stdout, warnings, attrs
MAX_BLOBS = 100_000  # a request: every source's values and coordinates
DEFAULT_MAX_DECODED_BYTES = 1 << 30


class FrameError(Exception):
    """The peer closed the pipe or sent a malformed or oversized frame."""


class FrameTooLarge(FrameError):
    """A frame announced a body larger than the reader accepts."""


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
    view = memoryview(FRAME_PREFIX.pack(len(data)) + data)
    while view:
        _wait(fd, deadline, for_write=True)
        try:
            sent = os.write(fd, view[:_CHUNK])
        except BlockingIOError:
            continue
        except OSError as exc:
            raise FrameError(f"pipe closed while writing: {exc}") from exc
        view = view[sent:]


def read_exact(fd: int, size: int, deadline: float | None = None) -> bytes:
    """`size` bytes from a pipe (non-blocking with a `deadline`, else blocking).

    Raises:
        FrameError: the pipe closed first.
        FrameTimeout: the deadline passed first.
    """
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
    (size,) = FRAME_PREFIX.unpack(read_exact(fd, FRAME_PREFIX.size, deadline))
    if size > max_bytes:
        raise FrameTooLarge(f"a {size}-byte message is over the {max_bytes}-byte cap")
    return read_exact(fd, size, deadline)


def write_frame_blocking(fd: int, data: bytes) -> None:
    """Write one frame to a blocking pipe (worker side)."""
    write_all(fd, FRAME_PREFIX.pack(len(data)) + data)


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to a blocking pipe (OSError, e.g. BrokenPipeError, passes)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[:_CHUNK]) :]


def split_frame(data: bytes | bytearray) -> tuple[memoryview, memoryview]:
    """Split one whole frame off the front of `data`: (its body, the bytes after it).

    Views, not copies: a reply near the result cap is held once.
    """
    if len(data) < FRAME_PREFIX.size:
        raise FrameError("reply shorter than its length prefix")
    (size,) = FRAME_PREFIX.unpack_from(data)
    end = FRAME_PREFIX.size + size
    if end > len(data):
        raise FrameError(f"reply cut short: {len(data) - FRAME_PREFIX.size} of {size} bytes")
    view = memoryview(data)
    return view[FRAME_PREFIX.size : end], view[end:]


def read_frame_blocking(fd: int, max_bytes: int) -> bytes:
    """Read one frame from a blocking pipe (worker side)."""
    (size,) = FRAME_PREFIX.unpack(read_exact(fd, FRAME_PREFIX.size, None))
    if size > max_bytes:
        raise FrameError(f"a {size}-byte message is over the {max_bytes}-byte cap")
    return read_exact(fd, size, None)


def pack_message(header: dict[str, Any], blobs: list[bytes]) -> bytes:
    """Join a JSON header and binary blobs into one frame body."""
    head = json.dumps({**header, "blob_sizes": [len(b) for b in blobs]}).encode()
    return b"".join([FRAME_PREFIX.pack(len(head)), head, *blobs])


def unpack_message(
    body: bytes | memoryview, max_blobs: int = MAX_BLOBS
) -> tuple[dict[str, Any], list[bytes]]:
    """Split a frame body into its JSON header and blobs, checking every length.

    The header is at most MAX_HEADER_BYTES and parsed only when its shape is small
    (`bounded_json`); at most `max_blobs` blobs.
    """
    if len(body) < FRAME_PREFIX.size:
        raise FrameError("message shorter than its header length")
    (head_size,) = FRAME_PREFIX.unpack_from(body)
    if head_size > MAX_HEADER_BYTES:
        raise FrameError(f"a {head_size}-byte message header is over {MAX_HEADER_BYTES} bytes")
    end = FRAME_PREFIX.size + head_size
    try:
        header = loads_bounded(bytes(body[FRAME_PREFIX.size : end]))
    except JsonRefused as exc:
        raise FrameError(f"message header refused: {exc}") from exc
    if not isinstance(header, dict):
        raise FrameError("message header is not a JSON object")
    sizes = header.get("blob_sizes")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(sizes, list) or not all(isinstance(s, int) and s >= 0 for s in sizes):  # pyright: ignore[reportUnknownVariableType]
        raise FrameError("message header has no valid blob_sizes")
    if len(sizes) > max_blobs:  # pyright: ignore[reportUnknownArgumentType]
        raise FrameError(f"a message of more than {max_blobs} blobs (values and coordinates)")
    blobs: list[bytes] = []
    for size in sizes:  # pyright: ignore[reportUnknownVariableType]
        blobs.append(bytes(body[end : end + size]))
        end += size  # pyright: ignore[reportUnknownVariableType]
    if end != len(body):
        raise FrameError("message blobs do not match their declared sizes")
    return header, blobs  # pyright: ignore[reportUnknownVariableType]


def _table_to_ipc(table: Any) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


class _Budget:
    """What decoding untrusted blobs may still produce (rows, bytes), shared by all blobs."""

    def __init__(self, max_decoded_bytes: int) -> None:
        self.bytes = max_decoded_bytes

    def take(self, blob: bytes) -> None:
        """Check one blob's stream headers against what is left; raise FrameError."""
        try:
            used = arrow_check.check_stream(blob, MAX_ROWS, self.bytes)
        except (arrow_check.UnsafeStream, pa.ArrowException) as exc:
            raise FrameError(f"refused Arrow data: {exc}") from exc
        self.bytes -= used


def check_blobs(blobs: list[bytes], max_decoded_bytes: int) -> None:
    """Apply the hostile-stream checks of `decode_value(check=True)` without decoding.

    Raises:
        FrameError: a blob would be refused by the parent (the message says why).
    """
    budget = _Budget(max_decoded_bytes)
    for blob in blobs:
        budget.take(blob)


def _ipc_to_table(blob: bytes, check: _Budget | None) -> Any:
    if check is not None:
        check.take(blob)  # before decoding: nothing unbounded is ever inflated
    table = pa.ipc.open_stream(pa.py_buffer(blob)).read_all()
    if check is not None:
        # Data from the worker is untrusted: a crafted buffer must not be read blindly.
        table.validate(full=True)
    return table


def _array_to_ipc(values: np.ndarray[Any, Any]) -> bytes:
    flat = np.ascontiguousarray(values).reshape(-1)
    return _table_to_ipc(pa.table({"v": pa.array(flat)}))


def _ipc_to_array(blob: bytes, shape: list[int], check: _Budget | None) -> np.ndarray[Any, Any]:
    column = _ipc_to_table(blob, check).column(0)
    values = column.to_numpy()
    expected = math.prod(shape)
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


def _decode_frame(
    header: dict[str, Any], blobs: list[bytes], check: _Budget | None
) -> pd.DataFrame:
    frame = _ipc_to_table(blobs[0], check).to_pandas(use_threads=False)
    freq = header.get("freq")
    if isinstance(freq, str) and isinstance(frame.index, pd.DatetimeIndex):
        # Values that no longer conform to the frequency are kept without it.
        with contextlib.suppress(ValueError):
            frame.index = pd.DatetimeIndex(frame.index, freq=freq)
    return frame


def _shape(value: object) -> list[int]:
    """A shape from a header: a list of at most MAX_DIMS non-negative ints."""
    if not isinstance(value, list) or len(value) > MAX_DIMS:  # pyright: ignore[reportUnknownArgumentType]
        raise FrameError(f"a shape must be a list of at most {MAX_DIMS} sizes")
    sizes: list[int] = []
    for size in value:  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_ROWS:
            raise FrameError("a shape holds a size that is not a row count")
        sizes.append(size)
    return sizes


def _dims(value: object, shape: list[int]) -> tuple[str, ...]:
    """Dimension names from a header: one string per entry of `shape`."""
    if not isinstance(value, list) or len(value) != len(shape):  # pyright: ignore[reportUnknownArgumentType]
        raise FrameError("dims and shape disagree")
    if not all(isinstance(d, str) for d in value):  # pyright: ignore[reportUnknownVariableType]
        raise FrameError("dims must be strings")
    return tuple(value)  # pyright: ignore[reportUnknownArgumentType]


def _attrs(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _decode_array(
    header: dict[str, Any], blobs: list[bytes], check: _Budget | None
) -> xr.DataArray:
    coords_meta = header.get("coords", [])
    if not isinstance(coords_meta, list) or len(blobs) != len(coords_meta) + 1:  # pyright: ignore[reportUnknownArgumentType]
        raise FrameError("DataArray header and blobs disagree")
    if len(coords_meta) > MAX_COORDS:  # pyright: ignore[reportUnknownArgumentType]
        raise FrameError(f"more than {MAX_COORDS} coordinates")
    shape = _shape(header.get("shape"))
    dims = _dims(header.get("dims"), shape)
    values = _ipc_to_array(blobs[0], shape, check)
    coords: dict[str, tuple[tuple[str, ...], np.ndarray[Any, Any], dict[str, Any]]] = {}
    for meta, blob in zip(coords_meta, blobs[1:], strict=True):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):  # pyright: ignore[reportUnknownMemberType]
            raise FrameError("a coordinate without a name")
        coord_shape = _shape(meta.get("shape"))  # pyright: ignore[reportUnknownMemberType]
        coord_dims = _dims(meta.get("dims"), coord_shape)  # pyright: ignore[reportUnknownMemberType]
        coord_values = _ipc_to_array(blob, coord_shape, check)
        coords[str(meta["name"])] = (coord_dims, coord_values, _attrs(meta.get("attrs")))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    name = header.get("name")
    return xr.DataArray(
        values,
        dims=dims,
        coords=coords,
        name=name if isinstance(name, str) else None,
        attrs=_attrs(header.get("attrs")),
    )


def writable(value: pd.DataFrame | xr.DataArray) -> pd.DataFrame | xr.DataArray:
    """`value` with writable arrays where the libraries expect them.

    Arrow decodes read-only views; a DataArray's `.values` is writable everywhere else
    (`a.values[a.values > 5] = np.nan`), so a read-only one is copied. DataFrames are
    returned as they are: pandas' copy-on-write already decides what may be written.
    """
    if isinstance(value, pd.DataFrame):
        return value
    variables = [value.variable, *value.coords.variables.values()]
    if all(np.asarray(v.values).flags.writeable for v in variables):
        return value
    return value.copy(deep=True)


def decode_value(
    header: dict[str, Any],
    blobs: list[bytes],
    *,
    check: bool = False,
    max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
) -> pd.DataFrame | xr.DataArray:
    """Rebuild a DataFrame or DataArray from header fields and Arrow blobs.

    `check=True` treats the blobs as hostile: stream headers are checked first (no
    compression, flat column types only, at most MAX_ROWS rows and `max_decoded_bytes`
    once decoded, see `arrow_check`), then every buffer is fully validated.

    Raises:
        FrameError: the data is malformed, refused or cannot be decoded.
    """
    budget = _Budget(max_decoded_bytes) if check else None
    try:
        if header.get("kind") == "dataframe" and len(blobs) == 1:
            return _decode_frame(header, blobs, budget)
        if header.get("kind") == "dataarray" and blobs:
            return _decode_array(header, blobs, budget)
    except FrameError:
        raise
    except Exception as exc:  # hostile metadata reaches pandas/xarray: any error means "bad data"
        raise FrameError(f"undecodable {header.get('kind')} data: {exc}"[:2000]) from exc
    raise FrameError(f"unknown data kind {header.get('kind')!r}"[:200])
