"""Each user message of an offline session is read once, however long the session gets.

The assistant replays earlier requests to complete follow-ups; it keeps each message's
reading with the message instead of reading the whole history again on every turn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

import xhelio.agents.offline.assistant as assistant_module
from servers.catalog_hapi import CatalogHapiServer
from servers.hapi_server import HapiTestServer
from xhelio.agents.factory import make_assistant
from xhelio.agents.turn import run_turn
from xhelio.config import load_settings
from xhelio.language.intent import RequestIntent
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.tools.workspace import open_workspace

TURNS = [
    "ACE |B| for 2015-03-16 to 2015-03-18",
    "now smooth it over 30 minutes",
    "add Wind",
    "shift to the next day",
    "remove the Wind trace",
    "OMNI Dst for 2003-10-29",
    "same for the next day",
]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[HapiTestServer]:
    with CatalogHapiServer(max_rows=200) as srv:
        monkeypatch.setenv("XHELIO_HAPI_URL", srv.url)
        yield srv


def test_every_message_is_read_once(
    server: HapiTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: Counter[str] = Counter()

    def counting(text: str, vocab: Vocabulary) -> RequestIntent:
        reads[text] += 1
        return parse_request(text, vocab)

    monkeypatch.setattr(assistant_module, "parse_request", counting)
    workspace = open_workspace(settings=load_settings())
    try:
        assistant, _ = make_assistant(workspace)
        fetched: list[dict[str, str]] = []
        for text in TURNS:
            before = len(workspace.session.operations)
            run_turn(workspace, assistant, text)
            fetched = [
                op["args"]
                for op in workspace.session.operations[before:]
                if op["tool"] == "fetch_data"
            ]
        assert reads == Counter(TURNS), reads  # not once per turn per earlier message
        # The kept readings still complete follow-ups: the last turn steps OMNI's day.
        assert fetched and all("2003-10-30" in a["time_range"] for a in fetched), fetched
    finally:
        workspace.close()
