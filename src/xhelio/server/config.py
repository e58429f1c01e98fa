"""`ServerConfig`: how `xhelio serve` listens and what it allows, with safe defaults.

`check_bind` is the rule "loopback unless a token is set": binding any address other than
127.0.0.1 / ::1 / localhost without `XHELIO_API_TOKEN` refuses to start.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field

from xhelio.errors import ConfigError

__all__ = ["LOOPBACK_NAMES", "ServerConfig", "check_bind", "is_loopback"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
MB = 1024 * 1024


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address or name."""
    if host.strip("[]") in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ServerConfig:
    """Everything `create_app` needs to know about listening and limits.

    Attributes:
        host: Address to bind (loopback by default).
        port: Port to bind.
        token: Bearer token every request must carry (None: no token, loopback only).
        cors_origins: Origins allowed cross-origin (empty: CORS closed).
        allowed_hosts: Host header values accepted (empty: loopback names when bound to
            loopback, against DNS rebinding; anything when a token is set).
        max_body_bytes: Largest request body (uploads excepted).
        max_upload_bytes: Largest upload.
        max_stream_events: Events one SSE stream may carry before it is ended.
        allow_unsandboxed_code: Run model-written code without the OS-level sandbox.
        max_open_sessions: Sessions kept open in memory.
        workers: Threads running turns at once.
    """

    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    cors_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    max_body_bytes: int = 10 * MB
    max_upload_bytes: int = 50 * MB
    max_stream_events: int = 100_000
    allow_unsandboxed_code: bool = False
    max_open_sessions: int = 128
    workers: int = 64
    public_prefixes: tuple[str, ...] = field(default=("/api/health",))

    @classmethod
    def from_env(cls, **values: object) -> ServerConfig:
        """A config whose token comes from `XHELIO_API_TOKEN` unless given."""
        if values.get("token") is None:
            values["token"] = os.environ.get("XHELIO_API_TOKEN") or None
        return cls(**values)  # type: ignore[arg-type]


def check_bind(config: ServerConfig) -> None:
    """Refuse a non-loopback bind without a token.

    Raises:
        ConfigError: `config.host` is not loopback and no token is set.
    """
    if config.token is not None and len(config.token) < 16:
        raise ConfigError(
            "XHELIO_API_TOKEN is too short: use at least 16 random characters, e.g. "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))'."
        )
    if not is_loopback(config.host) and not config.token:
        raise ConfigError(
            f"Refusing to listen on {config.host}: anyone who can reach it could use this "
            "machine. Set XHELIO_API_TOKEN to a long random secret (then every request needs "
            "'Authorization: Bearer <token>'), or keep the default --host 127.0.0.1."
        )
