"""`create_app`: the FastAPI application of `xhelio serve`.

One `Assistant` per process (sessions, each with its own lock, and the thread pool turns run
on), the security middleware in front of everything, JSON errors, routes by concern under
`/api/v1`, `GET /api/health`, the OpenAPI schema at `/openapi.json` (no docs page: it would
load a script from a CDN into this origin), security headers on every response, and the web
app's mount hook last. No absolute server path leaves in a body (`client_paths`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

import xhelio
from xhelio.agents.models import resolve_models
from xhelio.api.assistant import Assistant
from xhelio.api.policy import code_policy, os_isolation_available
from xhelio.config import Settings, load_settings
from xhelio.server import (
    routes_ask,
    routes_catalog,
    routes_data,
    routes_figures,
    routes_files,
    routes_sessions,
    routes_settings,
    routes_tools,
)
from xhelio.server.client_paths import ClientPaths, PathMap
from xhelio.server.config import ServerConfig, check_bind
from xhelio.server.deps import ServerState
from xhelio.server.errors import install_error_handlers
from xhelio.server.headers import SecurityHeaders
from xhelio.server.security import SecurityMiddleware
from xhelio.server.web import mount_web_app

__all__ = ["API_PREFIX", "create_app"]

API_PREFIX = "/api/v1"


def _routes(app: FastAPI) -> list[str]:
    """`METHOD /path` of every API route, from the OpenAPI schema (routers included lazily)."""
    out: list[str] = []
    for path, operations in app.openapi().get("paths", {}).items():
        if str(path).startswith("/api"):
            out.extend(f"{m.upper()} {path}" for m in operations)
    return out


def create_app(
    config: ServerConfig | None = None,
    settings: Settings | None = None,
    assistant: Assistant | None = None,
) -> FastAPI:
    """Build the app; refuses an unsafe bind (see `check_bind`).

    Args:
        config: Listening, token and limits (default: loopback, token from the env).
        settings: xhelio settings (default: config file and environment).
        assistant: The assistant to serve (tests pass one with scripted models).

    Raises:
        ConfigError: A non-loopback host without `XHELIO_API_TOKEN`, or a short token.
    """
    config = config or ServerConfig.from_env()
    check_bind(config)
    if assistant is None:
        assistant = Assistant(
            settings or load_settings(),
            workers=config.workers,
            max_open_sessions=config.max_open_sessions,
        )
    if assistant.hub.policy is None:
        assistant.hub.policy = code_policy(assistant, config.allow_unsandboxed_code)
    state = ServerState(config, assistant)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncGenerator[None]:
        try:
            yield
        finally:
            assistant.close()

    app = FastAPI(
        title="xhelio",
        version=xhelio.__version__,
        description="Talk to NASA heliophysics data. Contract: docs/api.md.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.xhelio = state
    install_error_handlers(app)

    @app.get("/api/health", tags=["status"])
    def health() -> dict[str, Any]:
        """Liveness: version, open sessions, offline mode (no token needed)."""
        models = resolve_models(assistant.settings)
        return {
            "status": "ok",
            "version": xhelio.__version__,
            "sessions_open": assistant.hub.open_count,
            "offline": models.offline,
        }

    @app.get(f"{API_PREFIX}/status", tags=["status"])
    def status() -> dict[str, Any]:
        """Models, offline mode, code-execution policy and the routes this server implements."""
        models = resolve_models(assistant.settings)
        isolated = os_isolation_available(assistant.services)
        return {
            "version": xhelio.__version__,
            "offline": models.offline,
            "reason": models.reason if models.offline else "",
            "models": {
                t: models.model_for(t)
                for t in ("orchestrator", "sub_agent", "planner", "insight", "inline", "fallback")
            },
            "sandbox": {
                "os_isolation": isolated,
                "code_allowed": isolated or config.allow_unsandboxed_code,
            },
            "implemented": _routes(app),
        }

    for module in (
        routes_ask,
        routes_sessions,
        routes_catalog,
        routes_data,
        routes_figures,
        routes_files,
        routes_settings,
        routes_tools,
    ):
        app.include_router(module.router, prefix=API_PREFIX)
    if config.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        )
    app.state.public_prefixes = list(config.public_prefixes)
    app.add_middleware(SecurityMiddleware, config=config, public=app.state.public_prefixes)
    app.add_middleware(SecurityHeaders)
    paths = PathMap(assistant.settings.home, assistant.hub.store.root, f"{API_PREFIX}/sessions")
    app.add_middleware(ClientPaths, paths=paths)
    mount_web_app(app)
    return app
