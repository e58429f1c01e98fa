"""Reading one PDS product (label + table) into times and per-field values, with `pdr`.

Why `pdr` (the Planetary Data Reader, ``planetary`` extra): one library reads both
generations the PPI archive holds, PDS3 (ODL ``.lbl`` + fixed-width or delimited
table) and PDS4 (XML label + character, binary or delimited table, through the
`pds4_tools` it vendors), from the label's own field layout. `pds4_tools` alone reads
PDS4 only; xhelio-pds's parser finds PDS3 columns with regular expressions and guesses
the time column from names, which breaks on labels written another way.

What `pdr` gives is a table of raw values; what the label says about each field is read
here: its unit, description, type, and special values. PDS3 ``MISSING_CONSTANT``,
``INVALID_CONSTANT`` and ``NULL_CONSTANT``, PDS4 ``Special_Constants`` (missing,
invalid, unknown, not applicable, error) become NaN; ``VALID_MINIMUM``/``MAXIMUM``
(PDS4 ``valid_minimum``/``valid_maximum``) are kept, not applied. The time column is the
field typed as a time (PDS3 ``TIME``/``DATE``, PDS4 ``ASCII_Date_Time*``), else one named
like one (UTC, SCET, TIME, EPOCH); ISO and day-of-year forms (``2016-240T00:00:01.5``)
are read, as UTC; a leap second ``:60`` is read as the last microsecond before the next
minute. A PDS4 label's DOI (``Citation_Information``) is returned for the citation.

Errors are `ServerError`s a user can act on: a label that does not parse, a product
without a table or time column, a time column of non-times.

Imports `errors` only; pdr, numpy and pandas (loaded when data is read).
"""

from __future__ import annotations

import re
import tempfile
import warnings
import xml.etree.ElementTree as ElementTree
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from xhelio.errors import ServerError

__all__ = ["FieldInfo", "ProductTable", "read_fields", "read_product"]

_PDS3_FILLS = ("MISSING_CONSTANT", "INVALID_CONSTANT", "NULL_CONSTANT")
_PDS4_FILLS = (
    "missing_constant",
    "invalid_constant",
    "unknown_constant",
    "not_applicable_constant",
    "error_constant",
)
_TIME_NAME = re.compile(r"(^|[\s_])(UTC|SCET|TIME|EPOCH|DATE_?TIME)($|[\s_])", re.IGNORECASE)
_ORDINAL_TIME = re.compile(r"^(\d{4})-(\d{3})(?:[T ](.*))?$")
_UNITS = {
    "NANOTESLA": "nT",
    "NT": "nT",
    "KILOMETERS": "km",
    "KILOMETER": "km",
    "KM": "km",
    "KM/S": "km/s",
    "KM/SEC": "km/s",
    "SECONDS": "s",
    "SECOND": "s",
    "DEGREES": "deg",
    "DEGREE": "deg",
    "EV": "eV",
    "KEV": "keV",
    "CM**-3": "cm^-3",
    "CM^-3": "cm^-3",
    "N/A": "",
    "NONE": "",
}


@dataclass(frozen=True)
class FieldInfo:
    """What a label says about one field of a table."""

    name: str
    units: str = ""
    raw_units: str = ""
    description: str = ""
    data_type: str = ""
    fills: tuple[float, ...] = ()
    valid_min: float | None = None
    valid_max: float | None = None

    @property
    def is_time(self) -> bool:
        """Whether the label types this field as a time."""
        kind = self.data_type.upper()
        return kind in {"TIME", "DATE"} or kind.startswith("ASCII_DATE_TIME")


@dataclass
class ProductTable:
    """One product read: UTC times, and the values and description of its fields."""

    times: pd.DatetimeIndex
    values: dict[str, np.ndarray]
    fields: dict[str, FieldInfo]
    time_field: str
    doi: str | None = None
    notes: list[str] = field(default_factory=list[str])


def _units(raw: str) -> str:
    text = " ".join(raw.split())
    return _UNITS.get(text.upper(), text)


def _number(value: object) -> float | None:
    try:
        number = float(str(value).strip().strip('"'))
    except ValueError:
        return None
    return number if np.isfinite(number) else None


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _pds4_fields(label: Path) -> tuple[list[FieldInfo], str | None]:
    """The fields of a PDS4 label's first table, and its DOI."""
    try:
        root = ElementTree.parse(label).getroot()
    except (ElementTree.ParseError, OSError) as exc:
        raise ServerError(f"The PDS4 label {label.name} is not readable XML ({exc}).") from exc
    doi = next((e.text.strip() for e in root.iter() if _local(e.tag) == "doi" and e.text), None)
    out: list[FieldInfo] = []
    for element in root.iter():
        if not _local(element.tag).startswith("Field_"):
            continue
        text = {_local(c.tag): (c.text or "").strip() for c in element.iter()}
        raw_units = text.get("unit", "")
        fills = tuple(n for k in _PDS4_FILLS if (n := _number(text.get(k, ""))) is not None)
        out.append(
            FieldInfo(
                name=text.get("name", ""),
                units=_units(raw_units),
                raw_units=raw_units,
                description=" ".join(text.get("description", "").split()),
                data_type=text.get("data_type", ""),
                fills=fills,
                valid_min=_number(text.get("valid_minimum", "")),
                valid_max=_number(text.get("valid_maximum", "")),
            )
        )
    return out, doi


def _pds3_fields(columns: list[Any]) -> list[FieldInfo]:
    out: list[FieldInfo] = []
    for column in columns:
        raw_units = str(column.get("UNIT", "") or "")
        fills = tuple(n for k in _PDS3_FILLS if (n := _number(column.get(k, ""))) is not None)
        out.append(
            FieldInfo(
                name=str(column.get("NAME", "")),
                units=_units(raw_units),
                raw_units=raw_units,
                description=" ".join(str(column.get("DESCRIPTION", "") or "").split()),
                data_type=str(column.get("DATA_TYPE", "") or ""),
                fills=fills,
                valid_min=_number(column.get("VALID_MINIMUM", "")),
                valid_max=_number(column.get("VALID_MAXIMUM", "")),
            )
        )
    return out


def _open(label: Path) -> Any:
    """The product as pdr reads it; a label pdr cannot parse is a `ServerError`."""
    import pdr

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pdr warns about label oddities it handles
            return pdr.read(str(label))
    except Exception as exc:  # pdr raises many kinds on a damaged label
        raise ServerError(
            f"The PDS label {label.name} cannot be read ({type(exc).__name__}: {exc})."
        ) from exc


def _table(product: Any, label: Path) -> tuple[str, pd.DataFrame]:
    """The product's first table (pdr loads objects on access)."""
    for key in product.keys():  # noqa: SIM118 (iterating a pdr.Data loads every object)
        if key.upper() == "LABEL":
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = product[key]
        except Exception as exc:
            raise ServerError(
                f"The table of {label.name} cannot be read ({type(exc).__name__}: {exc}): "
                "the file does not match its label."
            ) from exc
        if isinstance(value, pd.DataFrame):
            return key, value
    raise ServerError(
        f"{label.name} describes no table xhelio can read (found {list(product.keys())}): "
        "the label may be damaged, or the product is an image or binary file."
    )


def _fields_of(product: Any, label: Path, key: str | None) -> tuple[list[FieldInfo], str | None]:
    if label.suffix.lower() in {".xml", ".lblx"}:
        return _pds4_fields(label)
    metadata = product.metadata
    keys = [key] if key else [k for k in metadata if not str(k).startswith("^")]
    for name in keys:
        obj = metadata.get(name)
        if hasattr(obj, "getall") and "COLUMN" in obj:
            return _pds3_fields(list(obj.getall("COLUMN"))), None
    return [], None


@contextmanager
def _staged(files: dict[Path, str]) -> Generator[Path, None, None]:
    """A temporary folder where each kept file is linked under its archive name."""
    with tempfile.TemporaryDirectory(prefix="xhelio-pds-") as folder:
        for path, name in files.items():
            (Path(folder) / name).symlink_to(path.resolve())
        yield Path(folder)


def read_fields(label: Path, label_name: str) -> list[FieldInfo]:
    """The fields of a product's table as its label describes them (no table is read).

    `label_name` is the label's archive name (its suffix tells PDS3 from PDS4).
    """
    with _staged({label: label_name}) as folder:
        staged = folder / label_name
        if staged.suffix.lower() in {".xml", ".lblx"}:
            return _pds4_fields(staged)[0]
        return _fields_of(_open(staged), staged, None)[0]


def read_product(label: Path, table: Path, label_name: str, table_name: str) -> ProductTable:
    """Read a product whose files are kept under other names (`label_name`, `table_name`).

    The label names its table: both are linked under their archive names in a
    temporary folder so that pdr finds one from the other.
    """
    with _staged({label: label_name, table: table_name}) as folder:
        staged = folder / label_name
        product = _open(staged)
        key, frame = _table(product, staged)
        fields, doi = _fields_of(product, staged, key)
    by_name = {f.name: f for f in fields if f.name}
    time_field = _time_column(frame, by_name, label_name)
    times, note = parse_times(pd.Series(frame[time_field]), f"{label_name} ({time_field})")
    values: dict[str, np.ndarray] = {}
    for column in frame.columns:
        if column != time_field:
            values[str(column)] = _masked(pd.Series(frame[column]), by_name.get(str(column)))
    return ProductTable(times, values, by_name, time_field, doi, [note] if note else [])


def _time_column(frame: pd.DataFrame, fields: dict[str, FieldInfo], label_name: str) -> str:
    typed = [c for c in frame.columns if c in fields and fields[c].is_time]
    named = [c for c in frame.columns if _TIME_NAME.search(str(c)) and frame[c].dtype == object]
    named += [c for c in frame.columns if _TIME_NAME.search(str(c)) and c not in named]
    for column in typed + named:
        return str(column)
    raise ServerError(
        f"{label_name} has no time column xhelio recognises (columns: "
        f"{', '.join(map(str, frame.columns))})."
    )


def parse_times(column: pd.Series, what: str) -> tuple[pd.DatetimeIndex, str | None]:
    """UTC times from ISO or day-of-year strings; a leap second as the instant before."""
    text = column.astype(str).str.strip().str.strip('"').str.rstrip("Z")
    leap = text.str.contains(r":60(?:\.\d*)?$", regex=True)
    note = None
    if bool(leap.any()):
        text = text.where(~leap, text.str.replace(r":60(?:\.\d*)?$", ":59.999999", regex=True))
        note = f"{what}: {int(leap.sum())} leap-second time(s) (:60) read as :59.999999."
    ordinal = text.str.extract(_ORDINAL_TIME)
    try:
        if bool(ordinal[0].notna().all()) and len(text):
            days = pd.to_datetime(ordinal[0], format="%Y") + pd.to_timedelta(
                ordinal[1].astype(int) - 1, unit="D"
            )
            clock = pd.to_timedelta(ordinal[2].fillna("00:00:00"))
            stamps = pd.DatetimeIndex(days + clock)
        else:
            stamps = pd.DatetimeIndex(pd.to_datetime(text, format="ISO8601"))
    except (ValueError, TypeError) as exc:
        sample = text.iloc[0] if len(text) else ""
        raise ServerError(f"{what} holds values that are not times (e.g. {sample!r}).") from exc
    stamps = stamps.tz_localize("UTC") if stamps.tz is None else stamps.tz_convert("UTC")
    return stamps.rename("time"), note


def _masked(column: pd.Series, info: FieldInfo | None) -> np.ndarray:
    """The column as floats, its special values NaN (text stays text)."""
    numbers = np.asarray(pd.to_numeric(column, errors="coerce"), dtype=float)
    if bool(np.isnan(numbers).all()) and bool(column.notna().any()):
        return column.astype(str).to_numpy()
    values = numbers.copy()
    for fill in info.fills if info is not None else ():
        values[np.isclose(values, fill, rtol=1e-6, atol=0.0)] = np.nan
    return values
