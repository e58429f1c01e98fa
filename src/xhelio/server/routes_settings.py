"""`GET/PUT /settings`: models per tier and limits in the config file; never any API key.

Only the keys listed here are read back or written; provider keys stay in the environment
and are reported as present or absent, never as values.
"""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from xhelio.agents.models import TIERS, normalize_model_string
from xhelio.errors import ConfigError
from xhelio.server.deps import ServerState, server_state

__all__ = ["router"]

router = APIRouter(tags=["settings"])
State = Annotated[ServerState, Depends(server_state)]

LIMIT_KEYS = (
    "http_timeout_s",
    "http_retries",
    "download_workers",
    "cache_max_mb",
    "sandbox_timeout_s",
    "sandbox_memory_mb",
    "session_memory_mb",
)
MODEL_KEYS = ("default", *TIERS)
_SECRET_WORDS = ("key", "token", "secret", "password")
_KEY_VARS = {
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
}


class Limits(BaseModel):
    """Limits written as top-level keys of the config file."""

    model_config = ConfigDict(extra="forbid")

    http_timeout_s: float | None = Field(default=None, gt=0, le=3600)
    http_retries: int | None = Field(default=None, ge=0, le=20)
    download_workers: int | None = Field(default=None, ge=1, le=64)
    cache_max_mb: int | None = Field(default=None, ge=0)
    sandbox_timeout_s: float | None = Field(default=None, gt=0, le=3600)
    sandbox_memory_mb: int | None = Field(default=None, ge=64)
    session_memory_mb: int | None = Field(default=None, ge=16)


class SettingsUpdate(BaseModel):
    """Body of `PUT /settings`: only the keys given change; "" clears a model."""

    model_config = ConfigDict(extra="forbid")

    models: dict[str, str] | None = None
    limits: Limits | None = None
    memory: dict[str, bool | int | float | str] | None = None


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"Config file {path} is not valid TOML: {exc}. Fix or remove it."
        ) from exc


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    raise ConfigError(f"Cannot write {value!r} to the config file.")


def _dump(data: dict[str, Any]) -> str:
    """TOML for top-level scalars and tables of scalars (what the config file holds)."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for name, table in data.items():
        if isinstance(table, dict):
            lines.append(f"\n[{name}]")
            lines.extend(f"{k} = {_toml_value(v)}" for k, v in table.items())  # type: ignore[union-attr]
    return "\n".join(lines) + "\n"


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config.")
    with os.fdopen(fd, "w") as fh:
        fh.write(_dump(data))
    os.replace(tmp, path)


def _view(state: ServerState) -> dict[str, Any]:
    path = state.assistant.settings.config_file
    data = _read(path)
    table = data.get("models") if isinstance(data.get("models"), dict) else {}
    models = {k: table.get(k) for k in MODEL_KEYS}  # type: ignore[union-attr]
    chosen = next((m for m in (models["orchestrator"], models["default"]) if m), None)
    settings = state.assistant.settings
    memory = data.get("memory") if isinstance(data.get("memory"), dict) else {}
    return {
        "provider": str(chosen).partition(":")[0] if chosen else None,
        "models": models,
        "limits": {k: data.get(k, getattr(settings, k)) for k in LIMIT_KEYS},
        "memory": memory,
        "keys_present": {p: any(os.environ.get(v) for v in vs) for p, vs in _KEY_VARS.items()},
        "config_file": str(path),
    }


@router.get("/settings")
def get_settings(state: State) -> dict[str, Any]:
    """Models per tier, limits and memory options from the config file."""
    return _view(state)


@router.put("/settings")
def put_settings(body: SettingsUpdate, state: State) -> dict[str, Any]:
    """Write the given keys to the config file and return the settings after the write."""
    path = state.assistant.settings.config_file
    data = _read(path)
    if body.models is not None:
        table: dict[str, Any] = dict(data.get("models") or {})
        for key, value in body.models.items():
            if key not in MODEL_KEYS:
                raise ConfigError(f"Unknown model tier {key!r}; valid: {', '.join(MODEL_KEYS)}.")
            if value.strip():
                table[key] = normalize_model_string(value, f"models.{key}")
            else:
                table.pop(key, None)
        data["models"] = table
    if body.limits is not None:
        data.update(body.limits.model_dump(exclude_none=True))
    if body.memory is not None:
        secret = [k for k in body.memory if any(w in k.lower() for w in _SECRET_WORDS)]
        if secret:
            raise ConfigError(f"Settings never hold secrets; refused keys: {', '.join(secret)}.")
        data["memory"] = {**dict(data.get("memory") or {}), **body.memory}
    _write(path, data)
    return _view(state)
