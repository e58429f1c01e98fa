"""Offline answers and figure titles say times as people read them, never raw ISO ranges."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from servers.catalog_hapi import CatalogHapiServer
from xhelio.agents.offline import OfflineAssistant
from xhelio.agents.turn import run_turn
from xhelio.config import load_settings
from xhelio.tools.workspace import Workspace, open_workspace

RAW_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    home = tmp_path_factory.mktemp("readable-home")
    with CatalogHapiServer() as server, pytest.MonkeyPatch.context() as env:
        env.setenv("XHELIO_HOME", str(home))
        env.setenv("XHELIO_HAPI_URL", server.url)
        opened = open_workspace(settings=load_settings())
        try:
            yield opened
        finally:
            opened.close()


@pytest.mark.parametrize(
    ("request_text", "said"),
    [
        ("ACE magnetic field magnitude on 2024-01-15", "2024-01-15"),
        ("ACE magnetic field magnitude 2024-01-15 to 2024-01-20", "2024-01-15 to 2024-01-20"),
        ("ACE magnetic field magnitude 2024-01-15 06:00 to 12:30", "2024-01-15 06:00 to 12:30 UTC"),
        ("ACE magnetic field magnitude 2024-01-30 to 2024-02-02", "2024-01-30 to 2024-02-02"),
        ("ACE magnetic field magnitude 2023-12-30 to 2024-01-02", "2023-12-30 to 2024-01-02"),
    ],
)
def test_answers_and_titles_read_inclusive_ranges(
    workspace: Workspace, request_text: str, said: str
) -> None:
    result = run_turn(workspace, OfflineAssistant(workspace), request_text)
    assert result.error is None, result.answer
    assert f"Time range: {said}." in result.answer, result.answer
    assert not RAW_ISO.search(result.answer), result.answer
    current = workspace.session.plot.current
    assert current is not None
    title = current.figure["layout"]["title"]["text"]
    assert title.endswith(f", {said}"), title
    assert not RAW_ISO.search(title), title
