"""`PUT /settings` against hostile keys and values: refused requests change nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server_fixtures import Api, hapi, live_api  # noqa: F401  (fixture)
from servers.catalog_hapi import CatalogHapiServer
from xhelio.config import load_settings, read_config_file

SEED = 'http_retries = 4\n\n[models]\ndefault = "openai-chat:llama3.2"\n\n[memory]\nkeep = true\n'


@pytest.fixture(scope="module")
def api(hapi: CatalogHapiServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:  # noqa: F811
    yield from live_api(tmp_path_factory.mktemp("settings-home"), hapi.url)


@pytest.fixture
def config(api: Api) -> Path:
    path = api.home / "config.toml"
    path.write_text(SEED)
    return path


def _still_loads(home: Path) -> None:
    settings = load_settings(home)
    assert settings.model_table() == {"default": "openai-chat:llama3.2"}
    assert settings.http_retries == 4


HOSTILE_KEYS = [
    "[[[",
    "a\n[models]\ndefault = 'evil:x'",
    'x"]\n[models]\norchestrator = "evil:y',
    "a.b",
    "a b",
    "a=1",
    "[models]",
    "",
    "x" * 65,
    "Key",
    "ключ",
    "emoji_😀",
    "nul\x00",
    "tab\tkey",
    "'single'",
    "1leading_digit",
]


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_a_hostile_memory_key_is_refused_and_changes_nothing(
    api: Api, config: Path, key: str
) -> None:
    before = config.read_bytes()
    response = api.client.put("/settings", json={"memory": {key: "v"}})
    assert response.status_code == 422, response.text
    assert response.json()["type"] == "ValidationError"
    assert config.read_bytes() == before
    _still_loads(api.home)


HOSTILE_VALUES: list[Any] = [
    'quote " inside',
    "'''triple single'''",
    '"""triple double"""',
    "line\n[models]\ndefault = 'evil:x'",
    "back\\slash \\u0041",
    "unicode ✓ Ωmega 日本",
    "control \x00\x1b[31m\x7f",
    "[[[",
    "#not a comment",
    "",
    "x" * 1000,
    True,
    0,
    -(2**63),
    2**63 - 1,
    1.5e300,
]


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_any_allowed_value_round_trips_without_smuggling_tables(
    api: Api, config: Path, value: Any
) -> None:
    response = api.client.put("/settings", json={"memory": {"note": value}})
    assert response.status_code == 200, response.text
    shown = response.json()["memory"]
    assert {k: shown[k] for k in ("keep", "note")} == {"keep": True, "note": value}
    data = read_config_file(config)
    assert data["memory"] == {"keep": True, "note": value}
    assert set(data) == {"http_retries", "models", "memory"}
    _still_loads(api.home)


REFUSED_BODIES: list[dict[str, Any]] = [
    {"memory": {"note": "x" * 1001}},
    {"memory": {"note": 2**63}},
    {"memory": {"note": {"nested": 1}}},
    {"memory": {"note": {"models": {"default": "evil:x"}}}},
    {"memory": {"note": [1, 2]}},
    {"memory": {"note": None}},
    {"memory": {f"k{i}": i for i in range(101)}},
    {"memory": {"api_token": "x"}},
    {"memory": {"openai_apikey": "x"}},
    {"memory": {"db_password": "x"}},
    {"memory": []},
    {"models": {"default": "nonsense"}},
    {"models": {"default": "x" * 201}},
    {"models": {"nope": "openai:gpt-4o"}},
    {"models": {"default": 5}},
    {"limits": {"http_retries": 1000}},
    {"limits": {"http_timeout_s": "NaN"}},
    {"limits": {"unknown": 1}},
    {"limits": {"http_retries": 2}, "memory": {"[[[": 1}},
    {"models": {"default": "openai:gpt-4o"}, "memory": {"ok": "x" * 5000}},
    {"models": {"default": "openai:gpt-4o"}, "limits": {"download_workers": 0}},
    {"extra": {"models": {"default": "evil:x"}}},
]


@pytest.mark.parametrize("body", REFUSED_BODIES)
def test_a_refused_request_changes_nothing(api: Api, config: Path, body: dict[str, Any]) -> None:
    before = config.read_bytes()
    response = api.client.put("/settings", json=body)
    assert response.status_code in (400, 422), response.text
    assert response.json()["status"] == "error"
    assert config.read_bytes() == before
    _still_loads(api.home)


def test_a_broken_config_file_is_reported_and_left_alone(api: Api, config: Path) -> None:
    config.write_text("[[[ not toml\n")
    response = api.client.put("/settings", json={"memory": {"note": "x"}})
    assert response.status_code == 400 and response.json()["type"] == "ConfigError"
    assert config.read_text() == "[[[ not toml\n"


def test_parallel_updates_keep_every_key(api: Api, config: Path) -> None:
    def put(i: int) -> None:
        response = api.client.put("/settings", json={"memory": {f"k{i}": i}})
        assert response.status_code == 200, response.text

    threads = [threading.Thread(target=put, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    memory = read_config_file(config)["memory"]
    assert memory == {"keep": True, **{f"k{i}": i for i in range(8)}}
    assert not [p for p in config.parent.iterdir() if p.name.startswith(".config.")]


def test_memory_settings_are_real_and_checked(api: Api, config: Path) -> None:
    shown = api.client.get("/settings").json()["memory"]
    assert shown["enabled"] is True and shown["every_turns"] == 2  # the defaults
    response = api.client.put("/settings", json={"memory": {"enabled": False, "per_type": 9}})
    assert response.status_code == 200, response.text
    settings = load_settings(api.home)
    assert (settings.memory_enabled, settings.memory_per_type) == (False, 9)
    before = config.read_bytes()
    refused = api.client.put("/settings", json={"memory": {"every_turns": -1}})
    assert refused.status_code == 400 and "memory_every_turns" in refused.json()["message"]
    assert config.read_bytes() == before
