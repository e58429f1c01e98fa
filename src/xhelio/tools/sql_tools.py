"""SQL tools: `query_data` (one guarded SELECT over the entries) and `describe_tables`.

`describe_tables` shows the entries as tables (name, typed columns, units) to write a
query against.

Every entry is a table named by its label (quoted when it holds a dot:
``"OMNI2_H0_MRG1HR.DST1800"``) with a `time` column (UTC) and one column per parameter or
component; event lists stored as entries are tables too. The result becomes a new entry,
so it plots, exports and replays like any other (see docs/sql.md and `xhelio.sql`).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from pydantic import Field

from xhelio.errors import UserError
from xhelio.sql.query import query_entries, result_entry
from xhelio.sql.tables import describe_tables as schema_text
from xhelio.sql.tables import session_tables
from xhelio.tools.context import ToolContext
from xhelio.tools.registry import Produces, ToolOutput, tool
from xhelio.tools.results import EntrySummary

__all__ = ["PREVIEW_ROWS", "SQL_TOOLS", "SqlQueryResult", "SqlTables"]

PREVIEW_ROWS = 20
"""Rows of a result shown in the tool's answer (the whole result is the new entry)."""
_LABEL = re.compile(r"^[A-Za-z_][\w.\-]*$")


class SqlQueryResult(EntrySummary):
    """A query's result entry: its label, columns, units and rows, the SQL that ran."""

    sql: str
    tables: list[str] = Field(default_factory=list[str])
    is_timeseries: bool = False
    preview: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])


class SqlTables(ToolOutput):
    """The session's tables: per table its name, columns with type and unit, rows, span."""

    tables: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    schema_text: str = ""


def query_label(sql: str) -> str:
    """The default label of a query's result: the same SQL always gives the same label.

    A saved pipeline replayed for another time range then replaces its result instead of
    adding another one beside it.
    """
    canonical = " ".join(sql.split()).lower()
    return f"query_{hashlib.sha256(canonical.encode()).hexdigest()[:8]}"


def _preview(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {str(k): (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in r.items()}
        for r in records
    ]


@tool(
    "data_ops_compute",
    phase="compute",
    produces=Produces(result_field="label"),
    mentions=("sql",),
    result=SqlQueryResult,
    public=True,
)
def query_data(ctx: ToolContext, sql: str, output_label: str | None = None) -> dict[str, Any]:
    """Run one SQL SELECT (DuckDB dialect) over the data in memory; the result is a new entry.

    Every stored entry is a table named by its label, in double quotes when it holds a dot
    ("OMNI2_H0_MRG1HR.DST1800"), with a `time` column (UTC timestamp) and one column per
    parameter or component; call describe_tables for names, types and units. Only one
    read-only SELECT/WITH/UNION is accepted: no files, no system or table functions. Use
    date_trunc('day', time) or time_bucket(INTERVAL 1 HOUR, time) to group by time.

    Args:
        sql: One SELECT statement, e.g. SELECT date_trunc('day', time) AS day,
            min(DST1800) AS dst FROM "OMNI2_H0_MRG1HR.DST1800" GROUP BY 1 HAVING dst < -100.
        output_label: Label of the result entry (default query_<hash of the SQL>).
    """
    label = (output_label or "").strip() or query_label(sql)
    if not _LABEL.match(label):
        raise UserError(
            f"'{label}' cannot be a label: use letters, digits, '_', '.' or '-', "
            "starting with a letter."
        )
    entries = list(ctx.store)
    result = query_entries(entries, sql)
    entry = result_entry(result, label, entries)
    ctx.store.put(entry)
    preview = result.frame.head(PREVIEW_ROWS).to_dict(orient="records")
    return {
        "label": label,
        "columns": entry.columns,
        "units": entry.units,
        "points": entry.points,
        "sql": result.sql,
        "tables": list(result.tables),
        "is_timeseries": entry.is_timeseries,
        "preview": _preview(preview),
        "notes": (
            [f"Showing {PREVIEW_ROWS} of {entry.points} rows; all are in '{label}'."]
            if entry.points > PREVIEW_ROWS
            else []
        ),
    }


@tool("data_ops_compute", phase="discover", result=SqlTables, public=True)
def describe_tables(ctx: ToolContext) -> dict[str, Any]:
    """The data in memory as SQL tables: names, typed columns with units, rows and time span."""
    tables = session_tables(ctx.store)
    return {
        "tables": [t.describe() for t in tables.values()],
        "schema_text": schema_text(tables.values()),
    }


SQL_TOOLS = [query_data, describe_tables]
