"""Run one checked query on a fresh, locked-down, in-memory DuckDB connection.

Each query gets its own connection holding only the tables it reads (pandas frames or
Arrow tables, scanned in place, never copied to disk). The connection is opened with external
access off (no file, network or Python-variable scans), extensions neither installed nor
loaded, no temporary spill files, a memory limit and a thread count, and its
configuration locked, so the query itself cannot loosen any of it. A timer thread
interrupts it at the time limit. At most `max_rows` rows come back; a larger result is
refused (aggregate, filter or add LIMIT). Every refusal is a `SqlLimitError` naming its
layer. Needs only DuckDB and pyarrow (the child process imports no pandas); imports
`errors` from xhelio.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa

from xhelio.errors import UserError

__all__ = ["SqlExecutionError", "SqlLimitError", "SqlLimits", "connection_config", "run_checked"]


@dataclass(frozen=True)
class SqlLimits:
    """What one query may use: seconds, memory (MB), threads and rows returned."""

    seconds: float = 10.0
    memory_mb: int = 256
    threads: int = 1
    max_rows: int = 200_000


class SqlLimitError(UserError):
    """A query stopped by a layer of the engine (time, memory, access, result size)."""

    def __init__(self, layer: str, message: str) -> None:
        super().__init__(message)
        self.layer = layer


class SqlExecutionError(UserError):
    """The query is allowed but DuckDB could not run it (an unknown column, a type error)."""

    layer = "engine"


def connection_config(limits: SqlLimits) -> dict[str, Any]:
    """The settings every query's connection starts with (then locked)."""
    return {
        "enable_external_access": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
        "allow_unsigned_extensions": False,
        "memory_limit": f"{limits.memory_mb}MB",
        "max_temp_directory_size": "0KB",
        "threads": limits.threads,
        "lock_configuration": True,
    }


def _connect(limits: SqlLimits) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(":memory:", config=connection_config(limits))


def _translate(exc: duckdb.Error, limits: SqlLimits, timed_out: bool) -> UserError:
    """The DuckDB error as a refusal by a named layer, or a plain query error."""
    message = str(exc).split("\n\nLINE", 1)[0].strip()
    if timed_out or isinstance(exc, duckdb.InterruptException):
        return SqlLimitError(
            "time limit",
            f"The query ran longer than {limits.seconds:g} s and was stopped; "
            "filter or aggregate before joining.",
        )
    if isinstance(exc, duckdb.OutOfMemoryException):
        return SqlLimitError(
            "memory limit",
            f"The query needed more than {limits.memory_mb} MB and was stopped; "
            "filter or aggregate first.",
        )
    if isinstance(exc, duckdb.PermissionException):
        return SqlLimitError("external access", f"The query was refused: {message}")
    return SqlExecutionError(f"The query failed: {message}")


def _arrow(result: Any) -> Any:
    """A relation's Arrow result as a `pyarrow.Table` (DuckDB 2 returns a reader, 1.x a table)."""
    return result.read_all() if isinstance(result, pa.RecordBatchReader) else result


def run_checked(sql: str, tables: Mapping[str, Any], limits: SqlLimits) -> Any:
    """Run `sql` (already accepted by the guard) over `tables` under `limits`.

    Args:
        sql: The checked query.
        tables: Name -> pandas DataFrame or Arrow table.
        limits: What the query may use.

    Returns:
        The result as a `pyarrow.Table`.

    Raises:
        SqlLimitError: a limit stopped it (time, memory, access, result size).
        SqlExecutionError: DuckDB could not run it.
    """
    con = _connect(limits)
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        con.interrupt()

    timer = threading.Timer(limits.seconds, stop)
    timer.daemon = True
    try:
        for name, table in tables.items():
            con.register(name, table)
        timer.start()
        frame = _arrow(con.sql(sql).limit(limits.max_rows + 1).arrow())
    except duckdb.Error as exc:
        raise _translate(exc, limits, timed_out.is_set()) from None
    finally:
        timer.cancel()
        con.close()
    if frame.num_rows > limits.max_rows:
        raise SqlLimitError(
            "result cap",
            f"The result has more than {limits.max_rows:,} rows; aggregate, filter or add LIMIT.",
        )
    return frame
