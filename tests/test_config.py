"""The one configuration loader: precedence, validation, the [models] table, homes."""

from __future__ import annotations

from pathlib import Path

import pytest

from xhelio.agents.models import resolve_models
from xhelio.config import load_settings
from xhelio.errors import ConfigError


@pytest.mark.parametrize(
    ("var", "value", "expected"),
    [
        ("XHELIO_HTTP_TIMEOUT_S", "-1", "greater than 0"),
        ("XHELIO_HTTP_TIMEOUT_S", "nan", "finite"),
        ("XHELIO_HTTP_TIMEOUT_S", "inf", "finite"),
        ("XHELIO_HTTP_DEADLINE_S", "0", "greater than 0"),
        ("XHELIO_CACHE_MAX_MB", "-5", "at least 0"),
        ("XHELIO_HTTP_RETRIES", "2.5", "whole number"),
        ("XHELIO_SESSION_MEMORY_MB", "lots", "whole number"),
        ("XHELIO_PLAN_REVIEW", "maybe", "true or false"),
        ("XHELIO_DEFAULT_SOURCE", "ftp://x", "a data source name"),
    ],
)
def test_invalid_environment_values_are_one_clear_line(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = caught.value.message
    assert "\n" not in message
    assert var in message and expected in message and repr(value) in message


def test_binary_garbage_and_bad_values_in_the_config_file(xhelio_home: Path) -> None:
    config = xhelio_home / "config.toml"
    config.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings()
    config.write_text("cache_max_mb = -1\n")
    with pytest.raises(ConfigError, match=r"cache_max_mb' in .*config.toml"):
        load_settings()
    config.write_text("[models]\nplanner = 3\n")
    with pytest.raises(ConfigError, match=r"\[models\].planner"):
        load_settings()


def test_precedence_file_then_environment_then_overrides(
    xhelio_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (xhelio_home / "config.toml").write_text("http_timeout_s = 12\nhttp_retries = 7\n")
    settings = load_settings()
    assert (settings.http_timeout_s, settings.http_retries) == (12.0, 7)
    monkeypatch.setenv("XHELIO_HTTP_RETRIES", "1")
    assert load_settings().http_retries == 1
    assert load_settings(http_retries=0).http_retries == 0
    with pytest.raises(ConfigError, match="Unknown setting"):
        load_settings(no_such_setting=1)


def test_load_settings_home_reads_that_homes_config(xhelio_home: Path, tmp_path: Path) -> None:
    (xhelio_home / "config.toml").write_text('cache_max_mb = 11\n[models]\ndefault = "openai:a"\n')
    other = tmp_path / "h2"
    other.mkdir()
    (other / "config.toml").write_text('cache_max_mb = 22\n[models]\ndefault = "openai:b"\n')
    assert load_settings().cache_max_mb == 11
    h2 = load_settings(home=other)
    assert h2.home == other and h2.cache_max_mb == 22
    assert h2.model_table() == {"default": "openai:b"}
    # The agents read their models through the same loader, from the same home.
    assert resolve_models(other, env={}).orchestrator == "openai:b"
    assert resolve_models(h2, env={}).orchestrator == "openai:b"
    assert resolve_models(load_settings(), env={}).orchestrator == "openai:a"
