"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` (non-streaming) from a `reply` callable that gets
the parsed request body and returns the assistant message: a text, or a list of
``(tool_name, args)`` tool calls. Every request body is kept in `requests`; the reported
usage is an estimate of the prompt (a token per 4 characters of the JSON of messages and
tools), so a benchmark can count what a real server would bill. Stdlib only (a
`ThreadingHTTPServer` on port 0 in a background thread); imports nothing from xhelio.

API::

    with OpenAIChatServer(lambda body: "hello") as server:
        server.base_url                       # http://127.0.0.1:PORT/v1
        server.requests                       # request bodies, in order
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ChatReply", "OpenAIChatServer", "prompt_tokens"]

ChatReply = str | list[tuple[str, dict[str, Any]]]


def prompt_tokens(body: dict[str, Any]) -> int:
    """A token estimate of a request: a token per 4 characters of messages and tools JSON."""
    sent = json.dumps([body.get("messages", []), body.get("tools", [])], separators=(",", ":"))
    return max(1, len(sent) // 4)


class OpenAIChatServer:
    """Serve scripted chat completions on loopback."""

    def __init__(self, reply: Callable[[dict[str, Any]], ChatReply]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (ends in /v1)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> OpenAIChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat.completion object answering `body`."""
        with self._lock:
            self.requests.append(body)
            number = len(self.requests)
        answer = self.reply(body)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(answer, str):
            message["content"] = answer
            finish = "stop"
        else:
            message["tool_calls"] = [
                {
                    "id": f"call_{number}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(answer)
            ]
            finish = "tool_calls"
        completion_tokens = max(1, len(json.dumps(message)) // 4)
        tokens = prompt_tokens(body)
        return {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": tokens + completion_tokens,
            },
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    self._send(200, server.completion(body))
                except Exception as exc:  # a script error becomes a visible 500
                    self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}"}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
