"""`Assistant`: the whole assistant from Python — `run`, `await arun`, `async for ... astream`.

```python
from xhelio import Assistant

with Assistant() as xh:
    r = xh.run("list missions")
    print(r.answer, r.session_id)
```

One `Assistant` owns a `SessionHub` (its open sessions, each with its own lock) and a thread
pool the blocking turns run on, so many sessions run at once and an `arun` never blocks the
event loop. The REST and MCP servers are built on the same object.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic_ai.models import Model

from xhelio.api.events import stream_events
from xhelio.api.hub import SessionHub
from xhelio.api.models import AskRequest, AskResponse, StreamEvent
from xhelio.api.turns import execute
from xhelio.config import Settings, load_settings
from xhelio.errors import UserError
from xhelio.operations import ToolResult
from xhelio.services import Services
from xhelio.session.events import Event
from xhelio.tools.registry import Tool
from xhelio.tools.toolset import default_registry
from xhelio.tools.workspace import Workspace
from xhelio.tools.wrappers import Policy

__all__ = ["Assistant"]

_DONE = object()


class Assistant:
    """Ask xhelio in plain language from Python; every answer is an `AskResponse`."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        services: Services | None = None,
        model: str | None = None,
        workers: int = 64,
        max_open_sessions: int = 128,
        build_model: Callable[[str], Model] | None = None,
        policy: Callable[[Path], Policy] | None = None,
    ) -> None:
        """Create an assistant.

        Args:
            settings: Settings to use (default: config file and environment).
            services: The process's shared resources (default: a new `Services` this
                assistant owns and closes).
            model: `provider:model` for every tier unless a request names its own.
            workers: Threads running turns (how many sessions may run at once).
            max_open_sessions: Sessions kept open in memory before idle ones are closed.
            build_model: Turns model strings into pydantic-ai models (tests script them).
            policy: Builds each session's funnel policy (servers: `api.policy.server_policy`).
        """
        self._owns_services = services is None
        self.services = services or Services(settings or load_settings())
        self.settings = self.services.settings
        self.model = model
        self.hub = SessionHub(self.services, max_open=max_open_sessions, policy=policy)
        self.build_model = build_model
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="xhelio-turn")

    def _request(self, request: AskRequest | str, fields: dict[str, Any]) -> AskRequest:
        if isinstance(request, AskRequest):
            return request.model_copy(update=fields) if fields else request
        req = AskRequest(question=request, **fields)
        if req.model is None and self.model is not None:
            req = req.model_copy(update={"model": self.model})
        return req

    def new_session(self, title: str | None = None) -> str:
        """Create an empty session and return its (unguessable) id."""
        return self.hub.create(title)

    def run(self, request: AskRequest | str, *, wait: bool = True, **fields: Any) -> AskResponse:
        """Answer one request and return the response (a failure is `response.error`).

        Args:
            request: An `AskRequest`, or the question text.
            wait: Wait while the session runs another request (else `SessionBusyError`).
            **fields: Other `AskRequest` fields, e.g. `session_id=...`, `trace=True`.

        Raises:
            SessionNotFoundError: The request names a session that does not exist.
            SessionBusyError: The session is busy and `wait` is False.
        """
        req = self._request(request, fields)
        return execute(self.hub, req, wait=wait, build_model=self.build_model)

    async def arun(
        self, request: AskRequest | str, *, wait: bool = True, **fields: Any
    ) -> AskResponse:
        """`run`, awaitable: the turn runs on the assistant's thread pool.

        Args:
            request: An `AskRequest`, or the question text.
            wait: Wait while the session runs another request (else `SessionBusyError`).
            **fields: Other `AskRequest` fields.
        """
        req = self._request(request, fields)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._pool, lambda: execute(self.hub, req, wait=wait, build_model=self.build_model)
        )

    async def astream(
        self,
        request: AskRequest | str,
        *,
        wait: bool = True,
        detach: bool = False,
        **fields: Any,
    ) -> AsyncIterator[StreamEvent]:
        """Yield the turn's events as they happen, then `answer`, `usage` and `done`.

        The first event is `session` (`data.session_id`); `done.data.response` is the
        `AskResponse` as JSON. Leaving the loop early cancels the turn, unless `detach`:
        then the turn runs on to its end (a server's client that went away follows it again
        on the session's events; `cancel` stops it).

        Args:
            request: An `AskRequest`, or the question text.
            wait: Wait while the session runs another request (else `SessionBusyError`).
            detach: Keep the turn running when the loop is left early.
            **fields: Other `AskRequest` fields.
        """
        req = self._request(request, fields)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[object] = asyncio.Queue()
        session: list[str] = []

        def put(item: object) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        def listener(event: Event, workspace: Workspace) -> None:
            for item in stream_events(event, workspace):
                put(item)

        def started(sid: str) -> None:
            session.append(sid)
            put(StreamEvent(type="session", data={"session_id": sid}))

        def work() -> AskResponse:
            try:
                return execute(
                    self.hub,
                    req,
                    wait=wait,
                    listener=listener,
                    on_session=started,
                    build_model=self.build_model,
                )
            finally:
                put(_DONE)

        future = loop.run_in_executor(self._pool, work)
        finished = False
        try:
            while (item := await queue.get()) is not _DONE:
                assert isinstance(item, StreamEvent)
                yield item
            response = await future
            finished = True
            yield StreamEvent(type="answer", data={"text": response.answer})
            yield StreamEvent(type="usage", data=response.usage)
            if response.error is not None:
                yield StreamEvent(type="error", data=response.error.model_dump())
            yield StreamEvent(type="done", data={"response": response.model_dump(mode="json")})
        finally:
            if not finished and session and not detach:
                entry = self.hub.peek(session[0])
                if entry is not None:
                    entry.cancel.set()

    def call_tool(
        self,
        session_id: str,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        wait: bool = True,
        caller: str = "api",
    ) -> ToolResult:
        """Run the public tool `name` in a session, through its funnel (traced, logged).

        A failed call is a `ToolResult` with status "error", never an exception.

        Args:
            session_id: The session to run it in (its data and figure).
            name: A public tool (see `public_tools`).
            arguments: The tool's arguments, as its schema says.
            wait: Wait while the session runs another request (else `SessionBusyError`).
            caller: Who is calling, as recorded in the operations log.

        Raises:
            UserError: There is no public tool called `name`.
            SessionNotFoundError: No such session.
            SessionBusyError: The session is busy and `wait` is False.
        """
        if name not in {t.name for t in self.public_tools()}:
            raise UserError(f"There is no public tool named {name!r}.")
        with self.hub.checkout(session_id, wait=wait) as entry:
            assert entry.workspace is not None
            return entry.workspace.funnel.call(name, dict(arguments or {}), caller=caller)

    def public_tools(self) -> list[Tool]:
        """The tools offered on every surface as they are (`@tool(..., public=True)`)."""
        return default_registry().public()

    def cancel(self, session_id: str) -> bool:
        """Cancel the request running in `session_id`; False when none was running."""
        return self.hub.cancel(session_id)

    def close(self) -> None:
        """Save and close every open session and stop the thread pool."""
        self.hub.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._owns_services:
            self.services.close()

    def __enter__(self) -> Assistant:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
