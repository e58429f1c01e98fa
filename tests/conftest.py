"""Shared fixtures: every test gets its own XHELIO_HOME and no network beyond loopback."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic_ai import models

from servers.catalog_hapi import CatalogHapiServer
from xhelio.agents.offline import OfflineAssistant
from xhelio.agents.turn import TurnResult, run_turn
from xhelio.catalog.index import Catalog, build_index
from xhelio.config import load_settings
from xhelio.data.entry import DataEntry
from xhelio.language.parse import Vocabulary
from xhelio.tools.workspace import Workspace, open_workspace

# No test may reach an LLM provider: models are scripted with FunctionModel/TestModel.
models.ALLOW_MODEL_REQUESTS = False

pytest_plugins = ["pipeline_support", "operations_support"]  # shared fixtures

REAL_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "real"


@pytest.fixture(autouse=True)
def xhelio_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point all xhelio state at a fresh temp folder and clear provider settings."""
    home = tmp_path / "xhelio-home"
    home.mkdir()
    monkeypatch.setenv("XHELIO_HOME", str(home))
    # The background memory agent would consume scripted model replies: tests turn it on.
    monkeypatch.setenv("XHELIO_MEMORY_EVERY_TURNS", "0")
    for var in ("XHELIO_HAPI_URL", "XHELIO_CDAS_URL", "XHELIO_MODEL"):
        monkeypatch.delenv(var, raising=False)
    # Unroutable defaults: a test that forgets to start a loopback server fails fast.
    monkeypatch.setenv("XHELIO_HAPI_URL", "http://127.0.0.1:9/hapi")
    monkeypatch.setenv("XHELIO_CDAS_URL", "http://127.0.0.1:9/WS/cdasr/1")
    monkeypatch.setenv("XHELIO_NAIF_URL", "http://127.0.0.1:9/naif")
    monkeypatch.setenv("XHELIO_PDS_URL", "http://127.0.0.1:9")
    yield home


@pytest.fixture
def real_data() -> Path:
    """Folder of real spacecraft files; skips the test when ../shared is absent."""
    if not REAL_DATA.is_dir():
        pytest.skip("../shared/data/real is not present")
    return REAL_DATA


@pytest.fixture(scope="module")
def listener() -> Iterator[socket.socket]:
    """A loopback socket that no sandboxed code may ever connect to."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


@pytest.fixture(scope="session")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The shipped catalog, indexed once for the session. Read only."""
    path: Path = tmp_path_factory.mktemp("catalog") / "catalog.sqlite"
    build_index(path)
    return Catalog(path)


@pytest.fixture(scope="session")
def vocab(catalog: Catalog) -> Vocabulary:
    """The request vocabulary of the shipped catalog. Read only: plans never change it."""
    return Vocabulary.from_catalog(catalog)


@dataclass
class OfflineSession:
    """The offline assistant in a workspace whose data comes from a loopback server."""

    server: CatalogHapiServer
    workspace: Workspace
    assistant: OfflineAssistant

    def ask(self, text: str) -> TurnResult:
        return run_turn(self.workspace, self.assistant, text)

    def entry(self, label: str) -> DataEntry:
        return self.workspace.session.store.get(label)


@pytest.fixture(scope="module")
def served_rows() -> int:
    """Most rows the loopback server returns per request (a module may override it)."""
    return 5000


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory, served_rows: int) -> Iterator[OfflineSession]:
    """One offline session per module, served every dataset of the shipped catalog."""
    home = tmp_path_factory.mktemp("offline-home")
    server = CatalogHapiServer(max_rows=served_rows)
    with server, pytest.MonkeyPatch.context() as env:
        env.setenv("XHELIO_HOME", str(home))
        env.setenv("XHELIO_HAPI_URL", server.url)
        workspace = open_workspace(settings=load_settings())
        try:
            yield OfflineSession(server, workspace, OfflineAssistant(workspace))
        finally:
            workspace.close()
