"""What a server lets tools do: no model-written code without OS isolation, no stray files.

A person at the CLI runs code they asked for on their own machine; a server runs code a
model (or a remote caller) wrote. So the REST and MCP servers install `server_policy` on
every session's funnel:

* code-running tools (`custom_operation`, `run_pipeline`) run only when the OS-level
  sandbox is available (`os_isolation_available`) or the operator opted in
  (`--allow-unsandboxed-code`); otherwise they fail with `SandboxUnavailable`;
* `read_document` opens only files inside the session's own folder (its uploads).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xhelio.tools.funnel import Policy, error_result

__all__ = ["CODE_TOOLS", "os_isolation_available", "server_policy"]

CODE_TOOLS = frozenset({"custom_operation", "run_pipeline"})


def os_isolation_available() -> bool:
    """Whether the OS-level sandbox layers are in force on this machine.

    THE hook for the sandbox issue: it asks `xhelio.sandbox.isolation_available()` when the
    sandbox package provides it, and says False otherwise (the Python-level sandbox alone
    is not enough for a server).
    """
    try:
        sandbox = importlib.import_module("xhelio.sandbox")
    except ImportError:
        return False
    probe: Callable[[], bool] | None = getattr(sandbox, "isolation_available", None)
    if probe is None:
        return False
    try:
        return bool(probe())
    except Exception:
        return False


def server_policy(session_folder: Path, allow_unsandboxed_code: bool) -> Policy:
    """The funnel policy of a server session in `session_folder`."""
    root = session_folder.resolve()

    def policy(name: str, args: dict[str, Any]) -> dict[str, Any] | None:
        if name in CODE_TOOLS and not allow_unsandboxed_code and not os_isolation_available():
            return error_result(
                "SandboxUnavailable",
                f"{name} runs generated code, and this server has no OS-level sandbox; the "
                "operator can start it with --allow-unsandboxed-code to accept the risk.",
            )
        if name == "read_document":
            # Resolve exactly as the tool will (user home expanded, relative to the cwd).
            raw = str(args.get("path", "")).strip().strip("'\"")
            target = Path(raw).expanduser().resolve() if raw else None
            if target is None or not target.is_relative_to(root):
                return error_result(
                    "UserError",
                    "On a server, read_document opens only files uploaded to this session "
                    f"(PUT /api/v1/sessions/{{id}}/uploads/{{name}}, then {root}/uploads/NAME).",
                )
        return None

    return policy
