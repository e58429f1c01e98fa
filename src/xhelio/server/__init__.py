"""The REST + SSE server of `xhelio serve` (contract: docs/api.md)."""

from xhelio.server.app import API_PREFIX, create_app
from xhelio.server.config import ServerConfig, check_bind

__all__ = ["API_PREFIX", "ServerConfig", "check_bind", "create_app"]
