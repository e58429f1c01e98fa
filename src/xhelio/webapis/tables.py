"""Turn a validated JSON answer into a table, as its description's ``x-table`` says.

Layouts: ``header-row`` (a list of rows whose first row names the columns, as SWPC
sends), ``records`` (a list of objects; ``columns`` maps each column to a path in an
object: ``a.b``, ``list.0.field`` for an item, ``list.*.field`` for all items joined by
", ", ``list.max.field`` for the largest), and ``hapi`` (HAPI JSON: ``parameters`` and
``data``). Without ``x-table`` a list of objects is read as records of its top-level
scalar fields. The ``time`` field becomes a UTC DatetimeIndex named ``time`` (sorted);
columns that hold numbers (as numbers or text) become floats. Imports `errors` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import pandas as pd

from xhelio.errors import ServerError

__all__ = ["to_table"]


def _step(value: Any, part: str) -> Any:
    if isinstance(value, list):
        items = cast(list[Any], value)
        if part.isdigit():
            return items[int(part)] if int(part) < len(items) else None
        return None
    if isinstance(value, Mapping):
        return cast(Mapping[str, Any], value).get(part)
    return None


def pick(record: Any, path: str) -> Any:
    """The value at `path` in `record` (see the module doc); None when absent."""
    parts = path.split(".")
    value: Any = record
    for index, part in enumerate(parts):
        if part in ("*", "max") and isinstance(value, list):
            rest = ".".join(parts[index + 1 :])
            found = [pick(item, rest) if rest else item for item in cast(list[Any], value)]
            found = [f for f in found if f is not None]
            if part == "max":
                numbers = [float(f) for f in found if isinstance(f, int | float)]
                return max(numbers) if numbers else None
            return ", ".join(str(f) for f in found) or None
        value = _step(value, part)
        if value is None:
            return None
    return value


def _records(value: Any, columns: Mapping[str, str], time: str | None) -> pd.DataFrame:
    rows = cast(list[Any], value)
    if not columns:
        scalars = (str, int, float, bool, type(None))
        return pd.DataFrame(
            [
                {k: v for k, v in cast(dict[str, Any], r).items() if isinstance(v, scalars)}
                for r in rows
                if isinstance(r, dict)
            ]
        )
    paths = {time: time, **columns} if time else dict(columns)
    return pd.DataFrame([{name: pick(r, p) for name, p in paths.items()} for r in rows])


def _header_rows(value: Any) -> pd.DataFrame:
    rows = cast(list[list[Any]], value)
    return pd.DataFrame(rows[1:], columns=[str(c) for c in rows[0]])


def _hapi(value: Any) -> pd.DataFrame:
    body = cast(dict[str, Any], value)
    names = [str(p.get("name")) for p in cast(list[dict[str, Any]], body.get("parameters", []))]
    frame = pd.DataFrame(cast(list[list[Any]], body.get("data", [])))
    if frame.shape[1] != len(names):
        raise ServerError(
            f"The HAPI answer has {frame.shape[1]} columns for {len(names)} parameters; a "
            "parameter with several components is not read here: name scalar parameters."
        )
    frame.columns = names
    return frame.rename(columns={names[0]: "time"}) if names else frame


def _numeric(frame: pd.DataFrame) -> pd.DataFrame:
    for column in frame.columns:
        series = frame[column]
        if pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series):
            converted = pd.Series(pd.to_numeric(series, errors="coerce"), index=series.index)
            filled = series.notna() & (series.astype(str).str.strip() != "")
            if bool(filled.any()) and not bool(converted.isna()[filled].any()):
                frame[column] = converted
    return frame


def to_table(value: Any, table: Mapping[str, Any], what: str) -> pd.DataFrame:
    """The answer `value` as a DataFrame (time-indexed when it has a time field).

    Raises:
        ServerError: The answer cannot be read as the description's table.
    """
    layout = str(table.get("layout", "records"))
    time = cast(str | None, table.get("time"))
    if layout == "header-row":
        frame = _header_rows(value)
    elif layout == "hapi":
        frame, time = _hapi(value), "time"
    elif isinstance(value, list):
        frame = _records(value, cast(Mapping[str, str], table.get("columns", {})), time)
    else:
        frame = pd.json_normalize(cast(dict[str, Any], value), max_level=1)
    frame = _numeric(frame)
    if time is None or time not in frame.columns:
        return frame.reset_index(drop=True)
    try:
        index = pd.DatetimeIndex(pd.to_datetime(frame[time], utc=True, format="mixed"))
    except (ValueError, TypeError) as exc:
        raise ServerError(f"{what}: the field {time!r} holds values that are not times.") from exc
    return frame.drop(columns=[time]).set_axis(index.rename("time"), axis=0).sort_index()
