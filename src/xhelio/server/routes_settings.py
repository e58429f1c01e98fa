"""`GET/PUT /settings`: models per tier and limits in the config file; never any API key.

Only the keys listed here are read back or written; provider keys stay in the environment
and are reported as present or absent, never as values.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from xhelio.agents.models import TIERS, normalize_model_string
from xhelio.config import read_config_file, write_config_file
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
LONG_TERM_MEMORY_KEYS = ("enabled", "every_turns", "injection_tokens", "per_type")
"""Keys of the ``[memory]`` table that are settings (`memory_<key>`, checked like them)."""
_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "credential")
"""A key with a word ending in one of these ("api_key", "auth_token", "apikey") names a
secret; a count such as `injection_tokens` does not."""
_KEY_VARS = {
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
}
# One read-merge-write at a time, so two PUTs never lose each other's keys.
_WRITE_LOCK = threading.Lock()

MemoryKey = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
MemoryText = Annotated[str, StringConstraints(max_length=1000)]
MemoryNumber = Annotated[float, Field(allow_inf_nan=False)]
_INT_RANGE = (-(2**63), 2**63 - 1)  # what a TOML integer holds
ModelText = Annotated[str, StringConstraints(max_length=200)]


class Limits(BaseModel):
    """Limits written as top-level keys of the config file."""

    model_config = ConfigDict(extra="forbid")

    http_timeout_s: float | None = Field(default=None, gt=0, le=3600)
    http_retries: int | None = Field(default=None, ge=0, le=20)
    download_workers: int | None = Field(default=None, ge=1, le=64)
    cache_max_mb: int | None = Field(default=None, ge=0, le=2**40)
    sandbox_timeout_s: float | None = Field(default=None, gt=0, le=3600)
    sandbox_memory_mb: int | None = Field(default=None, ge=64, le=2**30)
    session_memory_mb: int | None = Field(default=None, ge=16, le=2**30)


class SettingsUpdate(BaseModel):
    """Body of `PUT /settings`: only the keys given change; "" clears a model.

    Memory keys are plain lower-case names (``[a-z][a-z0-9_]*``, at most 64 characters)
    and values are true/false, numbers or text of at most 1000 characters.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    models: dict[str, ModelText] | None = Field(default=None, max_length=len(MODEL_KEYS))
    limits: Limits | None = None
    memory: dict[MemoryKey, bool | int | MemoryNumber | MemoryText] | None = Field(
        default=None, max_length=100
    )

    @field_validator("memory", mode="before")
    @classmethod
    def _toml_integers(cls, value: object) -> object:
        """Refuse integers TOML cannot hold (they would otherwise pass as floats)."""
        if isinstance(value, dict):
            for item in value.values():  # pyright: ignore[reportUnknownVariableType]
                if type(item) is int and not _INT_RANGE[0] <= item <= _INT_RANGE[1]:
                    raise ValueError("integers must fit in 64 bits")
        return value  # pyright: ignore[reportUnknownVariableType]


def _names_a_secret(key: str) -> bool:
    return any(word.endswith(_SECRET_WORDS) for word in key.lower().split("_"))


def _merged(data: dict[str, Any], body: SettingsUpdate) -> dict[str, Any]:
    """The config file's `data` with the update applied (a new dict; `data` is untouched)."""
    out = dict(data)
    if body.models is not None:
        unknown = [k for k in body.models if k not in MODEL_KEYS]
        if unknown:
            raise ConfigError(f"Unknown model tier {unknown[0]!r}; valid: {', '.join(MODEL_KEYS)}.")
        old = data.get("models")
        table: dict[str, Any] = dict(old) if isinstance(old, dict) else {}  # pyright: ignore[reportUnknownArgumentType]
        for key, value in body.models.items():
            if value.strip():
                table[key] = normalize_model_string(value, f"models.{key}")
            else:
                table.pop(key, None)
        out["models"] = table
    if body.limits is not None:
        out.update(body.limits.model_dump(exclude_none=True))
    if body.memory is not None:
        secret = [k for k in body.memory if _names_a_secret(k)]
        if secret:
            raise ConfigError(f"Settings never hold secrets; refused keys: {', '.join(secret)}.")
        old = data.get("memory")
        memory: dict[str, Any] = dict(old) if isinstance(old, dict) else {}  # pyright: ignore[reportUnknownArgumentType]
        out["memory"] = {**memory, **body.memory}
    return out


def _view(state: ServerState) -> dict[str, Any]:
    path = state.assistant.settings.config_file
    data = read_config_file(path)
    table = data.get("models") if isinstance(data.get("models"), dict) else {}
    models = {k: table.get(k) for k in MODEL_KEYS}  # type: ignore[union-attr]
    chosen = next((m for m in (models["orchestrator"], models["default"]) if m), None)
    settings = state.assistant.settings
    memory_table = data.get("memory")
    memory: dict[str, Any] = {k: getattr(settings, f"memory_{k}") for k in LONG_TERM_MEMORY_KEYS}
    if isinstance(memory_table, dict):
        memory.update(memory_table)  # pyright: ignore[reportUnknownArgumentType]
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
    """Write the given keys to the config file and return the settings after the write.

    Everything is checked before the file is touched, and the file is replaced whole: a
    refused request changes nothing.
    """
    path: Path = state.assistant.settings.config_file
    with _WRITE_LOCK:
        write_config_file(path, _merged(read_config_file(path), body))
    return _view(state)
