"""`xhelio mcp`: serve the assistant and its tools over MCP (stdio, or streamable HTTP).

stdio is what Claude Desktop, Claude Code and Cursor launch; `--http` serves streamable
HTTP on loopback (`http://127.0.0.1:8766/mcp`); another `--host` needs `XHELIO_API_TOKEN`,
and then every request needs `Authorization: Bearer <token>` (as `xhelio serve`). Logs go
to stderr: stdout is the protocol.
"""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from xhelio.cli.errors import handle_errors
from xhelio.cli.serve_cmd import AllowUnsandboxedCode, opt_in_unsandboxed_code

__all__ = ["mcp", "register"]


@handle_errors
def mcp(
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP, not stdio.")] = False,
    host: Annotated[str, typer.Option("--host", help="With --http: address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="With --http: port.")] = 8766,
    allow_unsandboxed_code: AllowUnsandboxedCode = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log to stderr.")] = False,
) -> None:
    """Serve xhelio over MCP for Claude Desktop, Claude Code, Cursor and other clients."""
    from xhelio.mcp_server import build_server, http_app
    from xhelio.server.config import ServerConfig, check_bind

    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING)
    config = ServerConfig.from_env(host=host, port=port)
    if http:
        check_bind(config)  # before anything starts: loopback, or a token
    if allow_unsandboxed_code:
        opt_in_unsandboxed_code()
    server, state = build_server(allow_unsandboxed_code=allow_unsandboxed_code)
    try:
        if http:
            import uvicorn

            typer.echo(f"xhelio MCP on http://{host}:{port}/mcp", err=True)
            level = "info" if verbose else "warning"
            uvicorn.run(http_app(server, config), host=host, port=port, log_level=level)
        else:
            server.run("stdio")
    finally:
        state.assistant.close()


def register(app: typer.Typer) -> None:
    """Add `mcp` to the app."""
    app.command("mcp")(mcp)
