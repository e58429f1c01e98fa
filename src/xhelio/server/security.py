"""The guard in front of every route: token, Host/Origin checks and the body size limit.

One pure ASGI middleware, so it also covers SSE and uploads and runs before FastAPI parses
anything:

* with a token configured, every request but the public prefixes (`/api/health`) needs
  `Authorization: Bearer <token>` (compared in constant time), else 401;
* the Host header must be one the server answers to (loopback names on a loopback bind),
  so a web page cannot reach the API through DNS rebinding; a browser `Origin` must be the
  server itself or a configured CORS origin, else 403;
* a body longer than the limit (declared or streamed) is refused with 413 before it is
  read whole; uploads have their own, larger limit.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from xhelio.server.config import ServerConfig, is_loopback

__all__ = ["SecurityMiddleware", "error_body"]

logger = logging.getLogger("xhelio.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def error_body(kind: str, message: str) -> bytes:
    """The JSON error every route answers with."""
    return json.dumps({"status": "error", "type": kind, "message": message}).encode()


async def _reply(send: Send, status: int, kind: str, message: str, extra: list[Any]) -> None:
    body = error_body(kind, message)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers + extra})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _host_name(host_header: str) -> str:
    """The host part of a Host header (`[::1]:8765` -> `::1`)."""
    return urlsplit(f"//{host_header}").hostname or ""


class SecurityMiddleware:
    """Token, Host, Origin and body-size checks for every HTTP request."""

    def __init__(self, app: ASGIApp, config: ServerConfig, public: list[str] | None = None) -> None:
        """Wrap `app`.

        Args:
            app: The ASGI app behind the checks.
            config: Token, hosts, origins and limits.
            public: Path prefixes reachable without the token (shared, may grow).
        """
        self.app = app
        self.config = config
        self.public = public if public is not None else list(config.public_prefixes)

    def _host_allowed(self, host_header: str | None) -> bool:
        if self.config.allowed_hosts:
            return host_header is not None and (
                host_header in self.config.allowed_hosts
                or _host_name(host_header) in self.config.allowed_hosts
            )
        if self.config.token:
            return True
        # No token: only loopback clients may talk to us, by a loopback name.
        return host_header is not None and is_loopback(_host_name(host_header))

    def _origin_allowed(self, origin: str | None, host_header: str | None) -> bool:
        if origin is None:
            return True
        if origin in self.config.cors_origins:
            return True
        parts = urlsplit(origin)
        return host_header is not None and parts.netloc == host_header

    def _token_ok(self, scope: Scope) -> bool:
        token = self.config.token
        if not token:
            return True
        path = str(scope.get("path", ""))
        if any(path == p or path.startswith(p.rstrip("/") + "/") for p in self.public):
            return True
        if (
            scope.get("method") == "OPTIONS"
            and _header(scope, b"origin") in self.config.cors_origins
        ):
            return True  # a CORS preflight never carries credentials
        given = _header(scope, b"authorization") or ""
        scheme, _, value = given.partition(" ")
        return scheme.lower() == "bearer" and secrets.compare_digest(
            value.strip().encode(), token.encode()
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check one request, then pass it on (or answer 401/403/413 here)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host")
        if not self._host_allowed(host):
            await _reply(send, 403, "Forbidden", f"Host {host!r} is not served here.", [])
            return
        if not self._origin_allowed(_header(scope, b"origin"), host):
            await _reply(send, 403, "Forbidden", "Cross-origin requests are not allowed.", [])
            return
        if not self._token_ok(scope):
            await _reply(
                send,
                401,
                "Unauthorized",
                "This server needs 'Authorization: Bearer <XHELIO_API_TOKEN>'.",
                [(b"www-authenticate", b"Bearer")],
            )
            return
        path = str(scope.get("path", ""))
        limit = self.config.max_upload_bytes if "/uploads/" in path else self.config.max_body_bytes
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _reply(send, 413, "PayloadTooLarge", _too_large(limit), [])
            return
        await self._limited(scope, receive, send, limit)

    async def _limited(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        """Count the body as it streams in; past the limit, answer 413 ourselves.

        The app then sees the client as gone (`http.disconnect`) and whatever it tries to
        send is dropped: FastAPI would otherwise turn the overflow into a vague 400.
        """
        seen = 0
        started = False
        refused = False

        async def counting_receive() -> Message:
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    refused = True
                    if not started:
                        await _reply(send, 413, "PayloadTooLarge", _too_large(limit), [])
                    return {"type": "http.disconnect"}
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if refused:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except Exception as exc:
            # The last line of defence: a JSON error naming the class, never a traceback.
            if refused:
                return
            logger.exception("Unexpected error in %s %s", scope.get("method"), scope.get("path"))
            if not started:
                message = f"The server failed ({type(exc).__name__}); see its log."
                await _reply(send, 500, "InternalError", message, [])


def _too_large(limit: int) -> str:
    return f"The request body is larger than this server accepts ({limit // (1024 * 1024)} MB)."
