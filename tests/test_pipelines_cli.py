"""The user's path offline: ask, save by phrase, restart, run from the CLI, export, delete."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from pipeline_support import (
    make_session,
    open_fresh,
)
from xhelio.agents import factory
from xhelio.agents.turn import run_turn
from xhelio.cli.main import app
from xhelio.tools.workspace import Workspace

runner = CliRunner()
NAME = "ACE and Wind comparison"  # names two spacecraft: the planner must not take it


def cli(*args: str) -> dict[str, object]:
    done = runner.invoke(app, ["pipeline", *args, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.output)


def ask(ws: Workspace, text: str) -> str:
    assistant, config = factory.make_assistant(ws)
    assert config.offline
    result = run_turn(ws, assistant, text)
    assert result.error is None, result.error
    return result.answer


def test_offline_phrases_then_cli_after_a_restart(pl_workspace: Workspace, tmp_path: Path) -> None:
    make_session(pl_workspace)
    answer = ask(pl_workspace, f"Save this as a pipeline called {NAME}.")
    assert f"Saved pipeline '{NAME}'" in answer and "s003 custom_operation" in answer
    assert NAME in ask(pl_workspace, "list my pipelines")
    pl_workspace.close()

    listed = cli("list")["pipelines"]
    assert isinstance(listed, list) and [p["name"] for p in listed] == [NAME]  # type: ignore[index]
    shown = cli("show", NAME)
    assert shown["variables"] == {
        "$TIME_RANGE": {
            "type": "time_range",
            "description": "Time range of every fetch (and of titles naming it)",
            "default": "2001-01-01T00:00:00Z to 2001-01-05T00:00:00Z",
        }
    }
    run = cli("run", NAME, "--time", "March 2001", "--no-png")
    assert run["status"] == "completed"
    assert run["variables"] == {"$TIME_RANGE": "2001-03-01T00:00:00Z to 2001-04-01T00:00:00Z"}
    figures = run["figures"]
    assert isinstance(figures, list) and str(figures[0]).endswith(".html")
    assert "2001-03-01 to 2001-03-31" in Path(str(figures[0])).read_text()  # the title

    out = tmp_path / "ace.ipynb"
    exported = cli("export", NAME, "--format", "ipynb", "--out", str(out))
    assert exported["path"] == str(out) and json.loads(out.read_text())["nbformat"] == 4
    assert cli("search", "comparison")["families"]
    bad = runner.invoke(app, ["pipeline", "run", NAME, "--time", "the 40th of never", "--json"])
    assert bad.exit_code == 1 and "Cannot run pipeline" in json.loads(bad.output)["error"]

    again = open_fresh()
    try:
        answer = ask(again, f"run {NAME} for February 2001")
        assert "4 of 4 steps completed for 2001-02-01 to 2001-02-28" in answer
        assert "needs a language model" in ask(again, f"run {NAME} for Wind instead")
        assert f"Deleted pipeline '{NAME}'" in ask(again, f"delete {NAME}")
    finally:
        again.close()
    assert cli("list")["pipelines"] == []
    missing = runner.invoke(app, ["pipeline", "show", NAME])
    assert missing.exit_code == 1 and "no saved pipelines yet" in " ".join(missing.output.split())


def test_phrases_leave_other_requests_alone(pl_workspace: Workspace) -> None:
    from xhelio.agents.offline.pipeline_requests import pipeline_reply

    assert pipeline_reply(pl_workspace, "delete the plot") is None
    assert pipeline_reply(pl_workspace, "run a spectral analysis of ACE for March 2001") is None
    assert "no saved pipeline" in str(pipeline_reply(pl_workspace, "run my pipeline Nope")).lower()
    assert (
        "no saved pipelines yet" in str(pipeline_reply(pl_workspace, "list my pipelines")).lower()
    )
