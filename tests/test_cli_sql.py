"""`xhelio sql`: a query over a saved session prints the SQL and table and writes the file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from sql_support import DST, session_entries
from xhelio.cli.main import app
from xhelio.tools.workspace import open_workspace

runner = CliRunner(env={"COLUMNS": "200"})


def _saved_session() -> str:
    workspace = open_workspace()
    for entry in session_entries():
        workspace.session.store.put(entry)
    workspace.save()
    workspace.close()
    return workspace.session.id


def test_sql_prints_the_table_and_writes_csv(tmp_path: Path) -> None:
    session = _saved_session()
    out = tmp_path / "storms.csv"
    sql = (
        f"SELECT date_trunc('day', time) AS day, min(DST1800) AS dst FROM {DST} "
        "GROUP BY 1 HAVING min(DST1800) < -100 ORDER BY 1"
    )
    result = runner.invoke(app, ["sql", sql, "--session", session, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f'FROM "{DST}"' in result.output
    assert "2015-03-17" in result.output and "dst (nT)" in result.output
    written = pd.read_csv(out, comment="#")
    assert len(written) == 3


def test_sql_errors_are_one_clear_line() -> None:
    session = _saved_session()
    result = runner.invoke(app, ["sql", "DROP TABLE ace", "--session", session])
    assert result.exit_code != 0
    assert "only SELECT queries are allowed" in result.output
    assert "Traceback" not in result.output
    bad_out = runner.invoke(app, ["sql", "SELECT 1 AS n", "-s", session, "--out", "x.xlsx"])
    assert bad_out.exit_code != 0 and ".csv, .parquet or .nc" in bad_out.output
