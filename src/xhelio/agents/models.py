"""Which LLM serves each agent tier, with what thinking level, and the 429 fallback switch.

Models are pydantic-ai model strings, `provider:model`:

* `google:gemini-...` Gemini API (`GEMINI_API_KEY` or `GOOGLE_API_KEY`); the pre-v2
  pydantic-ai spellings `google-gla:` and `google-vertex:` are accepted and rewritten.
* `openai:...` OpenAI Responses API; `openai-chat:...` Chat Completions, which honours
  `OPENAI_BASE_URL`, so Ollama, vLLM, llama.cpp and other compatible servers work (no key
  needed when a base URL is set).
* `ollama:...` (`OLLAMA_BASE_URL`, default `http://127.0.0.1:11434/v1`), `anthropic:...`.

Tier precedence, highest first: explicit override (`--model`) > `XHELIO_<TIER>_MODEL` >
`XHELIO_MODEL` > `[models]` tier key in `$XHELIO_HOME/config.toml` > its `default` key >
auto-detection from the provider keys present. With nothing configured and no key, xhelio
runs in offline mode.

The fallback is a session-wide sticky switch (`ModelRouter`) rather than pydantic-ai's
`FallbackModel` alone: `FallbackModel` tries the exhausted primary again on every request,
which after a quota 429 only adds latency and more 429s. The router still uses a
`FallbackModel` until the first 429 so an agent run fails over mid-run without repeating the
tool calls it already made, then hands out the fallback model alone.

Imports nothing from xhelio above `config` and `errors`.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic_ai.exceptions import (
    FallbackExceptionGroup,
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)
from pydantic_ai.exceptions import UserError as PydanticAIUserError
from pydantic_ai.models import Model, infer_model, infer_model_profile
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.providers import Provider, infer_provider, infer_provider_class
from pydantic_ai.settings import ModelSettings, ThinkingLevel

from xhelio.config import Settings, home_dir, load_settings
from xhelio.errors import (
    ConfigError,
    ServerError,
    ServerUnreachableError,
    UserError,
    XhelioError,
)

__all__ = [
    "OFFLINE_MESSAGE",
    "THINKING",
    "TIERS",
    "ModelConfig",
    "ModelRouter",
    "Tier",
    "build_model",
    "is_rate_limit_error",
    "model_settings_for",
    "normalize_model_string",
    "resolve_models",
]

logger = logging.getLogger(__name__)

Tier = Literal["orchestrator", "sub_agent", "planner", "insight", "inline", "fallback"]
TIERS: tuple[Tier, ...] = ("orchestrator", "sub_agent", "planner", "insight", "inline", "fallback")

THINKING: dict[Tier, ThinkingLevel] = {
    "orchestrator": "high",
    "planner": "high",
    "sub_agent": "low",
    "insight": "low",
    "fallback": "low",
    "inline": False,
}
"""Deep reasoning where routing and planning happen, little for executors, none inline."""

OFFLINE_MESSAGE = (
    "running in offline mode: no model configured and no provider key found "
    "(set XHELIO_MODEL, e.g. 'openai-chat:llama3.2' with OPENAI_BASE_URL for a local server, "
    "or one of GEMINI_API_KEY/GOOGLE_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY)"
)

_LEGACY_PREFIXES = {"google-gla": "google", "google-vertex": "google-cloud"}
_DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434/v1"
_EXAMPLES = "'google:gemini-3.8-flash', 'openai-chat:llama3.2', 'ollama:qwen3', 'anthropic:...'"


@dataclass(frozen=True)
class _AutoModels:
    """Models picked when only a provider key is present (names the installed pydantic-ai knows)."""

    key_vars: tuple[str, ...]
    main: str
    light: str
    fallback: str

    def for_tier(self, tier: Tier) -> str:
        if tier == "inline":
            return self.light
        if tier == "fallback":
            return self.fallback
        return self.main


_AUTO_DETECT: tuple[_AutoModels, ...] = (
    _AutoModels(
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "google:gemini-3.8-flash",
        "google:gemini-3.1-flash-lite",
        "google:gemini-3.5-flash-lite",
    ),
    _AutoModels(
        ("OPENAI_API_KEY",), "openai:gpt-6.1-terra", "openai:gpt-6-luna", "openai:gpt-6-luna"
    ),
    _AutoModels(
        ("ANTHROPIC_API_KEY",),
        "anthropic:claude-sonnet-5-5",
        "anthropic:claude-haiku-5-5",
        "anthropic:claude-haiku-5-5",
    ),
)


@dataclass(frozen=True)
class ModelConfig:
    """The model string per tier (None = no model) and how it was chosen."""

    orchestrator: str | None = None
    sub_agent: str | None = None
    planner: str | None = None
    insight: str | None = None
    inline: str | None = None
    fallback: str | None = None
    offline: bool = True
    reason: str = OFFLINE_MESSAGE
    sources: Mapping[str, str] = field(default_factory=dict[str, str])

    def model_for(self, tier: Tier) -> str | None:
        """Return the configured model string of `tier`."""
        value: str | None = getattr(self, tier)
        return value


def normalize_model_string(model: str, source: str = "model") -> str:
    """Validate `provider:model` and rewrite legacy prefixes; raise ConfigError naming `source`."""
    text = model.strip()
    if text == "test":
        # pydantic-ai's TestModel calls every tool with made-up arguments: a test hook, never
        # something a request, the config or the environment may choose. Tests pass models
        # as objects (the `build_model` seam), never as this string.
        raise ConfigError(
            f"{source}={model!r} is pydantic-ai's test model, which is not available here; "
            f"use 'provider:model', e.g. {_EXAMPLES}."
        )
    provider, sep, name = text.partition(":")
    if not sep or not provider or not name:
        raise ConfigError(
            f"{source}={model!r} is not a model string: use 'provider:model', e.g. {_EXAMPLES}."
        )
    provider = _LEGACY_PREFIXES.get(provider, provider)
    try:
        infer_provider_class(provider)
    except ValueError:
        raise ConfigError(
            f"{source}={model!r} names an unknown model provider {provider!r}; use one of "
            "google, openai, openai-chat, ollama, anthropic (or another pydantic-ai provider)."
        ) from None
    return f"{provider}:{name}"


def _auto_detect(env: Mapping[str, str]) -> tuple[_AutoModels, str] | None:
    for auto in _AUTO_DETECT:
        for var in auto.key_vars:
            if env.get(var):
                return auto, var
    return None


def resolve_models(
    settings_or_home: Settings | Path | str | None = None,
    override: str | None = None,
    env: Mapping[str, str] = os.environ,
) -> ModelConfig:
    """Choose the model of every tier from override, env, config file and provider keys."""
    if isinstance(settings_or_home, Settings):
        settings = settings_or_home
    elif settings_or_home is not None:
        settings = load_settings(home=Path(settings_or_home))
    else:
        home = env.get("XHELIO_HOME")
        settings = load_settings(home=Path(home) if home else home_dir())
    # The one configuration loader read and validated the [models] table.
    config_file = settings.config_file
    file_models = settings.model_table()
    detected = _auto_detect(env)
    chosen: dict[str, str | None] = {}
    sources: dict[str, str] = {}
    for tier in TIERS:
        tier_env = f"XHELIO_{tier.upper()}_MODEL"
        candidates: list[tuple[str | None, str]] = [
            (override, "--model override"),
            (env.get(tier_env), tier_env),
            (env.get("XHELIO_MODEL"), "XHELIO_MODEL"),
            (file_models.get(tier), f"[models].{tier} in {config_file}"),
            (file_models.get("default"), f"[models].default in {config_file}"),
        ]
        if detected is not None:
            auto, var = detected
            candidates.append((auto.for_tier(tier), f"auto-detected: {var} is set"))
        value, source = next(((v, s) for v, s in candidates if v and v.strip()), (None, ""))
        chosen[tier] = normalize_model_string(value, source) if value else None
        if value:
            sources[tier] = source
    offline = chosen["orchestrator"] is None
    if not offline:
        # A tier left without any setting (only possible when no key was auto-detected) follows
        # the orchestrator, so every agent of an online session has a model.
        for tier in TIERS:
            if chosen[tier] is None:
                chosen[tier] = chosen["orchestrator"]
                sources[tier] = "same as orchestrator"
    reason = (
        OFFLINE_MESSAGE
        if offline
        else "; ".join(f"{tier}={chosen[tier]} ({sources[tier]})" for tier in TIERS)
    )
    return ModelConfig(
        orchestrator=chosen["orchestrator"],
        sub_agent=chosen["sub_agent"],
        planner=chosen["planner"],
        insight=chosen["insight"],
        inline=chosen["inline"],
        fallback=chosen["fallback"],
        offline=offline,
        reason=reason,
        sources=sources,
    )


def _provider_factory(env: Mapping[str, str], model: str) -> Callable[[str], Provider[Any]]:
    """Build providers from `env` (not os.environ) so keys and base URLs are explicit."""

    def factory(provider: str) -> Provider[Any]:
        if provider == "google":
            from pydantic_ai.providers.google import GoogleProvider

            key = env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY")
            if not key:
                raise ConfigError(
                    f"Model {model!r} needs GEMINI_API_KEY or GOOGLE_API_KEY; set one, or choose "
                    "another model with XHELIO_MODEL."
                )
            return GoogleProvider(api_key=key)
        if provider in ("openai", "openai-chat", "openai-responses"):
            from pydantic_ai.providers.openai import OpenAIProvider

            base_url = env.get("OPENAI_BASE_URL") or None
            key = env.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
            if key is None:
                raise ConfigError(
                    f"Model {model!r} needs OPENAI_API_KEY, or OPENAI_BASE_URL pointing at an "
                    "OpenAI-compatible server (Ollama, vLLM, llama.cpp)."
                )
            return OpenAIProvider(base_url=base_url, api_key=key)
        if provider == "ollama":
            from pydantic_ai.providers.ollama import OllamaProvider

            base_url = env.get("OLLAMA_BASE_URL") or _DEFAULT_OLLAMA_URL
            return OllamaProvider(base_url=base_url, api_key=env.get("OLLAMA_API_KEY") or None)
        if provider == "anthropic":
            from pydantic_ai.providers.anthropic import AnthropicProvider

            key = env.get("ANTHROPIC_API_KEY")
            if not key:
                raise ConfigError(
                    f"Model {model!r} needs ANTHROPIC_API_KEY; set it, or choose another model "
                    "with XHELIO_MODEL."
                )
            return AnthropicProvider(api_key=key, base_url=env.get("ANTHROPIC_BASE_URL") or None)
        return infer_provider(provider)

    return factory


def build_model(model: str, env: Mapping[str, str] = os.environ) -> Model:
    """Build the pydantic-ai model for `model` without contacting the provider."""
    normalized = normalize_model_string(model)
    try:
        return infer_model(normalized, provider_factory=_provider_factory(env, normalized))
    except PydanticAIUserError as exc:
        raise ConfigError(f"Cannot use model {normalized!r}: {exc}") from exc


def model_settings_for(tier: Tier, model_string: str) -> ModelSettings:
    """Return the tier's thinking level as model settings, if the model can think."""
    profile = infer_model_profile(normalize_model_string(model_string))
    if profile.get("supports_thinking") or profile.get("thinking_always_enabled"):
        return ModelSettings(thinking=THINKING[tier])
    return ModelSettings()


def is_rate_limit_error(exc: BaseException) -> bool:
    """Tell whether `exc` is a provider rate-limit or quota refusal (HTTP 429 and kin)."""
    if isinstance(exc, FallbackExceptionGroup):
        return any(is_rate_limit_error(inner) for inner in exc.exceptions)
    if isinstance(exc, ModelRateLimitError | ModelQuotaExceededError):
        return True
    return isinstance(exc, ModelHTTPError) and exc.status_code == 429


T = TypeVar("T")


class ModelRouter:
    """Hand out each tier's model and switch every tier to the fallback after a 429."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        build: Callable[[str], Model] | None = None,
        on_switch: Callable[[str], None] | None = None,
    ) -> None:
        if config.offline:
            raise ConfigError(f"No model to route: {config.reason}.")
        self.config = config
        self._build = build or build_model
        self._on_switch = on_switch
        self._models: dict[str, Model] = {}
        self._lock = threading.Lock()
        self._switched = False

    @property
    def switched(self) -> bool:
        """True once a rate limit moved every tier to the fallback model."""
        return self._switched

    def _tier_model(self, tier: Tier) -> str:
        model = self.config.model_for(tier)
        assert model is not None, "resolve_models fills every tier of an online config"
        return model

    def _fallback_for(self, tier: Tier) -> str | None:
        fallback = self.config.fallback
        return fallback if fallback and fallback != self._tier_model(tier) else None

    def model_name_for(self, tier: Tier) -> str:
        """Return the model string `tier` uses now (the fallback once switched)."""
        if self._switched and self.config.fallback:
            return self.config.fallback
        return self._tier_model(tier)

    def _get(self, model: str) -> Model:
        with self._lock:
            if model not in self._models:
                self._models[model] = self._build(model)
            return self._models[model]

    def model_for(self, tier: Tier) -> Model:
        """Return `tier`'s model: primary with in-run failover, or the fallback once switched."""
        name = self.model_name_for(tier)
        fallback = None if self._switched else self._fallback_for(tier)
        if fallback is None:
            return self._get(name)
        return _StickyFallbackModel(self, self._get(name), self._get(fallback))

    def settings_for(self, tier: Tier) -> ModelSettings:
        """Return the thinking settings of `tier` for the model it uses now."""
        return model_settings_for(tier, self.model_name_for(tier))

    def note_error(self, exc: BaseException) -> bool:
        """Switch all tiers to the fallback if `exc` is a rate limit; True if this call switched."""
        if not is_rate_limit_error(exc) or not self.config.fallback:
            return False
        with self._lock:
            if self._switched:
                return False
            self._switched = True
        failed = getattr(exc, "model_name", "the primary model")
        logger.warning(
            "Model %s hit a rate limit; every agent now uses %s for the rest of the session.",
            failed,
            self.config.fallback,
        )
        if self._on_switch is not None:
            self._on_switch(self.config.fallback)
        return True

    def _fall_back_on(self, exc: Exception) -> bool:
        """FallbackModel hook: fail over (and switch the session) only on rate limits."""
        if not is_rate_limit_error(exc):
            return False
        self.note_error(exc)
        return True

    async def run_with_fallback(self, make_call: Callable[[Model], Awaitable[T]], tier: Tier) -> T:
        """Run `make_call` with the tier's model; after a 429, retry once on the fallback."""
        started_on_fallback = self._switched
        try:
            return await make_call(self.model_for(tier))
        except (ModelAPIError, FallbackExceptionGroup) as exc:
            fallback_tried = started_on_fallback or isinstance(exc, FallbackExceptionGroup)
            retry = is_rate_limit_error(exc) and not fallback_tried and self._fallback_for(tier)
            if not retry:
                raise self.explain(exc, tier) from exc
            self.note_error(exc)
        try:
            return await make_call(self.model_for(tier))
        except (ModelAPIError, FallbackExceptionGroup) as exc:
            raise self.explain(exc, tier) from exc

    def explain(self, exc: BaseException, tier: Tier = "orchestrator") -> XhelioError:
        """Turn a pydantic-ai model error into an xhelio error a user can act on."""
        inner = exc.exceptions[-1] if isinstance(exc, FallbackExceptionGroup) else exc
        model = getattr(inner, "model_name", None) or self.model_name_for(tier)
        if isinstance(inner, UsageLimitExceeded):
            # The turn's own budget (UsageLimits), not the provider: say what to change.
            limit = str(inner).split(". ")[0].replace("The next request would", "it would")
            return UserError(
                f"This request stopped at its model budget ({limit}): ask for less at once, "
                "or allow more model requests (max_turns). What it fetched so far is kept."
            )
        if is_rate_limit_error(exc):
            if self._fallback_for(tier) is None and not self._switched:
                return ServerError(
                    f"The model provider refused the request for {model} (429 rate limit or quota) "
                    "and no other fallback model is configured; set XHELIO_FALLBACK_MODEL to a "
                    "different model (XHELIO_MODEL or --model alone set every tier, the fallback "
                    "too), or wait and retry.",
                    status_code=429,
                )
            return ServerError(
                f"The model provider refused the request (429 rate limit or quota) and the "
                f"fallback model {self.config.fallback} failed too ({inner}); wait and retry.",
                status_code=429,
            )
        return _describe_model_error(inner, model)


class _StickyFallbackModel(FallbackModel):
    """A FallbackModel that skips the primary once the router has switched the session.

    An agent run that started before another agent's 429 (the orchestrator waiting on a
    sub-agent) would otherwise keep asking the exhausted primary first on every request.
    """

    def __init__(self, router: ModelRouter, primary: Model, fallback: Model) -> None:
        self._router = router
        self._chain_models: list[Model] = [primary, fallback]
        super().__init__(primary, fallback, fallback_on=router._fall_back_on)  # pyright: ignore[reportPrivateUsage]

    @property
    def models(self) -> list[Model]:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The chain FallbackModel tries: without the primary once the session switched."""
        return self._chain_models[1:] if self._router.switched else self._chain_models

    @models.setter
    def models(self, value: list[Model]) -> None:  # pyright: ignore[reportIncompatibleVariableOverride]
        self._chain_models = list(value)


def _describe_model_error(exc: BaseException, model: str) -> XhelioError:
    if isinstance(exc, UnexpectedModelBehavior):
        return ServerError(
            f"The model {model} answered with something xhelio could not use ({exc.message}); "
            "retry, rephrase the request, or choose a stronger model with XHELIO_MODEL."
        )
    status = exc.status_code if isinstance(exc, ModelHTTPError) else None
    if isinstance(exc, ModelAuthenticationError) or status in (401, 403):
        return ConfigError(
            f"The model provider rejected the credentials for {model} (HTTP {status}); check the "
            "API key variable of that provider (e.g. GEMINI_API_KEY, OPENAI_API_KEY)."
        )
    if isinstance(exc, ModelNotFoundError) or status == 404:
        return ConfigError(
            f"The model provider does not know the model {model!r} (HTTP {status}); set "
            f"XHELIO_MODEL to a model it serves, e.g. {_EXAMPLES}."
        )
    if isinstance(exc, ModelConnectionError):
        return ServerUnreachableError(
            f"Could not reach the model provider for {model} ({exc}); check the network or the "
            "base URL (OPENAI_BASE_URL, OLLAMA_BASE_URL) and retry."
        )
    return ServerError(
        f"The model provider failed for {model} ({exc}); retry later or choose another model "
        "with XHELIO_MODEL.",
        status_code=status,
    )
