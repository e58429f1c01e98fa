"""A plan whose process is killed (`kill -9`) is marked interrupted and can be resumed."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from server_fixtures import live_api
from servers.catalog_hapi import CatalogHapiServer
from xhelio.agents.planning.store import TaskStore
from xhelio.agents.planning.tasks import PlanStatus, TaskPlan
from xhelio.cli.main import app as cli_app
from xhelio.config import load_settings

REQUEST = (
    "Compare ACE and Wind magnetic field for 2024-01-10 to 2024-01-12, "
    "compute the magnitude of each, and plot them"
)


def _xhelio(*args: str) -> list[str]:
    script = Path(sys.executable).with_name("xhelio")
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-c", "from xhelio.cli.main import main; main()", *args]


def _running_plan(home: Path) -> tuple[str, str] | None:
    """(plan id, session id) of a plan the process is executing, read without the store."""
    path = home / "plans.sqlite"
    if not path.exists():
        return None
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            row = db.execute(
                "SELECT id, session_id FROM plans WHERE status = 'executing'"
            ).fetchone()
    except sqlite3.OperationalError:
        return None  # the schema is not written yet
    return (str(row[0]), str(row[1])) if row else None


@pytest.fixture
def killed(tmp_path: Path) -> Iterator[tuple[CatalogHapiServer, Path, str, str]]:
    """`xhelio ask` killed with SIGKILL while its plan waits on a stalled data request."""
    with CatalogHapiServer() as hapi:
        hapi.fail_next("stall", count=1000, endpoint="data", delay_s=600)
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.pop("XHELIO_MODEL", None)
        env.update(
            XHELIO_HOME=str(tmp_path),
            XHELIO_HAPI_URL=hapi.url,
            XHELIO_HTTP_TIMEOUT_S="600",
            XHELIO_HTTP_DEADLINE_S="600",
        )
        proc = subprocess.Popen(
            _xhelio("ask", REQUEST),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 240  # a loaded machine starts slowly
            while (running := _running_plan(tmp_path)) is None:
                assert proc.poll() is None, "xhelio ask ended before its plan ran"
                assert time.monotonic() < deadline, "no plan started"
                time.sleep(0.1)
            # The process is alive: opening the store leaves its plan alone.
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("XHELIO_HOME", str(tmp_path))
                assert TaskStore(load_settings()).load(running[0]).status is PlanStatus.EXECUTING
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(60)
            hapi.clear_faults()
            yield hapi, tmp_path, running[0], running[1]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(60)


def test_a_killed_plan_is_interrupted_listed_and_resumed(
    killed: tuple[CatalogHapiServer, Path, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    hapi, home, plan_id, session_id = killed
    assert _running_plan(home) == (plan_id, session_id)  # left behind by the kill
    monkeypatch.setenv("XHELIO_HOME", str(home))
    monkeypatch.setenv("XHELIO_HAPI_URL", hapi.url)
    store = TaskStore(load_settings())
    assert [p.id for p in store.interrupted] == [plan_id]
    plan = store.load(plan_id)
    assert plan.status is PlanStatus.INTERRUPTED and not plan.status.final
    incomplete = store.incomplete(session_id)
    assert incomplete is not None and incomplete.id == plan_id
    assert TaskStore(load_settings()).interrupted == []  # marked once

    listed = CliRunner().invoke(cli_app, ["plan", "list"])
    assert listed.exit_code == 0, listed.output
    assert "interrupted" in listed.output
    assert f"xhelio chat --session {session_id}" in listed.output.replace("\n", "")

    for api in live_api(home, hapi.url):
        detail = api.client.get(f"/sessions/{session_id}").json()
        assert detail["plan"]["id"] == plan_id and detail["plan"]["status"] == "interrupted"
        started = api.client.post(f"/sessions/{session_id}/plan/resume")
        assert started.status_code == 200, started.text
        reply = started.json()
        assert reply["started"] is True and reply["plan_id"] == plan_id
        events = api.client.get(
            f"/sessions/{session_id}/events",
            params={"follow": "true", "after": reply["after_event_id"]},
        )
        assert "event: done" in events.text
        after = api.client.get(f"/sessions/{session_id}").json()["plan"]
        assert after["id"] == plan_id
        assert after["status"] in ("completed", "completed_with_warnings"), after
        again = api.client.post(f"/sessions/{session_id}/plan/resume").json()
        assert again["started"] is False


@pytest.mark.parametrize(
    ("runner", "interrupted"),
    [
        (None, True),  # saved before runners were recorded
        ("same-host-reused-pid", True),
        ("same-host-dead-pid", True),
        ("other-host", False),
        ("this-process", False),
    ],
)
def test_only_plans_of_gone_processes_are_interrupted(
    tmp_path: Path, runner: str | None, interrupted: bool
) -> None:
    path = tmp_path / "plans.sqlite"
    store = TaskStore(path=path)
    plan = TaskPlan(request="compare", session_id="s1")
    plan.status = PlanStatus.EXECUTING
    store.save(plan)  # records this process as the runner
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    rows = {
        None: None,
        "same-host-reused-pid": (socket.gethostname(), os.getpid(), "1"),
        "same-host-dead-pid": (socket.gethostname(), dead.pid, ""),
        "other-host": ("elsewhere.example", 1, ""),
    }
    with sqlite3.connect(path) as db:
        if runner != "this-process":
            db.execute("DELETE FROM plan_runners")
            row = rows[runner]
            if row is not None:
                db.execute("INSERT INTO plan_runners VALUES (?, ?, ?, ?)", (plan.id, *row))
    reopened = TaskStore(path=path)
    assert [p.id for p in reopened.interrupted] == ([plan.id] if interrupted else [])
    expected = PlanStatus.INTERRUPTED if interrupted else PlanStatus.EXECUTING
    assert reopened.load(plan.id).status is expected
