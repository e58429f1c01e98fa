"""Session entries as SQL tables: named by label, a `time` column, typed columns with units.

A timeseries entry becomes a table whose first column is `time` (UTC, without zone, so
date functions need no time-zone extension) followed by one column per parameter or
component; a multi-dimensional array is flattened to one column per element (the names
the data's CSV export uses). A table that is not a timeseries keeps a named index as a
column and its own columns. Column types are DuckDB's names for the pandas dtypes.
Imports `data` from xhelio.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from xhelio.data.entry import DataEntry
from xhelio.data.outputs import flat_frame

__all__ = ["SqlColumn", "SqlTable", "describe_tables", "session_tables", "table_of"]

TIME = "time"


@dataclass(frozen=True)
class SqlColumn:
    """One column of a table: its name, DuckDB type and unit ('' when unknown)."""

    name: str
    type: str
    unit: str = ""


@dataclass(frozen=True)
class SqlTable:
    """One entry as a table: its name (the label), columns, rows and the frame to scan."""

    name: str
    columns: tuple[SqlColumn, ...]
    frame: pd.DataFrame
    description: str = ""

    @property
    def rows(self) -> int:
        """Number of rows."""
        return len(self.frame)

    def unit_of(self, column: str) -> str:
        """The unit of `column` ('' when unknown or not a column of this table)."""
        return next((c.unit for c in self.columns if c.name.lower() == column.lower()), "")

    def describe(self) -> dict[str, object]:
        """The table as the agent sees it: name (quoted), columns with type and unit, rows."""
        described: dict[str, object] = {
            "table": self.name,
            "sql_name": quoted(self.name),
            "rows": self.rows,
            "columns": [
                {"name": c.name, "type": c.type, **({"unit": c.unit} if c.unit else {})}
                for c in self.columns
            ],
        }
        if self.description:
            described["description"] = self.description
        if TIME in self.frame.columns and self.rows:
            times = self.frame[TIME]
            described["start"] = str(times.min())
            described["stop"] = str(times.max())
        return described


def quoted(name: str) -> str:
    """`name` as an SQL identifier: bare when plain, else in double quotes."""
    plain = name.replace("_", "a").isalnum() and name.isascii() and not name[:1].isdigit()
    return name if plain else '"' + name.replace('"', '""') + '"'


def _duckdb_type(series: pd.Series) -> str:
    kind = series.dtype.kind
    if kind == "M":
        return "TIMESTAMP"
    if kind == "m":
        return "INTERVAL"
    if kind == "f":
        return "DOUBLE"
    if kind in "iu":
        return "BIGINT"
    if kind == "b":
        return "BOOLEAN"
    return "VARCHAR"


def _naive_utc(values: pd.Series) -> pd.Series:
    """Zone-aware times as naive UTC (what DuckDB's TIMESTAMP holds)."""
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        return values.dt.tz_convert("UTC").dt.tz_localize(None)
    return values


def _frame(entry: DataEntry) -> pd.DataFrame:
    """The entry as a flat frame with `time` (or its named index) as the first column."""
    frame = flat_frame(entry)
    index = frame.index
    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    if isinstance(index, pd.DatetimeIndex):
        name = TIME if TIME not in frame.columns else "sample_time"
        times = pd.Series(index, name=name)
        frame.insert(0, name, _naive_utc(times).to_numpy())
    elif index.name is not None and str(index.name) not in frame.columns:
        frame.insert(0, str(index.name), index.to_numpy())
    for column, values in list(frame.items()):
        frame[column] = _naive_utc(values)
    return frame


def table_of(entry: DataEntry) -> SqlTable:
    """The table of one entry: its frame and typed columns with units."""
    frame = _frame(entry)
    single_unit = next(iter(entry.units.values()), "") if len(entry.units) == 1 else ""
    columns = tuple(
        SqlColumn(
            str(name),
            _duckdb_type(values),
            entry.units.get(str(name), "") or (single_unit if values.dtype.kind in "fiu" else ""),
        )
        for name, values in frame.items()
    )
    return SqlTable(entry.label, columns, frame, entry.description)


def session_tables(entries: Iterable[DataEntry]) -> dict[str, SqlTable]:
    """The tables of the session's entries, by label."""
    return {entry.label: table_of(entry) for entry in entries}


def describe_tables(tables: Iterable[SqlTable]) -> str:
    """The schema as text for a prompt: one table per paragraph, one column per line."""
    blocks: list[str] = []
    for table in tables:
        head = f"{quoted(table.name)} ({table.rows} rows)"
        if table.description:
            head += f": {table.description}"
        lines = [head]
        for column in table.columns:
            unit = f" [{column.unit}]" if column.unit else ""
            lines.append(f"  {quoted(column.name)} {column.type}{unit}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) if blocks else "No tables: fetch data first."
