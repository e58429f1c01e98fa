"""The session's working folder: files the user uploaded, which the agents can list and load.

The folder is the session's `uploads/` (`PUT /api/v1/sessions/{id}/uploads/{name}` fills
it; `extraction_tools.work_folder` is the one place that names it). `list_work_files`
says what is there; `load_work_file` turns a data file into DataStore entries: CSV (a
time column becomes the index), CDF (each time-series variable, ISTP fill values and
units honoured, through the same reader as CDAWeb files) and netCDF (each variable along
a time dimension). PDFs are read with `read_document`, which opens files of this folder
by name. A name is a plain file name inside the folder, never a path. Imports the data,
sources and tools layers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.errors import UserError, XhelioError
from xhelio.session.state import Session
from xhelio.sources.cdf_reader import describe_cdf, read_cdf_parameters
from xhelio.tools.context import ToolContext
from xhelio.tools.extraction_tools import frame_from_table, work_folder
from xhelio.tools.registry import Produces, tool

__all__ = ["WORK_TOOLS", "work_file"]

KINDS = {
    ".csv": "table",
    ".txt": "table",
    ".cdf": "cdf",
    ".nc": "netcdf",
    ".nc4": "netcdf",
    ".netcdf": "netcdf",
    ".pdf": "document",
}
_MAX_VARIABLES = 12
_TIME_DIMS = ("time", "Time", "epoch", "Epoch", "t")


def work_file(session: Session, name: str) -> Path:
    """The file `name` of the working folder; `UserError` for a path or a missing file."""
    plain = Path(name.strip()).name
    if not plain or plain != name.strip() or plain.startswith("."):
        raise UserError(f"{name!r} is not a file name of the working folder (no folders).")
    path = work_folder(session) / plain
    if not path.is_file():
        present = ", ".join(sorted(p.name for p in work_folder(session).iterdir())) or "none"
        raise UserError(f"No file {plain!r} in the working folder (files: {present}).")
    return path


@tool("data_extraction", phase="discover")
def list_work_files(ctx: ToolContext) -> dict[str, Any]:
    """List the files the user uploaded to this session's working folder (CSV, CDF, netCDF, PDF)."""
    files = [
        {"name": p.name, "bytes": p.stat().st_size, "kind": KINDS.get(p.suffix.lower(), "other")}
        for p in sorted(work_folder(ctx.session).iterdir())
        if p.is_file() and not p.name.startswith(".")
    ]
    return {"folder": str(work_folder(ctx.session)), "files": files}


def _table(path: Path, label: str, time_column: str | None) -> list[DataEntry]:
    try:
        raw = pd.read_csv(path, sep=None, engine="python", comment="#")
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise UserError(f"{path.name} could not be read as a table: {exc}.") from exc
    columns = {str(c): raw[c].tolist() for c in raw.columns}
    frame = frame_from_table(None, columns, time_column)
    return [
        DataEntry(
            label,
            frame,
            units={str(c): "" for c in frame.columns},
            description=f"Table from the uploaded file {path.name}",
            is_timeseries=isinstance(frame.index, pd.DatetimeIndex),
            meta={"notes": [f"loaded from uploaded file {path.name}"]},
        )
    ]


def _cdf(path: Path, label: str, variables: list[str] | None) -> list[DataEntry]:
    names = variables or [p.name for p in describe_cdf(path, label) if p.type != "isotime"]
    found = read_cdf_parameters(path, label, names[:_MAX_VARIABLES])
    return [
        DataEntry(
            f"{label}.{name}",
            data.frame,
            units={str(c): data.units for c in data.frame.columns},
            description=data.description,
            meta={**data.meta, "notes": [f"loaded from uploaded file {path.name}"]},
        )
        for name, data in found.items()
    ]


def _netcdf(path: Path, label: str, variables: list[str] | None) -> list[DataEntry]:
    try:
        dataset = xr.open_dataset(path)
    except (OSError, ValueError) as exc:
        raise UserError(f"{path.name} could not be read as netCDF: {exc}.") from exc
    entries: list[DataEntry] = []
    with dataset:
        for name in variables or [str(v) for v in dataset.data_vars][:_MAX_VARIABLES]:
            if name not in dataset.data_vars:
                raise UserError(f"{path.name} has no variable {name!r}.")
            array = dataset[name]
            time = next((d for d in array.dims if str(d) in _TIME_DIMS), None)
            if time is None or array.ndim > 2:
                continue
            frame = array.to_pandas()
            frame = frame.to_frame(name) if isinstance(frame, pd.Series) else frame
            frame.columns = [str(c) for c in frame.columns]
            unit = str(array.attrs.get("units", ""))
            entries.append(
                DataEntry(
                    f"{label}.{name}",
                    frame,
                    units=dict.fromkeys(frame.columns, unit),
                    description=str(array.attrs.get("long_name", "")),
                    meta={"notes": [f"loaded from uploaded file {path.name}"]},
                )
            )
    return entries


@tool("data_extraction", produces=Produces(result_field="labels"))
def load_work_file(
    ctx: ToolContext,
    name: str,
    label: str | None = None,
    variables: list[str] | None = None,
    time_column: str | None = None,
) -> dict[str, Any]:
    """Load an uploaded data file of the working folder (CSV, CDF or netCDF) as data.

    Args:
        name: The file name as list_work_files shows it.
        label: Label for the data (default: the file name without extension).
        variables: CDF/netCDF: the variables to load (default: every time series).
        time_column: CSV: the column of times (default: time/date/epoch).
    """
    path = work_file(ctx.session, name)
    kind = KINDS.get(path.suffix.lower())
    base = (label or path.stem).strip() or path.stem
    if kind == "document":
        raise UserError(f"{path.name} is a document: read it with read_document.")
    try:
        if kind == "table":
            entries = _table(path, base, time_column)
        elif kind == "cdf":
            entries = _cdf(path, base, variables)
        elif kind == "netcdf":
            entries = _netcdf(path, base, variables)
        else:
            raise UserError(f"{path.name} is not a CSV, CDF or netCDF file.")
    except XhelioError as exc:
        raise UserError(f"{path.name}: {exc.message}") from exc
    if not entries:
        raise UserError(f"{path.name} holds no variable along a time dimension to load.")
    for entry in entries:
        ctx.store.put(entry)
    ctx.session.events.publish(
        "data_stored", tool="load_work_file", summary=f"{len(entries)} entr(ies) from {path.name}"
    )
    return {
        "file": path.name,
        "labels": [e.label for e in entries],
        "entries": [
            {"label": e.label, "columns": e.columns[:8], "points": e.points, "units": e.units}
            for e in entries
        ],
    }


WORK_TOOLS = [list_work_files, load_work_file]
