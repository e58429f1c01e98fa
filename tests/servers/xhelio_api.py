"""Run an ASGI app (the xhelio REST server) with uvicorn on a free loopback port in a thread."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any

import uvicorn

__all__ = ["LiveServer", "free_port"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """`with LiveServer(app) as s:` serves `app` at `s.url` until the block ends."""

    def __init__(self, app: Any, host: str = "127.0.0.1") -> None:
        self.port = free_port()
        self.host = host
        config = uvicorn.Config(app, host=host, port=self.port, log_level="error", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
