"""Run a checked query in a killable child process (see `sql.worker`).

The tables a query reads go to the child as Arrow IPC files in a private temporary
folder, removed afterwards. The child's own timer interrupts DuckDB at the time limit;
if the query is stuck inside one function call, the parent kills the process a moment
later. Startup (interpreter and imports) has its own, generous allowance, so a busy
machine does not count against the query. Imports `sql.engine` and `sql.tables`.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

import pandas as pd
import pyarrow as pa
import pyarrow.ipc as ipc

from xhelio.sql.engine import SqlExecutionError, SqlLimitError, SqlLimits
from xhelio.sql.tables import SqlTable

__all__ = ["STARTUP_SECONDS", "run_in_child"]

STARTUP_SECONDS = 120.0
"""How long the child may take to start and load the tables before the query runs."""
_KILL_GRACE = 2.0
"""Seconds past the time limit before a query that ignored its interrupt is killed."""


def _read_line(stream: IO[str], deadline: float) -> dict[str, Any] | None:
    """The next JSON line from the child, or None when `deadline` passes first."""
    remaining = deadline - time.monotonic()
    if remaining <= 0 or not select.select([stream], [], [], remaining)[0]:
        return None
    line = stream.readline()
    return json.loads(line) if line.strip() else {"ok": False, "layer": "engine", "message": ""}


def _write_job(folder: Path, sql: str, tables: Mapping[str, SqlTable], limits: SqlLimits) -> None:
    files: dict[str, str] = {}
    for number, (name, table) in enumerate(tables.items()):
        files[name] = f"table{number}.arrow"
        arrow = pa.Table.from_pandas(table.frame, preserve_index=False)
        with ipc.new_file(folder / files[name], arrow.schema) as writer:
            writer.write_table(arrow)
    job = {"sql": sql, "limits": asdict(limits), "tables": files}
    (folder / "job.json").write_text(json.dumps(job), encoding="utf-8")


def _failure(status: dict[str, Any], stderr: str) -> Exception:
    layer = str(status.get("layer") or "engine")
    message = str(status.get("message") or stderr.strip().splitlines()[-1:] or "it failed")
    if layer == "engine":
        return SqlExecutionError(message or "The query failed.")
    return SqlLimitError(layer, message)


def run_in_child(sql: str, tables: Mapping[str, SqlTable], limits: SqlLimits) -> pd.DataFrame:
    """Run `sql` (accepted by the guard) over `tables` in a child process under `limits`.

    Raises:
        SqlLimitError: a limit stopped it (time, memory, access, result size).
        SqlExecutionError: DuckDB could not run it.
    """
    with tempfile.TemporaryDirectory(prefix="xhelio-sql-") as name:
        folder = Path(name)
        _write_job(folder, sql, tables, limits)
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TZ")}
        with subprocess.Popen(
            [sys.executable, "-I", "-m", "xhelio.sql.worker", str(folder)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        ) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            status = _read_line(proc.stdout, time.monotonic() + STARTUP_SECONDS)
            if status is not None and status.get("ready"):
                deadline = time.monotonic() + limits.seconds + _KILL_GRACE
                status = _read_line(proc.stdout, deadline)
            if status is None:
                proc.kill()
                proc.wait()
                raise SqlLimitError(
                    "time limit",
                    f"The query ran longer than {limits.seconds:g} s and was stopped; "
                    "filter or aggregate before joining.",
                )
            proc.wait()
            stderr = proc.stderr.read()
        if proc.returncode != 0 and status.get("ok") is None:
            raise SqlLimitError("memory limit", "The query ran out of memory and was stopped.")
        if not status.get("ok"):
            raise _failure(status, stderr)
        return ipc.open_file(folder / "result.arrow").read_all().to_pandas()
