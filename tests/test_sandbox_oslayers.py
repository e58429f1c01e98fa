"""The OS layers alone contain hostile code: no AST layer, no Python audit hook.

Every case runs through `run_without_validation` on an executor started with
`python_guards=False`, so between the code and the machine stand only the operating-
system layers (uid drop when root, no-new-privs, Landlock, seccomp, rlimits, a scrubbed
environment). The code regains full builtins through a module's `__builtins__`, as an
attacker past the AST layer would. Containment is asserted by effect: the secret file
is not read or changed, no canary file appears, no connection reaches a loopback
listener, a bystander process survives, no secret reaches the result, and the next
call on the same executor works.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from xhelio.cli.main import app
from xhelio.config import Settings
from xhelio.errors import SandboxError
from xhelio.sandbox import SandboxExecutor, oslayers
from xhelio.sandbox.executor import ALLOW_NO_OS_ENV, IsolationStatus, require_isolation

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux OS layers")

SECRET = "sk-oslayer-secret-never-in-the-sandbox-5678"
REACH = "B = pd.io.common.__builtins__\nos = pd.io.common.os\nimp = B['__import__']\n"


@dataclass
class Scene:
    """Everything a case may target, world-readable/writable so only the sandbox stops it."""

    secret_file: Path
    canary: Path
    port: int
    victim_pid: int
    parent_pid: int


@pytest.fixture(scope="module")
def bare() -> Iterator[SandboxExecutor]:
    """An executor whose children run with the OS layers only."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", SECRET)
        settings = replace(Settings(), sandbox_timeout_s=8.0, sandbox_cpu_s=30)
        sandbox = SandboxExecutor(settings, python_guards=False)
        sandbox.warm_up()
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="module")
def listener() -> Iterator[socket.socket]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


@pytest.fixture
def scene(listener: socket.socket) -> Iterator[Scene]:
    # Under /tmp with open permissions: the uid drop alone would not protect them.
    folder = Path(tempfile.mkdtemp(prefix="xhelio-oslayer-", dir="/tmp"))
    folder.chmod(0o777)
    secret_file = folder / "api_key.txt"
    secret_file.write_text(SECRET)
    secret_file.chmod(0o666)
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        yield Scene(
            secret_file, folder / "canary", listener.getsockname()[1], victim.pid, os.getpid()
        )
    finally:
        victim.kill()
        victim.wait()
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()


def _fill(code: str, scene: Scene) -> str:
    return (
        code.replace("{secret}", str(scene.secret_file))
        .replace("{canary}", str(scene.canary))
        .replace("{port}", str(scene.port))
        .replace("{victim}", str(scene.victim_pid))
        .replace("{parent}", str(scene.parent_pid))
    )


CASES: list[tuple[str, str]] = [
    # files: read a secret, write, C-level opens (Arrow), freed fds, /proc
    ("read_secret", "result = B['open']('{secret}').read()"),
    ("read_after_close", "os.close(0)\nos.close(1)\nresult = B['open']('{secret}').read()"),
    ("write_canary", "os.close(0)\nB['open']('{canary}', 'w').write('x')\nresult = 1"),
    ("overwrite_secret", "os.close(0)\nB['open']('{secret}', 'w').write('gone')\nresult = 1"),
    ("os_open_creat", "os.close(0)\nresult = os.open('{canary}', os.O_CREAT | os.O_WRONLY)"),
    (
        "arrow_osfile_read",
        "pa = imp('pyarrow')\nos.close(0)\nresult = pa.OSFile('{secret}').read().decode()",
    ),
    (
        "arrow_memory_map_write",
        "pa = imp('pyarrow')\nos.close(0)\nm = pa.memory_map('{secret}', 'r+')\n"
        "m.write(b'gone')\nresult = 1",
    ),
    (
        "arrow_osfile_write",
        "pa = imp('pyarrow')\nos.close(0)\npa.OSFile('{canary}', 'w')\nresult = 1",
    ),
    ("list_tmp", "os.close(0)\nresult = str(os.listdir('/tmp'))"),
    ("parent_environ", "os.close(0)\nresult = B['open']('/proc/{parent}/environ').read()"),
    (
        "zygote_environ",
        "os.close(0)\nresult = B['open']('/proc/' + str(os.getppid()) + '/environ').read()",
    ),
    ("proc_mem_write", "os.close(0)\nresult = B['open']('/proc/self/mem', 'r+b')"),
    ("etc_shadow_like", "os.close(0)\nresult = B['open']('/etc/hostname').read()"),
    # processes: every way to start one
    ("os_fork", "result = os.fork()"),
    ("os_system", "result = os.system('touch {canary}')"),
    ("posix_spawn", "result = os.posix_spawn('/usr/bin/touch', ['touch', '{canary}'], {})"),
    ("subprocess_run", "result = str(imp('subprocess').run(['touch', '{canary}']))"),
    (
        "posixsubprocess_fork_exec",
        "ps = imp('_posixsubprocess')\n"
        "result = ps.fork_exec(['/usr/bin/touch', '{canary}'], [b'/usr/bin/touch'], True, (), "
        "None, None, -1, -1, -1, -1, -1, -1, -1, -1, False, False, -1, None, None, None, -1, None, "
        "False)",
    ),
    ("execv", "os.execv('/usr/bin/touch', ['touch', '{canary}'])\nresult = 1"),
    ("ctypes_raw_fork", "c = imp('ctypes')\nresult = c.CDLL(None).syscall(57)"),
    # network
    (
        "tcp_connect",
        "s = imp('socket')\nresult = str(s.create_connection(('127.0.0.1', {port}), timeout=2))",
    ),
    ("udp_socket", "s = imp('socket')\nresult = str(s.socket(s.AF_INET, s.SOCK_DGRAM))"),
    ("unix_socketpair", "s = imp('socket')\nresult = str(s.socketpair())"),
    # signals, tracing, credentials
    ("kill_bystander", "os.kill({victim}, 9)\nresult = 1"),
    ("kill_parent", "os.kill({parent}, 9)\nresult = 1"),
    ("kill_zygote", "os.kill(os.getppid(), 9)\nresult = 1"),
    ("kill_all", "os.kill(-1, 9)\nresult = 1"),
    ("setuid_root", "os.setuid(0)\nresult = os.getuid()"),
    ("unshare_namespace", "result = os.unshare(os.CLONE_NEWUSER)"),
]


@pytest.mark.parametrize("code", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_os_layers_alone_contain(
    code: str, bare: SandboxExecutor, listener: socket.socket, scene: Scene
) -> None:
    value: object = None
    try:
        outcome = bare.run_without_validation(REACH + _fill(code, scene), {})
        value = outcome.value
        assert SECRET not in outcome.stdout
    except SandboxError as error:
        assert error.category in {"forbidden", "runtime"}, error.message
        assert SECRET not in error.message
    assert SECRET not in str(value)
    # os.system reports a failed spawn as exit status 127 (or -1) instead of raising.
    assert value in (None, -1, 127 << 8), f"the call succeeded: {value!r}"
    assert scene.secret_file.read_text() == SECRET
    assert not scene.canary.exists()
    with pytest.raises(BlockingIOError):
        connection, _ = listener.accept()
        connection.close()
    assert os.waitpid(scene.victim_pid, os.WNOHANG) == (0, 0), "the bystander was killed"
    after: object = bare.run("result = float(np.sqrt(df['a'] ** 2).sum())", {"x": _frame()}).value
    assert after == pytest.approx(float(np.abs(_frame()["a"]).sum()))


def _frame() -> pd.DataFrame:
    index = pd.date_range("2024-01-01", periods=20, freq="1min", tz="UTC")
    return pd.DataFrame({"a": np.linspace(-1.0, 1.0, 20)}, index=index)


def test_environment_holds_no_secret(bare: SandboxExecutor) -> None:
    outcome = bare.run_without_validation(REACH + "result = str(dict(os.environ))", {})
    assert isinstance(outcome.value, str)
    assert SECRET not in outcome.value
    assert "OPENAI_API_KEY" not in outcome.value
    assert "PATH" in outcome.value  # the probe really read the environment


def test_every_layer_is_reported_and_applied(bare: SandboxExecutor) -> None:
    status = bare.isolation()
    assert status.confined
    outcome = bare.run("result = 1", {})
    assert set(outcome.layers) == set(status.layers)
    assert {"seccomp", "landlock-fs", "no-new-privs"} <= set(outcome.layers)
    if os.geteuid() == 0:
        assert "uid-drop" in outcome.layers
        who: object = bare.run_without_validation(REACH + "result = os.getuid()", {}).value
        assert who not in (0, None)


def test_threads_still_work(bare: SandboxExecutor) -> None:
    code = (
        "t = imp('threading')\nbox = []\nth = t.Thread(target=lambda: box.append(6 * 7))\n"
        "th.start()\nth.join()\nresult = box[0]"
    )
    value: object = bare.run_without_validation(REACH + code, {}).value
    assert value == 42


def test_without_root_the_uid_stays_and_landlock_and_seccomp_still_hold(
    monkeypatch: pytest.MonkeyPatch, scene: Scene
) -> None:
    """The documented non-root behaviour: no uid change, the other layers confine alone."""
    monkeypatch.setattr(oslayers.os, "geteuid", lambda: 1000)
    plan = oslayers.plan_isolation(1 << 40, 30)
    monkeypatch.undo()
    assert plan.drop_to is None
    assert "uid-drop" in plan.unavailable
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the forked child
        report = []
        try:
            layers = oslayers.apply_isolation(plan)
            report.append(",".join(layers))
            for attempt in (
                lambda: scene.secret_file.read_text(),
                lambda: scene.canary.write_text("x"),
                lambda: os.fork(),
                lambda: socket.socket(),
            ):
                try:
                    attempt()
                    report.append("ESCAPED")
                except OSError as exc:
                    report.append(type(exc).__name__)
            report.append(str(os.getuid()))
        finally:
            os.write(write_end, "|".join(report).encode())
            os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    with os.fdopen(read_end) as reader:
        fields = reader.read().split("|")
    assert "uid-drop" not in fields[0] and "seccomp" in fields[0]
    assert "ESCAPED" not in fields
    assert fields[1:5] == ["PermissionError"] * 4
    assert fields[5] == str(os.getuid())  # unchanged
    assert not scene.canary.exists()


def test_generated_code_is_refused_without_an_os_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    bare_status = IsolationStatus(layers=("rlimits",), unavailable={"seccomp": "not Linux"})
    with pytest.raises(SandboxError) as info:
        require_isolation(bare_status, allow_no_os=False)
    assert info.value.category == "isolation"
    assert ALLOW_NO_OS_ENV in info.value.message
    assert "seccomp: not Linux" in info.value.message
    require_isolation(bare_status, allow_no_os=True)  # the explicit opt-in
    monkeypatch.setenv(ALLOW_NO_OS_ENV, "1")
    assert SandboxExecutor(Settings()).allow_no_os_layers
    monkeypatch.setenv(ALLOW_NO_OS_ENV, "0")
    assert not SandboxExecutor(Settings()).allow_no_os_layers


def test_doctor_reports_the_layers_and_the_probes() -> None:
    result = CliRunner().invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert {"seccomp", "landlock-fs"} <= set(report["layers"])
    assert report["runs_generated_code"]
    assert report["probes"] and all(p["contained"] for p in report["probes"].values())
