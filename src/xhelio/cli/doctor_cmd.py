"""`xhelio doctor`: which sandbox layers are active on this machine, proven by live probes.

It starts the sandbox exactly as a session would, lists the operating-system layers each
call gets (and why any is missing), then runs a few fixed probes past the AST layer AND
without the Python audit hook, so only the OS layers stand in the way (reading a system
file, starting a process, opening a socket, reading the parent's environment), and
reports whether each was contained. Exit code 1 when generated code
would be refused (no confining OS layer and no opt-in) or a probe was not contained.
"""

from __future__ import annotations

import json
import os
import platform
from typing import Annotated, Any

import typer
from rich.console import Console

from xhelio.cli.errors import handle_errors
from xhelio.config import load_settings
from xhelio.errors import SandboxError
from xhelio.sandbox.executor import ALLOW_NO_OS_ENV, SandboxExecutor

__all__ = ["register"]

_REACH = "B = pd.io.common.__builtins__\nos = pd.io.common.os\n"
# name -> code run past the AST layer; contained when it fails or returns a falsy value
# File probes free an fd first, so that Landlock (not the fd limit) is what must refuse.
_PROBES: dict[str, str] = {
    "read /etc/passwd": "os.close(0)\nresult = len(B['open']('/etc/passwd').read())",
    "read the parent's environment": (
        "os.close(0)\n"
        "result = len(B['open']('/proc/' + str(os.getppid()) + '/environ', 'rb').read())"
    ),
    "start a process": "result = os.fork()",
    "open a socket": "result = str(B['__import__']('socket').socket())",
}


def _probe(sandbox: SandboxExecutor, code: str) -> tuple[bool, str]:
    try:
        outcome = sandbox.run_without_validation(_REACH + code, {})
    except SandboxError as exc:
        detail = exc.message.split("): ", 1)[-1]  # drop "The sandboxed code failed (...)"
        return True, f"{exc.category}: {detail[:100]}"
    value: object = outcome.value
    return value in (None, 0, "", False), f"returned {str(value)[:60]!r}"


def doctor(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show which sandbox isolation layers are active, and prove them with probes."""
    settings = load_settings()
    report: dict[str, Any] = {
        "platform": f"{platform.system()} {platform.release()}",
        "running_as_root": hasattr(os, "geteuid") and os.geteuid() == 0,
    }
    with SandboxExecutor(settings) as sandbox:
        status = sandbox.isolation()
        report["layers"] = list(status.layers)
        report["unavailable"] = status.unavailable
        report["confined"] = status.confined
        report["allowed_without_os"] = sandbox.allow_no_os_layers
        report["runs_generated_code"] = status.confined or sandbox.allow_no_os_layers
        probes: dict[str, dict[str, Any]] = {}
    if report["runs_generated_code"]:
        # The same probes with the Python audit hook left out: the OS layers alone.
        with SandboxExecutor(settings, python_guards=False) as bare:
            for name, code in _PROBES.items():
                contained, detail = _probe(bare, code)
                probes[name] = {"contained": contained, "detail": detail}
    report["probes"] = probes
    healthy = report["runs_generated_code"] and all(p["contained"] for p in probes.values())
    if as_json:
        typer.echo(json.dumps(report, indent=2))
    else:
        _print(report)
    if not healthy:
        raise typer.Exit(1)


def _print(report: dict[str, Any]) -> None:
    console = Console()
    console.print(f"Platform: {report['platform']} (root: {report['running_as_root']})")
    console.print("Sandbox OS layers active for every call:", highlight=False)
    for layer in report["layers"]:
        console.print(f"  [green]✓[/] {layer}", highlight=False)
    for layer, reason in report["unavailable"].items():
        console.print(f"  [yellow]✗[/] {layer}: {reason}", highlight=False)
    if not report["confined"]:
        verdict = (
            f"opted in with {ALLOW_NO_OS_ENV}=1: generated code runs WITHOUT OS isolation"
            if report["allowed_without_os"]
            else f"generated code is refused (no Landlock or seccomp; {ALLOW_NO_OS_ENV}=1 "
            "accepts the risk)"
        )
        console.print(f"[bold red]{verdict}[/]", highlight=False)
    for name, probe in report["probes"].items():
        mark = "[green]contained[/]" if probe["contained"] else "[bold red]NOT contained[/]"
        console.print(f"  OS-layer probe '{name}': {mark} ({probe['detail']})", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the `doctor` command to the app."""
    app.command("doctor")(handle_errors(doctor))
