"""Save a `DataStore` to a folder and load it back, exactly, without pickle.

Layout of a saved folder::

    index.json          {"format": 1, "data_dir": "data-<id>", "entries": [...]}
    data-<id>/          one file per entry: parquet for DataFrames, netCDF for DataArrays

Each entry of `index.json` holds label, file, kind ("frame" or "array"), units,
description, source_dataset, source_parameter and is_timeseries. Parquet keeps dtypes,
the tz-aware UTC index, other index types and column names (pyarrow's pandas metadata);
what it drops (a DatetimeIndex `freq`, a RangeIndex of column labels) is kept in an
``xhelio`` schema-metadata entry. DataArrays go through xarray's netCDF4 writer, which keeps
dims, coordinates, attributes and dtypes.

Atomic: a save writes a fresh `data-<id>/` folder, then replaces `index.json` with
`os.replace`, then deletes older data folders. A crash at any step leaves an `index.json`
that names a complete data folder, so the previous (or the new) state stays readable. One
writer per folder at a time (a session owns its folder); saves in one process are
serialised.

`write_entry` / `read_entry` write and read ONE entry under a new unique file name (temp
file + rename), for stores where several writers share a folder (the session store);
`atomic_write_bytes` / `atomic_write_text` write any state file atomically. Imports only
`data.entry`, `data.store` and `errors`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import uuid
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore
from xhelio.errors import DataUnavailableError, UserError

__all__ = [
    "INDEX_FILE",
    "SavedStoreError",
    "atomic_write_bytes",
    "atomic_write_text",
    "load_store",
    "read_entry",
    "save_store",
    "write_entry",
]

INDEX_FILE = "index.json"
FORMAT_VERSION = 1
_META_KEY = b"xhelio"
_SAVE_LOCK = threading.Lock()


class SavedStoreError(DataUnavailableError):
    """A saved DataStore folder is missing, damaged or written by a newer xhelio."""


def save_store(store: DataStore, folder: Path) -> None:
    """Write every entry of `store` to `folder`, replacing what was saved there atomically."""
    with _SAVE_LOCK:
        folder.mkdir(parents=True, exist_ok=True)
        data_dir = f"data-{uuid.uuid4().hex[:12]}"
        target = folder / data_dir
        target.mkdir()
        try:
            records = [_write_entry(entry, target, n) for n, entry in enumerate(store)]
            _fsync(target)
            index = {"format": FORMAT_VERSION, "data_dir": data_dir, "entries": records}
            temp = folder / f".{INDEX_FILE}.{uuid.uuid4().hex}.tmp"
            temp.write_text(json.dumps(index, indent=1), encoding="utf-8")
            _fsync(temp)
            os.replace(temp, folder / INDEX_FILE)
            _fsync(folder)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
        # Older data folders and temp files of interrupted saves.
        for stale in folder.iterdir():
            if stale.name == data_dir:
                continue
            if stale.is_dir() and stale.name.startswith("data-"):
                shutil.rmtree(stale, ignore_errors=True)
            elif stale.name.endswith(".tmp"):
                stale.unlink(missing_ok=True)


def load_store(folder: Path) -> DataStore:
    """Read a folder written by `save_store` into a new `DataStore`."""
    index_path = folder / INDEX_FILE
    try:
        index: Any = json.loads(index_path.read_text(encoding="utf-8"))
        data_dir = folder / str(index["data_dir"])
        version = int(index["format"])
        records: list[dict[str, Any]] = list(index["entries"])
    except FileNotFoundError:
        raise SavedStoreError(
            f"No saved data in {folder} ({INDEX_FILE} is missing). Check the path, or save "
            "the session first."
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SavedStoreError(
            f"Saved data index {index_path} is unreadable ({exc}). The folder is damaged; "
            "restore it from a backup or start a new session."
        ) from exc
    if version > FORMAT_VERSION:
        raise SavedStoreError(
            f"{index_path} was written by a newer xhelio (format {version}). Upgrade xhelio."
        )
    store = DataStore()
    for record in records:
        store.put(_read_entry(record, data_dir))
    return store


def write_entry(entry: DataEntry, folder: Path) -> dict[str, Any]:
    """Write one entry to a new, uniquely named file in `folder`; return its record.

    The file is written under a temporary name and renamed when complete, and its name is
    never reused, so a reader holding an older record keeps reading a whole file.
    """
    folder.mkdir(parents=True, exist_ok=True)
    return _write_entry(entry, folder, None)


def read_entry(record: dict[str, Any], folder: Path) -> DataEntry:
    """Read the entry a `write_entry` record describes (files relative to `folder`)."""
    return _read_entry(record, folder)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file and a rename (never half-written)."""
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with temp.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` atomically, like `atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"))


def _write_entry(entry: DataEntry, folder: Path, number: int | None) -> dict[str, Any]:
    """Write one entry's data file into `folder`; return its `index.json` record."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", entry.label)[:40]
    stem = f"{number:04d}-{safe}" if number is not None else f"{safe}-{uuid.uuid4().hex[:12]}"
    data = entry.data
    kind, name = (
        ("frame", f"{stem}.parquet")
        if isinstance(data, pd.DataFrame)
        else (
            "array",
            f"{stem}.nc",
        )
    )
    temp = folder / f".{name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        if isinstance(data, pd.DataFrame):
            pq.write_table(_frame_table(data), temp)
        else:
            data.to_netcdf(temp, engine="netcdf4")
        _fsync(temp)
        os.replace(temp, folder / name)
    except (ValueError, TypeError, pa.ArrowException) as exc:
        raise UserError(
            f"Cannot save data '{entry.label}': {exc}. Convert unusual columns (mixed "
            "Python objects, duplicate names) to numbers or text, then save again."
        ) from exc
    finally:
        temp.unlink(missing_ok=True)
    return {
        "label": entry.label,
        "file": name,
        "kind": kind,
        "units": dict(entry.units),
        "description": entry.description,
        "source_dataset": entry.source_dataset,
        "source_parameter": entry.source_parameter,
        "is_timeseries": entry.is_timeseries,
        "fetched_range": list(entry.fetched_range) if entry.fetched_range else None,
        "meta": entry.meta,
    }


def _read_entry(record: dict[str, Any], folder: Path) -> DataEntry:
    """Read the entry described by one `index.json` record."""
    path = folder / str(record.get("file"))
    try:
        data: pd.DataFrame | xr.DataArray
        if record["kind"] == "frame":
            data = _frame_from_table(pq.read_table(path))
        else:
            with xr.open_dataarray(path, engine="netcdf4") as opened:
                data = opened.load()
        return DataEntry(
            label=str(record["label"]),
            data=data,
            units={str(k): str(v) for k, v in dict(record.get("units") or {}).items()},
            description=str(record.get("description") or ""),
            source_dataset=record.get("source_dataset"),
            source_parameter=record.get("source_parameter"),
            is_timeseries=bool(record.get("is_timeseries", True)),
            fetched_range=tuple(record["fetched_range"]) if record.get("fetched_range") else None,
            meta=dict(record.get("meta") or {}),
        )
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as exc:
        raise SavedStoreError(
            f"Saved data '{record.get('label')}' ({path}) is unreadable: {exc}. The folder is "
            "damaged; restore it from a backup or fetch the data again."
        ) from exc


def _frame_table(frame: pd.DataFrame) -> Any:
    """Return `frame` as an Arrow table plus what pandas metadata does not restore."""
    table = pa.Table.from_pandas(frame, preserve_index=None)
    # Parquet has no second-resolution timestamps (they come back as ms): keep the dtypes.
    extra: dict[str, Any] = {
        "freq": None,
        "range_columns": None,
        "index_dtype": _time_dtype(frame.index.dtype),
        "column_dtypes": [_time_dtype(dtype) for dtype in frame.dtypes],
    }
    freq = getattr(frame.index, "freqstr", None)
    if isinstance(freq, str):
        extra["freq"] = freq
    if isinstance(frame.columns, pd.RangeIndex):
        columns = frame.columns
        extra["range_columns"] = [columns.start, columns.stop, columns.step, columns.name]
    metadata = dict(table.schema.metadata or {})
    metadata[_META_KEY] = json.dumps(extra).encode()
    return table.replace_schema_metadata(metadata)


def _frame_from_table(table: Any) -> pd.DataFrame:
    """Return the DataFrame `_frame_table` stored."""
    frame: pd.DataFrame = table.to_pandas()
    raw = (table.schema.metadata or {}).get(_META_KEY)
    extra: dict[str, Any] = json.loads(raw) if raw else {}
    index_dtype = extra.get("index_dtype")
    if index_dtype and str(frame.index.dtype) != index_dtype:
        frame.index = frame.index.astype(index_dtype)
    for position, dtype in enumerate(extra.get("column_dtypes") or []):
        if dtype and str(frame.dtypes.iloc[position]) != dtype:
            frame.isetitem(position, frame.iloc[:, position].astype(dtype))
    freq = extra.get("freq")
    if freq and isinstance(frame.index, pd.DatetimeIndex):
        frame.index = pd.DatetimeIndex(frame.index, freq=freq)
    elif freq and isinstance(frame.index, pd.TimedeltaIndex):
        frame.index = pd.TimedeltaIndex(frame.index, freq=freq)
    range_columns = extra.get("range_columns")
    if range_columns:
        start, stop, step, name = range_columns
        frame.columns = pd.RangeIndex(start, stop, step, name=name)
    return frame


def _time_dtype(dtype: object) -> str | None:
    """Return the dtype name of a datetime/timedelta dtype (whose unit must survive), else None."""
    name = str(dtype)
    return name if name.startswith(("datetime64", "timedelta64")) else None


def _fsync(path: Path) -> None:
    """Flush a file or folder to disk, so a power cut cannot reorder the swap."""
    flags = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)) if path.is_dir() else os.O_RDONLY
    try:
        descriptor = os.open(path, flags)
    except OSError:
        return  # some platforms cannot open folders; the rename is still atomic
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
