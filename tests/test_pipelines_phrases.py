"""Offline pipeline phrases: many wordings reach the right tool with the right arguments.

The tools themselves are exercised end to end in test_pipelines_cli.py; here the tool
call is recorded instead of run, so each wording is checked on what it asks for. Export
is run for real (it writes into the session's export folder).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_pipelines_store import make
from xhelio.agents.offline import pipeline_requests as phrases
from xhelio.config import load_settings
from xhelio.pipelines.store import PipelineStore
from xhelio.tools.workspace import Workspace, open_workspace

NAME = "ACE smooth"


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Workspace, list[Any]]]:
    """A session with one saved pipeline; tool calls of the phrases are recorded, not run."""
    PipelineStore(load_settings()).save(make("pl_phrase0001", NAME), ["ace"])
    calls: list[tuple[str, dict[str, Any]]] = []

    def record(ws: Workspace, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        calls.append((tool, args))
        return {"status": "ok", "summary": "ran", "name": NAME, "deleted": "x", "id": "x"}

    monkeypatch.setattr(phrases, "_call", record)
    ws = open_workspace(ephemeral=True)
    yield ws, calls
    ws.close()


SAVE = "save_pipeline"
RUN = "run_pipeline"


@pytest.mark.parametrize(
    ("text", "tool", "args"),
    [
        ("Save this as a pipeline called ACE weekly.", SAVE, {"name": "ACE weekly"}),
        ("save as pipeline ACE weekly", SAVE, {"name": "ACE weekly"}),
        ("save the pipeline as 'ACE weekly'", SAVE, {"name": "ACE weekly"}),
        ("make this a pipeline called ACE weekly", SAVE, {"name": "ACE weekly"}),
        ("please turn this into a pipeline named ACE weekly", SAVE, {"name": "ACE weekly"}),
        ("create a pipeline called ACE weekly from this", SAVE, {"name": "ACE weekly"}),
        ("store this analysis as a pipeline: ACE weekly", SAVE, {"name": "ACE weekly"}),
        ("save the plan as a pipeline called P1", SAVE, {"name": "P1", "scope": "last_request"}),
        ("run ACE smooth for March 2001", RUN, {"pipeline": NAME, "time_range": "March 2001"}),
        ("execute the ACE smooth pipeline over May 2001", RUN, {"time_range": "May 2001"}),
        ("apply ACE smooth to 2001-05-01", RUN, {"time_range": "2001-05-01"}),
        (
            "run ACE smooth between 2001-03-01 and 2001-03-04",
            RUN,
            {"time_range": "between 2001-03-01 and 2001-03-04"},
        ),
        (
            "Rerun \u201cACE smooth\u201d on 2001-03-01 to 2001-03-04",
            RUN,
            {"pipeline": NAME, "time_range": "2001-03-01 to 2001-03-04"},
        ),
        ("replay ace smooth", RUN, {"pipeline": "ace smooth"}),
        ("which pipelines do I have?", "list_pipelines", {}),
        ("show me my saved pipelines", "list_pipelines", {}),
        ("my pipelines", "list_pipelines", {}),
        ("find my ACE pipelines", "search_pipelines", {"query": "ACE"}),
        ("search pipelines about smoothing", "search_pipelines", {"query": "smoothing"}),
        ("remove the ACE smooth pipeline", "delete_pipeline", {"pipeline": NAME}),
    ],
)
def test_wordings_reach_the_right_tool(
    recorded: tuple[Workspace, list[Any]], text: str, tool: str, args: dict[str, Any]
) -> None:
    ws, calls = recorded
    assert phrases.pipeline_reply(ws, text) is not None
    assert len(calls) == 1 and calls[0][0] == tool
    assert args.items() <= calls[0][1].items()


@pytest.mark.parametrize(
    "text",
    [
        "delete the plot",
        "export the plot as png",
        "save the plot as ace.png",
        "save this as a script",
        "show me ACE magnetic field for March 2001",
        "find ACE magnetic field data",
        "run a spectral analysis of ACE for March 2001",
    ],
)
def test_other_requests_are_left_to_the_interpreter(
    recorded: tuple[Workspace, list[Any]], text: str
) -> None:
    ws, calls = recorded
    assert phrases.pipeline_reply(ws, text) is None and calls == []


def test_export_phrases_write_into_the_session_folder(
    recorded: tuple[Workspace, list[Any]],
) -> None:
    ws, _ = recorded
    answer = str(phrases.pipeline_reply(ws, "export my ACE smooth pipeline to a jupyter notebook"))
    assert "as a notebook" in answer and "DOI: 10." in answer
    path = ws.session.folder / "exports" / "ACE_smooth.ipynb"
    assert json.loads(path.read_text())["nbformat"] == 4
    answer = str(phrases.pipeline_reply(ws, "export ACE smooth as a python script"))
    script = Path(ws.session.folder / "exports" / "ACE_smooth.py").read_text()
    assert "--time-range" in answer and "def main():" in script and "AC_H2_MFI" in script
    missing = str(phrases.pipeline_reply(ws, "export pipeline Nope as a script"))
    assert "Could not export: No saved pipeline is called 'Nope'" in missing


def test_show_a_saved_pipeline_or_the_session_one(recorded: tuple[Workspace, list[Any]]) -> None:
    ws, calls = recorded
    shown = str(phrases.pipeline_reply(ws, "what does the ACE smooth pipeline do?"))
    assert shown.startswith("Pipeline 'ACE smooth' (pl_phrase0001)")
    assert "s090 custom_operation after s001: Smooth the field" in shown
    assert "$TIME_RANGE = 2001-01-01 to 2001-01-02" in shown and calls == []
    assert "No saved pipeline" in str(phrases.pipeline_reply(ws, "describe pipeline Nope"))
    phrases.pipeline_reply(ws, "show me the current pipeline")
    assert calls == [("get_pipeline_info", {})]
