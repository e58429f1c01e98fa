"""SQL over the data of a session: DuckDB behind a parser guard and engine limits.

`tables` turns DataStore entries into typed tables (a `time` column and one column per
parameter or component, with units), `guard` accepts only one read-only query over those
tables (checked on the sqlglot syntax tree), `engine` runs it on a fresh, locked-down
in-memory DuckDB connection under memory, thread, time and result-size limits, and `query`
ties them together and turns the result into a new entry. Imports `data` and `errors`.
"""
