"""The parser guard: one read-only SELECT over known tables, judged on the syntax tree.

The query is parsed with sqlglot (DuckDB dialect) and accepted only when it is exactly one
SELECT (with its WITH, or a UNION/INTERSECT/EXCEPT of selects) whose every table source is
a session table, a CTE, a subquery, VALUES or UNNEST, and whose every function is an
ordinary scalar, aggregate or window function of DuckDB's own catalog. Everything else is
refused by what it *is* in the tree, never by words in the text: a column `updated_at` or
a string 'DROP TABLE' passes, while a stacked statement, DML/DDL, COPY/ATTACH/PRAGMA/SET/
INSTALL/LOAD, a table function (`read_csv`, `glob`, `range`, `query`), a file read as a
table name, a system function (`getenv`, `current_setting`, `pg_sleep`) or a recursive
CTE is refused. What runs is the tree written back as SQL, so the engine executes exactly
what was checked; a dotted label written bare (`OMNI.DST`) is written back quoted.
Imports `errors` from xhelio.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from xhelio.errors import UserError

__all__ = ["CheckedQuery", "SqlRejectedError", "check_query", "engine_functions"]

logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its "falling back to Command" notes

_QUERY_ROOTS = (exp.Select, exp.Union, exp.Intersect, exp.Except)
_SOURCES_OK = (exp.Subquery, exp.Values, exp.Unnest)
_FUNCTION_KINDS = ("scalar", "aggregate", "macro", "window")

_SYSTEM_FUNCTIONS = re.compile(
    r"^(?:getenv|current_setting|current_query\w*|current_connection_id|current_transaction_id"
    r"|current_(?:user|role|database|catalog|schemas?)|session_user|user|version|stats"
    r"|nextval|currval|setseed|txid_\w+|pg_\w+|has_\w+_privilege|in_search_path"
    r"|inet_\w+|\w*sleep\w*|(?:col|obj|shobj)_description|parse_duckdb_log_message"
    r"|duckdb_\w+|read_\w+|glob|error|format_pg_type|map_\w*pg_oid)$",
    re.IGNORECASE,
)
"""DuckDB functions that read the system, sleep or change state: never allowed."""

_SYSTEM_CLASSES = (
    exp.ReadCSV,
    exp.ReadParquet,
    exp.ToFile,
    exp.NextValueFor,
    exp.SessionUser,
    exp.CurrentUser,
    exp.CurrentDatabase,
    exp.CurrentSchema,
    exp.CurrentSchemas,
    exp.CurrentCatalog,
    exp.CurrentVersion,
    exp.CurrentRole,
)
"""sqlglot's own function classes that read files or the system."""

_STATEMENT_WORDS: dict[type[exp.Expr], str] = {
    exp.Insert: "INSERT",
    exp.Update: "UPDATE",
    exp.Delete: "DELETE",
    exp.Merge: "MERGE",
    exp.Create: "CREATE",
    exp.Drop: "DROP",
    exp.Alter: "ALTER",
    exp.Copy: "COPY",
    exp.Attach: "ATTACH",
    exp.Detach: "DETACH",
    exp.Set: "SET",
    exp.Pragma: "PRAGMA",
    exp.Use: "USE",
    exp.Install: "INSTALL",
    exp.Describe: "DESCRIBE",
    exp.Show: "SHOW",
    exp.Summarize: "SUMMARIZE",
    exp.Transaction: "a transaction",
    exp.Commit: "COMMIT",
    exp.Rollback: "ROLLBACK",
    exp.Command: "a command",
    exp.Into: "SELECT INTO",
}
"""Statements (and clauses) refused wherever they sit in the tree, with their name."""


class SqlRejectedError(UserError):
    """The guard refused a query; `reason` says what, in the user's terms."""

    layer = "parser guard"

    def __init__(self, reason: str) -> None:
        super().__init__(f"Query refused: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class CheckedQuery:
    """An accepted query: the SQL to run (the checked tree) and the tables it reads."""

    sql: str
    tables: tuple[str, ...]


@cache
def engine_functions() -> frozenset[str]:
    """DuckDB's scalar, aggregate, macro and window functions, less the system ones."""
    with duckdb.connect(":memory:", config={"enable_external_access": False}) as con:
        rows = con.execute(
            "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type IN "
            f"({', '.join(repr(k) for k in _FUNCTION_KINDS)})"
        ).fetchall()
    return frozenset(str(r[0]).lower() for r in rows if not _SYSTEM_FUNCTIONS.match(str(r[0])))


def _parse(sql: str) -> exp.Expr:
    if not sql.strip():
        raise SqlRejectedError("the query is empty.")
    try:
        statements = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
    except (ParseError, TokenError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else "syntax error"
        raise SqlRejectedError(f"it is not valid SQL ({first}).") from None
    if len(statements) != 1:
        raise SqlRejectedError(f"send exactly one statement (this has {len(statements)}).")
    return statements[0]


def _check_statements(tree: exp.Expr) -> None:
    if not isinstance(tree, _QUERY_ROOTS):
        word = _STATEMENT_WORDS.get(type(tree), type(tree).__name__.upper())
        raise SqlRejectedError(f"only SELECT queries are allowed, not {word}.")
    for node in tree.walk():
        word = _STATEMENT_WORDS.get(type(node))
        if word is not None:
            raise SqlRejectedError(f"{word} is not allowed inside a query.")
        if isinstance(node, exp.With) and node.args.get("recursive"):
            raise SqlRejectedError("recursive queries (WITH RECURSIVE) are not allowed.")
        if isinstance(node, exp.Placeholder | exp.Parameter):
            raise SqlRejectedError("parameters ('?', '$1') are not supported; write values.")


def _function_name(node: exp.Func) -> str:
    return node.name if isinstance(node, exp.Anonymous) else node.sql_name()


def _check_functions(tree: exp.Expr) -> None:
    allowed = engine_functions()
    for node in tree.find_all(exp.Func):
        name = _function_name(node)
        if isinstance(node, _SYSTEM_CLASSES) or _SYSTEM_FUNCTIONS.match(name):
            raise SqlRejectedError(f"the function {name.lower()}() is not allowed.")
        if isinstance(node, exp.Anonymous) and name.lower() not in allowed:
            raise SqlRejectedError(
                f"{name}() is not an allowed function (file, system and table functions "
                "are refused; use ordinary scalar and aggregate functions)."
            )


def _cte_names(tree: exp.Expr) -> set[str]:
    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


def _resolve(table: exp.Table, known: dict[str, str], ctes: set[str]) -> str | None:
    """The session label `table` names (None for a CTE); refuse anything else."""
    if not isinstance(table.this, exp.Identifier):
        what = table.this.sql(dialect="duckdb")[:60] if table.this else "?"
        raise SqlRejectedError(f"table functions are not allowed ({what}).")
    parts = [p.name for p in table.parts]
    written = ".".join(parts)
    if len(parts) == 1 and written.lower() in ctes:
        return None
    label = known.get(written.lower())
    if label is None:
        shown = ", ".join(f'"{k}"' for k in sorted(known.values())) or "none (fetch data first)"
        raise SqlRejectedError(f'there is no table "{written}". Tables: {shown}.')
    return label


def _check_sources(tree: exp.Expr, labels: Collection[str]) -> list[str]:
    """Every table source is a known table, CTE, subquery, VALUES or UNNEST; rewrite labels."""
    known = {label.lower(): label for label in labels}
    ctes = _cte_names(tree)
    used: list[str] = []
    for node in list(tree.find_all(exp.Table)):
        label = _resolve(node, known, ctes)
        if label is None:
            continue
        used.append(label)
        alias = node.args.get("alias")
        replacement = exp.Table(this=exp.to_identifier(label, quoted=True))
        if alias is not None:
            replacement.set("alias", alias)
        for key in ("pivots", "joins", "laterals", "sample"):
            if node.args.get(key):
                replacement.set(key, node.args[key])
        node.replace(replacement)
    for node in tree.find_all(exp.From, exp.Join, exp.Lateral):
        source = node.this
        if isinstance(source, exp.Lateral):
            source = source.this
        allowed = exp.Subquery if isinstance(node, exp.Lateral) else (exp.Table, *_SOURCES_OK)
        if not isinstance(source, allowed):
            kind = type(source).__name__ if source is not None else "?"
            raise SqlRejectedError(f"this table source is not allowed ({kind}).")
    return list(dict.fromkeys(used))


def check_query(sql: str, tables: Collection[str]) -> CheckedQuery:
    """Accept `sql` if it is one read-only query over `tables`; raise `SqlRejectedError`.

    Args:
        sql: The query as written.
        tables: The session's table names (labels).

    Returns:
        The SQL to run (the checked tree written back) and the tables it reads.
    """
    tree = _parse(sql)
    _check_statements(tree)
    _check_functions(tree)
    used = _check_sources(tree, tables)
    return CheckedQuery(tree.sql(dialect="duckdb"), tuple(used))
