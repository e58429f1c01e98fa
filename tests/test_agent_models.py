"""Model tiers, provider strings, thinking settings and the session-wide 429 fallback."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pydantic_ai.models
import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model, override_allow_model_requests
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.ollama import OllamaModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

from xhelio.agents.models import (
    OFFLINE_MESSAGE,
    TIERS,
    ModelConfig,
    ModelRouter,
    build_model,
    is_rate_limit_error,
    model_settings_for,
    resolve_models,
)
from xhelio.agents.usage import UsageTracker
from xhelio.config import load_settings
from xhelio.errors import ConfigError, ServerError

PROVIDER_VARS = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "OLLAMA_BASE_URL",
    "XHELIO_MODEL",
    *(f"XHELIO_{tier.upper()}_MODEL" for tier in TIERS),
)


@pytest.fixture(autouse=True)
def isolated_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real provider can be reached, and no developer key leaks into a test."""
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", False)
    for var in PROVIDER_VARS:
        monkeypatch.delenv(var, raising=False)


def write_config(home: Path, body: str) -> None:
    (home / "config.toml").write_text(body, encoding="utf-8")


# --- tier resolution -------------------------------------------------------------------


def test_nothing_configured_means_offline(xhelio_home: Path) -> None:
    config = resolve_models(xhelio_home, env={})
    assert config.offline
    assert all(config.model_for(tier) is None for tier in TIERS)
    assert config.reason == OFFLINE_MESSAGE
    assert config.reason.startswith("running in offline mode: no model configured")
    assert "XHELIO_MODEL" in config.reason and "GEMINI_API_KEY" in config.reason


def test_auto_detect_prefers_gemini_then_openai_then_anthropic(xhelio_home: Path) -> None:
    all_keys = {"OPENAI_API_KEY": "o", "ANTHROPIC_API_KEY": "a", "GEMINI_API_KEY": "g"}
    gemini = resolve_models(xhelio_home, env=all_keys)
    assert gemini.orchestrator is not None and gemini.orchestrator.startswith("google:gemini")
    assert "flash" in gemini.orchestrator
    assert gemini.sources["orchestrator"] == "auto-detected: GEMINI_API_KEY is set"
    assert resolve_models(xhelio_home, env={"GOOGLE_API_KEY": "g"}).orchestrator == (
        gemini.orchestrator
    )
    openai = resolve_models(xhelio_home, env={"OPENAI_API_KEY": "o", "ANTHROPIC_API_KEY": "a"})
    assert openai.sub_agent is not None and openai.sub_agent.startswith("openai:")
    anthropic = resolve_models(xhelio_home, env={"ANTHROPIC_API_KEY": "a"})
    assert anthropic.planner is not None and anthropic.planner.startswith("anthropic:")
    assert not anthropic.offline
    # The fallback must differ from the main model, or a 429 would have nowhere to go.
    for config in (gemini, openai, anthropic):
        assert config.fallback != config.orchestrator


def test_auto_detected_names_are_known_to_the_installed_pydantic_ai(xhelio_home: Path) -> None:
    known = set(pydantic_ai.models.known_model_names())
    for key in ("GEMINI_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        config = resolve_models(xhelio_home, env={key: "x"})
        for tier in TIERS:
            assert config.model_for(tier) in known


def test_precedence_chain(xhelio_home: Path) -> None:
    write_config(
        xhelio_home,
        '[models]\ndefault = "openai-chat:file-default"\nplanner = "openai-chat:file-planner"\n',
    )
    env = {
        "GEMINI_API_KEY": "g",
        "XHELIO_MODEL": "openai-chat:env-all",
        "XHELIO_SUB_AGENT_MODEL": "openai-chat:env-sub",
    }
    config = resolve_models(xhelio_home, env=env)
    assert config.sub_agent == "openai-chat:env-sub"  # tier env > XHELIO_MODEL
    assert config.planner == "openai-chat:env-all"  # XHELIO_MODEL > config file tier
    assert config.sources["sub_agent"] == "XHELIO_SUB_AGENT_MODEL"

    without_global = {k: v for k, v in env.items() if k != "XHELIO_MODEL"}
    config = resolve_models(xhelio_home, env=without_global)
    assert config.planner == "openai-chat:file-planner"  # config tier > config default
    assert config.orchestrator == "openai-chat:file-default"  # config default > auto-detect
    assert "[models].default" in config.sources["orchestrator"]

    override = resolve_models(xhelio_home, override="ollama:qwen3", env=env)
    assert {override.model_for(tier) for tier in TIERS} == {"ollama:qwen3"}  # override > all
    assert "--model override" in override.reason


def test_config_file_is_found_through_settings_and_env(
    xhelio_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(xhelio_home, '[models]\norchestrator = "anthropic:claude-haiku-5-5"\n')
    by_settings = resolve_models(load_settings(), env={})
    by_env = resolve_models(env={"XHELIO_HOME": str(xhelio_home)})
    assert by_settings.orchestrator == by_env.orchestrator == "anthropic:claude-haiku-5-5"
    # Tiers without any setting follow the orchestrator instead of staying empty.
    assert by_settings.inline == "anthropic:claude-haiku-5-5"
    assert by_settings.sources["inline"] == "same as orchestrator"
    monkeypatch.setenv("XHELIO_MODEL", "openai-chat:from-os-environ")
    assert resolve_models(xhelio_home).orchestrator == "openai-chat:from-os-environ"


def test_only_a_non_orchestrator_tier_without_keys_is_still_offline(xhelio_home: Path) -> None:
    config = resolve_models(xhelio_home, env={"XHELIO_INLINE_MODEL": "ollama:tiny"})
    assert config.offline
    assert config.inline == "ollama:tiny"


def test_legacy_google_prefix_is_rewritten(xhelio_home: Path) -> None:
    config = resolve_models(xhelio_home, env={"XHELIO_MODEL": "google-gla:gemini-3.8-flash"})
    assert config.orchestrator == "google:gemini-3.8-flash"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("gpt-4o", "not a model string"), ("nosuchprovider:model", "unknown model provider")],
)
def test_bad_model_strings_name_their_source(xhelio_home: Path, value: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected) as info:
        resolve_models(xhelio_home, env={"XHELIO_PLANNER_MODEL": value})
    assert "XHELIO_PLANNER_MODEL" in info.value.message


def test_the_test_model_is_never_chosen_by_a_string(xhelio_home: Path) -> None:
    with pytest.raises(ConfigError, match="test model"):
        resolve_models(xhelio_home, override="test", env={})
    with pytest.raises(ConfigError, match="XHELIO_MODEL"):
        resolve_models(xhelio_home, env={"XHELIO_MODEL": " test"})
    write_config(xhelio_home, '[models]\ndefault = "test"\n')
    with pytest.raises(ConfigError, match="test model"):
        resolve_models(xhelio_home, env={})
    with pytest.raises(ConfigError, match="test model"):
        build_model("test")


def test_bad_config_files_are_reported(xhelio_home: Path) -> None:
    write_config(xhelio_home, '[models]\norchestra = "openai:x"\n')
    with pytest.raises(ConfigError, match="Unknown key 'orchestra'"):
        resolve_models(xhelio_home, env={})
    write_config(xhelio_home, "[models\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        resolve_models(xhelio_home, env={})
    write_config(xhelio_home, "models = 3\n")
    with pytest.raises(ConfigError, match=r"\[models\]"):
        resolve_models(xhelio_home, env={})


# --- building models from provider strings (no network) -----------------------------------


def test_provider_strings_build_models_without_network() -> None:
    env = {"GEMINI_API_KEY": "fake-g", "OPENAI_API_KEY": "fake-o", "ANTHROPIC_API_KEY": "fake-a"}
    gemini = build_model("google:gemini-3.8-flash", env)
    assert isinstance(gemini, GoogleModel) and gemini.model_name == "gemini-3.8-flash"
    assert isinstance(build_model("google-gla:gemini-3.8-flash", env), GoogleModel)
    assert isinstance(build_model("openai:gpt-6-luna", env), OpenAIResponsesModel)
    chat = build_model("openai-chat:gpt-6-luna", env)
    assert isinstance(chat, OpenAIChatModel) and chat.client.api_key == "fake-o"
    assert str(chat.client.base_url).startswith("https://api.openai.com")
    claude = build_model("anthropic:claude-haiku-5-5", env)
    assert isinstance(claude, AnthropicModel) and claude.model_name == "claude-haiku-5-5"


def test_openai_chat_honours_base_url_without_a_key() -> None:
    model = build_model("openai-chat:llama3.2", {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"})
    assert isinstance(model, OpenAIChatModel)
    assert str(model.client.base_url) == "http://127.0.0.1:8080/v1/"
    assert model.client.api_key == "not-needed"
    keyed = build_model(
        "openai-chat:llama3.2",
        {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1", "OPENAI_API_KEY": "k"},
    )
    assert isinstance(keyed, OpenAIChatModel) and keyed.client.api_key == "k"


def test_ollama_uses_its_base_url_or_the_local_default() -> None:
    default = build_model("ollama:qwen3", {})
    assert isinstance(default, OllamaModel)
    assert str(default.client.base_url) == "http://127.0.0.1:11434/v1/"
    custom = build_model("ollama:qwen3", {"OLLAMA_BASE_URL": "http://127.0.0.1:9999/v1"})
    assert isinstance(custom, OllamaModel)
    assert str(custom.client.base_url) == "http://127.0.0.1:9999/v1/"


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("google:gemini-3.8-flash", "GEMINI_API_KEY"),
        ("openai:gpt-6-luna", "OPENAI_API_KEY"),
        ("anthropic:claude-haiku-5-5", "ANTHROPIC_API_KEY"),
    ],
)
def test_missing_keys_give_a_config_error(model: str, variable: str) -> None:
    with pytest.raises(ConfigError, match=variable):
        build_model(model, {})


class ChatServer:
    """A loopback OpenAI-compatible Chat Completions server; model 'busy' answers 429."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                )
                if body["model"] == "busy":
                    payload = {"error": {"message": "Rate limit reached", "type": "requests"}}
                    self.reply(429, payload, {"x-should-retry": "false"})
                    return
                answer = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 1700000000,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": f"hi from {body['model']}"},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 21, "completion_tokens": 5, "total_tokens": 26},
                }
                self.reply(200, answer, {})

            def reply(self, status: int, payload: object, headers: dict[str, str]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    with ChatServer() as server:
        yield server


def test_compatible_server_answers_without_a_real_key(chat_server: ChatServer) -> None:
    env = {"OPENAI_BASE_URL": chat_server.url, "XHELIO_MODEL": "openai-chat:llama3.2"}
    config = resolve_models(None, env=env)
    router = ModelRouter(config, build=lambda name: build_model(name, env))
    tracker = UsageTracker()

    async def ask() -> str:
        agent = Agent(router.model_for("orchestrator"), name="orchestrator")
        result = await agent.run("hello", model_settings=router.settings_for("orchestrator"))
        tracker.add("orchestrator", result.usage)
        return result.output

    with override_allow_model_requests(True):
        assert asyncio.run(ask()) == "hi from llama3.2"
    assert chat_server.requests[0]["path"] == "/v1/chat/completions"
    assert chat_server.requests[0]["auth"] == "Bearer not-needed"
    assert tracker.total().input_tokens == 21 and tracker.total().output_tokens == 5


def test_real_http_429_switches_to_the_fallback(chat_server: ChatServer) -> None:
    env = {
        "OPENAI_BASE_URL": chat_server.url,
        "XHELIO_MODEL": "openai-chat:busy",
        "XHELIO_FALLBACK_MODEL": "openai-chat:spare",
    }
    router = ModelRouter(resolve_models(None, env=env), build=lambda name: build_model(name, env))

    async def ask(tier: Any) -> str:
        result = await Agent(router.model_for(tier)).run("hello")
        return result.output

    with override_allow_model_requests(True):
        assert asyncio.run(ask("sub_agent")) == "hi from spare"
        assert router.switched
        assert asyncio.run(ask("planner")) == "hi from spare"
    assert [r["body"]["model"] for r in chat_server.requests] == ["busy", "spare", "spare"]


# --- thinking levels -------------------------------------------------------------------


def test_thinking_levels_per_tier() -> None:
    gemini = "google:gemini-3.8-flash"
    assert model_settings_for("orchestrator", gemini) == {"thinking": "high"}
    assert model_settings_for("planner", gemini) == {"thinking": "high"}
    assert model_settings_for("sub_agent", gemini) == {"thinking": "low"}
    assert model_settings_for("inline", gemini) == {"thinking": False}
    assert model_settings_for("orchestrator", "anthropic:claude-sonnet-5-5") == {"thinking": "high"}
    # A model that cannot think gets no thinking setting at all.
    assert model_settings_for("orchestrator", "openai-chat:llama3.2") == {}


# --- the session-wide fallback switch ---------------------------------------------------


class ScriptedModels:
    """FunctionModels by name, counting calls; 'busy' raises 429, 'broken' raises 500."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.models: dict[str, Model] = {}

    def build(self, name: str) -> Model:
        short = name.split(":", 1)[1]

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.calls[short] = self.calls.get(short, 0) + 1
            if short.startswith("busy"):
                raise ModelHTTPError(status_code=429, model_name=short, body={"error": "quota"})
            if short == "broken":
                raise ModelHTTPError(status_code=500, model_name=short, body="internal error")
            if short == "denied":
                raise ModelHTTPError(status_code=401, model_name=short, body="bad key")
            return ModelResponse(parts=[TextPart(f"answer from {short}")])

        self.models[name] = FunctionModel(respond, model_name=short)
        return self.models[name]


def router_for(
    env: dict[str, str], scripted: ScriptedModels, switches: list[str] | None = None
) -> ModelRouter:
    config = resolve_models(None, env=env)
    on_switch = switches.append if switches is not None else None
    return ModelRouter(config, build=scripted.build, on_switch=on_switch)


def test_429_switches_every_agent_to_the_fallback_for_the_session() -> None:
    scripted = ScriptedModels()
    switches: list[str] = []
    env = {"XHELIO_MODEL": "openai-chat:busy", "XHELIO_FALLBACK_MODEL": "openai-chat:spare"}
    router = router_for(env, scripted, switches)

    async def session() -> list[str]:
        outputs = []
        for tier in ("orchestrator", "sub_agent", "planner", "inline"):
            result = await router.run_with_fallback(lambda m: Agent(m).run("hi"), tier)
            outputs.append(result.output)
        return outputs

    assert asyncio.run(session()) == ["answer from spare"] * 4
    assert router.switched
    assert switches == ["openai-chat:spare"]
    assert scripted.calls == {"busy": 1, "spare": 4}  # the busy model was asked only once
    fallback = scripted.models["openai-chat:spare"]
    assert all(router.model_for(tier) is fallback for tier in TIERS)
    assert all(router.model_name_for(tier) == "openai-chat:spare" for tier in TIERS)


def test_429_mid_run_fails_over_without_repeating_tool_calls() -> None:
    tool_runs: list[int] = []
    primary_calls = 0

    def primary(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal primary_calls
        primary_calls += 1
        if primary_calls == 1:
            return ModelResponse(parts=[ToolCallPart("count", {"n": 2})])
        raise ModelHTTPError(status_code=429, model_name="primary", body="quota")

    def spare(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("counted to 2")])

    models = {
        "openai-chat:primary": FunctionModel(primary),
        "openai-chat:spare": FunctionModel(spare),
    }
    env = {"XHELIO_MODEL": "openai-chat:primary", "XHELIO_FALLBACK_MODEL": "openai-chat:spare"}
    router = ModelRouter(resolve_models(None, env=env), build=models.__getitem__)
    model = router.model_for("sub_agent")
    assert isinstance(model, FallbackModel)
    agent = Agent(model)

    @agent.tool_plain
    def count(n: int) -> int:
        """Count to n."""
        tool_runs.append(n)
        return n

    result = asyncio.run(agent.run("count to two"))
    assert result.output == "counted to 2"
    assert tool_runs == [2]
    assert router.switched
    assert router.model_for("orchestrator") is models["openai-chat:spare"]


def test_non_429_errors_do_not_switch() -> None:
    scripted = ScriptedModels()
    env = {"XHELIO_MODEL": "openai-chat:broken", "XHELIO_FALLBACK_MODEL": "openai-chat:spare"}
    router = router_for(env, scripted)
    with pytest.raises(ServerError) as info:
        asyncio.run(router.run_with_fallback(lambda m: Agent(m).run("hi"), "orchestrator"))
    assert not router.switched
    assert info.value.status_code == 500
    assert "broken" in info.value.message and "retry later" in info.value.message
    assert isinstance(info.value.__cause__, ModelHTTPError)
    assert scripted.calls == {"broken": 1}
    assert router.note_error(info.value.__cause__) is False


def test_authentication_failure_is_a_config_error() -> None:
    scripted = ScriptedModels()
    router = router_for({"XHELIO_MODEL": "openai-chat:denied"}, scripted)
    with pytest.raises(ConfigError, match="rejected the credentials"):
        asyncio.run(router.run_with_fallback(lambda m: Agent(m).run("hi"), "orchestrator"))


def test_429_without_a_distinct_fallback_explains_what_to_set() -> None:
    scripted = ScriptedModels()
    router = router_for({"XHELIO_MODEL": "openai-chat:busy"}, scripted)
    with pytest.raises(ServerError) as info:
        asyncio.run(router.run_with_fallback(lambda m: Agent(m).run("hi"), "planner"))
    assert info.value.status_code == 429
    assert "no other fallback model is configured" in info.value.message
    assert "XHELIO_FALLBACK_MODEL" in info.value.message
    assert not router.switched


def test_fallback_failing_too_propagates() -> None:
    scripted = ScriptedModels()
    env = {"XHELIO_MODEL": "openai-chat:busy", "XHELIO_FALLBACK_MODEL": "openai-chat:busy-too"}
    router = router_for(env, scripted)
    with pytest.raises(ServerError, match="fallback model openai-chat:busy-too failed too"):
        asyncio.run(router.run_with_fallback(lambda m: Agent(m).run("hi"), "orchestrator"))
    assert router.switched
    assert scripted.calls == {"busy": 1, "busy-too": 1}


def test_run_with_fallback_retries_once_when_the_429_escapes_the_model() -> None:
    scripted = ScriptedModels()
    env = {"XHELIO_MODEL": "openai-chat:primary", "XHELIO_FALLBACK_MODEL": "openai-chat:spare"}
    router = router_for(env, scripted)
    seen: list[Model] = []

    async def call(model: Model) -> str:
        # A 429 raised outside the FallbackModel (e.g. inside a stream) reaches the router.
        seen.append(model)
        if len(seen) == 1:
            raise ModelHTTPError(status_code=429, model_name="primary", body="quota")
        return "ok"

    assert asyncio.run(router.run_with_fallback(call, "insight")) == "ok"
    assert isinstance(seen[0], FallbackModel)
    assert seen[1] is scripted.models["openai-chat:spare"]
    assert router.switched


def test_note_error_switches_once() -> None:
    scripted = ScriptedModels()
    env = {"XHELIO_MODEL": "openai-chat:a", "XHELIO_FALLBACK_MODEL": "openai-chat:b"}
    router = router_for(env, scripted)
    rate_limited = ModelHTTPError(status_code=429, model_name="a", body=None)
    assert is_rate_limit_error(rate_limited)
    assert router.note_error(rate_limited) is True
    assert router.note_error(rate_limited) is False
    assert router.switched


def test_router_refuses_an_offline_config() -> None:
    with pytest.raises(ConfigError, match="offline mode"):
        ModelRouter(ModelConfig())
