"""`xhelio serve`: the REST + SSE server (FastAPI + uvicorn), safe by default.

Loopback (`127.0.0.1:8765`) unless `--host` says otherwise; any other address needs
`XHELIO_API_TOKEN` (then every request must carry it as a bearer token). Contract and
routes: docs/api.md; OpenAPI schema at http://127.0.0.1:8765/openapi.json.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.console import Console

from xhelio.cli.errors import handle_errors

__all__ = ["AllowUnsandboxedCode", "opt_in_unsandboxed_code", "register", "serve"]

MB = 1024 * 1024


# `serve` and `mcp`: run model-written code even where the kernel offers no OS layer.
AllowUnsandboxedCode = Annotated[
    bool,
    typer.Option(
        "--allow-unsandboxed-code",
        help="Run model-written code even without the OS-level sandbox (at your risk).",
    ),
]


def opt_in_unsandboxed_code() -> None:
    """Set the sandbox's own opt-in (`executor.ALLOW_NO_OS_ENV`) for this process.

    The environment variable is named here rather than imported: the executor module
    loads pandas, and the CLI starts without it.
    """
    os.environ["XHELIO_SANDBOX_ALLOW_NO_OS"] = "1"


@handle_errors
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to bind.")] = 8765,
    cors_origin: Annotated[
        list[str] | None,
        typer.Option("--cors-origin", help="Allow this browser origin (repeatable)."),
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option("--allowed-host", help="Host header to accept besides loopback names."),
    ] = None,
    max_body_mb: Annotated[int, typer.Option("--max-body-mb", help="Largest body.")] = 10,
    max_upload_mb: Annotated[int, typer.Option("--max-upload-mb", help="Largest upload.")] = 50,
    max_stream_events: Annotated[
        int, typer.Option("--max-stream-events", help="Events per SSE stream.")
    ] = 100_000,
    allow_unsandboxed_code: AllowUnsandboxedCode = False,
) -> None:
    """Serve the assistant over HTTP: web app, REST, SSE streaming and the OpenAPI schema."""
    import uvicorn

    from xhelio.server import ServerConfig, create_app

    if allow_unsandboxed_code:
        opt_in_unsandboxed_code()
    config = ServerConfig.from_env(
        host=host,
        port=port,
        cors_origins=tuple(cors_origin or ()),
        allowed_hosts=tuple(allowed_host or ()),
        max_body_bytes=max_body_mb * MB,
        max_upload_bytes=max_upload_mb * MB,
        max_stream_events=max_stream_events,
        allow_unsandboxed_code=allow_unsandboxed_code,
    )
    app = create_app(config)
    shown = f"[{host}]" if ":" in host else host
    Console(stderr=True).print(
        f"xhelio on http://{shown}:{port}/ (API: /api/v1, schema: /openapi.json)"
        + ("; bearer token required" if config.token else ""),
        highlight=False,
    )
    uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=5)


def register(app: typer.Typer) -> None:
    """Add `serve` to the app."""
    app.command("serve")(serve)
