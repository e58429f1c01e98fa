"""`xhelio mcp`: serve the assistant and its tools over MCP (stdio, or streamable HTTP).

stdio is what Claude Desktop, Claude Code and Cursor launch; `--http` serves streamable
HTTP on loopback (`http://127.0.0.1:8766/mcp`). Logs go to stderr: stdout is the protocol.
"""

from __future__ import annotations

import logging
import os
from typing import Annotated

import typer

from xhelio.cli.errors import handle_errors
from xhelio.errors import ConfigError

__all__ = ["mcp", "register"]


@handle_errors
def mcp(
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP, not stdio.")] = False,
    host: Annotated[str, typer.Option("--host", help="With --http: address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="With --http: port.")] = 8766,
    allow_unsandboxed_code: Annotated[
        bool,
        typer.Option(
            "--allow-unsandboxed-code",
            help="Run model-written code even without the OS-level sandbox (at your risk).",
        ),
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log to stderr.")] = False,
) -> None:
    """Serve xhelio over MCP for Claude Desktop, Claude Code, Cursor and other clients."""
    from xhelio.mcp_server import build_server
    from xhelio.server.config import is_loopback

    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING)
    if http and not is_loopback(host):
        raise ConfigError(
            f"Refusing to serve MCP on {host}: the MCP HTTP transport has no token here; keep "
            "--host 127.0.0.1 (or put an authenticating proxy in front)."
        )
    if allow_unsandboxed_code:
        # The sandbox's own opt-in (the executor refuses code without OS layers otherwise).
        os.environ["XHELIO_SANDBOX_ALLOW_NO_OS"] = "1"
    server, state = build_server(allow_unsandboxed_code=allow_unsandboxed_code)
    try:
        if http:
            server.run("streamable-http", host=host, port=port)
        else:
            server.run("stdio")
    finally:
        state.assistant.close()


def register(app: typer.Typer) -> None:
    """Add `mcp` to the app."""
    app.command("mcp")(mcp)
