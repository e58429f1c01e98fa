"""A loopback stand-in for JSON web APIs (SWPC, DONKI, ADS, a search service).

`JsonApiServer` serves canned answers per path over real HTTP on 127.0.0.1: a test
registers `Answer`s (status, body, headers, delay) with `route`; answers queued with
`queue` are served once each before the route's standing answer, so a test can check a
fault and the recovery after it. Every request is recorded (path, query, headers).
Test support only; imports nothing from xhelio.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["Answer", "JsonApiServer", "Seen"]


@dataclass(frozen=True)
class Answer:
    """One canned answer."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict[str, str])
    delay_s: float = 0.0

    @classmethod
    def json(cls, value: Any, status: int = 200, **headers: str) -> Answer:
        """A JSON answer."""
        heads = {"Content-Type": "application/json", **headers}
        return cls(json.dumps(value).encode(), status, heads)

    @classmethod
    def html(cls, status: int = 200) -> Answer:
        """A maintenance page, as a proxy in front of an API would send."""
        page = b"<!DOCTYPE html><html><body><h1>Service unavailable</h1></body></html>"
        return cls(page, status, {"Content-Type": "text/html"})


@dataclass(frozen=True)
class Seen:
    """One request the server received."""

    path: str
    query: dict[str, str]
    headers: dict[str, str]


class JsonApiServer:
    """Canned JSON answers on 127.0.0.1 (use as a context manager)."""

    def __init__(self) -> None:
        self.routes: dict[str, Answer] = {}
        self.queued: dict[str, list[Answer]] = {}
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The server's base address."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def route(self, path: str, answer: Answer) -> None:
        """Answer `path` with `answer` from now on."""
        self.routes[path] = answer

    def queue(self, path: str, *answers: Answer) -> None:
        """Serve `answers` once each, in order, before the standing answer of `path`."""
        self.queued.setdefault(path, []).extend(answers)

    def _next(self, path: str) -> Answer:
        with self._lock:
            waiting = self.queued.get(path)
            if waiting:
                return waiting.pop(0)
        return self.routes.get(path, Answer.json({"error": "not found"}, 404))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                owner.seen.append(Seen(parts.path, query, dict(self.headers.items())))
                answer = owner._next(parts.path)
                if answer.delay_s:
                    time.sleep(answer.delay_s)
                try:
                    self.send_response(answer.status)
                    for key, value in answer.headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler

    def __enter__(self) -> JsonApiServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
