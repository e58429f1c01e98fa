"""The hostile-SQL corpus: attempts to read, write, reach out, or hang, and who stops them.

Each attempt is (id, sql, layers): the layers that may stop it ("parser guard", "external
access", "time limit", "memory limit", "result cap", "engine"), or () for an attempt that
is harmless as written (a keyword inside a string or comment) and must run, returning
only session data. Tables of the test session: "OMNI2_H0_MRG1HR.DST1800" (hourly, a
year), ace (Bz, V; hourly, a year) and "events.storms" (an event list).
"""

from __future__ import annotations

GUARD = ("parser guard",)
HEAVY = ("time limit", "memory limit", "result cap")

ATTEMPTS: list[tuple[str, str, tuple[str, ...]]] = [
    # stacked statements
    ("stacked drop", "SELECT 1; DROP TABLE ace", GUARD),
    ("stacked read", "SELECT * FROM ace; SELECT * FROM read_csv('/etc/passwd')", GUARD),
    ("stacked attach", "SELECT 1; ATTACH '/tmp/x.db'", GUARD),
    ("stacked after comment", "SELECT 1 /* ; */ ; COPY ace TO '/tmp/x.csv'", GUARD),
    ("stacked after line comment", "SELECT 1 -- hidden\n; INSTALL httpfs", GUARD),
    ("comment before pragma", "/* SELECT */ PRAGMA database_list", GUARD),
    ("comment hiding drop", "SELECT Bz FROM ace /* ; DROP TABLE ace */", ()),
    ("line comment hiding copy", "SELECT Bz FROM ace -- ; COPY ace TO '/tmp/x.csv'", ()),
    # DML and DDL
    ("drop", "DROP TABLE ace", GUARD),
    ("delete", "DELETE FROM ace", GUARD),
    ("update", "UPDATE ace SET Bz = 0", GUARD),
    ("insert", "INSERT INTO ace VALUES (1, 2, 3)", GUARD),
    ("create as", "CREATE TABLE x AS SELECT * FROM ace", GUARD),
    ("create macro", "CREATE MACRO m() AS 1", GUARD),
    ("alter", "ALTER TABLE ace RENAME TO b", GUARD),
    ("with delete", "WITH x AS (SELECT 1) DELETE FROM ace", GUARD),
    ("select into", "SELECT * INTO newtable FROM ace", GUARD),
    # files and network
    ("copy to file", "COPY ace TO '/tmp/out.csv'", GUARD),
    ("copy query", "COPY (SELECT 1) TO '/tmp/out.parquet' (FORMAT parquet)", GUARD),
    ("read_csv", "SELECT * FROM read_csv('/etc/passwd')", GUARD),
    ("read_csv_auto", "SELECT * FROM read_csv_auto('/etc/passwd')", GUARD),
    ("read_parquet s3", "SELECT * FROM read_parquet('s3://bucket/x.parquet')", GUARD),
    ("read_json http", "SELECT * FROM read_json('https://example.com/x.json')", GUARD),
    ("read_text", "SELECT * FROM read_text('/etc/hostname')", GUARD),
    ("read_blob", "SELECT * FROM read_blob('/etc/hostname')", GUARD),
    ("file as table", "SELECT * FROM '/etc/passwd'", GUARD),
    ("url as table", "SELECT * FROM 'https://example.com/data.csv'", GUARD),
    ("glob", "SELECT * FROM glob('/*')", GUARD),
    (
        "read in subquery",
        "SELECT * FROM ace WHERE Bz > (SELECT count(*) FROM read_csv('/x'))",
        GUARD,
    ),
    ("read in join", "SELECT * FROM ace a JOIN read_csv('/etc/passwd') b ON true", GUARD),
    ("read in union", "SELECT 'a' UNION SELECT * FROM read_text('/etc/passwd')", GUARD),
    ("parquet_scan", "SELECT * FROM parquet_scan('/x.parquet')", GUARD),
    ("sniff_csv", "SELECT * FROM sniff_csv('/etc/passwd')", GUARD),
    # system
    ("getenv", "SELECT getenv('HOME')", GUARD),
    ("getenv nested", "SELECT (SELECT getenv('HOME')) AS h", GUARD),
    ("current_setting", "SELECT current_setting('memory_limit')", GUARD),
    ("duckdb_settings", "SELECT * FROM duckdb_settings()", GUARD),
    ("duckdb_extensions", "SELECT * FROM duckdb_extensions()", GUARD),
    ("version", "SELECT version()", GUARD),
    ("information_schema", "SELECT * FROM information_schema.tables", GUARD),
    ("pg_catalog", "SELECT * FROM pg_catalog.pg_class", GUARD),
    ("sqlite_master", "SELECT * FROM sqlite_master", GUARD),
    ("qualified session table", "SELECT * FROM memory.main.ace", GUARD),
    ("pragma", "PRAGMA database_list", GUARD),
    ("set memory", "SET memory_limit = '100GB'", GUARD),
    ("set external access", "SET enable_external_access = true", GUARD),
    ("reset", "RESET ALL", GUARD),
    ("install", "INSTALL httpfs", GUARD),
    ("load", "LOAD httpfs", GUARD),
    ("extension function", "SELECT ST_Point(1, 2)", ("engine",)),  # not autoloaded
    ("attach", "ATTACH 'x.db' AS x", GUARD),
    ("detach", "DETACH x", GUARD),
    ("call", "CALL pragma_version()", GUARD),
    ("export database", "EXPORT DATABASE '/tmp/x'", GUARD),
    ("query()", "SELECT * FROM query('SELECT 1')", GUARD),
    ("query_table()", "SELECT * FROM query_table('ace')", GUARD),
    ("use", "USE x", GUARD),
    ("checkpoint", "CHECKPOINT", GUARD),
    ("parameter", "SELECT * FROM ace WHERE Bz > ?", GUARD),
    # sleeping
    ("pg_sleep", "SELECT pg_sleep(100)", GUARD),
    ("sleep_ms", "SELECT sleep_ms(100000)", GUARD),
    # table functions
    ("range table", "SELECT * FROM range(1000000000)", GUARD),
    ("generate_series table", "SELECT * FROM generate_series(1, 1000000000)", GUARD),
    ("lateral range", "SELECT count(*) FROM ace, LATERAL range(1000000)", GUARD),
    # string tricks
    ("quote escape", "SELECT Bz FROM ace WHERE 'x' = 'x''; DROP TABLE ace; --'", ()),
    ("keywords in a string", "SELECT 'DROP TABLE ace; COPY ace TO ''/tmp/x''' AS s", ()),
    ("dollar string", "SELECT $$; DROP TABLE ace$$ AS s", ()),
    ("identifier with statement", 'SELECT * FROM "ace""; DROP TABLE ace; --"', GUARD),
    ("column named like a keyword", 'SELECT Bz AS "DROP", Bz AS updated_at FROM ace', ()),
    # unicode tricks
    ("fullwidth semicolon", "SELECT 1\uff1bDROP TABLE ace", GUARD),
    ("fullwidth table name", "SELECT * FROM \uff41\uff43\uff45", GUARD),
    ("zero-width space", "SELECT * FROM ace\u200b", GUARD),
    ("fullwidth keyword", "\uff24\uff32\uff2f\uff30 TABLE ace", GUARD),
    ("cyrillic getenv", "SELECT g\u0435tenv('HOME')", GUARD),
    ("nul in a path", "SELECT * FROM read_csv('/etc/pass\u0000wd')", GUARD),
    # recursive CTE bombs
    (
        "recursive counter",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
        GUARD,
    ),
    (
        "recursive doubling",
        "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) "
        "SELECT max(length(s)) FROM r",
        GUARD,
    ),
    # huge cross joins and memory bombs
    ("triple cross join", "SELECT count(*) FROM ace a, ace b, ace c", HEAVY),
    ("cross join rows", "SELECT * FROM ace a CROSS JOIN ace b", HEAVY),
    ("giant list", "SELECT len(range(0, 1000000000)) AS n", HEAVY),
    ("giant string", "SELECT length(repeat('x', 2000000000)) AS n", HEAVY),
]
