"""`xhelio mcp`: the assistant and its tools as an MCP server (official `mcp` SDK).

For Claude Desktop, Claude Code, Cursor and any MCP client; stdio by default, streamable
HTTP with `--http`. Tools:

* `chat` (the whole assistant: text answer, plus the figure as a PNG image when one was
  made), `reset_session`, `get_status`;
* direct tools that need no LLM and no key: `search_datasets`, `list_parameters`,
  `fetch_data` (summary + preview), `describe_data`, `custom_operation`, `plot` (PNG image
  + figure JSON), and `run_pipeline` when the tool registry has pipelines.

One MCP server process holds one current session (chat, fetch and plot share its data);
`reset_session` starts a new one. Every call goes through the session's funnel under the
server policy: model-written code runs only with the OS-level sandbox or
`--allow-unsandboxed-code`.

Over HTTP (`http_app`) the REST server's rules hold: loopback unless `XHELIO_API_TOKEN` is
set, then every request needs `Authorization: Bearer <token>`; Host/Origin checks against
DNS rebinding and a body size limit (the same `SecurityMiddleware`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import TextContent

import xhelio
from xhelio.agents.models import resolve_models
from xhelio.api.assistant import Assistant
from xhelio.api.direct import build_figure, checked_call, read_tool
from xhelio.api.events import figure_json
from xhelio.api.policy import code_policy, os_isolation_available
from xhelio.api.turns import save_gallery_figure
from xhelio.config import Settings, home_dir, load_settings
from xhelio.errors import XhelioError
from xhelio.server.client_paths import ClientPaths, PathMap
from xhelio.server.config import ServerConfig, check_bind
from xhelio.server.security import ASGIApp, SecurityMiddleware
from xhelio.tools.funnel import sanitize
from xhelio.tools.workspace import Workspace

__all__ = ["XhelioMcp", "build_server", "http_app"]

T = TypeVar("T")
Content = TextContent | Image
_PREVIEW_ROWS = 5


def _text(value: Any) -> TextContent:
    body = value if isinstance(value, str) else json.dumps(sanitize(value), default=str, indent=1)
    return TextContent(type="text", text=body)


class XhelioMcp:
    """The state behind the MCP tools: an `Assistant` and the current session id."""

    def __init__(self, assistant: Assistant) -> None:
        """Serve `assistant`'s sessions."""
        self.assistant = assistant
        self.session_id: str | None = None
        self._lock = threading.Lock()

    def current(self) -> str:
        """The current session, created on first use."""
        with self._lock:
            if self.session_id is None:
                self.session_id = self.assistant.new_session("MCP session")
            return self.session_id

    def reset(self) -> str:
        """Start a new session and make it current."""
        with self._lock:
            self.session_id = self.assistant.new_session("MCP session")
            return self.session_id

    def in_session(self, work: Callable[[Workspace], T]) -> T:
        """Run `work` holding the current session (waits for a running request)."""
        with self.assistant.hub.checkout(self.current()) as entry:
            assert entry.workspace is not None
            try:
                return work(entry.workspace)
            except XhelioError as exc:
                kind = getattr(exc, "kind", type(exc).__name__)
                raise ToolError(f"{kind}: {exc.message}") from exc

    def png(self, workspace: Workspace) -> Image | None:
        """The current figure as a PNG image, or None (no figure, or no browser to draw it)."""
        if workspace.session.plot.current is None:
            return None
        try:
            path = workspace.session.plot.export("png", "mcp_figure.png")
        except XhelioError:
            return None
        return Image(data=Path(path).read_bytes(), format="png")


async def _blocking(fn: Callable[[], T]) -> T:
    return await anyio.to_thread.run_sync(fn)


def _register_chat(server: MCPServer, state: XhelioMcp) -> None:
    @server.tool()
    async def chat(message: str) -> list[Content]:
        """Ask xhelio anything about heliophysics data in plain language.

        It finds datasets, fetches data, computes and plots; the answer comes back as text,
        with the figure as a PNG image when one was made. The session keeps data and the
        figure between calls; use reset_session to start over.

        Args:
            message: The request, e.g. 'ACE magnetic field for 2024-01-15 to 2024-01-17'.
        """

        def run() -> list[Content]:
            response = state.assistant.run(message, session_id=state.current())
            out: list[Content] = [_text(response.answer or "(no answer)")]
            if response.error is not None:
                out.append(_text(f"Error ({response.error.type}): {response.error.message}"))
            if response.figure is not None:
                image = state.in_session(state.png)
                if image is not None:
                    out.append(image)
            return out

        return await _blocking(run)

    @server.tool()
    async def reset_session() -> str:
        """Start a new, empty session (data and figure of the old one are kept on disk)."""
        sid = await _blocking(state.reset)
        return f"New session {sid}."

    @server.tool()
    async def get_status() -> dict[str, Any]:
        """The current session (data labels, figure), the models in use and the sandbox."""

        def status() -> dict[str, Any]:
            workspace = state.assistant.hub.view(state.current())
            models = resolve_models(state.assistant.settings)
            return {
                "version": xhelio.__version__,
                "session_id": state.current(),
                "data": [e.label for e in workspace.session.store],
                "has_figure": workspace.session.plot.current is not None,
                "offline": models.offline,
                "model": models.model_for("orchestrator"),
                "os_sandbox": os_isolation_available(state.assistant.services),
            }

        return await _blocking(status)


def _register_data(server: MCPServer, state: XhelioMcp) -> None:
    @server.tool()
    async def search_datasets(query: str, mission: str | None = None, limit: int = 10) -> str:
        """Search NASA CDAWeb datasets by words (mission, instrument, quantity, units).

        Args:
            query: Words such as 'ACE magnetic field' or 'solar wind speed OMNI'.
            mission: Restrict to one mission (name or alias).
            limit: Maximum results (1-50).
        """
        args = {"query": query, "mission": mission, "limit": limit}
        return (
            await _blocking(lambda: state.in_session(lambda ws: _call(ws, "search_datasets", args)))
        ).text

    @server.tool()
    async def list_parameters(dataset_id: str) -> str:
        """A dataset's parameters with type, units, size, plus its coverage and cadence.

        Args:
            dataset_id: CDAWeb dataset id, e.g. AC_H1_MFI.
        """
        args = {"dataset_id": dataset_id}
        return (
            await _blocking(lambda: state.in_session(lambda ws: _call(ws, "list_parameters", args)))
        ).text

    @server.tool()
    async def fetch_data(dataset_id: str, parameter_id: str, time_range: str) -> str:
        """Fetch one parameter into the session; returns a summary and a preview.

        Args:
            dataset_id: CDAWeb dataset id, e.g. AC_H1_MFI.
            parameter_id: Parameter name, e.g. Magnitude.
            time_range: e.g. '2024-01-15 to 2024-01-20' or '2024-01-15'.
        """
        args = {"dataset_id": dataset_id, "parameter_id": parameter_id, "time_range": time_range}

        def work(ws: Workspace) -> TextContent:
            result = checked_call(ws, "fetch_data", args, caller="mcp")
            label = result.labels[0] if result.labels else str(result.payload.get("label"))
            preview = read_tool(ws, "preview_data", {"label": label, "n": _PREVIEW_ROWS})
            return _text({"summary": result.to_dict(), "preview": preview})

        return (await _blocking(lambda: state.in_session(work))).text

    @server.tool()
    async def describe_data(label: str) -> str:
        """Statistics of a stored label: min, max, mean, percentiles, NaN share, cadence.

        Args:
            label: A label from fetch_data or custom_operation, e.g. AC_H1_MFI.Magnitude.
        """
        return (
            await _blocking(
                lambda: state.in_session(
                    lambda ws: _text(read_tool(ws, "describe_data", {"label": label}))
                )
            )
        ).text

    @server.tool()
    async def custom_operation(
        source_labels: list[str], code: str, output_label: str, description: str = ""
    ) -> str:
        """Run pandas/numpy/scipy code on stored labels in the sandbox; stores `result`.

        The code sees `df` (first source), `sources` (label -> data), `pd`, `np`, `xr`,
        `scipy`, `pywt`, and must assign `result`.

        Args:
            source_labels: Labels of the inputs; the first is `df`.
            code: e.g. "result = df.pow(2).sum(axis=1).pow(0.5).to_frame('Bmag')".
            output_label: Label for the result.
            description: What it computes.
        """
        args = {
            "source_labels": source_labels,
            "code": code,
            "output_label": output_label,
            "description": description,
        }
        return (
            await _blocking(
                lambda: state.in_session(lambda ws: _call(ws, "custom_operation", args))
            )
        ).text

    @server.tool()
    async def plot(
        labels: list[str], title: str | None = None, overlay: bool = False
    ) -> list[Content]:
        """Plot stored labels (one panel each, or overlaid): a PNG image and the figure JSON.

        Args:
            labels: Labels to plot, e.g. ['AC_H1_MFI.Magnitude'].
            title: Figure title.
            overlay: All series in one panel.
        """

        def work(ws: Workspace) -> list[Content]:
            spec = build_figure(labels, overlay, False, title)
            checked_call(ws, "render_plotly_json", {"figure": spec}, caller="mcp")
            save_gallery_figure(ws, f"plot {' '.join(labels)}")
            out: list[Content] = []
            image = state.png(ws)
            if image is not None:
                out.append(image)
            else:
                out.append(
                    _text("(No PNG: no Chrome/Chromium to draw it; the figure JSON follows.)")
                )
            out.append(_text({"figure": figure_json(ws)}))
            return out

        return await _blocking(lambda: state.in_session(work))


def _call(workspace: Workspace, name: str, args: dict[str, Any]) -> TextContent:
    result = checked_call(workspace, name, {k: v for k, v in args.items() if v is not None}, "mcp")
    return _text(result.to_dict())


def _register_pipelines(server: MCPServer, state: XhelioMcp, registry_names: list[str]) -> None:
    if "run_pipeline" not in registry_names:
        return

    @server.tool()
    async def run_pipeline(arguments: dict[str, Any]) -> str:
        """Run a saved pipeline in the current session (see the run_pipeline tool's arguments).

        Args:
            arguments: The run_pipeline tool's arguments as a JSON object.
        """
        return (
            await _blocking(
                lambda: state.in_session(lambda ws: _call(ws, "run_pipeline", arguments))
            )
        ).text


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
            "xhelio finds, fetches, computes and plots NASA heliophysics data (CDAWeb). Use "
            "`chat` for plain-language requests, or the direct tools (search_datasets, "
            "list_parameters, fetch_data, describe_data, custom_operation, plot)."
        ),
    )
    _register_chat(server, state)
    _register_data(server, state)
    from xhelio.tools.toolset import default_registry

    _register_pipelines(server, state, default_registry().names())
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
