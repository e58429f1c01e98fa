"""The one reader of HAPI `/info` JSON and of HAPI time strings.

Used by the offline snapshot, the live catalog refresh and the HAPI data source alike,
so a dataset reads the same whichever way it arrived. Times: every form the HAPI spec
allows (``YYYY-MM-DD[Thh[:mm[:ss[.f...]]]][Z]`` and ``YYYY-DDD[...]``, any number of
fraction digits up to nanoseconds) parse vectorised; a leap second (``23:59:60.5``)
is mapped onto the next second (``00:00:00.5``) because UTC datetimes cannot hold it,
and the caller is told how many were. Parameters: `bins` are read per dimension
(``centers``/``ranges`` as numbers or as the name of a parameter holding them per
record), with units and labels. Imports only `catalog.model`, `errors`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from xhelio.catalog.model import BinsAxis, DatasetInfo, ParameterInfo
from xhelio.errors import ServerError

__all__ = [
    "dataset_from_hapi_info",
    "hapi_times_to_ns",
    "parse_hapi_time",
    "parse_optional_hapi_time",
    "parse_parameters",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_CLOCK = r"^(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?(?:\.(\d{1,9})\d*)?$"
_CLOCK_RE = re.compile(_CLOCK)
_DATE = re.compile(r"(\d{4})-(?:(\d{2})-(\d{2})|(\d{3}))")


def hapi_times_to_ns(values: npt.ArrayLike) -> tuple[npt.NDArray[np.int64], int]:
    """Parse HAPI isotimes to int64 ns since 1970; returns (times, leap seconds mapped).

    Raises ServerError naming an example when a string is not a HAPI time.
    """
    import pandas as pd  # only for data responses: a catalog lookup need not load pandas

    text = pd.Series(np.asarray(values, dtype=object).ravel(), dtype="string")
    text = text.str.strip().str.strip("\x00").str.rstrip("Zz")
    parts = text.str.split("T", n=1, expand=True)
    date = parts[0]
    clock = (
        parts[1].fillna("") if parts.shape[1] > 1 else pd.Series([""] * len(text), dtype="string")
    )
    ordinal = date.str.fullmatch(r"\d{4}-\d{3}").fillna(False).to_numpy(dtype=bool)
    calendar = date.str.fullmatch(r"\d{4}-\d{2}-\d{2}").fillna(False).to_numpy(dtype=bool)
    fields = clock.where(clock != "", "00").str.extract(_CLOCK)
    clock_ok = fields[0].notna().to_numpy(dtype=bool)
    bad = ~(ordinal | calendar) | ~clock_ok
    if bad.any():
        sample = str(text[bad].iloc[0])
        raise ServerError(f"The server sent a time that is not a HAPI isotime: {sample!r}.")
    days = np.zeros(len(text), dtype=np.int64)
    if calendar.any():
        parsed = pd.to_datetime(date[calendar], format="%Y-%m-%d", errors="coerce")
        if parsed.isna().any():
            raise ServerError(
                f"The server sent an impossible date: {date[calendar][parsed.isna()].iloc[0]!r}."
            )
        days[calendar] = parsed.to_numpy(dtype="datetime64[D]").astype(np.int64)
    if ordinal.any():
        year = date[ordinal].str.slice(0, 4).astype("int64").to_numpy()
        day = date[ordinal].str.slice(5, 8).astype("int64").to_numpy()
        jan1 = (year - 1970).astype("datetime64[Y]").astype("datetime64[D]").astype(np.int64)
        days[ordinal] = jan1 + day - 1
    hours = fields[0].astype("int64").to_numpy()
    minutes = fields[1].fillna("0").astype("int64").to_numpy()
    seconds = fields[2].fillna("0").astype("int64").to_numpy()
    fraction = fields[3].fillna("").str.pad(9, side="right", fillchar="0")
    nanos = fraction.where(fraction != "000000000", "0").astype("int64").to_numpy()
    leap = int(np.count_nonzero(seconds == 60))
    # 23:59:60.x simply adds up to the next day's 00:00:00.x: the leap second mapped on.
    total = (
        days * 86_400_000_000_000
        + hours * 3_600_000_000_000
        + minutes * 60_000_000_000
        + seconds * 1_000_000_000
        + nanos
    )
    return total.astype(np.int64), leap


def parse_hapi_time(text: str) -> datetime:
    """Parse one HAPI isotime (any spec form) to an aware UTC datetime (microseconds).

    The same grammar as `hapi_times_to_ns`, without its per-call vector set-up: catalog
    loading parses thousands of single start/stop dates. Raises ServerError when it is
    not a HAPI time.
    """
    clean = str(text).strip().strip("\x00").rstrip("Zz")
    date, _, clock = clean.partition("T")
    day = _DATE.fullmatch(date)
    fields = _CLOCK_RE.fullmatch(clock or "00")
    if day is None or fields is None:
        raise ServerError(f"The server sent a time that is not a HAPI isotime: {clean!r}.")
    year, month, mday, yday = day.groups()
    try:
        if yday is not None:
            start = datetime(int(year), 1, 1, tzinfo=UTC) + timedelta(days=int(yday) - 1)
        else:
            start = datetime(int(year), int(month), int(mday), tzinfo=UTC)
    except (ValueError, OverflowError):
        raise ServerError(f"The server sent an impossible date: {date!r}.") from None
    hours, minutes, seconds, fraction = fields.groups()
    # 23:59:60.x adds up to the next day's 00:00:00.x, as in the vectorised reader.
    return start + timedelta(
        hours=int(hours),
        minutes=int(minutes or 0),
        seconds=int(seconds or 0),
        microseconds=int((fraction or "").ljust(9, "0")) // 1000,
    )


def parse_optional_hapi_time(value: object) -> datetime | None:
    """`parse_hapi_time` for optional fields: None for missing, empty or unreadable text."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return parse_hapi_time(value)
    except ServerError:
        return None


def _text(value: object) -> str:
    """HAPI strings may be null or (for units) a per-component list; flatten to text."""
    if type(value) is str:
        return value
    if value is None:
        return ""
    if isinstance(value, list):
        items = [_text(v) for v in value if v is not None]  # pyright: ignore[reportUnknownVariableType]
        unique = list(dict.fromkeys(items))
        return unique[0] if len(unique) == 1 else ", ".join(unique)
    return str(value)


def _size(value: object) -> tuple[int, ...] | None:
    if isinstance(value, list) and value:
        return tuple(int(v) for v in value)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, int):
        return (value,)
    return None


def _labels(value: object) -> tuple[str, ...] | None:
    if isinstance(value, list):
        flat: list[str] = []
        for v in value:  # pyright: ignore[reportUnknownVariableType]
            if isinstance(v, list):
                return None  # per-dimension labels live on the bins axes
            flat.append(_text(v))
        return tuple(flat)
    if isinstance(value, str) and value:
        return (value,)
    return None


def _numbers(value: object) -> tuple[float, ...] | None:
    if not isinstance(value, list):
        return None
    try:
        return tuple(float("nan") if v is None else float(v) for v in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    except (TypeError, ValueError):
        return None


def _axis(raw: object, size: int, labels: object) -> BinsAxis | None:
    if not isinstance(raw, dict):
        return None
    entry: dict[str, Any] = raw  # pyright: ignore[reportUnknownVariableType]
    centers = entry.get("centers")
    ranges = entry.get("ranges")
    low = high = None
    if isinstance(ranges, list) and all(isinstance(r, list) and len(r) == 2 for r in ranges):  # pyright: ignore[reportUnknownVariableType]
        pairs = np.asarray(
            [[np.nan if v is None else float(v) for v in r] for r in ranges],  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            dtype=np.float64,
        )
        low, high = tuple(pairs[:, 0].tolist()), tuple(pairs[:, 1].tolist())
    axis_labels = (
        tuple(_text(v) for v in labels)
        if isinstance(labels, list) and len(labels) == size
        else None  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    )
    return BinsAxis(
        name=_text(entry.get("name")) or "bins",
        units=_text(entry.get("units")),
        centers=_numbers(centers),
        centers_param=centers if isinstance(centers, str) else None,
        low=low,
        high=high,
        ranges_param=ranges if isinstance(ranges, str) else None,
        labels=axis_labels,
        description=_text(entry.get("description")),
    )


def _parameter(entry: dict[str, Any]) -> ParameterInfo:
    size = _size(entry.get("size"))
    raw_bins = entry.get("bins")
    raw_labels = entry.get("label")
    axes: list[BinsAxis] = []
    if isinstance(raw_bins, list) and size:
        for k, raw in enumerate(raw_bins):  # pyright: ignore[reportUnknownVariableType]
            dim_labels = (
                raw_labels[k]  # pyright: ignore[reportUnknownVariableType]
                if isinstance(raw_labels, list)
                and len(raw_labels) == len(size)
                and k < len(size)  # pyright: ignore[reportUnknownArgumentType]
                and isinstance(raw_labels[k], list)
                else None
            )
            axis = _axis(raw, size[k] if k < len(size) else 0, dim_labels)
            if axis is not None:
                axes.append(axis)
    first = axes[0] if axes and size and len(size) == 1 else None
    fill = entry.get("fill")
    return ParameterInfo(
        name=str(entry["name"]),
        type=str(entry.get("type") or "double"),
        units=_text(entry.get("units")),
        size=size,
        fill=None if fill is None else str(fill),
        description=_text(entry.get("description")),
        labels=_labels(raw_labels),
        bins=first.centers if first is not None else None,
        bins_name=axes[0].name if axes else None,
        bins_units=axes[0].units if axes else None,
        bins_axes=tuple(axes),
    )


def parse_parameters(raw: object) -> tuple[ParameterInfo, ...]:
    """Turn a HAPI `/info` `parameters` list into ParameterInfo records, faithfully."""
    if not isinstance(raw, list):
        return ()
    parameters: list[ParameterInfo] = []
    for item in raw:  # pyright: ignore[reportUnknownVariableType]
        if isinstance(item, dict) and "name" in item:
            parameters.append(_parameter(item))  # pyright: ignore[reportUnknownArgumentType]
    return tuple(parameters)


def _contact(info: dict[str, Any]) -> str | None:
    for key in ("contact", "contactID"):
        text = _text(info.get(key)).strip()
        if text:
            return text
    return None


def _doi(info: dict[str, Any]) -> str | None:
    for key in ("resourceID", "citation", "resourceURL"):
        text = _text(info.get(key))
        lowered = text.lower()
        marker = next((m for m in ("doi.org/", "doi:") if m in lowered), None)
        if marker is not None:
            return text[lowered.index(marker) + len(marker) :].strip().rstrip(".")
        if lowered.startswith("10.") and "/" in text:
            return text.strip()
    return None


def dataset_from_hapi_info(
    dataset_id: str,
    info: dict[str, Any],
    base: DatasetInfo | None = None,
    cadence_guess: Any = None,
) -> DatasetInfo:
    """Build a DatasetInfo from a HAPI `/info` dict, keeping what `base` knows otherwise.

    Values present in `info` (parameters, startDate/stopDate, cadence, maxRequestDuration,
    a DOI in resourceID/citation, the contact) win; empty ones fall back to `base`.
    Without a titled `base`, the title comes from the info's `description`;
    `cadence_guess(title, id)` fills a cadence neither gives.
    """
    known = base or DatasetInfo(id=dataset_id)
    parameters = parse_parameters(info.get("parameters"))
    title = _text(info.get("description")).split("\n", 1)[0] if not known.title else known.title
    cadence = _text(info.get("cadence")) or known.cadence
    if cadence is None and cadence_guess is not None:
        cadence = cadence_guess(title, dataset_id)
    return replace(
        known,
        id=dataset_id,
        title=title,
        start=parse_optional_hapi_time(info.get("startDate")) or known.start,
        stop=parse_optional_hapi_time(info.get("stopDate")) or known.stop,
        cadence=cadence,
        max_request_duration=_text(info.get("maxRequestDuration")) or known.max_request_duration,
        pi_name=known.pi_name or _contact(info),
        doi=known.doi or _doi(info),
        parameters=parameters or known.parameters,
    )
