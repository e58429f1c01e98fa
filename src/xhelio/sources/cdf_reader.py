"""Read ISTP-style CDF files (CDAWeb's archive format) into `ParameterData`.

One call opens a file once and reads every requested variable from it. ISTP metadata
drives the reading: DEPEND_0 names the time variable, FILLVAL and VALIDMIN/VALIDMAX turn
bad values into NaN, LABL_PTR_1 names vector components, DEPEND_1 gives spectrogram
bins, UNITS and CATDESC/FIELDNAM describe the result.

Time: CDF_TIME_TT2000 is converted with cdflib's own `cdfepoch.to_datetime`, which
applies the leap-second table. cdflib breaks CDF_EPOCH and CDF_EPOCH16 down one value at
a time in Python (about 70 us a value: seconds for a day of 1-s data), so for values
between 1900 and 2200 we compute the very same result with numpy (whole milliseconds for
EPOCH, picoseconds cut to nanoseconds for EPOCH16; these scales have no leap seconds)
and hand only fill and odd values to cdflib; the tests check equality with cdflib. A UTC
`datetime64` cannot hold 23:59:60, and cdflib moves samples inside a leap second onto
the next day's first second, where they would collide with (and, once duplicates are
dropped, replace) the real samples of 00:00:00. We instead pin them to
23:59:59.999999999, the last instant before midnight, so time stays monotonic and no
correctly-timed sample is lost.

Imports from xhelio only `catalog.model`, `sources.base` and `errors`; no network.
"""

from __future__ import annotations

import re
import struct
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cdflib
import numpy as np
import numpy.typing as npt
import pandas as pd
from cdflib import cdfepoch

from xhelio.catalog.model import ParameterInfo
from xhelio.errors import ServerError, UnknownParameterError, UserError
from xhelio.sources.base import ParameterData
from xhelio.sources.dims import support_column_prefix

__all__ = [
    "EPOCH_TYPES",
    "CdfReadError",
    "describe_cdf",
    "epochs_to_utc",
    "read_cdf_parameters",
]

EPOCH_TYPES = frozenset({"CDF_EPOCH", "CDF_EPOCH16", "CDF_TIME_TT2000"})
"""CDF data types that hold times."""

_NS_PER_S = 1_000_000_000

# What cdflib raises on a damaged or non-CDF file: it parses raw bytes without a check of
# its own, so a cut or garbled file surfaces as any of these.
_CORRUPT_FILE_ERRORS = (OSError, ValueError, KeyError, IndexError, TypeError, struct.error)


class CdfReadError(ServerError):
    """A downloaded CDF file is corrupt or not laid out as ISTP requires."""


def _leap_second_starts() -> list[tuple[int, np.datetime64]]:
    """Return (TT2000 at the start of each inserted leap second, the UTC midnight after it)."""
    starts: list[tuple[int, np.datetime64]] = []
    for year, month, day, *_ in cdfepoch.LTS:
        # Entries up to 1972-01-01 are fractional clock adjustments, not inserted seconds.
        if (int(year), int(month)) <= (1972, 1):
            continue
        midnight_tt2000 = int(cdfepoch.compute_tt2000([int(year), int(month), int(day)]))
        midnight_utc = np.datetime64(f"{int(year):04d}-{int(month):02d}-{int(day):02d}", "ns")
        starts.append((midnight_tt2000 - _NS_PER_S, midnight_utc))
    return starts


_LEAP_SECONDS = _leap_second_starts()

# CDF_EPOCH counts milliseconds, CDF_EPOCH16 seconds (+ picoseconds), from 0000-01-01.
_EPOCH_MS_AT_1970 = 62_167_219_200_000
_EPOCH_MS_RANGE = (59_958_230_400_000.0, 69_425_337_600_000.0)  # 1900-01-01, 2200-01-01
_EPOCH16_S_AT_1970 = 62_167_219_200
_EPOCH16_S_RANGE = (59_958_230_400.0, 69_425_337_600.0)


def _epoch_to_utc(values: npt.NDArray[np.float64]) -> npt.NDArray[np.datetime64]:
    """CDF_EPOCH to UTC: vectorised for 1900-2200, cdflib for fill and anything else."""
    times = np.full(values.shape, np.datetime64("NaT", "ns"))
    fast = (values >= _EPOCH_MS_RANGE[0]) & (values < _EPOCH_MS_RANGE[1])
    unix_ms = np.floor(values[fast]).astype(np.int64) - _EPOCH_MS_AT_1970
    times[fast] = unix_ms.astype("datetime64[ms]").astype("datetime64[ns]")
    if not fast.all():
        times[~fast] = cdfepoch.to_datetime(values[~fast])
    return times


def _epoch16_to_utc(values: npt.NDArray[np.complex128]) -> npt.NDArray[np.datetime64]:
    """CDF_EPOCH16 to UTC: vectorised for 1900-2200, cdflib for fill and anything else."""
    times = np.full(values.shape, np.datetime64("NaT", "ns"))
    seconds, picoseconds = values.real, values.imag
    fast = (
        (seconds >= _EPOCH16_S_RANGE[0])
        & (seconds < _EPOCH16_S_RANGE[1])
        & (seconds == np.floor(seconds))
        & (picoseconds >= 0)
        & (picoseconds < 1e12)
    )
    unix_s = seconds[fast].astype(np.int64) - _EPOCH16_S_AT_1970
    nanoseconds = np.floor(picoseconds[fast] / 1000).astype(np.int64)
    times[fast] = (unix_s * _NS_PER_S + nanoseconds).astype("datetime64[ns]")
    if not fast.all():
        times[~fast] = cdfepoch.to_datetime(values[~fast])
    return times


def epochs_to_utc(raw: npt.ArrayLike, data_type: str) -> npt.NDArray[np.datetime64]:
    """Convert raw CDF epoch values of `data_type` to UTC `datetime64[ns]` (NaT for fill)."""
    if data_type == "CDF_EPOCH":
        return _epoch_to_utc(np.asarray(raw, dtype=np.float64).ravel())
    if data_type == "CDF_EPOCH16":
        return _epoch16_to_utc(np.asarray(raw, dtype=np.complex128).ravel())
    if data_type != "CDF_TIME_TT2000":
        raise ValueError(f"{data_type} is not a CDF epoch type ({', '.join(sorted(EPOCH_TYPES))})")
    return _tt2000_to_utc(np.asarray(raw, dtype=np.int64).ravel())


def _tt2000_to_utc(values: npt.NDArray[np.int64]) -> npt.NDArray[np.datetime64]:
    """TT2000 to UTC with cdflib, samples inside a leap second pinned to 23:59:59.999999999."""
    if values.size == 0:
        return np.array([], dtype="datetime64[ns]")
    times = np.asarray(cdfepoch.to_datetime(values), dtype="datetime64[ns]")
    for leap_start, midnight in _LEAP_SECONDS:
        inside = (values >= leap_start) & (values < leap_start + _NS_PER_S)
        if inside.any():
            times[inside] = midnight - np.timedelta64(1, "ns")
    return times


@dataclass(frozen=True)
class _Layout:
    """How one CDF variable maps to DataFrame columns, and its dimensions."""

    columns: list[str]
    labelled: bool = False
    bins: npt.NDArray[np.float64] | None = None
    bins_name: str | None = None
    bins_units: str | None = None
    dims: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    # Per-record bin values: frame column prefix -> (records, size) array.
    support: dict[str, npt.NDArray[np.float64]] = field(
        default_factory=dict[str, npt.NDArray[np.float64]]
    )


def _text(attrs: dict[str, Any], key: str) -> str:
    value = attrs.get(key)
    return value.strip() if isinstance(value, str) else ""


def _read_var(cdf: cdflib.CDF, name: str) -> npt.NDArray[Any]:
    return np.asarray(cdf.varget(name))


def _label_values(cdf: cdflib.CDF, pointer: str, count: int) -> list[str] | None:
    """Return the labels of a LABL_PTR_i variable when there is one per element."""
    if not pointer:
        return None
    try:
        raw = _read_var(cdf, pointer).ravel()
    except (ValueError, KeyError):
        return None
    labels = [str(x).strip() for x in raw]
    if len(labels) != count:
        return None
    return labels


def _labels(cdf: cdflib.CDF, attrs: dict[str, Any], count: int) -> list[str] | None:
    """Return the LABL_PTR_1 labels when they are usable column names, else None."""
    labels = _label_values(cdf, _text(attrs, "LABL_PTR_1"), count)
    if labels is None or len(set(labels)) != count or "" in labels:
        return None
    return labels


def _is_numeric(data_type: str) -> bool:
    return data_type not in EPOCH_TYPES and data_type not in {"CDF_CHAR", "CDF_UCHAR"}


def _numeric_var(
    cdf: cdflib.CDF, name: str
) -> tuple[npt.NDArray[np.float64], dict[str, Any]] | None:
    """A numeric variable's values (fill as NaN) and attributes, or None."""
    if not name:
        return None
    try:
        info = cdf.varinq(name)
    except (ValueError, KeyError):
        return None
    if not _is_numeric(info.Data_Type_Description):
        return None
    attrs = cdf.varattsget(name)
    try:
        return _clean_values(_read_var(cdf, name), attrs), attrs
    except (ValueError, TypeError):
        return None


def _rows(values: npt.NDArray[np.float64], size: int) -> npt.NDArray[np.float64] | None:
    if values.size == 0 or values.size % size:
        return None
    return values.reshape(-1, size)


# Partner variables of a bin *lower edge* (`..._Bins_Low_Energy`): the width or the upper
# edge, named like it with "Low_Energy"/"Low" replaced.
_LOW_TOKENS = ("Low_Energy", "LOW_ENERGY", "low_energy", "Low", "LOW", "low")
_WIDTH_TOKENS = ("Width", "WIDTH", "width", "Delta", "DELTA", "delta")
_HIGH_TOKENS = ("High_Energy", "HIGH_ENERGY", "high_energy", "High", "HIGH", "high")


def _edge_partner(cdf: cdflib.CDF, pointer: str, size: int) -> tuple[str, str] | None:
    """For a lower-edge bin variable: ("width"|"high", partner name), else None."""
    names = set(cdf.cdf_info().zVariables) | set(cdf.cdf_info().rVariables)
    for token in _LOW_TOKENS:
        if token not in pointer:
            continue
        for kind, replacements in (("high", _HIGH_TOKENS), ("width", _WIDTH_TOKENS)):
            for replacement in replacements:
                for variant in {token.replace("Low", replacement), replacement}:
                    candidate = pointer.replace(token, variant)
                    if candidate in names and candidate != pointer:
                        read = _numeric_var(cdf, candidate)
                        if read is not None and read[0].size % size == 0:
                            return kind, candidate
    return None


def _centre(low: npt.NDArray[np.float64], high: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Cell centres: geometric for positive edges spanning a decade, arithmetic otherwise."""
    with np.errstate(all="ignore"):
        finite = np.concatenate([low[np.isfinite(low)], high[np.isfinite(high)]])
        if finite.size and finite.min() > 0 and finite.max() / finite.min() > 10:
            return np.sqrt(low * high)
        return (low + high) / 2


def _constant(rows: npt.NDArray[np.float64]) -> bool:
    return rows.shape[0] == 1 or bool(
        np.all((rows == rows[0]) | (np.isnan(rows) & np.isnan(rows[0])))
    )


def _axis(
    cdf: cdflib.CDF, name: str, attrs: dict[str, Any], k: int, size: int
) -> tuple[dict[str, Any], dict[str, npt.NDArray[np.float64]]]:
    """Describe record dimension `k` (1-based) of variable `name` from DEPEND_k/LABL_PTR_k."""
    pointer = _text(attrs, f"DEPEND_{k}")
    label_pointer = _text(attrs, f"LABL_PTR_{k}")
    dim: dict[str, Any] = {
        "name": pointer or label_pointer or f"{name}_dim{k}",
        "size": size,
        "units": "",
        "is_bins": False,
    }
    labels = _label_values(cdf, label_pointer, size)
    support: dict[str, npt.NDArray[np.float64]] = {}
    read = _numeric_var(cdf, pointer)
    rows = None if read is None else _rows(read[0], size)
    if read is None or rows is None:
        if labels is None and pointer:
            labels = _label_values(cdf, pointer, size)  # a CDF_CHAR DEPEND_k names elements
        if labels is not None:
            dim["labels"] = labels
        return dim, support
    bin_attrs = read[1]
    dim["units"] = _text(bin_attrs, "UNITS")
    title = _text(bin_attrs, "LABLAXIS") or _text(bin_attrs, "FIELDNAM")
    if title and len(title) <= 30:
        dim["title"] = title
    dim["is_bins"] = True
    dim["source"] = f"DEPEND_{k} {pointer}"
    if labels is not None:
        dim["labels"] = labels
    centres, low, high = rows, None, None
    plus = _numeric_var(cdf, _text(bin_attrs, "DELTA_PLUS_VAR"))
    minus = _numeric_var(cdf, _text(bin_attrs, "DELTA_MINUS_VAR"))
    partner = _edge_partner(cdf, pointer, size)
    if plus is not None and minus is not None:
        p_rows, m_rows = _rows(plus[0], size), _rows(minus[0], size)
        if p_rows is not None and m_rows is not None:
            low, high = centres - m_rows, centres + p_rows
            dim["source"] += " with edges from DELTA_MINUS_VAR/DELTA_PLUS_VAR"
    elif partner is not None:
        kind, other = partner
        other_read = _numeric_var(cdf, other)
        other_rows = None if other_read is None else _rows(other_read[0], size)
        if other_rows is not None:
            low = rows
            high = rows + other_rows if kind == "width" else other_rows
            centres = _centre(low, high)
            # The axis shows the quantity, not the name of its lower-edge variable.
            words = re.sub(r"(?i)(^|_)(low|lower|bins?|edges?)(?=_|$)", "_", pointer)
            dim["title"] = " ".join(w for w in words.split("_") if w) or pointer
            dim["source"] += (
                f" (lower edges) with {'widths' if kind == 'width' else 'upper edges'} {other}"
            )
    for kind, values in (("centers", centres), ("low", low), ("high", high)):
        if values is None:
            continue
        if _constant(values):
            dim[kind] = [None if not np.isfinite(v) else float(v) for v in values[0]]
        else:
            prefix = support_column_prefix(str(dim["name"]), kind)
            dim[f"{kind}_column"] = prefix
            support[prefix] = values
    return dim, support


def _layout(cdf: cdflib.CDF, name: str, dims: list[int], attrs: dict[str, Any]) -> _Layout:
    """Decide column names and dimensions: labels for vectors, DEPEND_i for the rest."""
    count = int(np.prod(dims)) if dims else 1
    if not dims:
        return _Layout(columns=[name])
    labels = _labels(cdf, attrs, count) if len(dims) == 1 else None
    columns = labels or [f"{name}_{i}" for i in range(count)]
    labelled = labels is not None
    axes: list[dict[str, Any]] = []
    support: dict[str, npt.NDArray[np.float64]] = {}
    for k, size in enumerate(dims, start=1):
        dim, extra = _axis(cdf, name, attrs, k, size)
        axes.append(dim)
        support.update(extra)
    _unique_names(axes)
    # A numeric DEPEND_1 is a bin axis unless the variable is plainly a labelled vector:
    # ISTP vectors often point DEPEND_1 at a component index (1, 2, 3) next to labels.
    display = _text(attrs, "DISPLAY_TYPE").lower()
    if len(dims) == 1 and labelled and not display.startswith("spectrogram"):
        axes[0] = {
            "name": axes[0]["name"],
            "size": count,
            "units": "",
            "is_bins": False,
            "labels": labels,
        }
        return _Layout(columns, labelled, dims=axes)
    first = axes[0]
    constant_bins = (
        np.asarray([np.nan if v is None else v for v in first["centers"]], dtype=np.float64)
        if len(dims) == 1 and first["is_bins"] and "centers" in first
        else None
    )
    return _Layout(
        columns,
        labelled,
        bins=constant_bins,
        bins_name=str(first["name"]) if len(dims) == 1 and first["is_bins"] else None,
        bins_units=str(first["units"]) if len(dims) == 1 and first["is_bins"] else None,
        dims=axes,
        support=support,
    )


def _unique_names(axes: list[dict[str, Any]]) -> None:
    """Two dimensions pointing at one variable still need distinct names."""
    seen: set[str] = {"time"}
    for k, dim in enumerate(axes, start=1):
        name = str(dim["name"])
        if name in seen:
            dim["name"] = f"{name}_{k}"
        seen.add(str(dim["name"]))


def _fill_mask(values: npt.NDArray[Any], fill: object) -> npt.NDArray[np.bool_] | None:
    """Return where `values` equal FILLVAL, compared in the data's own type."""
    if fill is None or isinstance(fill, str):
        return None
    fill_array = np.asarray(fill).ravel()
    if fill_array.size != 1:
        return None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        # A fill of another type that does not fit the data type simply never matches.
        warnings.simplefilter("ignore")
        cast = fill_array.astype(values.dtype)
        exact = np.array_equal(cast.astype(np.float64), fill_array.astype(np.float64))
        # A double FILLVAL on REAL4 data (-1e31) matches at the data's own precision;
        # an integer fill that does not fit the integer type never matches.
        if not exact and not np.issubdtype(values.dtype, np.floating):
            return None
    return values == cast[0]


def _clean_values(values: npt.NDArray[Any], attrs: dict[str, Any]) -> npt.NDArray[np.float64]:
    """Return `values` as float64, NaN where FILLVAL (VALIDMIN/VALIDMAX are not applied).

    Valid ranges mask genuine data too often (a VALIDMIN of 0 on a signed longitude), so
    they travel as metadata and are applied only on request (`xhelio.data.cleaning`).
    """
    mask = _fill_mask(values, attrs.get("FILLVAL"))
    result = values.astype(np.float64)
    if mask is not None:
        result[mask] = np.nan
    return result


def _bound_meta(value: object) -> float | list[float] | None:
    """VALIDMIN/VALIDMAX as JSON: one number, one per element, or None if unusable."""
    if value is None or isinstance(value, str):
        return None
    try:
        bound = np.asarray(value, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return None
    if bound.size == 1:
        return float(bound[0])
    return [float(b) for b in bound]


def _meta(attrs: dict[str, Any], layout: _Layout) -> dict[str, Any]:
    """What a reader of the data needs beyond the table: dims, fill, valid range, display."""
    meta: dict[str, Any] = {"dims": layout.dims}
    fill = _fill_text(attrs)
    if fill is not None:
        meta["fill"] = fill
    for key, attr in (("valid_min", "VALIDMIN"), ("valid_max", "VALIDMAX")):
        bound = _bound_meta(attrs.get(attr))
        if bound is not None:
            meta[key] = bound
    for key, attr in (
        ("raw_units", "UNITS"),
        ("display_type", "DISPLAY_TYPE"),
        ("scale_type", "SCALETYP"),
        ("label_axis", "LABLAXIS"),
        ("field_name", "FIELDNAM"),
        ("var_type", "VAR_TYPE"),
    ):
        text = _text(attrs, attr)
        if text:
            meta[key] = text
    return meta


def _data_variables(cdf: cdflib.CDF) -> list[str]:
    """Return the time-series variables of a file: VAR_TYPE=data first, then the rest."""
    info = cdf.cdf_info()
    data: list[str] = []
    support: list[str] = []
    for name in [*info.rVariables, *info.zVariables]:
        attrs = cdf.varattsget(name)
        if not _text(attrs, "DEPEND_0") or cdf.varinq(name).Data_Type_Description in EPOCH_TYPES:
            continue
        (data if _text(attrs, "VAR_TYPE").lower() == "data" else support).append(name)
    return data + support


def _resolve(requested: str, available: list[str]) -> str | None:
    if requested in available:
        return requested
    lowered = [a for a in available if a.lower() == requested.lower()]
    return lowered[0] if len(lowered) == 1 else None


# Leading bytes of files that are not CDF but are what a server may send instead.
_NOT_CDF_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"CDF\x01", "netCDF"),
    (b"CDF\x02", "netCDF"),
    (b"\x89HDF", "HDF5/netCDF-4"),
    (b"\x1f\x8b", "gzip"),
    (b"PK\x03\x04", "ZIP"),
    (b"%PDF", "PDF"),
)
_CDF_MAGIC = (b"\xcd\xf3\x00\x01", b"\xcd\xf2\x60\x02", b"\x00\x00\xff\xff")


def _file_kind(path: Path) -> str | None:
    """Name what a file is when it is plainly not CDF (netCDF, HTML, JSON...), else None."""
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
    except OSError:
        return None
    if head[:4] in _CDF_MAGIC:
        return None
    for magic, kind in _NOT_CDF_MAGIC:
        if head.startswith(magic):
            return kind
    text = head.lstrip().lower()
    if text.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return "HTML"
    if text.startswith(b"<?xml") or text.startswith(b"<"):
        return "XML/HTML"
    if text.startswith((b"{", b"[")):
        return "JSON"
    if not head:
        return "empty"
    return None


def _open(path: Path) -> cdflib.CDF:
    kind = _file_kind(path)
    if kind is not None:
        raise CdfReadError(
            f"File {path.name} is {kind}, not CDF: the server sent something other than a "
            "CDF file. Check the dataset id and source; a netCDF file is read with xarray, "
            "an HTML page is usually an error page."
        )
    try:
        return cdflib.CDF(path)
    except _CORRUPT_FILE_ERRORS as exc:
        raise CdfReadError(
            f"CDF file {path.name} could not be opened ({exc}). The download may be cut "
            "short; fetch again, and report the file to CDAWeb if it keeps failing."
        ) from exc


class _FileReader:
    """Reads variables from one open CDF file, converting each epoch variable once."""

    def __init__(self, cdf: cdflib.CDF, path: Path) -> None:
        self.cdf = cdf
        self.path = path
        self._times: dict[str, npt.NDArray[np.datetime64]] = {}

    def times(self, epoch_name: str) -> npt.NDArray[np.datetime64]:
        """Return the UTC times of epoch variable `epoch_name`."""
        if epoch_name not in self._times:
            data_type = self.cdf.varinq(epoch_name).Data_Type_Description
            if data_type not in EPOCH_TYPES:
                raise CdfReadError(
                    f"Time variable {epoch_name} in {self.path.name} has type {data_type}, "
                    "not a CDF epoch type; this file cannot be read as a time series."
                )
            self._times[epoch_name] = epochs_to_utc(_read_var(self.cdf, epoch_name), data_type)
        return self._times[epoch_name]

    def parameter(self, name: str) -> ParameterData:
        """Return variable `name` as `ParameterData`, rows with fill times removed."""
        attrs = self.cdf.varattsget(name)
        info = self.cdf.varinq(name)
        times = self.times(_text(attrs, "DEPEND_0"))
        layout = _layout(self.cdf, name, [int(d) for d in info.Dim_Sizes], attrs)
        raw = _read_var(self.cdf, name)
        if _is_numeric(info.Data_Type_Description):
            values: npt.NDArray[Any] = _clean_values(raw, attrs)
        else:
            values = raw.astype(str)
        values = values.reshape(values.shape[0] if values.ndim else 1, len(layout.columns))
        if not info.Rec_Vary and values.shape[0] == 1:
            values = np.repeat(values, times.size, axis=0)
        rows = min(values.shape[0], times.size)
        keep = ~np.isnat(times[:rows])
        index = pd.DatetimeIndex(times[:rows][keep], name="time").tz_localize("UTC")
        frame = pd.DataFrame(values[:rows][keep], index=index, columns=layout.columns)
        for prefix, per_record in layout.support.items():
            block = per_record
            if block.shape[0] != values.shape[0]:
                # A bin table with another record count cannot be matched record by record.
                continue
            names = [f"{prefix}{i}" for i in range(block.shape[1])]
            frame[names] = block[:rows][keep]
        return ParameterData(
            name=name,
            frame=frame,
            units=_text(attrs, "UNITS"),
            description=_text(attrs, "CATDESC") or _text(attrs, "FIELDNAM"),
            bins=layout.bins,
            bins_name=layout.bins_name,
            bins_units=layout.bins_units,
            meta=_meta(attrs, layout),
        )


def _refuse_timeless(cdf: cdflib.CDF, path: Path, requested: str, available: list[str]) -> None:
    """Explain a variable that exists but has no time axis (a bin table, a label list)."""
    info = cdf.cdf_info()
    every = [*info.rVariables, *info.zVariables]
    match = _resolve(requested, every)
    if match is None or match in available:
        return
    users = [
        v
        for v in available
        if any(
            _text(cdf.varattsget(v), key) == match
            for key in ("DEPEND_1", "DEPEND_2", "DEPEND_3", "LABL_PTR_1", "LABL_PTR_2")
        )
    ]
    used = f" It is the bins or labels of {', '.join(users[:5])}, which carry it." if users else ""
    # A user error, not a server one: the file is fine and must stay in the file store.
    raise UserError(
        f"{match} in {path.name} has no time axis (no DEPEND_0), so it is not a time series "
        f"to fetch.{used} Time-series variables: {', '.join(available[:20])}."
    )


def read_cdf_parameters(
    path: Path, dataset_id: str, parameters: Sequence[str]
) -> dict[str, ParameterData]:
    """Open `path` once and return every requested parameter, keyed as requested.

    Raises:
        UnknownParameterError: a parameter is not a time-series variable of the file.
        CdfReadError: the file is corrupt or its time variable is unusable.
    """
    cdf = _open(path)
    try:
        available = _data_variables(cdf)
        names = {p: _resolve(p, available) for p in parameters}
        for requested, resolved in names.items():
            if resolved is None:
                _refuse_timeless(cdf, path, requested, available)
                raise UnknownParameterError(dataset_id, requested, available)
        reader = _FileReader(cdf, path)
        return {p: reader.parameter(str(resolved)) for p, resolved in names.items()}
    except _CORRUPT_FILE_ERRORS as exc:
        raise CdfReadError(
            f"CDF file {path.name} of {dataset_id} could not be read ({exc}). "
            "Fetch again; if it keeps failing the file is corrupt on the server."
        ) from exc
    finally:
        # cdflib keeps the file handle open until the object is collected.
        del cdf


def _hapi_type(data_type: str) -> str:
    if data_type in EPOCH_TYPES:
        return "isotime"
    if data_type in {"CDF_CHAR", "CDF_UCHAR"}:
        return "string"
    if "REAL" in data_type or "FLOAT" in data_type or "DOUBLE" in data_type:
        return "double"
    return "integer"


def _fill_text(attrs: dict[str, Any]) -> str | None:
    fill = attrs.get("FILLVAL")
    if fill is None:
        return None
    return str(np.asarray(fill).ravel()[0])


def describe_cdf(path: Path, dataset_id: str) -> tuple[ParameterInfo, ...]:
    """Return the time variable(s) then every time-series variable of the file, as metadata."""
    cdf = _open(path)
    try:
        described: list[ParameterInfo] = []
        epochs: list[str] = []
        for name in _data_variables(cdf):
            attrs = cdf.varattsget(name)
            info = cdf.varinq(name)
            dims = [int(d) for d in info.Dim_Sizes]
            layout = _layout(cdf, name, dims, attrs)
            epoch = _text(attrs, "DEPEND_0")
            if epoch not in epochs:
                epochs.append(epoch)
            described.append(
                ParameterInfo(
                    name=name,
                    type=_hapi_type(info.Data_Type_Description),
                    units=_text(attrs, "UNITS"),
                    size=tuple(dims) or None,
                    fill=_fill_text(attrs),
                    description=_text(attrs, "CATDESC") or _text(attrs, "FIELDNAM"),
                    labels=tuple(layout.columns) if layout.labelled else None,
                    bins=None if layout.bins is None else tuple(float(b) for b in layout.bins),
                    bins_name=layout.bins_name,
                    bins_units=layout.bins_units,
                )
            )
        times = [ParameterInfo(name=e, type="isotime", units="UTC") for e in epochs]
        return (*times, *described)
    except _CORRUPT_FILE_ERRORS as exc:
        raise CdfReadError(
            f"CDF file {path.name} of {dataset_id} could not be described ({exc})."
        ) from exc
    finally:
        del cdf
