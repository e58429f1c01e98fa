"""Shared fixtures for the REST server tests: a loopback HAPI server and a live xhelio API."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from servers.catalog_hapi import CatalogHapiServer
from servers.xhelio_api import LiveServer
from xhelio.api.assistant import Assistant
from xhelio.config import load_settings
from xhelio.server import ServerConfig, create_app

ACE = "Show me ACE magnetic field for 2024-01-01 to 2024-01-03"


@dataclass
class Api:
    """A live server: its base URL, an HTTP client on /api/v1, the app and the assistant."""

    url: str
    client: httpx.Client
    app: FastAPI
    assistant: Assistant
    home: Path


def live_api(home: Path, hapi_url: str, **config: object) -> Iterator[Api]:
    """Serve a fresh app (settings from `home`, data from `hapi_url`) on loopback."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("XHELIO_HOME", str(home))
        env.setenv("XHELIO_HAPI_URL", hapi_url)
        env.delenv("XHELIO_API_TOKEN", raising=False)
        assistant = Assistant(load_settings())
        app = create_app(ServerConfig(**config), assistant=assistant)  # type: ignore[arg-type]
        with LiveServer(app) as server:
            headers = {}
            token = config.get("token")
            if isinstance(token, str):
                headers["Authorization"] = f"Bearer {token}"
            with httpx.Client(
                base_url=server.url + "/api/v1", timeout=120, headers=headers
            ) as client:
                yield Api(server.url, client, app, assistant, home)


@pytest.fixture(scope="module")
def hapi() -> Iterator[CatalogHapiServer]:
    with CatalogHapiServer() as server:
        yield server
