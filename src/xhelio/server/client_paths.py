"""No absolute server path reaches a client: files become URLs, other paths placeholders.

Tools, errors and events speak in the server's own paths (`/home/ana/.local/share/xhelio/
sessions/s.../exports/figure.png`). Clients of the HTTP servers must neither see the
server's file system nor depend on it, so every JSON body and every server-sent event is
rewritten at the edge, after the routes serialised it:

* a file of a session's `exports/` or `uploads/` folder becomes the URL that downloads it,
  `/api/v1/sessions/<id>/files/<folder>/<name>` (when the server serves files);
* any other path under the xhelio home, the temp folder or the user's home becomes
  `$XHELIO_HOME/...`, `$TMPDIR/...` or `~/...`.

`PathMap` is the pure rewrite; `ClientPaths` is the ASGI middleware that applies it to
`application/json` bodies and `text/event-stream` data lines. Imports nothing from xhelio.
"""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = ["SERVED_FOLDERS", "ClientPaths", "PathMap"]

SERVED_FOLDERS = ("exports", "uploads")
"""The folders of a session whose files clients may download by URL."""

_PATH_CHARS = r"[^\s\"'<>\\`]*"
_TRAILING = ".,;:!?)]}"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _spellings(path: Path) -> list[str]:
    """`path` as written and as resolved (symlinked temp folders differ)."""
    out = {str(path).rstrip("/")}
    with contextlib.suppress(OSError):
        out.add(str(path.resolve()).rstrip("/"))
    return [p for p in out if len(p) > 1]


class PathMap:
    """Rewrite the absolute server paths in text and JSON values for clients."""

    def __init__(
        self, home: Path, sessions_root: Path | None = None, files_url: str | None = None
    ) -> None:
        """Map paths under these folders.

        Args:
            home: The xhelio home (`$XHELIO_HOME`).
            sessions_root: The folder holding one folder per session.
            files_url: URL prefix of the session routes (e.g. `/api/v1/sessions`); with
                it, files of a session's served folders become download URLs.
        """
        self._files_url = files_url
        self._sessions = _spellings(sessions_root) if sessions_root is not None else []
        self._names: list[tuple[str, str]] = []
        for folder, name in (
            (home, "$XHELIO_HOME"),
            (Path(tempfile.gettempdir()), "$TMPDIR"),
            (Path.home(), "~"),
        ):
            self._names.extend((spelling, name) for spelling in _spellings(folder))
        roots = sorted({r for r, _ in self._names} | set(self._sessions), key=len, reverse=True)
        # Cheap test before any parsing: a body naming no root is passed on untouched.
        self._needles = {r.encode() for r in roots} | {json.dumps(r)[1:-1].encode() for r in roots}
        self._pattern = re.compile(
            "(?:" + "|".join(re.escape(r) for r in roots) + r")(?=[/\s\"'<>\\`]|$)" + _PATH_CHARS
        )

    def _session_url(self, path: str) -> str | None:
        if self._files_url is None:
            return None
        for root in self._sessions:
            if path.startswith(root + "/"):
                parts = path[len(root) + 1 :].split("/")
                rest = parts[2:]
                if parts[1:2] and parts[1] in SERVED_FOLDERS and rest and all(rest):
                    return f"{self._files_url}/{parts[0]}/files/{parts[1]}/{quote('/'.join(rest))}"
        return None

    def _public(self, match: re.Match[str]) -> str:
        found = match.group(0)
        path = found.rstrip(_TRAILING)
        return self._path(path) + found[len(path) :]

    def _path(self, path: str) -> str:
        """The client's form of one absolute path that starts with a known root."""
        url = self._session_url(path)
        if url is not None:
            return url
        for root, name in sorted(self._names, key=lambda item: len(item[0]), reverse=True):
            if path == root or path.startswith(root + "/"):
                return name + path[len(root) :]
        return path  # pragma: no cover - every matched root has a name or a URL

    def text(self, text: str) -> str:
        """`text` with every server path replaced."""
        return self._pattern.sub(self._public, text)

    def value(self, value: Any) -> Any:
        """A JSON value (dicts, lists, strings, ...) with every string's paths replaced.

        A string naming one existing file (spaces and all) is replaced whole.
        """
        if isinstance(value, str):
            if self._pattern.match(value) is not None and _is_file(value):
                return self._path(value)
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        return value

    def mentions_paths(self, body: bytes) -> bool:
        """Whether `body` may hold a server path (raw or JSON-escaped)."""
        return any(needle in body for needle in self._needles)

    def json_bytes(self, body: bytes) -> bytes:
        """A JSON document with its paths replaced (unchanged when it is not JSON)."""
        if not self.mentions_paths(body):
            return body
        try:
            data = json.loads(body)
        except ValueError:
            return self.text(body.decode("utf-8", "replace")).encode()
        return json.dumps(self.value(data), separators=(",", ":"), ensure_ascii=False).encode()

    def event_bytes(self, chunk: bytes) -> bytes:
        """Server-sent event text with the JSON of its `data:` lines rewritten."""
        if not self.mentions_paths(chunk):
            return chunk
        lines = chunk.decode("utf-8", "replace").split("\n")
        out: list[str] = []
        for line in lines:
            if line.startswith("data:"):
                payload = line[5:].strip().rstrip("\r")
                cr = "\r" if line.endswith("\r") else ""
                line = "data: " + self.json_bytes(payload.encode()).decode() + cr
            out.append(line)
        return "\n".join(out).encode()


def _is_file(text: str) -> bool:
    try:
        return "\n" not in text and Path(text).is_file()
    except (OSError, ValueError):
        return False


def _content_type(message: Message) -> str:
    for key, value in message.get("headers", []):
        if bytes(key).lower() == b"content-type":
            return bytes(value).decode("latin-1").lower()
    return ""


class ClientPaths:
    """Apply a `PathMap` to every JSON body and event stream the wrapped app sends."""

    def __init__(self, app: ASGIApp, paths: PathMap) -> None:
        """Wrap `app`."""
        self.app = app
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; rewrite the response body on its way out."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        kind = ""
        start: Message | None = None
        body: list[bytes] = []

        async def rewriting(message: Message) -> None:
            nonlocal kind, start
            if message["type"] == "http.response.start":
                content_type = _content_type(message)
                kind = (
                    "json"
                    if content_type.startswith("application/json")
                    else "events"
                    if content_type.startswith("text/event-stream")
                    else ""
                )
                if kind == "json":
                    start = message  # sent once the body is known (its length changes)
                    return
            elif message["type"] == "http.response.body" and kind == "events":
                message = {**message, "body": self.paths.event_bytes(message.get("body", b""))}
            elif message["type"] == "http.response.body" and kind == "json":
                body.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                await self._send_json(send, start, b"".join(body))
                return
            await send(message)

        await self.app(scope, receive, rewriting)

    async def _send_json(self, send: Send, start: Message | None, body: bytes) -> None:
        assert start is not None
        rewritten = self.paths.json_bytes(body)
        headers = [
            (k, v) for k, v in start.get("headers", []) if bytes(k).lower() != b"content-length"
        ]
        headers.append((b"content-length", b"%d" % len(rewritten)))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": rewritten})
