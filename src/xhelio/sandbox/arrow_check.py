"""Checks on an Arrow IPC stream from the sandbox child, made before anything is decoded.

The child is untrusted: past every other layer, its reply is arbitrary bytes. Arrow's own
validation (`Table.validate(full=True)`) proves buffers are in bounds and strings are
UTF-8, but not that decoding stays small: a compressed body is inflated to the size its
header claims, a null column or a string view has a logical length with no bytes
behind it, and nested types turn a few bytes into millions of Python objects. So,
reading only the stream's flatbuffer headers, `check_stream` refuses:

* body compression (a decompression bomb) and every column type outside a flat
  allowlist (numbers, bools, timestamps, durations, dates, times, strings, binary,
  null, dictionaries of those), i.e. nested, view, run-end-encoded and extension types;
* more rows than `max_rows`, or a decoded size (estimated per type from the row counts
  the headers declare, plus a fixed cost per batch and column) over `max_decoded_bytes`;
* more than MAX_BATCHES record batches (an honest child writes one; 800,000 one-row
  batches took pandas to 1 GB), more dictionary batches than dictionary columns plus
  batches, a schema message over MAX_SCHEMA_BYTES or more than MAX_FIELDS columns, and
  pandas metadata (JSON that pyarrow parses when decoding) whose shape is not small.

Imports from xhelio only `sandbox.bounded_json`.
"""

from __future__ import annotations

import struct
from typing import Any

import pyarrow as pa

from xhelio.sandbox.bounded_json import JsonRefused, loads_bounded

__all__ = ["MAX_BATCHES", "UnsafeStream", "allowed_type", "check_stream"]

MAX_BATCHES = 64
MAX_FIELDS = 10_100  # the result's columns (at most 10,000) plus its index levels
MAX_SCHEMA_BYTES = 16 * 1024 * 1024
# What a batch costs once decoded regardless of its rows (chunk objects, per column).
_BATCH_COLUMN_COST = 1_024

# Message.header union tags (Arrow's Message.fbs)
_RECORD_BATCH = 3
_DICTIONARY_BATCH = 2
# Bytes a decoded element costs in pandas, beyond what the body already holds.
_OBJECT_COST = 64  # a Python str/bytes object and its pointer


class UnsafeStream(ValueError):
    """The stream uses a feature or a size that decoding could not bound."""


def _flat_type_ok(kind: Any) -> bool:
    types = pa.types
    return bool(
        types.is_integer(kind)
        or types.is_floating(kind)
        or types.is_boolean(kind)
        or types.is_timestamp(kind)
        or types.is_duration(kind)
        or types.is_date(kind)
        or types.is_time(kind)
        or types.is_string(kind)
        or types.is_large_string(kind)
        or types.is_binary(kind)
        or types.is_large_binary(kind)
        or types.is_null(kind)
    )


def allowed_type(kind: Any) -> bool:
    """True for the flat column types a result may use (also checked in the child)."""
    if pa.types.is_dictionary(kind):
        return pa.types.is_integer(kind.index_type) and _flat_type_ok(kind.value_type)
    return _flat_type_ok(kind)


def _element_cost(kind: Any) -> int:
    types = pa.types
    if types.is_dictionary(kind):
        return _element_cost(kind.index_type)
    if types.is_null(kind):
        return 8  # an object pointer to None
    if types.is_boolean(kind):
        return 1
    if types.is_integer(kind) or types.is_floating(kind):
        return max(int(kind.bit_width) // 8, 1)
    if types.is_timestamp(kind) or types.is_duration(kind):
        return 8
    return _OBJECT_COST  # strings, bytes, dates and times become Python objects


class _Flat:
    """Just enough of a flatbuffer reader for Arrow's Message/RecordBatch tables."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def _u(self, fmt: str, pos: int) -> int:
        if pos < 0 or pos + struct.calcsize(fmt) > len(self.data):
            raise UnsafeStream("malformed message header")
        return int(struct.unpack_from(fmt, self.data, pos)[0])

    def root(self) -> int:
        return self._u("<I", 0)

    def field(self, table: int, index: int) -> int | None:
        """Position of field `index` of the table at `table`, None when absent."""
        vtable = table - self._u("<i", table)
        slot = 4 + 2 * index
        if slot >= self._u("<H", vtable):
            return None
        offset = self._u("<H", vtable + slot)
        return table + offset if offset else None

    def table(self, position: int) -> int:
        return position + self._u("<I", position)

    def int64(self, position: int | None) -> int:
        return 0 if position is None else self._u("<q", position)

    def byte(self, position: int | None) -> int:
        return 0 if position is None else self._u("<B", position)


def _batch_rows(flat: _Flat, batch: int) -> int:
    """Rows of a RecordBatch table; refuses compression and negative lengths."""
    if flat.field(batch, 3) is not None:
        raise UnsafeStream("compressed buffers are not accepted from the sandbox")
    rows = flat.int64(flat.field(batch, 0))
    if rows < 0:
        raise UnsafeStream("negative row count")
    return rows


def _checked_schema(message: Any) -> Any:
    """The stream's schema, once its size, columns, types and pandas metadata are checked."""
    if message.type != "schema":
        raise UnsafeStream("the stream does not start with a schema")
    if message.metadata.size > MAX_SCHEMA_BYTES:
        raise UnsafeStream(f"a schema of more than {MAX_SCHEMA_BYTES} bytes")
    schema = pa.ipc.read_schema(message)
    if len(schema) > MAX_FIELDS:
        raise UnsafeStream(f"more than {MAX_FIELDS} columns")
    pandas_metadata = (schema.metadata or {}).get(b"pandas")
    if pandas_metadata is not None:
        try:
            loads_bounded(pandas_metadata, max_items=20 * MAX_FIELDS)
        except JsonRefused as exc:
            raise UnsafeStream(f"pandas metadata refused: {exc}") from exc
    for field in schema:
        if not allowed_type(field.type):
            raise UnsafeStream(f"column {field.name[:60]!r} has the unsupported type {field.type}")
    return schema


def check_stream(blob: bytes, max_rows: int, max_decoded_bytes: int) -> int:
    """Refuse an IPC stream whose decoding could not be bounded (see the module doc).

    Returns the estimated decoded size in bytes.

    Raises:
        UnsafeStream: what was refused.
    """
    reader = pa.ipc.MessageReader.open_stream(pa.py_buffer(blob))
    schema = _checked_schema(reader.read_next_message())
    row_cost = sum(_element_cost(field.type) for field in schema)
    dictionaries = [f.type.value_type for f in schema if pa.types.is_dictionary(f.type)]
    dictionary_cost = max((_element_cost(kind) for kind in dictionaries), default=0)
    batch_cost = _BATCH_COLUMN_COST * max(len(schema), 1)
    max_dictionary_batches = len(dictionaries) + MAX_BATCHES
    rows = 0
    decoded = 0
    batches = 0
    dictionary_batches = 0
    while True:
        try:
            message = reader.read_next_message()
        except StopIteration:
            break
        flat = _Flat(message.metadata.to_pybytes())
        header = flat.root()
        kind = flat.byte(flat.field(header, 1))
        body = flat.field(header, 2)
        if body is None:
            raise UnsafeStream("message without a header")
        if kind == _RECORD_BATCH:
            batches += 1
            if batches > MAX_BATCHES:
                raise UnsafeStream(f"more than {MAX_BATCHES} record batches")
            batch_rows = _batch_rows(flat, flat.table(body))
            rows += batch_rows
            decoded += batch_rows * row_cost + batch_cost
        elif kind == _DICTIONARY_BATCH:
            dictionary_batches += 1
            if dictionary_batches > max_dictionary_batches:
                raise UnsafeStream("more dictionary batches than dictionary columns")
            data = flat.field(flat.table(body), 1)
            if data is None:
                raise UnsafeStream("dictionary batch without data")
            decoded += _batch_rows(flat, flat.table(data)) * dictionary_cost
        else:
            raise UnsafeStream(f"unexpected message type {message.type}")
        decoded += message.body.size if message.body is not None else 0
        if rows > max_rows:
            raise UnsafeStream(f"more than {max_rows} rows")
        if decoded > max_decoded_bytes:
            raise UnsafeStream(f"decoding would take more than {max_decoded_bytes} bytes")
    return decoded
