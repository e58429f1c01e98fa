"""The README's Python and MCP examples, checked.

The Python examples run as written (offline mode, loopback HAPI); the MCP client
configurations are valid JSON that launch `xhelio mcp`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from servers.catalog_hapi import CatalogHapiServer

README = Path(__file__).resolve().parents[1] / "README.md"


def _section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 3)
    return text[start : end if end > 0 else None]


def _blocks(title: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", _section(title), re.S)


@pytest.fixture
def hapi(monkeypatch: pytest.MonkeyPatch) -> Iterator[CatalogHapiServer]:
    with CatalogHapiServer() as server:
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        yield server


def test_python_examples_run(hapi: CatalogHapiServer, capsys: pytest.CaptureFixture[str]) -> None:
    examples = _blocks("From Python", "python")
    assert len(examples) == 2
    for code in examples:
        exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    assert "AC_H" in out and "done" in out and "session_id" in out


def test_mcp_configs_launch_xhelio_mcp() -> None:
    configs = _blocks("MCP: Claude Desktop, Claude Code, Cursor", "json")
    assert len(configs) == 3
    for text in configs:
        server = json.loads(text)["mcpServers"]["xhelio"]
        assert server["command"] == "xhelio" and server["args"] == ["mcp"]
    assert "claude mcp add xhelio -- xhelio mcp" in _section("MCP: Claude Desktop")
