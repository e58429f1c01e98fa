"""The parser guard on its own: one SELECT over known tables, judged on the syntax tree."""

from __future__ import annotations

import pytest

from xhelio.sql.guard import SqlRejectedError, check_query

TABLES = ["OMNI2_H0_MRG1HR.DST1800", "ace", "events.storms"]


@pytest.mark.parametrize(
    "sql",
    [
        'SELECT * FROM "OMNI2_H0_MRG1HR.DST1800" WHERE DST1800 < -100',
        "SELECT updated_at, created_at FROM ace",
        "SELECT 'DROP TABLE ace; DELETE FROM x' AS note FROM ace",
        "SELECT date_trunc('day', time) AS day, avg(Bz) FROM ace GROUP BY 1 ORDER BY 1",
        "SELECT time_bucket(INTERVAL 1 HOUR, time) AS t, quantile_cont(V, 0.9) FROM ace GROUP BY 1",
        "WITH fast AS (SELECT * FROM ace WHERE V > 600) SELECT count(*) FROM fast",
        "SELECT * FROM ace UNION ALL SELECT * FROM ace EXCEPT SELECT * FROM ace",
        'SELECT a.time FROM ace a JOIN "OMNI2_H0_MRG1HR.DST1800" d USING (time)',
        "SELECT avg(Bz) OVER (ORDER BY time ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM ace",
        "SELECT * FROM (VALUES (1, 'a')) v(n, s)",
        'SELECT s.start, s.min_dst FROM "events.storms" s WHERE s.min_dst < -200',
        "select * from ACE -- a comment saying DROP TABLE",
    ],
)
def test_accepts_ordinary_queries(sql: str) -> None:
    checked = check_query(sql, TABLES)
    assert checked.sql.upper().startswith(("SELECT", "WITH"))


def test_runs_the_checked_tree_with_labels_quoted() -> None:
    checked = check_query("SELECT DST1800 FROM OMNI2_H0_MRG1HR.DST1800 d", TABLES)
    assert checked.tables == ("OMNI2_H0_MRG1HR.DST1800",)
    assert '"OMNI2_H0_MRG1HR.DST1800"' in checked.sql
    assert check_query("SELECT * FROM Ace", TABLES).sql == 'SELECT * FROM "ace"'


@pytest.mark.parametrize(
    ("sql", "said"),
    [
        ("SELECT 1; SELECT 2", "exactly one statement"),
        ("", "empty"),
        ("DROP TABLE ace", "not DROP"),
        ("COPY ace TO 'x.csv'", "not COPY"),
        ("SELECT * FROM read_csv('/etc/passwd')", "read_csv"),
        ("SELECT getenv('HOME')", "getenv"),
        ("SELECT pg_sleep(5)", "pg_sleep"),
        ("SELECT * FROM range(10)", "table functions"),
        ("SELECT * FROM nowhere", 'no table "nowhere"'),
        ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n FROM r) SELECT n FROM r", "recursi"),
        ("SELECT * FROM ace WHERE Bz > ?", "parameters"),
        ("SELECT no_such_function(Bz) FROM ace", "not an allowed function"),
        ("SELECT * FROM", "not valid SQL"),
    ],
)
def test_refuses_by_the_tree_and_says_why(sql: str, said: str) -> None:
    with pytest.raises(SqlRejectedError) as caught:
        check_query(sql, TABLES)
    assert said in caught.value.message
    assert caught.value.layer == "parser guard"


def test_names_the_tables_there_are() -> None:
    with pytest.raises(SqlRejectedError, match='"ace"'):
        check_query("SELECT * FROM dst", TABLES)
