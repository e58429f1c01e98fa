"""`xhelio mcp`: the assistant and its tools as an MCP server (official `mcp` SDK).

For Claude Desktop, Claude Code, Cursor and any MCP client; stdio by default, streamable
HTTP with `--http`. Tools:

* `chat` (the whole assistant: text answer, plus the figure as a PNG image when one was
  made), `reset_session`, `get_status`;
* direct tools that need no LLM and no key: `search_datasets`, `list_parameters`,
  `fetch_data` (summary + preview), `describe_data`, `custom_operation`, `plot` (PNG image
  + figure JSON), and `run_pipeline` when the tool registry has pipelines.

Each MCP session (one stdio connection, or one `Mcp-Session-Id` over HTTP) has its own
xhelio session, as each REST client has: chat, fetch and plot share its data, and
`reset_session` replaces it without touching any other client's. Every call goes through
the session's funnel under the server policy: model-written code runs only with the
OS-level sandbox or `--allow-unsandboxed-code`.

A failure comes back as a tool error (`isError`) whose text is the JSON error body of the
REST API, `{"status": "error", "type", "message"}`, with the same types (`SessionBusy` when
the session is running another call, `ValidationError` for an unusable argument).

Over HTTP (`http_app`) the REST server's rules hold: loopback unless `XHELIO_API_TOKEN` is
set, then every request needs `Authorization: Bearer <token>`; Host/Origin checks against
DNS rebinding and a body size limit (the same `SecurityMiddleware`).
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp_types import CallToolResult, ContentBlock, TextContent
from pydantic import Field

import xhelio
from xhelio.agents.models import resolve_models
from xhelio.api.assistant import Assistant
from xhelio.api.direct import build_figure, checked_call, read_tool
from xhelio.api.error_types import error_type
from xhelio.api.events import figure_json
from xhelio.api.policy import code_policy, os_isolation_available
from xhelio.api.turns import save_gallery_figure
from xhelio.config import Settings, home_dir, load_settings
from xhelio.errors import XhelioError
from xhelio.server.client_paths import ClientPaths, PathMap
from xhelio.server.config import ServerConfig, check_bind
from xhelio.server.security import ASGIApp, SecurityMiddleware
from xhelio.tools.funnel import sanitize
from xhelio.tools.registry import Tool, ToolRegistry
from xhelio.tools.workspace import Workspace

__all__ = ["XhelioMcp", "build_server", "http_app"]

T = TypeVar("T")
_PREVIEW_ROWS = 5

Label = Annotated[
    str, Field(description="A stored data label, e.g. AC_H1_MFI.Magnitude (from fetch_data).")
]
DatasetId = Annotated[
    str, Field(description="Dataset id from search_datasets, e.g. AC_H1_MFI (CDAWeb).")
]
TimeRange = Annotated[
    str, Field(description="A time range, e.g. '2024-01-15 to 2024-01-20' or '2024-01-15'.")
]
SessionId = Annotated[
    str | None,
    Field(
        description="The xhelio session to work in (from get_status); only for clients without "
        "MCP sessions: otherwise the MCP session's own.",
        max_length=64,
    ),
]


def _text(value: Any) -> TextContent:
    body = value if isinstance(value, str) else json.dumps(sanitize(value), default=str, indent=1)
    return TextContent(type="text", text=body)


def _error_body(kind: str, message: str) -> TextContent:
    """The REST API's JSON error body, as the text of a tool error."""
    return _text({"status": "error", "type": kind, "message": message})


def _failure(kind: str, message: str) -> CallToolResult:
    return CallToolResult(content=[_error_body(kind, message)], is_error=True)


@dataclass(frozen=True)
class Client:
    """Who calls: the MCP session (None for a sessionless request) and a named session."""

    mcp_session: str | None
    session_id: str | None = None

    @classmethod
    def of(cls, ctx: Context, session_id: str | None = None) -> Client:
        """The caller of the tool call `ctx` (stdio is one MCP session per process)."""
        headers = ctx.headers
        if headers is None:
            return cls("stdio", session_id)
        return cls(headers.get(MCP_SESSION_ID_HEADER), session_id)


class XhelioMcp:
    """The state behind the MCP tools: an `Assistant` and each MCP session's xhelio session.

    An MCP session is the stdio connection, or one `Mcp-Session-Id` over HTTP (the SDK
    refuses ids it did not issue). A request of the sessionless protocol (2026-07-28) has
    none: it names its xhelio session with the tools' `session_id` argument, as a REST
    client does, and without one it works in a new session whose id the answer gives.
    """

    def __init__(self, assistant: Assistant) -> None:
        """Serve `assistant`'s sessions."""
        self.assistant = assistant
        self._sessions: dict[str, str] = {}
        self._lock = threading.Lock()

    def current(self, client: Client) -> str:
        """The xhelio session of `client`, created on its first use."""
        if client.session_id is not None:
            self.assistant.hub.require(client.session_id)
            return client.session_id
        if client.mcp_session is None:
            return self.assistant.new_session("MCP session")
        with self._lock:
            sid = self._sessions.get(client.mcp_session)
            if sid is None:
                sid = self.assistant.new_session("MCP session")
                self._sessions[client.mcp_session] = sid
            return sid

    def reset(self, client: Client) -> str:
        """Give `client`'s MCP session a new, empty xhelio session."""
        sid = self.assistant.new_session("MCP session")
        if client.mcp_session is not None:
            with self._lock:
                self._sessions[client.mcp_session] = sid
        return sid

    def in_session(self, client: Client, work: Callable[[Workspace], T]) -> T:
        """Run `work` holding `client`'s session.

        Raises:
            SessionNotFoundError: `client.session_id` names no session.
            SessionBusyError: The session is running another call (as REST answers 409).
        """
        with self.assistant.hub.checkout(self.current(client), wait=False) as entry:
            assert entry.workspace is not None
            return work(entry.workspace)

    def png(self, workspace: Workspace) -> Image | None:
        """The current figure as a PNG image, or None (no figure, or no browser to draw it)."""
        if workspace.session.plot.current is None:
            return None
        try:
            path = workspace.session.plot.export("png", "mcp_figure.png")
        except XhelioError:
            return None
        return Image(data=Path(path).read_bytes(), format="png")


async def _answer(work: Callable[[], Sequence[ContentBlock] | CallToolResult]) -> CallToolResult:
    """Run `work` off the event loop; an `XhelioError` becomes a typed tool error."""
    try:
        done = await anyio.to_thread.run_sync(work)
    except XhelioError as exc:
        return _failure(error_type(exc), exc.message)
    return done if isinstance(done, CallToolResult) else CallToolResult(content=list(done))


def _register_chat(server: MCPServer, state: XhelioMcp) -> None:
    @server.tool()
    async def chat(
        message: Annotated[
            str,
            Field(
                description="The request in plain language, e.g. "
                "'ACE magnetic field for 2024-01-15 to 2024-01-17'.",
                max_length=20_000,
            ),
        ],
        ctx: Context,
        session_id: SessionId = None,
    ) -> CallToolResult:
        """Ask xhelio anything about heliophysics data in plain language.

        It finds datasets, fetches data, computes and plots; the answer comes back as text,
        with the figure as a PNG image when one was made. The session keeps data and the
        figure between calls; use reset_session to start over.
        """
        if not message.strip():
            return _failure(
                "ValidationError",
                "message is empty: say what you want, e.g. 'list missions' or "
                "'ACE magnetic field for 2024-01-15'.",
            )
        client = Client.of(ctx, session_id)

        def run() -> CallToolResult:
            sid = state.current(client)
            response = state.assistant.run(message, session_id=sid, wait=False)
            client_of_turn = Client(client.mcp_session, sid)
            content: list[ContentBlock] = [_text(response.answer or "(no answer)")]
            if response.figure is not None:
                image = state.in_session(client_of_turn, state.png)
                if image is not None:
                    content.append(image.to_image_content())
            if response.error is not None:
                content.append(_error_body(response.error.type, response.error.message))
            return CallToolResult(content=content, is_error=response.error is not None)

        return await _answer(run)

    @server.tool()
    async def reset_session(ctx: Context) -> str:
        """Start a new, empty session (data and figure of the old one are kept on disk)."""
        client = Client.of(ctx)
        sid = await anyio.to_thread.run_sync(lambda: state.reset(client))
        return f"New session {sid}."

    @server.tool()
    async def get_status(ctx: Context, session_id: SessionId = None) -> CallToolResult:
        """The current session (data labels, figure), the models in use and the sandbox."""
        client = Client.of(ctx, session_id)

        def status() -> list[ContentBlock]:
            sid = state.current(client)
            workspace = state.assistant.hub.view(sid)
            models = resolve_models(state.assistant.settings)
            report = {
                "version": xhelio.__version__,
                "session_id": sid,
                "data": [e.label for e in workspace.session.store],
                "has_figure": workspace.session.plot.current is not None,
                "offline": models.offline,
                "model": models.model_for("orchestrator"),
                "os_sandbox": os_isolation_available(state.assistant.services),
            }
            return [_text(report)]

        return await _answer(status)


def _tool_call(
    state: XhelioMcp, client: Client, name: str, args: dict[str, Any]
) -> Callable[[], Sequence[ContentBlock]]:
    """Work that runs tool `name` in the caller's session and returns its result as JSON."""
    given = {k: v for k, v in args.items() if v is not None}

    def work() -> list[ContentBlock]:
        def call(workspace: Workspace) -> list[ContentBlock]:
            result = checked_call(workspace, name, given, "mcp").to_dict()
            return [_text({**result, "session_id": workspace.session.id})]

        return state.in_session(client, call)

    return work


def _register_data(server: MCPServer, state: XhelioMcp) -> None:
    @server.tool()
    async def search_datasets(
        query: Annotated[
            str,
            Field(description="Words such as 'ACE magnetic field' or 'solar wind speed OMNI'."),
        ],
        ctx: Context,
        mission: Annotated[
            str | None, Field(description="Restrict to one mission (name or alias).")
        ] = None,
        limit: Annotated[int, Field(description="Maximum results.", ge=1, le=50)] = 10,
        session_id: SessionId = None,
    ) -> CallToolResult:
        """Search every registered archive's datasets by words (mission, instrument, quantity)."""
        args = {"query": query, "mission": mission, "limit": limit}
        client = Client.of(ctx, session_id)
        return await _answer(_tool_call(state, client, "search_datasets", args))

    @server.tool()
    async def list_parameters(
        dataset_id: DatasetId,
        ctx: Context,
        source: Annotated[
            str | None,
            Field(description="The source of the dataset: the 'source' of a search result."),
        ] = None,
        session_id: SessionId = None,
    ) -> CallToolResult:
        """A dataset's parameters with type, units, size, plus its coverage and cadence."""
        args = {"dataset_id": dataset_id, "source": source}
        return await _answer(_tool_call(state, Client.of(ctx, session_id), "list_parameters", args))

    @server.tool()
    async def fetch_data(
        dataset_id: DatasetId,
        parameter_id: Annotated[str, Field(description="Parameter name, e.g. Magnitude.")],
        time_range: TimeRange,
        ctx: Context,
        source: Annotated[
            str | None,
            Field(description="The source of the dataset: the 'source' of a search result."),
        ] = None,
        session_id: SessionId = None,
    ) -> CallToolResult:
        """Fetch one parameter into the session; returns a summary and a preview."""
        args: dict[str, Any] = {
            "dataset_id": dataset_id,
            "parameter_id": parameter_id,
            "time_range": time_range,
        }
        if source:
            args["source"] = source
        client = Client.of(ctx, session_id)

        def work(ws: Workspace) -> list[ContentBlock]:
            result = checked_call(ws, "fetch_data", args, caller="mcp")
            label = result.labels[0] if result.labels else str(result.payload.get("label"))
            preview = read_tool(ws, "preview_data", {"label": label, "n": _PREVIEW_ROWS})
            body = {"summary": result.to_dict(), "preview": preview}
            return [_text({**body, "session_id": ws.session.id})]

        return await _answer(lambda: state.in_session(client, work))

    @server.tool()
    async def describe_data(
        label: Label, ctx: Context, session_id: SessionId = None
    ) -> CallToolResult:
        """Statistics of a stored label: min, max, mean, percentiles, NaN share, cadence."""
        client = Client.of(ctx, session_id)

        def work(ws: Workspace) -> list[ContentBlock]:
            return [_text(read_tool(ws, "describe_data", {"label": label}))]

        return await _answer(lambda: state.in_session(client, work))

    @server.tool()
    async def custom_operation(
        source_labels: Annotated[
            list[str], Field(description="Labels of the inputs; the first is `df`.")
        ],
        code: Annotated[
            str,
            Field(
                description="Python that assigns `result`, e.g. "
                "\"result = df.pow(2).sum(axis=1).pow(0.5).to_frame('Bmag')\"."
            ),
        ],
        output_label: Annotated[str, Field(description="Label for the result.")],
        ctx: Context,
        description: Annotated[str, Field(description="What the code computes.")] = "",
        session_id: SessionId = None,
    ) -> CallToolResult:
        """Run pandas/numpy/scipy code on stored labels in the sandbox; stores `result`.

        The code sees `df` (first source), `sources` (label -> data), `pd`, `np`, `xr`,
        `scipy`, `pywt`, and must assign `result`.
        """
        args = {
            "source_labels": source_labels,
            "code": code,
            "output_label": output_label,
            "description": description,
        }
        return await _answer(
            _tool_call(state, Client.of(ctx, session_id), "custom_operation", args)
        )

    @server.tool()
    async def plot(
        labels: Annotated[list[str], Field(description="Labels to plot, one panel each.")],
        ctx: Context,
        title: Annotated[str | None, Field(description="Figure title.")] = None,
        overlay: Annotated[bool, Field(description="All series in one panel.")] = False,
        session_id: SessionId = None,
    ) -> CallToolResult:
        """Plot stored labels (one panel each, or overlaid): a PNG image and the figure JSON."""
        client = Client.of(ctx, session_id)

        def work(ws: Workspace) -> list[ContentBlock]:
            spec = build_figure(labels, overlay, False, title)
            checked_call(ws, "render_plotly_json", {"figure": spec}, caller="mcp")
            save_gallery_figure(ws, f"plot {' '.join(labels)}")
            image = state.png(ws)
            first = (
                image.to_image_content()
                if image is not None
                else _text("(No PNG: no Chrome/Chromium to draw it; the figure JSON follows.)")
            )
            return [first, _text({"figure": figure_json(ws)})]

        return await _answer(lambda: state.in_session(client, work))


def _register_pipelines(server: MCPServer, state: XhelioMcp, registry: ToolRegistry) -> None:
    if registry.get("run_pipeline") is None:
        return

    @server.tool()
    async def run_pipeline(
        pipeline: Annotated[str, Field(description="Saved pipeline id (pl_...) or name.")],
        ctx: Context,
        time_range: Annotated[
            str | None, Field(description="New time range, e.g. 'March 2001'.")
        ] = None,
        variable_overrides: Annotated[
            dict[str, str] | None,
            Field(description='Other variables, e.g. {"$TIME_RANGE": "2001-03-01 to 2001-03-05"}.'),
        ] = None,
        modifications: Annotated[
            str | None, Field(description="What to change relative to the saved pipeline.")
        ] = None,
        session_id: SessionId = None,
    ) -> CallToolResult:
        """Replay a saved pipeline for a new time range in the session, without any model."""
        args = {
            "pipeline": pipeline,
            "time_range": time_range,
            "variable_overrides": variable_overrides,
            "modifications": modifications,
        }
        client = Client.of(ctx, session_id)
        return await _answer(_tool_call(state, client, "run_pipeline", args))


def _public_tool(state: XhelioMcp, t: Tool) -> Callable[..., Any]:
    """An MCP tool function for registry tool `t`: its own arguments plus `session_id`."""

    async def run(ctx: Context, **arguments: Any) -> CallToolResult:
        client = Client.of(ctx, arguments.pop("session_id", None))
        return await _answer(_tool_call(state, client, t.name, arguments))

    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("ctx", keyword, annotation=Context)]
    for name, field in t.arguments.model_fields.items():
        annotation = Annotated[field.annotation, Field(description=field.description)]
        default = (
            inspect.Parameter.empty
            if field.is_required()
            else field.get_default(call_default_factory=True)
        )
        params.append(inspect.Parameter(name, keyword, default=default, annotation=annotation))
    params.append(inspect.Parameter("session_id", keyword, default=None, annotation=SessionId))
    run.__signature__ = inspect.Signature(params, return_annotation=CallToolResult)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params} | {"return": CallToolResult}
    run.__name__ = t.name
    return run


def _register_public(server: MCPServer, state: XhelioMcp, registry: ToolRegistry) -> None:
    """Every public registry tool that has no hand-written MCP form yet, as it is."""
    taken = {t.name for t in server._tool_manager.list_tools()}  # pyright: ignore[reportPrivateUsage]
    for t in registry.public():
        if t.name not in taken:
            server.add_tool(_public_tool(state, t), name=t.name, description=t.description)


def build_server(
    settings: Settings | None = None,
    allow_unsandboxed_code: bool = False,
    assistant: Assistant | None = None,
) -> tuple[MCPServer, XhelioMcp]:
    """The MCP server and its state.

    Args:
        settings: xhelio settings (default: config file and environment).
        allow_unsandboxed_code: Run model-written code without the OS-level sandbox.
        assistant: The assistant to serve (tests pass one).
    """
    if assistant is None:
        assistant = Assistant(settings or load_settings(), workers=8)
    if assistant.hub.policy is None:
        assistant.hub.policy = code_policy(assistant, allow_unsandboxed_code)
    state = XhelioMcp(assistant)
    server = MCPServer(
        "xhelio",
        version=xhelio.__version__,
        instructions=(
            "xhelio finds, fetches, computes and plots heliophysics data from every registered "
            "archive (NASA CDAWeb and the others `xhelio sources` lists). Use "
            "`chat` for plain-language requests, or the direct tools (search_datasets, "
            "list_parameters, fetch_data, describe_data, custom_operation, plot)."
        ),
    )
    _register_chat(server, state)
    _register_data(server, state)
    from xhelio.tools.toolset import default_registry

    _register_pipelines(server, state, default_registry())
    _register_public(server, state, default_registry())
    return server, state


def http_app(server: MCPServer, config: ServerConfig) -> ASGIApp:
    """The streamable-HTTP MCP endpoint (`/mcp`) behind the REST server's guard.

    Args:
        server: The MCP server of `build_server`.
        config: Bind address, token (`ServerConfig.from_env` reads `XHELIO_API_TOKEN`) and
            body limit.

    Raises:
        ConfigError: A non-loopback bind without a token, or a token that is too short.
    """
    check_bind(config)
    # The SDK's own Host/Origin checks apply on loopback; ours add the token everywhere.
    app = server.streamable_http_app(host=config.host)
    # Remote clients never see the server's own paths (local stdio clients may).
    return ClientPaths(SecurityMiddleware(app, config, public=[]), PathMap(home_dir()))
