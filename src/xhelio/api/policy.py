"""What a server lets tools do: no model-written code without OS isolation, no stray files.

A person at the CLI runs code they asked for on their own machine; a server runs code a
model (or a remote caller) wrote. So the REST and MCP servers install `server_policy` on
every session's funnel:

* tools that run generated code (their spec says `runs_code`) run only when the OS-level
  sandbox is available (`os_isolation_available`) or the operator opted in
  (`--allow-unsandboxed-code`); otherwise they fail with `SandboxUnavailable`;
* tools that open the user's files (their spec's `file_args`) open only files inside the
  session's own folder (its uploads).

The hub installs it as a `PolicyToolset` around each session's toolset.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xhelio.operations import ToolResult
from xhelio.services import Services
from xhelio.tools.registry import Tool
from xhelio.tools.wrappers import Policy

if TYPE_CHECKING:
    from xhelio.api.assistant import Assistant

__all__ = ["code_policy", "os_isolation_available", "server_policy"]


def os_isolation_available(services: Services | None = None) -> bool:
    """Whether the OS-level sandbox layers are in force on this machine.

    THE hook for the sandbox issue. It asks, in order: `xhelio.sandbox.isolation_available()`
    when the sandbox package provides it; else the sandbox executor's `isolation()` status
    (`.confined`) when `services` is given and the executor reports one. Anything else
    says False: the Python-level sandbox alone is not enough for a server.
    """
    try:
        sandbox = importlib.import_module("xhelio.sandbox")
    except ImportError:
        return False
    probe: Callable[[], bool] | None = getattr(sandbox, "isolation_available", None)
    try:
        if probe is not None:
            return bool(probe())
        if services is not None:
            isolation = getattr(services.sandbox, "isolation", None)
            if callable(isolation):
                return bool(getattr(isolation(), "confined", False))
    except Exception:
        return False
    return False


def server_policy(
    session_folder: Path,
    allow_unsandboxed_code: bool,
    isolated: Callable[[], bool] = os_isolation_available,
) -> Policy:
    """The funnel policy of a server session in `session_folder`.

    Args:
        session_folder: The session's own folder (the only place read_document may read).
        allow_unsandboxed_code: The operator accepts code without the OS-level sandbox.
        isolated: Says whether the OS-level sandbox is in force (asked when code runs).
    """
    root = session_folder.resolve()

    def policy(tool: Tool, args: dict[str, Any]) -> ToolResult | None:
        name = tool.name
        if tool.runs_code and not allow_unsandboxed_code and not isolated():
            return ToolResult.failure(
                name,
                "SandboxUnavailable",
                f"{name} runs generated code, and this server has no OS-level sandbox; the "
                "operator can start it with --allow-unsandboxed-code to accept the risk.",
            )
        for key in tool.file_args:
            given: object = args.get(key)
            if given is None or given == []:
                continue  # an optional path left out
            paths: list[object] = given if isinstance(given, list) else [given]  # pyright: ignore[reportUnknownVariableType]
            if not all(_inside(path, root) for path in paths):
                return ToolResult.failure(
                    name,
                    "UserError",
                    f"On a server, {name} opens only files uploaded to this session "
                    f"(PUT /api/v1/sessions/{{id}}/uploads/{{name}}, then {root}/uploads/NAME).",
                )
        return None

    return policy


def code_policy(assistant: Assistant, allow_unsandboxed_code: bool) -> Callable[[Path], Policy]:
    """The per-session policy factory a server installs on `assistant`'s hub.

    The OS-isolation answer is asked once (it may start the sandbox) and then remembered.
    """
    known: list[bool] = []

    def isolated() -> bool:
        if not known:
            known.append(os_isolation_available(assistant.services))
        return known[0]

    def make(folder: Path) -> Policy:
        return server_policy(folder, allow_unsandboxed_code, isolated)

    return make


def _inside(raw: object, root: Path) -> bool:
    """Whether `raw` names a path inside `root`, resolved exactly as a tool will."""
    text = str(raw).strip().strip("'\"")
    return bool(text) and Path(text).expanduser().resolve().is_relative_to(root)
