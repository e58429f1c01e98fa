"""`ServerConfig`: how `xhelio serve` listens and what it allows, with safe defaults.

`check_bind` is the rule "loopback unless a token is set": binding any address other than
127.0.0.1 / ::1 / localhost without `XHELIO_API_TOKEN` refuses to start. `token_problem`
says why a token is too weak to guard anything (blank, spaces, short, repetitive); a
`ServerConfig` with such a token cannot be made.
"""

from __future__ import annotations

import ipaddress
import itertools
import math
import os
from collections import Counter
from dataclasses import dataclass, field

from xhelio.errors import ConfigError

__all__ = ["LOOPBACK_NAMES", "ServerConfig", "check_bind", "is_loopback", "token_problem"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
MB = 1024 * 1024
MIN_TOKEN_CHARS = 16
MIN_TOKEN_BITS = 40.0
"""Least information a token must carry, by the spread of its characters."""
_MAKE_TOKEN = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"


def _spread_bits(token: str) -> float:
    """Bits of information in `token` judged by how often each character repeats."""
    counts = Counter(token).values()
    return -sum(n * math.log2(n / len(token)) for n in counts)


def token_problem(token: str) -> str | None:
    """Why `token` is too weak to be the API token, or None when it will do."""
    if not token.strip():
        return "is blank"
    if any(c.isspace() or not c.isprintable() for c in token):
        return "contains spaces or control characters (a client cannot send it back exactly)"
    if len(token) < MIN_TOKEN_CHARS:
        return f"is too short (at least {MIN_TOKEN_CHARS} random characters)"
    steps = Counter(ord(b) - ord(a) for a, b in itertools.pairwise(token))
    runs = max(steps.values()) * 2 >= len(token) - 1  # mostly one step: 'abcd...', '1234...'
    if runs or _spread_bits(token) < MIN_TOKEN_BITS:
        return "is too predictable (repeated characters or a run like 'abcd...')"
    return None


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

    def __post_init__(self) -> None:
        """Refuse a weak token here, so no server can start with one."""
        problem = token_problem(self.token) if self.token is not None else None
        if problem is not None:
            raise ConfigError(
                f"XHELIO_API_TOKEN {problem}: use a long random secret, e.g. {_MAKE_TOKEN}."
            )

    @classmethod
    def from_env(cls, **values: object) -> ServerConfig:
        """A config whose token comes from `XHELIO_API_TOKEN` unless given."""
        if values.get("token") is None:
            values["token"] = os.environ.get("XHELIO_API_TOKEN") or None
        return cls(**values)  # type: ignore[arg-type]


def check_bind(config: ServerConfig) -> None:
    """Refuse a non-loopback bind without a token (a weak token never makes a config).

    Raises:
        ConfigError: `config.host` is not loopback and no token is set.
    """
    if not is_loopback(config.host) and not config.token:
        raise ConfigError(
            f"Refusing to listen on {config.host}: anyone who can reach it could use this "
            "machine. Set XHELIO_API_TOKEN to a long random secret (then every request needs "
            "'Authorization: Bearer <token>'), or keep the default --host 127.0.0.1."
        )
