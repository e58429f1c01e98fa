"""Settings from defaults, the config file and `XHELIO_*` environment variables.

Precedence, lowest first: built-in defaults, `$XHELIO_HOME/config.toml`, environment.
Every setting `key` maps to the environment variable `XHELIO_<KEY>` (upper case), so
`cache_max_mb` is `XHELIO_CACHE_MAX_MB`. `XHELIO_HOME` moves all state (config, catalog
index, cache, sessions) under one folder. Imports nothing from xhelio but `errors`.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from xhelio.errors import ConfigError

__all__ = ["Settings", "home_dir", "load_settings"]


def home_dir() -> Path:
    """Return the folder holding all xhelio state (`XHELIO_HOME` or the XDG data dir)."""
    env = os.environ.get("XHELIO_HOME")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("xhelio", appauthor=False))


@dataclass(frozen=True)
class Settings:
    """Every tunable of xhelio, with the defaults a new user gets."""

    home: Path = field(default_factory=home_dir)
    hapi_url: str = "https://cdaweb.gsfc.nasa.gov/hapi"
    cdas_url: str = "https://cdaweb.gsfc.nasa.gov/WS/cdasr/1"
    default_source: str = "hapi"
    http_timeout_s: float = 60.0
    http_retries: int = 3
    download_workers: int = 4
    cache_max_mb: int = 2048
    cache_fragment_hours: int = 24
    sandbox_timeout_s: float = 30.0
    sandbox_memory_mb: int = 2048
    sandbox_cpu_s: int = 60
    catalog_refresh_workers: int = 8
    plan_review: bool = False
    plan_review_iterations: int = 2

    @property
    def config_file(self) -> Path:
        """Path of the user's config file."""
        return self.home / "config.toml"

    @property
    def catalog_db(self) -> Path:
        """Path of the SQLite catalog index."""
        return self.home / "catalog.sqlite"

    @property
    def cache_dir(self) -> Path:
        """Folder of the fragment data cache."""
        return self.home / "cache"

    @property
    def sessions_dir(self) -> Path:
        """Folder holding one subfolder per session."""
        return self.home / "sessions"


def _coerce(name: str, raw: object, target: object) -> object:
    """Convert a config-file or env value to the type of the default."""
    try:
        if isinstance(target, bool):
            if isinstance(raw, str):
                return raw.strip().lower() in {"1", "true", "yes", "on"}
            return bool(raw)
        if isinstance(target, int):
            return int(str(raw))
        if isinstance(target, float):
            return float(str(raw))
        if isinstance(target, Path):
            return Path(str(raw)).expanduser()
        return str(raw)
    except ValueError as exc:
        raise ConfigError(
            f"Setting '{name}' has invalid value {raw!r}: expected {type(target).__name__}."
        ) from exc


def _read_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"Config file {path} is not valid TOML: {exc}. Fix or remove it."
        ) from exc


def load_settings(**overrides: object) -> Settings:
    """Build the settings: defaults < config file < environment < explicit overrides."""
    base = Settings()
    values: dict[str, object] = {}
    known = {f.name: getattr(base, f.name) for f in dataclasses.fields(Settings)}
    file_values = _read_file(base.config_file)
    for key, raw in file_values.items():
        if key in known and not isinstance(raw, dict):
            values[key] = _coerce(key, raw, known[key])
    for key, default in known.items():
        env = os.environ.get(f"XHELIO_{key.upper()}")
        if env is not None and key != "home":
            values[key] = _coerce(key, env, default)
    for key, raw in overrides.items():
        if key not in known:
            raise ConfigError(f"Unknown setting '{key}'.")
        if raw is not None:
            values[key] = _coerce(key, raw, known[key])
    if base.home.exists() and not base.home.is_dir():
        raise ConfigError(
            f"XHELIO_HOME {base.home} is a file, not a folder: point XHELIO_HOME at a folder "
            "(it is created when missing)."
        )
    settings = dataclasses.replace(base, **values)  # type: ignore[arg-type]
    for url_key in ("hapi_url", "cdas_url"):
        object.__setattr__(settings, url_key, getattr(settings, url_key).rstrip("/"))
    return settings
