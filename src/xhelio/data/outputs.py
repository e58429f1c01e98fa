"""Output files that keep the data's meaning: CSV, parquet and netCDF writers.

Every entry goes through here, fetched or computed, timeseries or not:

- CSV: one header row whose names carry units (``Magnitude [nT]``), so
  `pandas.read_csv(path)` reads it with its defaults; the full metadata (descriptions,
  labels, bins, citation) goes to a ``<name>.meta.json`` file beside it.
- parquet: per-column field metadata (units, description) and an ``xhelio`` schema
  metadata entry with every parameter's meaning and the datasets' citations.
- netCDF: multi-dimensional parameters keep their dimensions and bin coordinates;
  variables carry ``units``, ``raw_units``, ``long_name``; the file carries the
  citations (DOI, PI, acknowledgement) as global attributes.

The index column is ``time`` (ISO 8601 UTC, ``...Z``) for timeseries, otherwise the
index's own name (``frequency``) or ``index``. Units come from the source's metadata
for fetched data and from `DataEntry.units` (per column, possibly partial) for computed
data. Nothing to cite means no citation block.

Imports only `data` from xhelio.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.data.streamout import atomic_output

__all__ = [
    "combined_frame",
    "flat_frame",
    "output_metadata",
    "write_output",
    "write_sidecar",
]


def _name(entry: DataEntry) -> str:
    return entry.source_parameter or entry.label


def _index_name(index: pd.Index) -> str:
    """What the index column is called in a file: time, its own name, or index."""
    if isinstance(index, pd.DatetimeIndex):
        return "time"
    return "index" if index.name is None else str(index.name)


def _utc(index: pd.DatetimeIndex) -> pd.DatetimeIndex:
    # Stored timeseries are UTC; a naive index (computed data) is read as UTC too.
    return index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")


def _array_index(array: xr.DataArray) -> pd.Index:
    """The first dimension of `array` as an index: UTC times, its coordinate, or positions."""
    dim = str(array.dims[0])
    coord = array.coords.get(dim, None)
    if coord is not None and np.issubdtype(coord.dtype, np.datetime64):
        return _utc(pd.DatetimeIndex(coord.to_numpy()))
    if coord is not None:
        return pd.Index(coord.to_numpy(), name=dim)
    # xarray names unnamed dimensions dim_0, dim_1...: not a name worth showing
    return pd.RangeIndex(array.shape[0], name=None if dim.startswith("dim_") else dim)


def flat_frame(entry: DataEntry) -> pd.DataFrame:
    """The entry as a table: one column per element, named with labels or bin values."""
    if isinstance(entry.data, pd.DataFrame):
        frame = entry.data
        if isinstance(frame.index, pd.DatetimeIndex) and str(frame.index.tz) != "UTC":
            frame = frame.set_axis(_utc(frame.index), axis=0)
        return frame
    array = entry.data
    name = str(array.name or _name(entry))
    index = _array_index(array)
    if array.ndim == 1:
        return pd.DataFrame({name: array.to_numpy()}, index=index)
    parts: list[list[str]] = []
    for dim in (str(d) for d in array.dims[1:]):
        if f"{dim}_label" in array.coords:
            parts.append([f"{dim}={v}" for v in array.coords[f"{dim}_label"].values])
        elif dim in array.coords and array.coords[dim].ndim == 1:
            parts.append([f"{dim}={_bin(v)}" for v in array.coords[dim].values])
        else:
            parts.append([f"{dim}={i}" for i in range(array.sizes[dim])])
    columns = [name + "[" + ",".join(combo) + "]" for combo in _product(parts)]
    values = array.to_numpy().reshape(array.shape[0], -1)
    return pd.DataFrame(values, index=index, columns=columns)


def _bin(value: Any) -> str:
    """A bin value as a column name part: numbers short (0.0591608), anything else as is."""
    return f"{float(value):g}" if isinstance(value, int | float | np.number) else str(value)


def _product(parts: list[list[str]]) -> list[tuple[str, ...]]:
    combos: list[tuple[str, ...]] = [()]
    for options in parts:
        combos = [(*c, o) for c in combos for o in options]
    return combos


def _column_units(entry: DataEntry, frame: pd.DataFrame) -> dict[str, str]:
    """Each column's unit: the source's (one per parameter), else `entry.units`."""
    columns = [str(c) for c in frame.columns]
    for key in ("display_units", "units"):
        if key in entry.meta:
            return dict.fromkeys(columns, str(entry.meta[key] or ""))
    if isinstance(entry.data, pd.DataFrame):
        return {c: entry.units.get(c, "") for c in columns}
    # A DataArray is one quantity: its unit is under its name (or the only one given).
    given = set(entry.units.values())
    unit = entry.units.get(str(entry.data.name), "") or (given.pop() if len(given) == 1 else "")
    return dict.fromkeys(columns, unit)


def _index_units(entry: DataEntry, index: pd.Index) -> str:
    """The unit of a non-time index (e.g. Hz for a frequency), when it is known."""
    if isinstance(index, pd.DatetimeIndex) or index.name is None:
        return ""
    if isinstance(entry.data, xr.DataArray) and index.name in entry.data.coords:
        return str(entry.data.coords[index.name].attrs.get("units", ""))
    return entry.units.get(str(index.name), "")


def output_metadata(entries: list[DataEntry]) -> dict[str, Any]:
    """JSON-able meaning of every entry written: units, description, dims, citation."""
    parameters: dict[str, Any] = {}
    citations: list[dict[str, str]] = []
    for entry in entries:
        frame = flat_frame(entry)
        units = _column_units(entry, frame)
        record: dict[str, Any] = {"description": entry.description}
        if len(set(units.values())) <= 1:
            record["units"] = next(iter(units.values()), "")
        else:
            record["column_units"] = units  # computed tables mix units
        if "units" in entry.meta:
            record["raw_units"] = entry.meta["units"]
        record["columns"] = list(units)
        record["index"] = _index_name(frame.index)
        if index_units := _index_units(entry, frame.index):
            record["index_units"] = index_units
        if entry.source_dataset:
            record["dataset"] = entry.source_dataset
        for key in ("dims", "fill", "valid_min", "valid_max", "scale", "notes"):
            if key in entry.meta:
                record[key] = entry.meta[key]
        parameters[entry.label] = record
        citations.extend(c for c in entry.citations if c not in citations)
    return {"parameters": parameters, **({"citations": citations} if citations else {})}


def combined_frame(entries: list[DataEntry]) -> tuple[pd.DataFrame, dict[str, str]]:
    """One table of all entries outer-joined on their index, and each column's units."""
    frames: list[pd.DataFrame] = []
    units: dict[str, str] = {}
    for entry in entries:
        frame = flat_frame(entry)
        column_units = _column_units(entry, frame)
        frame = frame.set_axis(list(column_units), axis=1)
        param = _name(entry)
        if len(entries) > 1 and not all(c.startswith(param) for c in column_units):
            frame = frame.add_prefix(f"{param}.")
            column_units = {f"{param}.{c}": u for c, u in column_units.items()}
        units.update(column_units)
        frames.append(frame)
    if len(frames) == 1:
        combined = frames[0]  # kept in its own order: a table of statistics is not sorted
    else:
        combined = pd.concat(frames, axis=1, join="outer").sort_index()
    # rename_axis copies: the stored entry's index keeps its own name
    return combined.rename_axis(_index_name(combined.index)), units


def _write_csv(entries: list[DataEntry], out: Path) -> None:
    frame, units = combined_frame(entries)
    frame = frame.rename(columns={c: f"{c} [{u}]" if u else c for c, u in units.items()})
    frame.to_csv(out, date_format="%Y-%m-%dT%H:%M:%S.%fZ")


def _write_parquet(entries: list[DataEntry], out: Path) -> None:
    frame, units = combined_frame(entries)
    if len(entries) == 1 and (index_units := _index_units(entries[0], frame.index)):
        units = {**units, str(frame.index.name): index_units}
    table = pa.Table.from_pandas(frame, preserve_index=True)
    fields = []
    for field in table.schema:
        unit = units.get(field.name)
        fields.append(field.with_metadata({"units": unit}) if unit else field)
    meta = dict(table.schema.metadata or {})
    meta[b"xhelio"] = json.dumps(output_metadata(entries), default=str).encode()
    pq.write_table(table.cast(pa.schema(fields)).replace_schema_metadata(meta), out)


def _netcdf_name(name: str, taken: set[str]) -> str:
    """A variable name netCDF accepts ('/' is a group separator) and not yet used."""
    clean = name.replace("/", "_") or "value"
    unique, n = clean, 2
    while unique in taken:
        unique, n = f"{clean}_{n}", n + 1
    taken.add(unique)
    return unique


def _frame_variables(entry: DataEntry, taken: set[str]) -> dict[str, xr.DataArray]:
    """A DataFrame entry as netCDF variables along its index (time, frequency, ...)."""
    frame = flat_frame(entry)
    units = _column_units(entry, frame)
    index = frame.index
    dim = _index_name(index)
    if isinstance(index, pd.DatetimeIndex):
        values: Any = index.tz_localize(None)  # netCDF stores naive times; these are UTC
    else:
        values = index.to_numpy()
    coord = xr.Variable(dim, values, {"units": u} if (u := _index_units(entry, index)) else {})
    if entry.source_parameter:
        # A fetched parameter is one quantity with one unit: one variable, its components
        # along a second dimension.
        name = _netcdf_name(_name(entry), taken)
        if frame.shape[1] == 1:
            array = xr.DataArray(frame.iloc[:, 0].to_numpy(), coords={dim: coord}, dims=dim)
        else:
            array = xr.DataArray(
                frame.to_numpy(),
                coords={dim: coord, f"{name}_component": [str(c) for c in frame.columns]},
                dims=(dim, f"{name}_component"),
            )
        return {name: _with_attrs(array, entry, units[str(frame.columns[0])])}
    # Computed tables mix quantities (Bx in nT, a ratio, a count): a variable per column.
    return {
        _netcdf_name(column, taken): _with_attrs(
            xr.DataArray(frame[column].to_numpy(), coords={dim: coord}, dims=dim),
            entry,
            units[column],
        )
        for column in (str(c) for c in frame.columns)
    }


def _with_attrs(array: xr.DataArray, entry: DataEntry, unit: str) -> xr.DataArray:
    array.attrs = {"units": unit, "long_name": entry.description, "label": entry.label}
    if "units" in entry.meta:
        array.attrs["raw_units"] = str(entry.meta["units"])
    for key in ("fill", "scale"):
        if key in entry.meta:
            array.attrs[key] = str(entry.meta[key])
    return array


def _write_netcdf(entries: list[DataEntry], out: Path) -> None:
    variables: dict[str, xr.DataArray] = {}
    taken: set[str] = set()
    for entry in entries:
        if isinstance(entry.data, xr.DataArray):
            # Kept whole: its dimensions and bin coordinates are the data's meaning.
            array = entry.data.copy()
            name = _netcdf_name(str(array.name or _name(entry)), taken)
            unit = next(iter(_column_units(entry, flat_frame(entry)).values()), "")
            variables[name] = _with_attrs(array.rename(name), entry, unit)
        else:
            variables.update(_frame_variables(entry, taken))
    dataset = xr.Dataset(variables)  # outer-joined on shared dimensions
    citations = output_metadata(entries).get("citations", [])
    for k, citation in enumerate(citations):
        suffix = "" if k == 0 else f"_{k + 1}"
        for key, value in citation.items():
            dataset.attrs[f"{key}{suffix}"] = value
    if citations:
        dataset.attrs["acknowledgement"] = citations[0].get("acknowledgement", "")
    dataset.to_netcdf(out)


def write_output(entries: list[DataEntry], out: Path) -> None:
    """Write `entries` to `out` (.csv, .parquet or .nc) with their units and citation.

    Fetched and computed entries alike; timeseries or indexed by anything else.
    A CSV gets a ``<name>.meta.json`` beside it. Files appear complete or not at all.

    Raises:
        ValueError: `out` is not .csv, .parquet or .nc.
    """
    suffix = out.suffix.lower()
    writers = {".csv": _write_csv, ".parquet": _write_parquet, ".nc": _write_netcdf}
    writer = writers.get(suffix)
    if writer is None:
        raise ValueError(f"Unsupported output type {suffix!r}: use .csv, .parquet or .nc.")
    # Each file is written beside its target and renamed when complete: never half a file.
    with atomic_output(out) as temp:
        writer(entries, temp)
    if suffix == ".csv":
        write_sidecar(out, output_metadata(entries))


def write_sidecar(out: Path, metadata: dict[str, Any]) -> None:
    """Write ``<name>.meta.json`` beside a CSV: the meaning its header cannot hold."""
    with atomic_output(out.with_name(out.name + ".meta.json")) as temp:
        temp.write_text(json.dumps(metadata, indent=1, default=str))
