"""How one fragment is kept: an Arrow table carrying the parameter's metadata.

A fragment is the rows of one parameter within one fragment's time span, as an Arrow
table with the time index and the source's metadata (units, bins, dims...) as JSON under
the schema key ``xhelio``; a fragment in which the source had no data is an empty table
marked ``{"empty": true}``. `assemble` joins fragments back into one `ParameterData`.
Imports only `errors`, `timerange`, `sources.base` and the sibling `fragments`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from xhelio.errors import ServerError
from xhelio.sources.base import ParameterData
from xhelio.sources.cache.fragments import fragment_start
from xhelio.timerange import TimeRange

__all__ = [
    "ArrowTable",
    "as_utc_sorted",
    "assemble",
    "dictionary_columns",
    "empty_fragment_table",
    "fragment_meta",
    "fragment_table",
    "split_fragments",
]

META_KEY = b"xhelio"

ArrowTable = Any
"""A `pyarrow.Table` (pyarrow ships no type stubs)."""


def dictionary_columns(table: ArrowTable) -> list[str]:
    """Return the columns worth dictionary-encoding: not floats or times.

    Measurement values rarely repeat, and parquet's dictionary pages for them made reads
    5-7x slower for no size gain.
    """
    return [
        str(f.name)
        for f in table.schema
        if not (pa.types.is_floating(f.type) or pa.types.is_timestamp(f.type))
    ]


def fragment_table(data: ParameterData, frame: pd.DataFrame) -> ArrowTable:
    """Return `frame` (one fragment of `data`) as an Arrow table carrying `data`'s metadata."""
    # One thread: a fragment is small, and pyarrow's per-call thread pool dominated the cost.
    table = pa.Table.from_pandas(frame, preserve_index=True, nthreads=1)
    bins = data.bins
    meta = {
        "name": data.name,
        "units": data.units,
        "description": data.description,
        "bins": None if bins is None else bins.tolist(),
        "bins_dtype": None if bins is None else str(bins.dtype),
        "bins_name": data.bins_name,
        "bins_units": data.bins_units,
        "meta": data.meta,  # dims, fill, valid range: what a flat table cannot say
    }
    schema_meta = dict(table.schema.metadata or {})
    schema_meta[META_KEY] = json.dumps(meta).encode()
    return table.replace_schema_metadata(schema_meta)


def empty_fragment_table() -> ArrowTable:
    """Return the marker of a fragment in which the source had no data at all."""
    return pa.table({}).replace_schema_metadata({META_KEY: b'{"empty": true}'})


def fragment_meta(table: ArrowTable) -> dict[str, object]:
    """Return the xhelio metadata of a fragment table; ValueError when absent or invalid."""
    raw = (table.schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise ValueError("fragment has no xhelio metadata")
    meta: object = json.loads(raw)
    if not isinstance(meta, dict):
        raise ValueError("fragment metadata is not an object")
    return {str(k): v for k, v in meta.items()}  # pyright: ignore[reportUnknownVariableType]


def is_empty_marker(table: ArrowTable) -> bool:
    return fragment_meta(table).get("empty") is True


def empty_frame() -> pd.DataFrame:
    return pd.DataFrame(index=pd.DatetimeIndex([], tz="UTC", name="time"))


def as_utc_sorted(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """Return `frame` with a sorted UTC DatetimeIndex; ServerError when it has no time index."""
    index = frame.index
    if not isinstance(index, pd.DatetimeIndex):
        raise ServerError(
            f"{what} came back without a time index, so it cannot be cached. "
            "This is a bug in the data source; report it with the dataset id."
        )
    if index.tz is None:
        frame = frame.tz_localize("UTC")
    elif str(index.tz) != "UTC":
        frame = frame.tz_convert("UTC")
    if not frame.index.is_monotonic_increasing:
        frame = frame.sort_index(kind="stable")
    return frame


def split_fragments(frame: pd.DataFrame, first: int, last: int, hours: int) -> list[pd.DataFrame]:
    """Cut `frame` into fragments `first`..`last`; rows outside them are dropped."""
    bounds = pd.DatetimeIndex([fragment_start(i, hours) for i in range(first, last + 2)])
    positions = frame.index.searchsorted(bounds)
    return [frame.iloc[positions[k] : positions[k + 1]] for k in range(last - first + 1)]


def assemble(name: str, tables: Sequence[ArrowTable], time_range: TimeRange) -> ParameterData:
    """Concatenate fragment tables into one `ParameterData` trimmed to `time_range`."""
    filled = [t for t in tables if not is_empty_marker(t)]
    if not filled:
        return ParameterData(name=name, frame=empty_frame())
    try:
        frame = pa.concat_tables(filled, promote_options="permissive").to_pandas()
    except pa.ArrowInvalid:
        # Fragments fetched at different times may disagree on a column type.
        frame = pd.concat([t.to_pandas() for t in filled])
    low, high = frame.index.searchsorted(pd.DatetimeIndex([time_range.start, time_range.end]))
    frame = frame.iloc[low:high]
    meta = fragment_meta(filled[-1])
    raw_bins = meta.get("bins")
    bins = None if raw_bins is None else np.asarray(raw_bins, dtype=str(meta.get("bins_dtype")))
    return ParameterData(
        name=str(meta.get("name") or name),
        frame=frame,
        units=str(meta.get("units") or ""),
        description=str(meta.get("description") or ""),
        bins=bins,
        bins_name=None if meta.get("bins_name") is None else str(meta.get("bins_name")),
        bins_units=None if meta.get("bins_units") is None else str(meta.get("bins_units")),
        meta=_extra_meta(meta.get("meta")),
    )


def _extra_meta(value: object) -> dict[str, Any]:
    """The source's JSON metadata (dims, fill, valid range) stored with a fragment."""
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
