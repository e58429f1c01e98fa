"""Output files that keep the data's meaning: CSV, parquet and netCDF writers.

- CSV: one header row whose names carry units (``Magnitude [nT]``), so
  `pandas.read_csv(path)` reads it with its defaults; the full metadata (descriptions,
  labels, bins, citation) goes to a ``<name>.meta.json`` file beside it.
- parquet: per-column field metadata (units, description) and an ``xhelio`` schema
  metadata entry with every parameter's meaning and the datasets' citations.
- netCDF: multi-dimensional parameters keep their dimensions and bin coordinates;
  variables carry ``units``, ``raw_units``, ``long_name``; the file carries the
  citations (DOI, PI, acknowledgement) as global attributes.

Imports only `data` from xhelio.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.data.streamout import atomic_output

__all__ = ["combined_frame", "flat_frame", "output_metadata", "write_output"]


def _name(entry: DataEntry) -> str:
    return entry.source_parameter or entry.label


def flat_frame(entry: DataEntry) -> pd.DataFrame:
    """The entry as a table: one column per element, named with labels or bin values."""
    if isinstance(entry.data, pd.DataFrame):
        return entry.data
    array = entry.data
    name = str(array.name or _name(entry))
    time_dim = str(array.dims[0])
    others = [str(d) for d in array.dims[1:]]
    times = (
        pd.DatetimeIndex(array.coords[time_dim].to_numpy()) if time_dim in array.coords else None
    )
    index = times.tz_localize("UTC") if times is not None and times.tz is None else times
    parts: list[list[str]] = []
    for dim in others:
        if f"{dim}_label" in array.coords:
            parts.append([f"{dim}={v}" for v in array.coords[f"{dim}_label"].values])
        elif dim in array.coords and array.coords[dim].ndim == 1:
            parts.append([f"{dim}={float(v):g}" for v in array.coords[dim].values])
        else:
            parts.append([f"{dim}={i}" for i in range(array.sizes[dim])])
    columns = [name + "[" + ",".join(combo) + "]" for combo in _product(parts)]
    values = array.to_numpy().reshape(array.shape[0], -1)
    return pd.DataFrame(values, index=index, columns=columns)


def _product(parts: list[list[str]]) -> list[tuple[str, ...]]:
    combos: list[tuple[str, ...]] = [()]
    for options in parts:
        combos = [(*c, o) for c in combos for o in options]
    return combos


def output_metadata(entries: list[DataEntry]) -> dict[str, Any]:
    """JSON-able meaning of every entry written: units, description, dims, citation."""
    parameters: dict[str, Any] = {}
    citations: list[dict[str, str]] = []
    for entry in entries:
        meta = dict(entry.meta)
        unit = next(iter(entry.units.values()), "")
        parameters[entry.label] = {
            "units": meta.get("display_units", unit) or unit,
            "raw_units": meta.get("units", unit),
            "description": entry.description,
            "columns": [str(c) for c in flat_frame(entry).columns],
            **{
                k: meta[k]
                for k in ("dims", "fill", "valid_min", "valid_max", "scale", "notes")
                if k in meta
            },
        }
        if entry.citation and entry.citation not in citations:
            citations.append(entry.citation)
    return {"parameters": parameters, "citations": citations}


def combined_frame(entries: list[DataEntry]) -> tuple[pd.DataFrame, dict[str, str]]:
    """One table of all entries outer-joined on time, and each column's units."""
    frames: list[pd.DataFrame] = []
    units: dict[str, str] = {}
    for entry in entries:
        frame = flat_frame(entry)
        param = _name(entry)
        if len(entries) > 1 and not all(str(c).startswith(param) for c in frame.columns):
            frame = frame.add_prefix(f"{param}.")
        unit = str(entry.meta.get("display_units") or next(iter(entry.units.values()), ""))
        units.update(dict.fromkeys((str(c) for c in frame.columns), unit))
        frames.append(frame)
    combined = frames[0] if len(frames) == 1 else pd.concat(frames, axis=1, join="outer")
    combined.index.name = "time"
    return combined.sort_index(), units


def _write_csv(entries: list[DataEntry], out: Path) -> None:
    frame, units = combined_frame(entries)
    frame = frame.rename(
        columns={c: f"{c} [{units[str(c)]}]" if units.get(str(c)) else c for c in frame.columns}
    )
    frame.to_csv(out, date_format="%Y-%m-%dT%H:%M:%S.%fZ")


def _write_parquet(entries: list[DataEntry], out: Path) -> None:
    frame, units = combined_frame(entries)
    frame.columns = [str(c) for c in frame.columns]
    table = pa.Table.from_pandas(frame, preserve_index=True)
    fields = []
    for field in table.schema:
        unit = units.get(field.name)
        fields.append(field.with_metadata({"units": unit}) if unit else field)
    schema = pa.schema(fields, metadata=dict(table.schema.metadata or {}))
    meta = dict(schema.metadata or {})
    meta[b"xhelio"] = json.dumps(output_metadata(entries), default=str).encode()
    pq.write_table(table.cast(schema).replace_schema_metadata(meta), out)


def _write_netcdf(entries: list[DataEntry], out: Path) -> None:
    dataset = xr.Dataset()
    for entry in entries:
        name = _name(entry)
        unit = str(entry.meta.get("display_units") or next(iter(entry.units.values()), ""))
        if isinstance(entry.data, xr.DataArray):
            array = entry.data.copy()
            array.name = name
        else:
            frame = entry.data
            times = pd.DatetimeIndex(frame.index).tz_convert("UTC").tz_localize(None)
            if frame.shape[1] == 1:
                array = xr.DataArray(
                    frame.iloc[:, 0].to_numpy(), coords={"time": times}, dims="time"
                )
            else:
                array = xr.DataArray(
                    frame.to_numpy(),
                    coords={"time": times, f"{name}_component": [str(c) for c in frame.columns]},
                    dims=("time", f"{name}_component"),
                )
        array.attrs = {
            "units": unit,
            "raw_units": str(entry.meta.get("units", unit)),
            "long_name": entry.description,
        }
        for key in ("fill", "scale"):
            if key in entry.meta:
                array.attrs[key] = str(entry.meta[key])
        dataset[name] = array
    citations = output_metadata(entries)["citations"]
    for k, citation in enumerate(citations):
        suffix = "" if k == 0 else f"_{k + 1}"
        for key, value in citation.items():
            dataset.attrs[f"{key}{suffix}"] = value
    if citations:
        dataset.attrs["acknowledgement"] = citations[0].get("acknowledgement", "")
    dataset.to_netcdf(out)


def write_output(entries: list[DataEntry], out: Path) -> None:
    """Write `entries` to `out` (.csv, .parquet or .nc) with their units and citation.

    A CSV gets a ``<name>.meta.json`` beside it. Files appear complete or not at all.
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
        # A CSV header holds only names and units; the rest of the meaning goes beside it.
        sidecar = out.with_name(out.name + ".meta.json")
        with atomic_output(sidecar) as temp:
            temp.write_text(json.dumps(output_metadata(entries), indent=1, default=str))
