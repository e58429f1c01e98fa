"""The child process a query runs in, so a runaway query can be killed.

DuckDB checks its interrupt flag and memory limit between vectors, not inside one
function call: `range(0, 1e9)` or `repeat('x', 2e9)` runs for minutes and outside the
memory limit. So every query runs in a short-lived child (`python -I -m
xhelio.sql.worker FOLDER`) with an address-space limit, and the parent kills it at the
time limit. The parent writes the tables it reads as Arrow IPC files and a `job.json`
(sql, limits) into a private temporary folder; the child reads them, runs the query on its
locked-down connection (`engine.run_checked`, which also interrupts itself on time), writes
`result.arrow`. It prints ``{"ready": true}`` when the data is in (the parent's clock
starts then), and then ``{"ok": true}`` or the error's layer and message.
It imports DuckDB and pyarrow, no pandas, to start fast. Imports `sql.engine` from xhelio.
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

import pyarrow.ipc as ipc

from xhelio.sql.engine import SqlExecutionError, SqlLimitError, SqlLimits, run_checked

__all__ = ["main"]

_HEADROOM_MB = 3072
"""Address space the interpreter, numpy, pandas and DuckDB take before any data."""


def _limit_memory(limits: SqlLimits, data_bytes: int) -> None:
    cap = (_HEADROOM_MB + 3 * limits.memory_mb) * 2**20 + 2 * data_bytes
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main(folder: Path) -> dict[str, object]:
    """Run the job in `folder`; return the status line."""
    job = json.loads((folder / "job.json").read_text(encoding="utf-8"))
    limits = SqlLimits(**job["limits"])
    files = {str(name): folder / str(file) for name, file in job["tables"].items()}
    _limit_memory(limits, sum(f.stat().st_size for f in files.values()))
    tables = {name: ipc.open_file(path).read_all() for name, path in files.items()}
    print(json.dumps({"ready": True}), flush=True)
    try:
        frame = run_checked(str(job["sql"]), tables, limits)
    except (SqlLimitError, SqlExecutionError) as exc:
        return {"ok": False, "layer": exc.layer, "message": exc.message}
    except MemoryError:
        return {"ok": False, "layer": "memory limit", "message": "out of memory"}
    with ipc.new_file(folder / "result.arrow", frame.schema) as writer:
        writer.write_table(frame)
    return {"ok": True}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))), flush=True)
