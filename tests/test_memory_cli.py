"""`xhelio memory`: add, list --json, search, edit, disable/enable, delete, status."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from xhelio.cli.main import app

runner = CliRunner(env={"COLUMNS": "200"})


def run(*args: str) -> str:
    result = runner.invoke(app, ["memory", *args])
    assert result.exit_code == 0, result.output
    return result.output


def listed() -> list[dict[str, object]]:
    return json.loads(run("list", "--json"))


def test_memory_commands_round_trip() -> None:
    run("add", "Plot PSP magnetic field in RTN", "--type", "preference", "--scope", "mission:psp")
    run("add", "OMNI has gaps before 1995", "--type", "pitfall")
    (psp, omni) = sorted(listed(), key=lambda m: str(m["content"]))[::-1]
    assert psp["scopes"] == ["mission:PSP"] and psp["source"] == "user_explicit"
    assert omni["type"] == "pitfall"
    assert "OMNI has gaps" in run("search", "omni gaps")
    assert "PSP" not in run("search", "omni gaps")
    run("edit", str(psp["id"]), "--text", "Plot PSP magnetic field in RTN, 1-minute averages")
    (new,) = [m for m in listed() if "PSP" in str(m["content"])]
    assert new["version"] == 2 and new["supersedes"] == psp["id"]
    run("disable", str(new["id"]))
    assert [m["enabled"] for m in listed() if m["id"] == new["id"]] == [False]
    run("delete", str(omni["id"]))
    assert [m["id"] for m in listed()] == [new["id"]]
    status = run("status")
    assert "Long-term memory: on" in status and "1 preference" in status
    assert "no embedding model is configured" in status
    assert json.loads(run("status", "--json"))["embedder"] is None


def test_bad_input_is_one_clear_line() -> None:
    result = runner.invoke(app, ["memory", "add", "x", "--type", "opinion"])
    assert result.exit_code == 1
    assert "Unknown memory type 'opinion'" in result.output
    result = runner.invoke(app, ["memory", "delete", "nosuchid"])
    assert result.exit_code == 1 and "No memory 'nosuchid'" in result.output
    assert listed() == []
