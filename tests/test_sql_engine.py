"""The engine's layers on their own, with the parser guard bypassed.

Each test hands `run_checked` (in process) or `run_in_child` SQL the guard would refuse,
to show that the layer below stops it by itself.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from sql_support import ace_entry
from xhelio.sql.child import run_in_child
from xhelio.sql.engine import SqlExecutionError, SqlLimitError, SqlLimits, run_checked
from xhelio.sql.tables import session_tables

TABLES = {name: table.frame for name, table in session_tables([ace_entry()]).items()}
FAST = SqlLimits(seconds=2)


def test_no_file_is_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n42\n")
    with pytest.raises(SqlLimitError) as caught:
        run_checked(f"SELECT * FROM read_csv('{secret}')", TABLES, FAST)
    assert caught.value.layer == "external access"


def test_no_file_is_written(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    with pytest.raises(SqlLimitError) as caught:
        run_checked(f"COPY (SELECT 1) TO '{target}'", TABLES, FAST)
    assert caught.value.layer == "external access"
    assert not target.exists()


def test_extensions_are_neither_installed_nor_loaded() -> None:
    for sql in ("INSTALL httpfs", "LOAD httpfs", "SELECT * FROM read_json('https://x/y')"):
        with pytest.raises(SqlLimitError) as caught:
            run_checked(sql, TABLES, FAST)
        assert caught.value.layer == "external access"


def test_configuration_is_locked() -> None:
    for sql in ("SET enable_external_access = true", "SET memory_limit = '64GB'"):
        with pytest.raises(SqlExecutionError, match="locked"):
            run_checked(sql, TABLES, FAST)


def test_each_query_gets_a_fresh_connection() -> None:
    run_checked("CREATE TABLE kept AS SELECT 1 AS n", TABLES, FAST)
    with pytest.raises(SqlExecutionError, match="kept"):
        run_checked("SELECT * FROM kept", TABLES, FAST)


def test_the_connection_holds_only_the_tables_given() -> None:
    names = run_checked("SELECT table_name FROM duckdb_tables()", TABLES, FAST)
    views = run_checked("SELECT view_name FROM duckdb_views() WHERE NOT internal", TABLES, FAST)
    assert [*names["table_name"].to_pylist(), *views["view_name"].to_pylist()] == ["ace"]


def test_a_long_query_is_interrupted() -> None:
    with pytest.raises(SqlLimitError) as caught:
        run_checked("SELECT count(*) FROM ace a, ace b, ace c", TABLES, SqlLimits(seconds=0.5))
    assert caught.value.layer == "time limit"


def test_a_large_result_is_refused() -> None:
    with pytest.raises(SqlLimitError) as caught:
        run_checked("SELECT * FROM ace a, ace b", TABLES, SqlLimits(max_rows=1000))
    assert caught.value.layer == "result cap"
    assert "1,000 rows" in caught.value.message


def test_memory_is_capped() -> None:
    sql = "SELECT a.Bz, b.V FROM ace a, ace b ORDER BY a.Bz, b.V"
    with pytest.raises(SqlLimitError) as caught:
        run_checked(sql, TABLES, SqlLimits(seconds=60, memory_mb=16))
    assert caught.value.layer in {"memory limit", "result cap"}


def test_a_query_stuck_in_one_call_is_killed() -> None:
    # DuckDB checks its interrupt between vectors: a billion-element list ignores it.
    with pytest.raises(SqlLimitError) as caught:
        run_in_child("SELECT len(range(0, 1000000000)) AS n", {}, SqlLimits(seconds=1))
    assert caught.value.layer in {"time limit", "memory limit"}


def test_the_child_imports_no_pandas() -> None:
    import subprocess
    import sys

    code = "import sys, xhelio.sql.worker; print('pandas' in sys.modules)"
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "False"


def test_the_child_returns_typed_results() -> None:
    frame = run_in_child(
        "SELECT date_trunc('day', time) AS day, min(Bz) AS bz FROM ace GROUP BY 1 ORDER BY 1",
        session_tables([ace_entry()]),
        FAST,
    )
    assert len(frame) == 365
    assert frame["day"].dtype.kind == "M"
    assert frame["day"].iloc[0] == pd.Timestamp("2015-01-01")
    assert frame["bz"].iloc[0] == pytest.approx(-5.0)
