"""The memory tools through the session's funnel, and the memory settings' sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from xhelio.config import load_settings
from xhelio.errors import ConfigError
from xhelio.long_term_memory.inject import inject
from xhelio.long_term_memory.store import MemoryStore
from xhelio.tools.workspace import open_workspace


def test_review_memory_stamps_the_agent_it_was_shown_to() -> None:
    settings = load_settings()
    store = MemoryStore.open(settings)
    shown = store.add("OMNI_HRO_1MIN speed has gaps before 1995", "pitfall", "data_ops")
    other = store.add("Plot in dark mode", "preference", "visualization")
    ws = open_workspace(settings=settings)
    try:
        inject(store, ws.session.events, "data_ops", "data_ops", 500)
        call = ws.funnel.call
        ok = call("review_memory", {"memory_id": shown.id, "stars": 5, "comment": "avoided gaps"})
        assert ok.ok and ok.to_dict()["agent"] == "data_ops"
        assert call("review_memory", {"memory_id": other.id, "stars": 2}).to_dict()["agent"] == (
            "user"
        )
        refused = call("review_memory", {"memory_id": shown.id, "stars": 7})
        assert not refused.ok
        missing = call("review_memory", {"memory_id": "nope", "stars": 3})
        assert not missing.ok and "No memory 'nope'" in (missing.error or "")
        added = call("remember", {"content": "Use RTN for PSP", "scopes": ["mission:psp"]})
        assert added.to_dict()["source"] == "user_explicit"
        found = call("search_memory", {"query": "RTN"}).to_dict()
        assert [m["content"] for m in found["memories"]] == ["Use RTN for PSP"]
        off = call("edit_memory", {"memory_id": other.id, "enabled": False}).to_dict()
        assert off["enabled"] is False
        status = call("memory_status", {}).to_dict()
        assert status["by_type"] == {"pitfall": 1, "preference": 2}
    finally:
        ws.close()
    review = store.get(shown.id).review
    assert review is not None and (review.stars, review.comment) == (5, "avoided gaps")


def test_memory_settings_come_from_the_memory_table_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.toml").write_text("[memory]\nenabled = false\nper_type = 7\nnote = 'x'\n")
    monkeypatch.setenv("XHELIO_MEMORY_INJECTION_TOKENS", "900")
    settings = load_settings(tmp_path)
    assert (settings.memory_enabled, settings.memory_per_type) == (False, 7)
    assert settings.memory_injection_tokens == 900
    (tmp_path / "config.toml").write_text("[memory]\nper_type = 0\n")
    with pytest.raises(ConfigError, match="memory_per_type"):
        load_settings(tmp_path)
