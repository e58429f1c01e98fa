"""The SQL specialist: answers questions about data in memory with one guarded query.

It sees the schema (every entry as a table: quoted label, typed columns with units) in its
request, and has `describe_tables`, `query_data` and `list_fetched_data`. A run whose
queries all failed goes back to the model with the error, at most `MAX_RETRIES` times
(Bos-AI's retry with error feedback); after that the user is told in words what failed.
Imports `agents.subagent`, `agents.guard` and `sql.tables`; never the orchestrator.
"""

from __future__ import annotations

import threading

from xhelio.agents.guard import GuardLimits
from xhelio.agents.subagent import AgentEnv, AgentMode, DelegationResult, SubAgent
from xhelio.sql.tables import describe_tables, session_tables

__all__ = ["MAX_RETRIES", "SQL_LIMITS", "SQL_PROMPT", "SqlAgent"]

MAX_RETRIES = 2
"""Times a failed query goes back to the model with its error before the user is told."""
SQL_LIMITS = GuardLimits(max_calls=6, max_iterations=4)

SQL_PROMPT = """\
You answer questions about data already in memory with one SQL query (DuckDB dialect) \
through query_data. Each entry is a table named by its label: write it in double quotes \
when it holds a dot ("OMNI2_H0_MRG1HR.DST1800"). Every timeseries table has a `time` \
column (UTC timestamp) and one column per parameter or component. Group by time with \
date_trunc('day', time) or time_bucket(INTERVAL 1 HOUR, time); per period, "below X" \
means min(col) < X and "above X" means max(col) > X; join tables on the period. Only \
one SELECT/WITH query is allowed: no files, no system or table functions. Give the \
result a short output_label. Reply with the label, the row count and the answer in one \
or two sentences; never invent values."""


def _schema_note(env: AgentEnv) -> str:
    tables = session_tables(env.workspace.session.store)
    return "Tables (name, columns with type [unit]):\n" + describe_tables(tables.values())


class SqlAgent:
    """Query data in memory with SQL; a failed query is retried with its error."""

    name = "sql"

    def __init__(self, env: AgentEnv) -> None:
        self.env = env
        tools = [env.tool(n) for n in ("query_data", "describe_tables", "list_fetched_data")]
        self.agent = SubAgent(env, "sql", SQL_PROMPT, tools)

    async def query(
        self, request: str, cancel: threading.Event, mode: AgentMode = "conversational"
    ) -> DelegationResult:
        """Answer `request` with a query; feed a failure back up to `MAX_RETRIES` times."""
        prompt = f"{request.strip()}\n\n{_schema_note(self.env)}"
        errors: list[str] = []
        tools: list[str] = []
        for _ in range(MAX_RETRIES + 1):
            done = await self.agent.arun(prompt, cancel, mode, limits=SQL_LIMITS)
            tools += done.tools
            if done.cancelled or (done.labels and not done.failed):
                done.tools = tools
                return done
            error = (done.errors or [done.text or "no query was run"])[-1]
            errors.append(error)
            prompt = (
                f"{request.strip()}\n\nYour previous query failed: {error}\n"
                f"Fix the query and call query_data again.\n\n{_schema_note(self.env)}"
            )
        said = (
            f"I could not answer this with SQL after {len(errors)} attempts. "
            f"The last error was: {errors[-1]}"
        )
        return DelegationResult(self.name, said, failed=True, errors=errors, tools=tools)
