"""Notebooks: the `%%xhelio` magic in a real kernel, and a session exported as a notebook.

nbclient runs the notebooks in an ipykernel (offline mode, a loopback HAPI server).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from servers.catalog_hapi import CatalogHapiServer
from xhelio.api import Assistant
from xhelio.notebook import session_notebook, write_session_notebook
from xhelio.notebook.display import PLOTLY_MIME

ACE = "ACE magnetic field magnitude for 2024-01-15"


@pytest.fixture
def offline_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Environment of the test and of the kernels it starts: offline, loopback data."""
    with CatalogHapiServer() as hapi:
        for var in ("XHELIO_MODEL", "OPENAI_BASE_URL", "XHELIO_API_TOKEN"):
            monkeypatch.delenv(var, raising=False)
        for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("XHELIO_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("XHELIO_HAPI_URL", hapi.url)
        monkeypatch.setenv("XHELIO_CDAS_URL", "http://127.0.0.1:9/WS/cdasr/1")
        yield tmp_path


def _outputs(notebook: nbformat.NotebookNode, index: int) -> list[dict[str, object]]:
    return list(notebook.cells[index].outputs)


def test_the_export_has_one_magic_cell_per_request():
    nb = session_notebook([ACE, "  ", "zoom to the first hour"], title="Storm")
    sources = [c.source for c in nb.cells]
    assert sources[1] == "%load_ext xhelio"
    assert sources[2:] == [f"%%xhelio\n{ACE}", "%%xhelio\nzoom to the first hour"]
    assert "Storm" in sources[0]
    nbformat.validate(nb)


def test_an_exported_session_runs_as_a_notebook_with_rich_answers(offline_env: Path):
    with Assistant() as xh:
        response = xh.run(ACE)
        assert response.error is None and response.session_id
        history = list(xh.hub.view(response.session_id).session.history)
    path = write_session_notebook(history, offline_env / "session.ipynb", "ACE")
    nb = nbformat.read(str(path), as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3").execute()
    outputs = _outputs(nb, 2)
    figure = next(o for o in outputs if PLOTLY_MIME in o.get("data", {}))  # type: ignore[operator]
    assert figure["data"][PLOTLY_MIME]["data"]  # type: ignore[index]
    answer = next(o for o in outputs if "text/html" in o.get("data", {}))  # type: ignore[operator]
    html = answer["data"]["text/html"]  # type: ignore[index]
    assert "NASA CDAWeb dataset AC_" in html and "<table>" in html and "xhelio-citations" in html
    assert not [o for o in outputs if o.get("output_type") == "error"]
    json.dumps(nb)  # the executed notebook is plain JSON, as saved


def test_an_empty_cell_explains_what_to_write(offline_env: Path):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("%load_ext xhelio"),
            nbformat.v4.new_code_cell("%%xhelio\n  \n\t"),
        ]
    )
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    text = "".join(str(o.get("text", "")) for o in _outputs(nb, 1))
    assert "Write a request" in text
