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

import struct
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cdflib
import numpy as np
import numpy.typing as npt
import pandas as pd
from cdflib import cdfepoch

from xhelio.catalog.model import ParameterInfo
from xhelio.errors import ServerError, UnknownParameterError
from xhelio.sources.base import ParameterData

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
    """How one CDF variable maps to DataFrame columns (and bins, for 2-D data)."""

    columns: list[str]
    labelled: bool = False
    bins: npt.NDArray[np.float64] | None = None
    bins_name: str | None = None
    bins_units: str | None = None


def _text(attrs: dict[str, Any], key: str) -> str:
    value = attrs.get(key)
    return value.strip() if isinstance(value, str) else ""


def _read_var(cdf: cdflib.CDF, name: str) -> npt.NDArray[Any]:
    return np.asarray(cdf.varget(name))


def _labels(cdf: cdflib.CDF, attrs: dict[str, Any], count: int) -> list[str] | None:
    """Return the LABL_PTR_1 labels when they are usable column names, else None."""
    pointer = _text(attrs, "LABL_PTR_1")
    if not pointer:
        return None
    try:
        raw = _read_var(cdf, pointer).ravel()
    except (ValueError, KeyError):
        return None
    labels = [str(x).strip() for x in raw]
    if len(labels) != count or len(set(labels)) != count or "" in labels:
        return None
    return labels


def _is_numeric(data_type: str) -> bool:
    return data_type not in EPOCH_TYPES and data_type not in {"CDF_CHAR", "CDF_UCHAR"}


def _bins(cdf: cdflib.CDF, attrs: dict[str, Any], count: int) -> _Layout | None:
    """Return the DEPEND_1 bins of a spectrogram-like variable, or None if it has none.

    Time-varying bins (one set per record) are summarised by their per-bin median, so
    one `bins` vector describes the whole file.
    """
    pointer = _text(attrs, "DEPEND_1")
    if not pointer:
        return None
    try:
        info = cdf.varinq(pointer)
    except (ValueError, KeyError):
        return None
    if not _is_numeric(info.Data_Type_Description):
        return None
    bin_attrs = cdf.varattsget(pointer)
    values = _clean_values(_read_var(cdf, pointer), bin_attrs)
    if values.size % count != 0 or values.size == 0:
        return None
    per_record = values.reshape(-1, count)
    with warnings.catch_warnings():
        # An all-fill bin yields NaN; that is the right answer, not a warning.
        warnings.simplefilter("ignore", RuntimeWarning)
        centres = per_record[0] if per_record.shape[0] == 1 else np.nanmedian(per_record, axis=0)
    return _Layout(
        columns=[],
        bins=np.asarray(centres, dtype=np.float64),
        bins_name=pointer,
        bins_units=_text(bin_attrs, "UNITS"),
    )


def _layout(cdf: cdflib.CDF, name: str, dims: list[int], attrs: dict[str, Any]) -> _Layout:
    """Decide column names and bins: labels for vectors, DEPEND_1 bins for spectrograms."""
    count = int(np.prod(dims)) if dims else 1
    if not dims:
        return _Layout(columns=[name])
    labels = _labels(cdf, attrs, count)
    columns = labels or [f"{name}_{i}" for i in range(count)]
    labelled = labels is not None
    if len(dims) > 1:
        return _Layout(columns, labelled)
    # A numeric DEPEND_1 is a bin axis unless the variable is plainly a labelled vector:
    # ISTP vectors often point DEPEND_1 at a component index (1, 2, 3) next to labels.
    display = _text(attrs, "DISPLAY_TYPE").lower()
    if labelled and not display.startswith("spectrogram"):
        return _Layout(columns, labelled)
    bins = _bins(cdf, attrs, count)
    if bins is None:
        return _Layout(columns, labelled)
    return _Layout(columns, labelled, bins.bins, bins.bins_name, bins.bins_units)


def _column_bound(value: object, count: int) -> npt.NDArray[np.float64] | None:
    """Return a VALIDMIN/VALIDMAX attribute as one float per column, None if unusable."""
    if value is None or isinstance(value, str):
        return None
    try:
        bound = np.asarray(value, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return None
    if bound.size == 1:
        return np.full(count, bound[0])
    return bound if bound.size == count else None


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
        if not np.array_equal(cast.astype(np.float64), fill_array.astype(np.float64)):
            return None
    return values == cast[0]


def _clean_values(values: npt.NDArray[Any], attrs: dict[str, Any]) -> npt.NDArray[np.float64]:
    """Return `values` as float64, NaN where FILLVAL or outside VALIDMIN/VALIDMAX."""
    mask = _fill_mask(values, attrs.get("FILLVAL"))
    result = values.astype(np.float64)
    if mask is not None:
        result[mask] = np.nan
    count = int(np.prod(result.shape[1:]))
    flat = result.reshape(result.shape[0] if result.ndim else 1, count)
    low = _column_bound(attrs.get("VALIDMIN"), count)
    high = _column_bound(attrs.get("VALIDMAX"), count)
    with np.errstate(invalid="ignore"):
        if low is not None:
            flat[flat < low] = np.nan
        if high is not None:
            flat[flat > high] = np.nan
    return flat.reshape(result.shape)


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


def _open(path: Path) -> cdflib.CDF:
    try:
        return cdflib.CDF(path)
    except _CORRUPT_FILE_ERRORS as exc:
        raise CdfReadError(
            f"CDF file {path.name} could not be opened ({exc}). The download may be corrupt; "
            "fetch again, and report the file to CDAWeb if it keeps failing."
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
        return ParameterData(
            name=name,
            frame=frame,
            units=_text(attrs, "UNITS"),
            description=_text(attrs, "CATDESC") or _text(attrs, "FIELDNAM"),
            bins=layout.bins,
            bins_name=layout.bins_name,
            bins_units=layout.bins_units,
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
