"""The SQL specialist with scripted models.

It is schema-aware, a failed query is retried with its error, the user is told in words
after the retries, and it is reached by delegation and by the planner.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from agent_script import Script, scripted_config, user_prompts
from sql_support import DST, session_entries
from xhelio.agents.models import ModelRouter
from xhelio.agents.orchestrator import AgentAssistant
from xhelio.agents.planning.loop import agent_of
from xhelio.agents.planning.routing import decide_agents
from xhelio.agents.sql_agent import MAX_RETRIES, SqlAgent
from xhelio.agents.subagent import AgentEnv
from xhelio.agents.toolbridge import run_coroutine
from xhelio.tools.sql_tools import query_label
from xhelio.tools.workspace import Workspace, open_workspace

GOOD = (
    "WITH d AS (SELECT date_trunc('day', time) AS day, min(DST1800) AS dst "
    f"FROM \"{DST}\" GROUP BY 1), v AS (SELECT date_trunc('day', time) AS day, max(V) AS v "
    "FROM ace GROUP BY 1) SELECT day, dst, v FROM d JOIN v USING (day) "
    "WHERE dst < -100 AND v > 600 ORDER BY day"
)
QUESTION = "which days in 2015 had Dst below -100 and solar wind faster than 600 km/s"


@pytest.fixture
def workspace() -> Iterator[Workspace]:
    ws = open_workspace(ephemeral=True)
    for entry in session_entries():
        ws.session.store.put(entry)
    yield ws
    ws.close()


def _agent(workspace: Workspace, script: Script) -> SqlAgent:
    return SqlAgent(AgentEnv(workspace, ModelRouter(scripted_config(), build=script.build)))


def test_a_failed_query_goes_back_with_its_error(workspace: Workspace) -> None:
    script = Script(
        {
            "sql": [
                [("query_data", {"sql": f"SELECT day FROM {DST}"})],
                "That did not work.",
                [("query_data", {"sql": GOOD, "output_label": "fast_storm_days"})],
                "2 days: 2015-03-17 and 2015-06-22.",
            ]
        }
    )
    done = run_coroutine(lambda: _agent(workspace, script).query(QUESTION, threading.Event()))
    assert not done.failed, done.errors
    assert done.labels == ["fast_storm_days"]
    first, retry = (user_prompts(seen.messages)[0] for seen in script.requests_of("sql")[::2])
    assert f'"{DST}" (8760 rows)' in first and "V DOUBLE [km/s]" in first
    assert "Your previous query failed" in retry and '"day" not found' in retry
    days = workspace.session.store.get("fast_storm_days").data.index
    assert [str(d.date()) for d in days] == ["2015-03-17", "2015-06-22"]


def test_after_the_retries_the_user_is_told_in_words(workspace: Workspace) -> None:
    steps: list[object] = []
    for _ in range(MAX_RETRIES + 1):
        steps += [[("query_data", {"sql": "SELECT * FROM read_csv('/etc/passwd')"})], "No."]
    script = Script({"sql": steps})  # type: ignore[arg-type]
    done = run_coroutine(lambda: _agent(workspace, script).query(QUESTION, threading.Event()))
    assert done.failed
    assert f"after {MAX_RETRIES + 1} attempts" in done.text
    assert "read_csv" in done.text
    assert script.left() == {}


def test_the_orchestrator_delegates_to_sql(workspace: Workspace) -> None:
    script = Script(
        {
            "orchestrator": [
                [("delegate_to_sql", {"request": QUESTION})],
                "Two days: 2015-03-17 and 2015-06-22.",
            ],
            "sql": [[("query_data", {"sql": GOOD})], "2 days."],
        }
    )
    assistant = AgentAssistant(workspace, scripted_config(), build_model=script.build)
    reply = assistant.respond(QUESTION, threading.Event())
    assert "2015-03-17" in reply.text
    assert workspace.session.store.has(query_label(GOOD))


def test_the_planner_routes_selections_to_sql() -> None:
    assert "sql" in decide_agents(QUESTION).chosen_agents
    assert "sql" in decide_agents("hourly mean Bz per day as a table").chosen_agents
    assert agent_of("__sql__") == "sql"
