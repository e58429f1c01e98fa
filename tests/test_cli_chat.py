"""The chat REPL and `xhelio ask`: commands, cancellation, retry, sessions, JSON output.

The assistant here is scripted (it is not what these tests check): it drives real tools
through the workspace funnel against a loopback HAPI server serving real ACE data, so
`run_turn`, persistence, progress, figures and the REPL commands all run for real.
"""

from __future__ import annotations

import io
import json
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from servers.hapi_server import HapiTestServer
from xhelio.agents import factory
from xhelio.agents.models import ModelConfig
from xhelio.agents.turn import AssistantReply
from xhelio.agents.usage import UsageTracker
from xhelio.api.models import AskResponse
from xhelio.cli.chat_cmd import ChatOptions, ChatRepl
from xhelio.cli.main import app
from xhelio.config import load_settings
from xhelio.errors import UserError
from xhelio.session.persist import SessionStore
from xhelio.tools.workspace import Workspace

runner = CliRunner()


class ScriptedAssistant:
    """Fetches and plots real ACE data for 'plot', blocks for 'wait', fails for 'fail'."""

    name = "scripted"

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.started = threading.Event()
        self.requests: list[str] = []

    def respond(self, request: str, cancel: threading.Event) -> AssistantReply:
        self.requests.append(request)
        self.started.set()
        if "wait" in request:
            cancel.wait(30)
            return AssistantReply("stopped early")
        if "fail" in request:
            raise UserError("No dataset FAKE_DS: check the id with `catalog search`.")
        funnel = self.workspace.funnel
        fetched = funnel.call(
            "fetch_data",
            {"dataset_id": "AC_H2_MFI", "parameter_id": "Magnitude", "time_range": "1997-09-02"},
            "scripted",
        ).to_dict()
        assert fetched.get("status") != "error", fetched
        funnel.call(
            "render_plotly_json",
            {"figure": {"data": [{"data_label": fetched["label"]}]}},
            "scripted",
        )
        return AssistantReply(f"Plotted {fetched['label']} ({fetched['points']} points).")


@pytest.fixture
def ace_server(real_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HapiTestServer]:
    with HapiTestServer(version="2.0") as server:
        server.add_hapi_csv(real_data / "cdaweb_hapi_AC_H2_MFI_all_1997-09-02.csv")
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        yield server


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> list[ScriptedAssistant]:
    made: list[ScriptedAssistant] = []

    def make(
        workspace: Workspace, model_override: str | None = None, usage: UsageTracker | None = None
    ) -> tuple[ScriptedAssistant, ModelConfig]:
        made.append(ScriptedAssistant(workspace))
        return made[-1], ModelConfig()

    monkeypatch.setattr(factory, "make_assistant", make)
    return made


def lines(*items: str) -> object:
    queue = list(items)

    def read_line(prompt: str) -> str:
        if not queue:
            raise EOFError
        return queue.pop(0)

    return read_line


def make_repl(options: ChatOptions | None = None) -> tuple[ChatRepl, io.StringIO]:
    out = io.StringIO()
    opened: list[str] = []
    repl = ChatRepl(
        Console(file=out, width=200), options, opener=lambda uri: opened.append(uri) or True
    )
    return repl, out


def test_request_plot_status_errors_sessions_and_quit(
    ace_server: HapiTestServer, scripted: list[ScriptedAssistant]
) -> None:
    repl, out = make_repl()
    repl.start()
    session_id = repl.workspace.session.id
    repl.run(lines("plot ACE |B|", "status", "fail please", "errors", "sessions", "help", "quit"))  # type: ignore[arg-type]
    text = out.getvalue()
    assert "offline mode" in text  # said once at start
    assert "Plotted AC_H2_MFI.Magnitude (24 points)" in text
    assert "No data in memory" not in text and "AC_H2_MFI.Magnitude" in text  # status table
    assert "No dataset FAKE_DS" in text  # the failure, in plain words
    assert "Type retry" in text
    assert session_id in text  # the sessions list and the goodbye
    assert "Token usage" in text
    assert repl.figures and Path(repl.figures[0]).suffix == ".html"
    assert Path(repl.figures[0]).is_file()
    saved = SessionStore(repl.settings).load(session_id)
    assert [m["role"] for m in saved.history] == ["user", "assistant"] * 2
    assert saved.history[-1]["error"] and "FAKE_DS" in saved.history[-1]["error"]
    assert saved.store.has("AC_H2_MFI.Magnitude")


def test_retry_runs_the_failed_request_again_and_cancel_drops_it(
    ace_server: HapiTestServer, scripted: list[ScriptedAssistant]
) -> None:
    repl, out = make_repl()
    repl.start()
    repl.run(lines("fail once", "retry", "cancel", "retry", "quit"))  # type: ignore[arg-type]
    assert scripted[0].requests == ["fail once", "fail once"]
    assert "Dropped the failed request" in out.getvalue()
    assert "Nothing to retry" in out.getvalue()


def test_ctrl_c_cancels_the_request_not_the_session(
    ace_server: HapiTestServer, scripted: list[ScriptedAssistant]
) -> None:
    repl, out = make_repl()
    repl.start()
    assistant = scripted[0]
    # A run started in the background (`cmd &`) inherits SIGINT ignored: the chat still
    # cancels, since it takes Ctrl-C itself while a request runs.
    before = signal.getsignal(signal.SIGINT)

    def interrupt() -> None:
        # Only once the turn is running, however long that takes: a real condition.
        assistant.started.wait()
        os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does: SIGINT to the process

    threading.Thread(target=interrupt, daemon=True).start()
    result = repl.request("wait for something slow")
    assert result.error is not None and result.error.message == "Cancelled."
    assert "Cancelling" in out.getvalue()
    # The session goes on: the next request runs and succeeds.
    assistant.started.clear()
    after = repl.request("plot ACE |B|")
    assert after.error is None and "24 points" in after.answer
    assert signal.getsignal(signal.SIGINT) == before  # the handler is given back
    repl.close()


def test_reset_and_continue_resume_sessions(
    ace_server: HapiTestServer, scripted: list[ScriptedAssistant]
) -> None:
    repl, out = make_repl()
    repl.start()
    first = repl.workspace.session.id
    repl.run(lines("plot ACE |B|", "reset", "quit"))  # type: ignore[arg-type]
    assert f"session {first} is saved" in out.getvalue()

    again, out2 = make_repl(ChatOptions(session_id=first))
    again.start()
    assert f"Resumed session {first}: 1 turn(s), 1 data entry in memory" in out2.getvalue()
    assert again.workspace.session.store.has("AC_H2_MFI.Magnitude")
    again.close()


def test_ask_json_reports_data_figures_and_errors(
    ace_server: HapiTestServer, scripted: list[ScriptedAssistant]
) -> None:
    result = runner.invoke(app, ["ask", "plot ACE |B|", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload) == set(AskResponse.model_fields)
    assert payload["error"] is None and payload["plan"] is None
    (touched,) = payload["data"]
    assert touched["label"] == "AC_H2_MFI.Magnitude"
    assert (touched["dataset"], touched["parameter"]) == ("AC_H2_MFI", "Magnitude")
    assert touched["points"] == 24
    assert touched["start"].startswith("1997-09-02T00:")
    assert payload["figure_files"] and Path(payload["figure_files"][0]).is_file()
    # The turn path of REST and MCP too: the figure is kept in the session's gallery.
    session_folder = load_settings().home / "sessions" / payload["session_id"]
    assert len(list((session_folder / "gallery").glob("*.json"))) == 1

    failed = runner.invoke(app, ["ask", "fail now", "--json", "--session", payload["session_id"]])
    assert failed.exit_code == 1
    bad = json.loads(failed.stdout)
    assert "FAKE_DS" in bad["error"]["message"] and bad["session_id"] == payload["session_id"]


def test_ask_rejects_an_empty_request_and_a_bad_model(tmp_path: Path) -> None:
    empty = runner.invoke(app, ["ask", "  "])
    assert empty.exit_code == 1 and "REQUEST is empty" in empty.stderr
    bad = runner.invoke(app, ["ask", "hello", "--json", "--model", "nonsense"])
    assert bad.exit_code == 1
    assert json.loads(bad.stdout)["error"]["type"] == "ConfigError"  # one JSON object
    assert "Traceback" not in bad.output
