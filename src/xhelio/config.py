"""Settings from defaults, the config file and `XHELIO_*` environment variables: ONE loader.

Precedence, lowest first: built-in defaults, `<home>/config.toml`, environment, explicit
overrides. Every setting `key` maps to the environment variable `XHELIO_<KEY>` (upper
case), so `cache_max_mb` is `XHELIO_CACHE_MAX_MB`. `XHELIO_HOME` (or ``home=`` given to
`load_settings`) moves all state (config, catalog index, cache, sessions) under one
folder, and the config file read is always the one of that home.

The config file also holds the agents' model choices, ``[models]`` with keys ``default``
and one per agent tier; they are read here (there is no second TOML reader) and exposed
as `Settings.models`. ``[hapi_servers]`` (``name = "https://..."``, or the environment
variable ``XHELIO_HAPI_SERVERS="name=https://...,other=https://..."``) names HAPI servers
that become data sources under those names (`Settings.hapi_servers`).

Every value is validated by one pydantic model (types and ranges: timeouts finite and
positive, sizes not negative, ...); an invalid value, an unknown override or an
unreadable file is a `ConfigError` of one line naming the setting, where it came from
and what is expected. Imports nothing from xhelio but `errors`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import platformdirs
import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from xhelio.errors import ConfigError

__all__ = [
    "MODEL_KEYS",
    "SOURCE_NAME_PATTERN",
    "Settings",
    "check_config_values",
    "home_dir",
    "load_settings",
    "read_config_file",
    "write_config_file",
]

SOURCE_NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,39}$"
"""What a data source's name looks like (lower case; registered names are checked later)."""

MODEL_KEYS = ("default", "orchestrator", "sub_agent", "planner", "insight", "inline", "fallback")
"""Valid keys of the ``[models]`` table: a default and one per agent tier."""


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
    naif_url: str = "https://naif.jpl.nasa.gov/pub/naif"
    """Where SPICE kernels are downloaded from (the NAIF archive, or a mirror)."""
    pds_url: str = "https://pds-ppi.igpp.ucla.edu"
    """The PDS Planetary Plasma Interactions archive the 'pds' source reads products from."""
    default_source: str = "hapi"
    http_timeout_s: float = 60.0
    """Longest wait for any single network read (and for connecting)."""
    http_deadline_s: float = 1800.0
    """Longest one whole request (one piece of a fetch) may take, however it trickles."""
    http_retries: int = 3
    http_retry_after_max_s: float = 60.0
    """Longest wait a server's Retry-After (HTTP 429/503) may impose before a retry."""
    download_workers: int = 4
    cache_max_mb: int = 2048
    """Size limit of everything cached on disk (fragments and downloaded files together)."""
    cache_fragment_hours: int = 24
    fetch_piece_mb: int = 16
    """Largest estimated size of one piece of a fetch streamed to a file; longer ranges
    are split. A piece passes through several copies (parse, cache, file), so peak memory
    is a few hundred MB above this: 16 keeps 20 years of 1-minute data under 400 MB."""
    session_memory_mb: int = 2048
    """Largest estimated size of data loaded into a session by one fetch."""
    sandbox_timeout_s: float = 30.0
    sandbox_memory_mb: int = 2048
    sandbox_cpu_s: int = 60
    sandbox_spares: int = 2
    """Sandbox children kept forked, isolated and warm ahead of calls (~10 MB each)."""
    sandbox_session_result_mb: int = 1024
    """Total size of the computed results a session may hold (custom_operation)."""
    memory_enabled: bool = True
    """Long-term memory on/off: injection into prompts and the memory agent (docs/memory.md)."""
    memory_every_turns: int = 2
    """The memory agent reads the session's new events after every this many turns (0: never)."""
    memory_injection_tokens: int = 1500
    """Budget of the memory block in the orchestrator's prompt (sub-agents get half each)."""
    memory_per_type: int = 15
    """Active memories kept per type before consolidation archives or merges some."""
    memory_embedder: str = ""
    """An installed `xhelio.memory_embedders` entry point; empty: lexical search only."""
    catalog_refresh_workers: int = 8
    plan_review: bool = False
    plan_review_iterations: int = 2
    context_budget_tokens: int = 60_000
    """Largest history (tokens) an agent sends before old turns are compacted."""
    context_max_messages: int = 40
    """Largest number of history messages before compaction (seed 004: 40 events)."""
    context_keep_messages: int = 20
    """Recent messages compaction never touches (seed 004: keep 20)."""
    loop_repeat_limit: int = 5
    """Near-identical model outputs or tool calls in one run that end it (seed 004)."""
    models: tuple[tuple[str, str], ...] = ()
    """The ``[models]`` table of the config file as (key, 'provider:model') pairs."""
    hapi_servers: tuple[tuple[str, str], ...] = ()
    """HAPI servers registered as data sources, as (name, url) pairs."""
    swpc_url: str = "https://services.swpc.noaa.gov"
    """Base address of the NOAA SWPC JSON products (the `swpc` web API)."""
    donki_url: str = "https://api.nasa.gov/DONKI"
    """Base address of NASA DONKI (the `donki` web API)."""
    donki_api_key: str = field(default="", repr=False)
    """api.nasa.gov key for DONKI; empty uses the shared, tightly limited DEMO_KEY."""
    ads_url: str = "https://api.adsabs.harvard.edu/v1"
    ads_token: str = field(default="", repr=False)
    """NASA ADS token: literature search is off without one."""
    web_search_url: str = ""
    """A SearXNG-style JSON search endpoint (``.../search``): web search is off without one."""
    web_search_key: str = field(default="", repr=False)
    """Sent as a bearer token to the web search endpoint, when it needs one."""
    api_max_mb: int = 20
    """Largest answer a web API or search call may send."""
    api_timeout_s: float = 30.0
    """Longest a web API or search call (one attempt, whole answer) may take."""
    web_apis: tuple[tuple[str, str, str, str, str], ...] = field(default=(), repr=False)
    """Web APIs the user added (``[web_apis.NAME]``), as (name, kind, url, spec, token)."""

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
        """Folder of the data cache."""
        return self.home / "cache"

    @property
    def sessions_dir(self) -> Path:
        """Folder holding one subfolder per session."""
        return self.home / "sessions"

    def model_table(self) -> dict[str, str]:
        """The ``[models]`` table as a dict (key -> 'provider:model')."""
        return dict(self.models)


_Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
_Count = Annotated[int, Field(ge=0)]
_Positive = Annotated[int, Field(ge=1)]
_HTTP_URL = r"^https?://\S+$"


class _Validated(BaseModel):
    """The types and ranges every setting must satisfy (one place, one message format)."""

    model_config = ConfigDict(extra="forbid", strict=False)

    home: Path
    hapi_url: str
    cdas_url: str
    naif_url: str
    pds_url: str
    default_source: Annotated[str, Field(pattern=SOURCE_NAME_PATTERN)]
    http_timeout_s: _Seconds
    http_deadline_s: _Seconds
    http_retries: _Count
    http_retry_after_max_s: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    download_workers: _Positive
    cache_max_mb: _Count
    cache_fragment_hours: _Positive
    fetch_piece_mb: _Positive
    session_memory_mb: _Positive
    sandbox_timeout_s: _Seconds
    sandbox_memory_mb: _Positive
    sandbox_cpu_s: _Positive
    sandbox_spares: Annotated[int, Field(ge=0, le=16)]
    sandbox_session_result_mb: _Positive
    memory_enabled: bool
    memory_every_turns: _Count
    memory_injection_tokens: Annotated[int, Field(ge=0, le=100_000)]
    memory_per_type: _Positive
    memory_embedder: str
    catalog_refresh_workers: _Positive
    plan_review: bool
    plan_review_iterations: _Count
    context_budget_tokens: Annotated[int, Field(ge=1000)]
    context_max_messages: Annotated[int, Field(ge=4)]
    context_keep_messages: Annotated[int, Field(ge=2)]
    loop_repeat_limit: Annotated[int, Field(ge=2)]
    models: tuple[tuple[str, str], ...]
    hapi_servers: tuple[tuple[str, str], ...]
    swpc_url: Annotated[str, Field(pattern=_HTTP_URL)]
    donki_url: Annotated[str, Field(pattern=_HTTP_URL)]
    donki_api_key: str
    ads_url: Annotated[str, Field(pattern=_HTTP_URL)]
    ads_token: str
    web_search_url: Annotated[str, Field(pattern=rf"{_HTTP_URL}|^$")]
    web_search_key: str
    api_max_mb: _Positive
    api_timeout_s: _Seconds
    web_apis: tuple[tuple[str, str, str, str, str], ...]


_EXPECTED = {
    "float_parsing": "a number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "bool_parsing": "true or false",
    "finite_number": "a finite number",
    "greater_than": "a number greater than {gt:g}",
    "greater_than_equal": "a number of at least {ge:g}",
    "string_pattern_mismatch": "a data source name such as hapi or cdf (see `xhelio sources`)",
}
_URL_KEYS = frozenset({"swpc_url", "donki_url", "ads_url", "web_search_url"})


def read_config_file(path: Path) -> dict[str, Any]:
    """Return the parsed TOML of `path` ({} when missing); `ConfigError` when unreadable."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"Config file {path} is not valid TOML ({exc}). Fix or remove it."
        ) from exc
    except OSError as exc:
        raise ConfigError(
            f"Config file {path} cannot be read ({exc.strerror or exc}). Fix its permissions "
            "or remove it."
        ) from exc


def _models_table(raw: object, path: Path) -> tuple[tuple[str, str], ...]:
    """Validate the ``[models]`` table of the config file."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise ConfigError(f"[models] in {path} must be a table of tier = 'provider:model'.")
    pairs: list[tuple[str, str]] = []
    for key, value in raw.items():  # pyright: ignore[reportUnknownVariableType]
        if key not in MODEL_KEYS:
            raise ConfigError(
                f"Unknown key {key!r} in [models] of {path}; valid keys: {', '.join(MODEL_KEYS)}."
            )
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"[models].{key} in {path} must be a 'provider:model' string.")
        pairs.append((str(key), value))  # pyright: ignore[reportUnknownArgumentType]
    return tuple(pairs)


def _hapi_servers(raw: object, where: str) -> tuple[tuple[str, str], ...]:
    """Validate HAPI servers given as a table or as ``name=url,name=url`` text."""
    if raw is None:
        return ()
    if isinstance(raw, str):
        pairs = [p.partition("=")[::2] for p in raw.split(",") if p.strip()]
    elif isinstance(raw, dict):
        pairs = [(str(k), v) for k, v in raw.items()]  # pyright: ignore[reportUnknownVariableType]
    else:
        raise ConfigError(f"hapi_servers {where} must be a table of name = 'https://...'.")
    servers: list[tuple[str, str]] = []
    for name, url in pairs:
        name = name.strip()
        if not re.match(SOURCE_NAME_PATTERN, name):
            raise ConfigError(
                f"HAPI server name {name!r} {where} must be lower-case letters, digits, - or _ "
                "(it becomes the source's name)."
            )
        if not isinstance(url, str) or not re.match(r"^https?://\S+$", url.strip()):
            raise ConfigError(f"HAPI server '{name}' {where} needs an http(s):// address.")
        servers.append((name, url.strip().rstrip("/")))
    return tuple(servers)


def _memory_table(data: dict[str, Any]) -> dict[str, object]:
    """The long-term memory settings of a ``[memory]`` table, as `memory_<key>` settings.

    Its other keys are free-form options and are not read here.
    """
    table = data.get("memory")
    if not isinstance(table, dict):
        return {}
    items: dict[str, object] = dict(table)  # pyright: ignore[reportUnknownArgumentType]
    return {f"memory_{k}": v for k, v in items.items() if f"memory_{k}" in _KNOWN}


_WEB_API_KINDS = ("openapi", "hapi")


def _web_apis(raw: object, where: str) -> tuple[tuple[str, str, str, str, str], ...]:
    """Validate the ``[web_apis]`` table: NAME = {kind, url, spec (OpenAPI file), token}."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise ConfigError(f"[web_apis] {where} must hold tables such as [web_apis.myapi].")
    apis: list[tuple[str, str, str, str, str]] = []
    for name, table in raw.items():  # pyright: ignore[reportUnknownVariableType]
        label = f"[web_apis.{name}] {where}"
        if not isinstance(name, str) or not re.match(SOURCE_NAME_PATTERN, name):
            raise ConfigError(f"{label}: the name must be lower-case letters, digits, - or _.")
        if not isinstance(table, dict):
            raise ConfigError(f"{label} must be a table with kind, url, spec and token.")
        entry: dict[str, object] = {str(k): v for k, v in table.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        unknown = set(entry) - {"kind", "url", "spec", "token"}
        if unknown:
            raise ConfigError(
                f"{label}: unknown keys {sorted(unknown)}; use kind, url, spec, token."
            )
        kind, url = entry.get("kind", "openapi"), entry.get("url", "")
        spec, token = entry.get("spec", ""), entry.get("token", "")
        if kind not in _WEB_API_KINDS:
            raise ConfigError(f"{label}: kind must be one of {', '.join(_WEB_API_KINDS)}.")
        if not isinstance(url, str) or not re.match(_HTTP_URL, url.strip()):
            raise ConfigError(f"{label} needs url = an http(s):// address.")
        if not isinstance(spec, str) or not isinstance(token, str):
            raise ConfigError(f"{label}: spec and token must be text.")
        if kind == "openapi" and not spec.strip():
            raise ConfigError(f"{label}: an OpenAPI service needs spec = the path of its JSON.")
        apis.append((name, str(kind), url.strip().rstrip("/"), spec.strip(), token))
    return tuple(apis)


def load_settings(home: Path | str | None = None, **overrides: object) -> Settings:
    """Build the settings: defaults < `<home>/config.toml` < environment < `overrides`.

    Args:
        home: The state folder (default `XHELIO_HOME` or the XDG data dir); its config
            file is the one read.
        **overrides: Setting values that win over everything else (None is ignored).

    Raises:
        ConfigError: An unknown setting, an invalid value or an unreadable config file.
    """
    base_home = Path(home).expanduser() if home is not None else home_dir()
    if base_home.exists() and not base_home.is_dir():
        raise ConfigError(
            f"XHELIO_HOME {base_home} is a file, not a folder: point XHELIO_HOME at a folder "
            "(it is created when missing)."
        )
    defaults = Settings(home=base_home)
    values: dict[str, object] = {}
    origin: dict[str, str] = {}
    config_file = defaults.config_file
    file_values = read_config_file(config_file)
    for key, raw in file_values.items():
        if key in _KNOWN and not isinstance(raw, dict):
            values[key], origin[key] = raw, f"in {config_file}"
    for key, raw in _memory_table(file_values).items():
        values[key], origin[key] = raw, f"in {config_file} [memory]"
    for key in sorted(_KNOWN):
        env = os.environ.get(f"XHELIO_{key.upper()}")
        if env is not None:
            values[key], origin[key] = env.strip(), f"from XHELIO_{key.upper()}"
    for key, raw in overrides.items():
        if key not in _KNOWN:
            raise ConfigError(f"Unknown setting '{key}'.")
        if raw is not None:
            values[key], origin[key] = raw, "given"
    models = _models_table(file_values.get("models"), config_file)
    env_servers = os.environ.get("XHELIO_HAPI_SERVERS")
    servers = (
        _hapi_servers(env_servers, "from XHELIO_HAPI_SERVERS")
        if env_servers is not None
        else _hapi_servers(file_values.get("hapi_servers"), f"in {config_file}")
    )
    apis = _web_apis(file_values.get("web_apis"), f"in {config_file}")
    checked = _validated(defaults, values, origin, models, servers, apis)
    settings = Settings(**checked.model_dump())
    for url_key in (
        "hapi_url",
        "cdas_url",
        "naif_url",
        "pds_url",
        "swpc_url",
        "donki_url",
        "ads_url",
    ):
        object.__setattr__(settings, url_key, getattr(settings, url_key).strip().rstrip("/"))
    return settings


_KNOWN = frozenset(f.name for f in dataclasses.fields(Settings)) - {
    "home",
    "models",
    "hapi_servers",
    "web_apis",
}


def _validated(
    defaults: Settings,
    values: dict[str, object],
    origin: dict[str, str],
    models: tuple[tuple[str, str], ...],
    hapi_servers: tuple[tuple[str, str], ...] = (),
    web_apis: tuple[tuple[str, str, str, str, str], ...] = (),
) -> _Validated:
    """`defaults` with `values` laid over them, validated (`ConfigError` naming the key)."""
    merged = {f.name: getattr(defaults, f.name) for f in dataclasses.fields(Settings)}
    merged.update(values)
    merged["models"] = models
    merged["hapi_servers"] = hapi_servers
    merged["web_apis"] = web_apis
    try:
        return _Validated.model_validate(merged)
    except ValidationError as exc:
        raise _config_error(exc, merged, origin) from None


def check_config_values(data: dict[str, Any], path: Path) -> None:
    """Check what a config file would hold, as `load_settings` will read it.

    Raises:
        ConfigError: A setting with an invalid value or an invalid ``[models]`` table.
    """
    values = {k: v for k, v in data.items() if k in _KNOWN and not isinstance(v, dict)}
    values.update(_memory_table(data))
    origin = dict.fromkeys(values, f"in {path}")
    models = _models_table(data.get("models"), path)
    servers = _hapi_servers(data.get("hapi_servers"), f"in {path}")
    apis = _web_apis(data.get("web_apis"), f"in {path}")
    _validated(Settings(home=path.parent), values, origin, models, servers, apis)


def write_config_file(path: Path, data: dict[str, Any]) -> None:
    """Replace `path` by the TOML of `data`, atomically, after checking it reads back the same.

    Keys and strings are quoted by the TOML library, so no key or value can add a table or
    break the file; the file is swapped in whole, so a reader sees the old or the new one.

    Raises:
        ConfigError: `data` holds invalid settings, cannot be written as TOML, or the folder
            cannot be written.
    """
    check_config_values(data, path)
    try:
        text = tomli_w.dumps(data)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"These settings cannot be written to a config file: {exc}.") from exc
    if tomllib.loads(text) != data:  # pragma: no cover - a TOML library fault, never expected
        raise ConfigError("These settings do not read back unchanged; nothing was written.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".config.", suffix=".toml")
    except OSError as exc:
        raise ConfigError(f"Config file {path} cannot be written ({exc.strerror or exc}).") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, path)
    except OSError as exc:
        raise ConfigError(f"Config file {path} cannot be written ({exc.strerror or exc}).") from exc
    finally:
        Path(temp).unlink(missing_ok=True)


def _config_error(
    exc: ValidationError, merged: dict[str, object], origin: dict[str, str]
) -> ConfigError:
    """One line naming the first invalid setting, where it came from and what it must be."""
    error = exc.errors()[0]
    key = str(error["loc"][0]) if error["loc"] else "?"
    context: dict[str, Any] = dict(error.get("ctx") or {})
    template = _EXPECTED.get(error["type"], error["msg"])
    if key in _URL_KEYS:
        template = "an http(s):// address"
    try:
        expected = template.format(**context)
    except (KeyError, IndexError):
        expected = error["msg"]
    value = merged.get(key)
    if isinstance(value, float) and not math.isfinite(value):
        expected = "a finite number"
    where = origin.get(key, "")
    return ConfigError(
        f"Setting '{key}' {where} has invalid value {value!r}: expected {expected}.".replace(
            "  ", " "
        )
    )
