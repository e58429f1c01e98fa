"""query_data and describe_tables through the funnel: results are entries, errors are words."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sql_support import DST, session_entries
from xhelio.tools.sql_tools import query_label
from xhelio.tools.workspace import Workspace, open_workspace


@pytest.fixture
def workspace() -> Iterator[Workspace]:
    ws = open_workspace(ephemeral=True)
    for entry in session_entries():
        ws.session.store.put(entry)
    yield ws
    ws.close()


def test_storm_days_become_a_plottable_entry(workspace: Workspace) -> None:
    sql = (
        f"SELECT date_trunc('day', time) AS day, min(DST1800) AS dst FROM \"{DST}\" "
        "GROUP BY 1 HAVING min(DST1800) < -100 ORDER BY 1"
    )
    result = workspace.funnel.call("query_data", {"sql": sql, "output_label": "storm_days"})
    assert result.ok, result.error
    entry = workspace.session.store.get("storm_days")
    assert entry.is_timeseries
    assert [str(t.date()) for t in entry.data.index] == ["2015-03-17", "2015-06-22", "2015-12-20"]
    assert entry.units == {"dst": "nT"}
    assert result.payload["preview"][0]["dst"] == -222.0
    assert result.payload["tables"] == [DST]
    assert "storm_days" in [op.get("produced", [None])[0] for op in workspace.session.operations]


def test_two_conditions_over_two_tables(workspace: Workspace) -> None:
    sql = (
        "WITH d AS (SELECT date_trunc('day', time) AS day, min(DST1800) AS dst "
        f"FROM \"{DST}\" GROUP BY 1), v AS (SELECT date_trunc('day', time) AS day, "
        "max(V) AS v FROM ace GROUP BY 1) "
        "SELECT day, dst, v FROM d JOIN v USING (day) WHERE dst < -100 AND v > 600 ORDER BY day"
    )
    result = workspace.funnel.call("query_data", {"sql": sql})
    assert result.ok, result.error
    assert result.payload["label"] == query_label(sql)
    again = workspace.funnel.call("query_data", {"sql": "  " + sql.upper()})
    assert again.payload["label"] == query_label(sql)  # the same query replaces its result
    assert [r["day"][:10] for r in result.payload["preview"]] == ["2015-03-17", "2015-06-22"]
    assert result.payload["units"] == {"dst": "nT", "v": "km/s"}


def test_a_table_without_time_stays_a_table(workspace: Workspace) -> None:
    result = workspace.funnel.call(
        "query_data", {"sql": 'SELECT count(*) AS n, min(min_dst) AS deepest FROM "events.storms"'}
    )
    assert result.ok, result.error
    entry = workspace.session.store.get(result.payload["label"])
    assert not entry.is_timeseries
    assert entry.units == {"n": "", "deepest": "nT"}


def test_a_refused_query_is_an_error_in_words(workspace: Workspace) -> None:
    result = workspace.funnel.call("query_data", {"sql": "SELECT * FROM read_csv('/etc/passwd')"})
    assert not result.ok
    assert "read_csv" in (result.error or "")
    bad = workspace.funnel.call("query_data", {"sql": "SELECT nope FROM ace"})
    assert not bad.ok and "nope" in (bad.error or "")
    label = workspace.funnel.call("query_data", {"sql": "SELECT 1 AS n", "output_label": "a b"})
    assert not label.ok and "cannot be a label" in (label.error or "")


def test_describe_tables_gives_names_types_and_units(workspace: Workspace) -> None:
    result = workspace.funnel.call("describe_tables", {})
    assert result.ok, result.error
    tables = {t["table"]: t for t in result.payload["tables"]}
    assert tables[DST]["sql_name"] == f'"{DST}"'
    assert tables[DST]["columns"] == [
        {"name": "time", "type": "TIMESTAMP"},
        {"name": "DST1800", "type": "DOUBLE", "unit": "nT"},
    ]
    assert tables["events.storms"]["columns"][0] == {"name": "start", "type": "TIMESTAMP"}
    assert "V DOUBLE [km/s]" in result.payload["schema_text"]


def test_rest_runs_query_data_and_the_result_is_a_session_entry() -> None:
    import httpx

    from servers.xhelio_api import LiveServer
    from xhelio.api.assistant import Assistant
    from xhelio.config import load_settings
    from xhelio.server import ServerConfig, create_app

    with Assistant(load_settings()) as xh:
        sid = xh.new_session("sql over REST")
        with xh.hub.checkout(sid) as held:
            assert held.workspace is not None
            for entry in session_entries():
                held.workspace.session.store.put(entry)
        app = create_app(ServerConfig(), assistant=xh)
        with (
            LiveServer(app) as server,
            httpx.Client(base_url=server.url + "/api/v1", timeout=120) as http,
        ):
            listed = {t["name"] for t in http.get("/tools").json()}
            assert {"query_data", "describe_tables"} <= listed
            sql = "SELECT time, Bz FROM ace WHERE V > 600 ORDER BY time"
            ran = http.post(f"/sessions/{sid}/tools/query_data", json={"sql": sql})
            assert ran.status_code == 200, ran.text
            assert ran.json()["points"] == 48 and ran.json()["is_timeseries"]
            refused = http.post(f"/sessions/{sid}/tools/query_data", json={"sql": "DROP TABLE ace"})
            assert refused.json()["status"] == "error"
            tables = http.post(f"/sessions/{sid}/tools/describe_tables", json={}).json()
            made = next(t for t in tables["tables"] if t["table"] == query_label(sql))
            assert {"name": "Bz", "type": "DOUBLE", "unit": "nT"} in made["columns"]
