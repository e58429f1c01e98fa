"""Results are data, not instructions: the limits every sandbox result must meet.

`check_result` and `check_scalar` run in the child (early, clear errors) and again in
the parent on what it decoded (authoritative: the child is not trusted). What passes
is stored in the session and later saved (parquet for frames, netCDF-4 for arrays) and
reloaded, so nothing here may let a result break that:

* attributes are kept only when their name is on an allowlist of descriptive names and
  their value is a short UTF-8 string or a finite int/float (netCDF decoding keys such
  as `scale_factor`, `calendar` or `_FillValue`, `units` that read as CF time units,
  and bools, which netCDF-4 cannot store, are dropped with a note); on every
  coordinate too; `DataFrame.attrs` is dropped;
* column labels and index names: short, UTF-8, no NUL, distinct once turned into
  strings (as the session stores them); at most MAX_COLUMNS columns and MAX_ROWS rows;
* the DataArray name, dims and coordinate names follow netCDF's naming rules (short,
  printable, NFC, no "/", no surrounding spaces, a letter, digit, "_" or non-ASCII
  character first) and the name differs from every coordinate; at most MAX_DIMS dims;
  float16 (which netCDF cannot store) becomes float32; times must lie within 1678-2262
  (netCDF reading decodes them to nanoseconds);
* scalars: ints within int64, strings of at most MAX_SCALAR_CHARS UTF-8 characters.

Every text read from a result is made displayable (`text.display_text`): no terminal
control sequences, control characters or bidi overrides; labels holding any are refused.

Imports from xhelio only `sandbox.text`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from xhelio.sandbox.text import display_text

__all__ = [
    "ALLOWED_ATTRS",
    "DECODE_FACTOR",
    "MAX_COORDS",
    "MAX_DIMS",
    "MAX_ROWS",
    "ResultRejected",
    "check_result",
    "check_scalar",
    "clean_attrs",
    "clean_text",
]

MAX_LABEL_CHARS = 256
MAX_NAME_CHARS = 128
MAX_COLUMNS = 10_000
MAX_ROWS = 50_000_000
MAX_DIMS = 32  # HDF5, under netCDF-4, refuses more
MAX_COORDS = 128
MAX_ATTRS = 64
MAX_ATTR_STRING_CHARS = 1_024
MAX_SCALAR_CHARS = 100_000
# What decoding a result may cost in the parent, as a multiple of the result cap.
DECODE_FACTOR = 4
# Attribute names a result may carry: descriptive only. Anything a netCDF/CF reader acts
# on (scale_factor, add_offset, _FillValue, missing_value, calendar, dtype, _Unsigned,
# coordinates, bounds, compress, ...) is not on the list.
ALLOWED_ATTRS = frozenset(
    {
        "units", "display_units", "long_name", "standard_name", "description", "label",
        "comment", "source", "history", "title", "note", "notes", "frame", "coordinate_system",
        "instrument", "mission", "dataset", "parameter", "method", "operation",
        "FIELDNAM", "CATDESC", "LABLAXIS", "UNITS", "VAR_TYPE", "DISPLAY_TYPE",
        "SCALETYP", "VAR_NOTES", "DICT_KEY", "MONOTON", "LABL_PTR_1",
    }
)  # fmt: skip
_CF_TIME_UNITS = re.compile(r"\bsince\b", re.IGNORECASE)
_INT64 = (-(2**63), 2**63)


class ResultRejected(ValueError):
    """A result breaks a limit on labels, names, size or structure; the message says which."""


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: every file format refuses them
        return False
    return True


def clean_text(text: object, limit: int) -> str:
    """`text` as valid UTF-8 (bad characters replaced), displayable, cut to `limit` characters.

    Only `str` is turned into text as is; any other object is shown by its type name, so
    that nothing hostile (a deeply nested list from a forged reply) is ever walked.
    """
    if isinstance(text, str):
        value = text
    elif isinstance(text, int | float):
        value = str(text)
    else:
        value = f"<{type(text).__name__}>"
    value = value[: limit * 2]  # bounded work below whatever the input size
    if not _encodable(value):
        value = value.encode("utf-8", "replace").decode("utf-8")
    value = display_text(value)
    return value if len(value) <= limit else f"{value[:limit]}... [cut]"


def _check_label(label: object, what: str, limit: int) -> str:
    text = label if isinstance(label, str) else repr(label)
    if len(text) > limit:
        raise ResultRejected(f"{what} has {len(text)} characters (at most {limit})")
    if "\x00" in text or not _encodable(text):
        raise ResultRejected(f"{what} contains a NUL character or invalid Unicode")
    if display_text(text) != text:
        raise ResultRejected(
            f"{what} contains control characters or bidi overrides; use plain text"
        )
    return text


def _check_netcdf_name(name: object, what: str) -> str:
    text = _check_label(name, what, MAX_NAME_CHARS)
    first = text[:1]
    if not (first.isalnum() or first == "_" or (first and ord(first) > 127)):
        raise ResultRejected(f"{what} {text[:40]!r} must start with a letter, digit or '_'")
    if "/" in text or not text.isprintable() or text != text.strip():
        raise ResultRejected(
            f"{what} {text[:40]!r} contains '/', control characters or surrounding spaces"
        )
    if not unicodedata.is_normalized("NFC", text):
        raise ResultRejected(f"{what} {text[:40]!r} is not in Unicode normal form NFC")
    return text


def _attr_problem(key: object, value: object) -> str | None:
    """Why an attribute is dropped, or None when it is kept."""
    if not isinstance(key, str) or key not in ALLOWED_ATTRS:
        return "name not on the allowlist"
    item = value.item() if isinstance(value, np.generic) else value
    if isinstance(item, bool):
        return "a bool value (netCDF-4 stores none)"
    if isinstance(item, int):
        return None if _INT64[0] <= item < _INT64[1] else "integer out of range"
    if isinstance(item, float):
        return None if math.isfinite(item) else "not a finite number"
    if not isinstance(item, str):
        return f"a {type(item).__name__} value"
    if len(item) > MAX_ATTR_STRING_CHARS or "\x00" in item or not _encodable(item):
        return "string too long, with NUL or invalid Unicode"
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
            item = value.item() if isinstance(value, np.generic) else value
            kept[str(key)] = display_text(item) if isinstance(item, str) else item
        else:
            shown = clean_text(key, 40)
            dropped.append(f"{shown!r} ({problem or 'too many attributes'})")
    if dropped:
        listed = ", ".join(dropped[:8]) + (" ..." if len(dropped) > 8 else "")
        notes.append(
            f"attributes of {where} dropped (results carry descriptive attrs only): {listed}"
        )
    return kept


def _check_frame(frame: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    if frame.shape[1] > MAX_COLUMNS:
        raise ResultRejected(f"the result has {frame.shape[1]} columns (at most {MAX_COLUMNS})")
    if frame.shape[0] > MAX_ROWS:
        raise ResultRejected(f"the result has {frame.shape[0]} rows (at most {MAX_ROWS})")
    seen: set[str] = set()
    for label in frame.columns:
        _check_label(label, "a column label", MAX_LABEL_CHARS)
        text = str(label)
        if text in seen:  # the session stores labels as strings: 1 and "1" would collide
            raise ResultRejected(f"two columns are both named {text[:40]!r}; rename one")
        seen.add(text)
    for axis in (frame.index, frame.columns):
        for name in axis.names:
            if name is not None:
                _check_label(name, "an index name", MAX_LABEL_CHARS)
    if frame.attrs:
        notes.append("DataFrame.attrs dropped (results carry no frame-level attributes)")
        frame = frame.copy(deep=False)
        frame.attrs = {}
    return frame


def _without_float16(array: xr.DataArray, notes: list[str]) -> xr.DataArray:
    """Values and coordinates in float16, which netCDF cannot store, become float32."""
    halves = [n for n, v in array.coords.variables.items() if v.dtype == np.float16]
    changed = [str(n) for n in halves]
    if array.dtype == np.float16:
        array = array.astype(np.float32)
        changed.append("the values")
    if changed:
        array = array.assign_coords(
            {n: array.coords.variables[n].astype(np.float32) for n in halves}
        )
        notes.append(f"float16 stored as float32 (netCDF has no float16): {', '.join(changed)}")
    return array


_UNIT_SECONDS = {
    "Y": 31_556_952.0, "M": 2_629_746.0, "W": 604_800.0, "D": 86_400.0, "h": 3_600.0,
    "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "fs": 1e-15,
    "as": 1e-18,
}  # fmt: skip
_NS_RANGE_SECONDS = 9.2e9  # datetime64[ns] covers 1677-09-21 .. 2262-04-11 (~2**63 ns)


def _within_ns_range(values: np.ndarray[Any, Any]) -> bool:
    """True unless datetimes/timedeltas fall outside what netCDF reading decodes (ns)."""
    if values.dtype.kind not in "mM" or values.size == 0:
        return True
    unit, count = np.datetime_data(values.dtype)
    ticks = values.reshape(-1).view(np.int64)
    ticks = ticks[ticks != np.iinfo(np.int64).min]  # NaT
    if ticks.size == 0:
        return True
    seconds = np.abs(ticks.astype(np.float64)) * count * _UNIT_SECONDS.get(unit, np.inf)
    return bool(seconds.max() < _NS_RANGE_SECONDS)


def _check_array(array: xr.DataArray, notes: list[str]) -> xr.DataArray:
    if array.ndim > MAX_DIMS:
        raise ResultRejected(f"the result has {array.ndim} dimensions (at most {MAX_DIMS})")
    if array.ndim and array.shape[0] > MAX_ROWS:
        raise ResultRejected(f"the result has {array.shape[0]} rows (at most {MAX_ROWS})")
    # Variables, not `array.coords.items()`: each item of that is a DataArray carrying
    # every scalar coordinate again, which made this check quadratic in their number.
    variables = dict(array.coords.variables)
    if len(variables) > MAX_COORDS:
        raise ResultRejected(
            f"the result has {len(variables)} coordinates (at most {MAX_COORDS}); drop the "
            "ones not needed with .drop_vars(...) or .reset_coords(drop=True)"
        )
    if array.name is not None:
        if not isinstance(array.name, str):
            raise ResultRejected("the DataArray name must be a string")
        _check_netcdf_name(array.name, "the name")
    for dim in array.dims:
        _check_netcdf_name(str(dim), "the dimension")
    for coord_name in variables:
        coord = _check_netcdf_name(str(coord_name), "the coordinate name")
        if array.name is not None and coord == array.name:
            raise ResultRejected(f"the DataArray name {coord[:40]!r} is also a coordinate name")
    for what, variable in [("the values", array.variable), *variables.items()]:
        if not _within_ns_range(np.asarray(variable.values)):
            raise ResultRejected(
                f"{clean_text(what, 40)} hold times outside 1678-2262, which the session "
                "cannot store for arrays; return a DataFrame, or numbers"
            )
    cleaned = _without_float16(array.copy(deep=False), notes)
    cleaned.attrs = clean_attrs(dict(array.attrs), "the result", notes)
    for coord_name, variable in dict(cleaned.coords.variables).items():
        where = f"coordinate {clean_text(coord_name, 40)!r}"
        variable.attrs = clean_attrs(dict(variable.attrs), where, notes)
    return cleaned


def check_result(
    value: pd.DataFrame | xr.DataArray,
) -> tuple[pd.DataFrame | xr.DataArray, list[str]]:
    """Apply the result limits: the cleaned value and notes on what was dropped.

    Raises:
        ResultRejected: a label, name or size breaks a limit; the message says which.
    """
    notes: list[str] = []
    if isinstance(value, pd.DataFrame):
        return _check_frame(value, notes), notes
    return _check_array(value, notes), notes


def check_scalar(value: object) -> bool | int | float | str | None:
    """A scalar result as stored: None, bool, int64-range int, float or short UTF-8 str.

    Raises:
        ResultRejected: another type, an int out of range, or a string too long.
    """
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        if not _INT64[0] <= value < _INT64[1]:
            raise ResultRejected("the integer result is outside the 64-bit range; use a float")
        return value
    if isinstance(value, str):
        if len(value) > MAX_SCALAR_CHARS:
            raise ResultRejected(
                f"the string result has {len(value)} characters (at most {MAX_SCALAR_CHARS}); "
                "return a DataFrame or Series for larger outputs"
            )
        return clean_text(value, MAX_SCALAR_CHARS)
    raise ResultRejected(f"a scalar result cannot be a {type(value).__name__}")
