"""Security headers on every HTTP response: what a browser may load, frame and send on.

* The web app's pages get a Content-Security-Policy that lets them load only what this
  server ships (scripts, styles, Plotly.js) and talk only to this server. Styles allow
  inline values because Plotly.js writes `<style>` rules and `style` attributes as it
  draws; scripts never run inline or from elsewhere.
* API answers (`/api/...`, `/openapi.json`) get a policy that allows nothing at all, so an
  exported HTML figure or any text opened from the API renders inert.
* Nothing may frame the app (clickjacking), content types are never sniffed, and no
  Referer leaves the page (its URLs carry session ids, which are capabilities).

One pure ASGI middleware; it imports nothing from xhelio.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["API_POLICY", "APP_POLICY", "SecurityHeaders"]

APP_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
API_POLICY = "default-src 'none'; frame-ancestors 'none'; sandbox"

_COMMON = (
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _policy_for(path: str) -> str:
    if path.startswith("/api/") or path == "/openapi.json":
        return API_POLICY
    return APP_POLICY


class SecurityHeaders:
    """Add the security headers to every HTTP response of the wrapped app."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; add the headers to the response start."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = [
            (b"content-security-policy", _policy_for(str(scope.get("path", ""))).encode()),
            *_COMMON,
        ]

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {bytes(k).lower() for k, _ in message.get("headers", [])}
                added = [(k, v) for k, v in extra if k not in present]
                message = {**message, "headers": [*message.get("headers", []), *added]}
            await send(message)

        await self.app(scope, receive, with_headers)
