"""One SQL query over a session's entries: tables, guard, child process, result entry.

`query_entries` builds the tables the query reads, has the guard check it, runs the
checked SQL in a killable child under `SqlLimits`, and returns the result frame with the
unit of every column it can trace (a column, or an average/min/max/sum/median/quantile of
one column, keeps that column's unit; an alias of it too). `result_entry` turns the
result into a DataStore entry: a `time` column of timestamps (else a first column of
timestamps, such as a day) becomes its UTC time index,
so a selection of a timeseries stays a plottable timeseries; anything else stays a table.
Imports `sql.*`, `data` and `errors` from xhelio.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd
import sqlglot
from sqlglot import exp

from xhelio.data.entry import DataEntry
from xhelio.sql.child import run_in_child
from xhelio.sql.engine import SqlLimits
from xhelio.sql.guard import check_query
from xhelio.sql.tables import TIME, SqlTable, session_tables

__all__ = ["SqlResult", "query_entries", "result_entry"]

_UNIT_KEEPING = (
    exp.Avg,
    exp.Min,
    exp.Max,
    exp.Sum,
    exp.Median,
    exp.Quantile,
    exp.First,
    exp.Last,
    exp.AnyValue,
    exp.Stddev,
    exp.StddevPop,
    exp.StddevSamp,
    exp.Round,
    exp.Abs,
    exp.Paren,
)
"""Expressions whose result has the unit of their one input column."""


@dataclass
class SqlResult:
    """A query's result: the frame, the SQL that ran, the tables read, column units."""

    frame: pd.DataFrame
    sql: str
    tables: tuple[str, ...]
    units: dict[str, str] = field(default_factory=dict[str, str])


def _traced_unit(node: exp.Expr, units: dict[str, str]) -> str:
    while isinstance(node, (exp.Alias, *_UNIT_KEEPING)) and node.this is not None:
        node = node.this
    if isinstance(node, exp.Column):
        return units.get(node.name.lower(), "")
    return ""


def _units(sql: str, tables: Iterable[SqlTable], frame: pd.DataFrame) -> dict[str, str]:
    """The unit of each result column that keeps one input column's meaning.

    Selects are read innermost first, so a CTE's or subquery's output names carry
    their unit up to the outer query.
    """
    known: dict[str, str] = {}
    for table in tables:
        for column in table.columns:
            if column.unit:
                known.setdefault(column.name.lower(), column.unit)
    tree = sqlglot.parse_one(sql, read="duckdb")
    for select in reversed(list(tree.find_all(exp.Select))):
        for projection in select.expressions:
            unit = _traced_unit(projection, known)
            if unit:
                known[projection.alias_or_name.lower()] = unit
    found = {str(c): known.get(str(c).lower(), "") for c in frame.columns}
    return {k: v for k, v in found.items() if v}


def query_entries(
    entries: Iterable[DataEntry], sql: str, limits: SqlLimits | None = None
) -> SqlResult:
    """Run `sql` over `entries` (each a table named by its label) under `limits`.

    Raises:
        SqlRejectedError: the guard refused it.
        SqlLimitError: a limit of the engine or child stopped it.
        SqlExecutionError: DuckDB could not run it (unknown column, type error).
    """
    by_label = {entry.label: entry for entry in entries}
    checked = check_query(sql, list(by_label))
    tables = session_tables(by_label[label] for label in checked.tables)
    frame = run_in_child(checked.sql, tables, limits or SqlLimits())
    units = _units(checked.sql, tables.values(), frame)
    return SqlResult(frame, checked.sql, checked.tables, units)


def result_entry(result: SqlResult, label: str, sources: Iterable[DataEntry]) -> DataEntry:
    """The result as a new entry: a timeseries when its time column holds timestamps.

    The time column is `time`, else the first column (a day, say) when others follow.
    """
    frame = result.frame
    first = str(frame.columns[0]) if len(frame.columns) > 1 else None
    time = TIME if TIME in frame.columns else first
    is_timeseries = time is not None and frame[time].dtype.kind == "M"
    if is_timeseries:
        frame = frame.set_index(time)
        frame.index = pd.DatetimeIndex(frame.index).tz_localize("UTC")
        frame.index.name = None
    frame.columns = [str(c) for c in frame.columns]
    units = {c: result.units.get(c, "") for c in frame.columns}
    entry = DataEntry(
        label,
        frame,
        units,
        f"SQL: {result.sql}",
        is_timeseries=is_timeseries,
        meta={"notes": [f"SQL: {result.sql}"], "sql": result.sql},
    )
    cited = [c for s in sources if s.label in result.tables for c in s.citations]
    if cited:
        entry.meta["citations"] = list({repr(sorted(c.items())): c for c in cited}.values())
    return entry
