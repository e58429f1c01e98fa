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

import ctypes
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
REACH = (
    "B = pd.io.common.__builtins__\nos = pd.io.common.os\nimp = B['__import__']\n"
    "C = imp('ctypes')\nLIBC = C.CDLL(None, use_errno=True)\n"
    "ZERO = C.byref((C.c_ulong * 2)(0, 0))\n"
)


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
        status = sandbox.isolation()
    if not status.confined:  # refused there by design: see the degraded-kernel tests
        sandbox.close()
        pytest.skip(f"no confining OS layer on this machine: {status.unavailable}")
    yield sandbox
    sandbox.close()


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
    # fds: once the request is in, none can be freed, replaced or added
    ("dup2_over_stdin", "os.dup2(3, 0)\nresult = B['open']('{secret}').read()"),
    ("close_reply_pipe", "os.close(3)\nresult = B['open']('{secret}').read()"),
    ("close_range", "LIBC.syscall(436, 0, 2, 0)\nresult = B['open']('{secret}').read()"),
    ("memfd", "result = os.memfd_create('x')"),
    ("new_pipe", "result = str(os.pipe())"),
    # kernel objects that outlive the call (a channel to the next call or session)
    ("sysv_shm", "r = LIBC.shmget(0x5A4D, 4096, 0o1666)\nresult = r if r >= 0 else None"),
    ("sysv_msg", "r = LIBC.msgget(0x5A4D, 0o1666)\nresult = r if r >= 0 else None"),
    ("sysv_sem", "r = LIBC.semget(0x5A4D, 1, 0o1666)\nresult = r if r >= 0 else None"),
    # acting on other processes without a signal
    ("prlimit_parent", "result = LIBC.prlimit({parent}, 7, ZERO, None) or None"),
    ("prlimit_bystander", "result = LIBC.prlimit({victim}, 0, ZERO, None) or None"),
    ("renice_all_of_user", "result = LIBC.setpriority(1, 0, 19) or None"),
    ("sigio_to_parent", "result = LIBC.fcntl(3, 8, {parent}) or None"),
    ("sigio_via_ioctl", "result = LIBC.ioctl(3, 0x8901, C.byref(C.c_int({parent}))) or None"),
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
    assert isinstance(after, float)
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
    for layer in ("seccomp", "fd-seal", "landlock-fs", "no-new-privs"):
        # Present, or named with its reason (a kernel or container without it).
        assert layer in outcome.layers or status.unavailable.get(layer), layer
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
    assert isinstance(value, int) and value == 42


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC binds the unprivileged uid")
def test_a_thread_bomb_cannot_use_up_the_machines_tasks(bare: SandboxExecutor) -> None:
    code = (
        "t = imp('threading')\nsleep = imp('time').sleep\nt.stack_size(32768)\nn = 0\n"
        "try:\n    for i in range(20000):\n"
        "        t.Thread(target=sleep, args=(5,), daemon=True).start()\n        n += 1\n"
        "except Exception:\n    pass\nresult = n"
    )
    started: object = bare.run_without_validation(REACH + code, {}).value
    assert isinstance(started, int) and 0 < started <= oslayers.MAX_TASKS
    after: object = bare.run("result = 6 * 7", {}).value
    assert isinstance(after, int) and after == 42


def test_without_root_the_uid_stays_and_landlock_and_seccomp_still_hold(
    monkeypatch: pytest.MonkeyPatch, scene: Scene
) -> None:
    """The documented non-root behaviour: no uid change, the other layers confine alone."""
    if oslayers.landlock.landlock_abi() < 1 or oslayers.seccomp.seccomp_available():
        pytest.skip("needs Landlock and seccomp on this machine")
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
            # Same uid as the bystander here: only seccomp stands between them.
            zero = ctypes.byref((ctypes.c_ulong * 2)(0, 0))
            libc = ctypes.CDLL(None, use_errno=True)
            report.append(str(libc.prlimit(scene.victim_pid, 0, zero, None)))  # RLIMIT_CPU 0
            report.append(str(libc.shmget(0x5A4E, 4096, 0o1666)))
            report.append(str(libc.fcntl(write_end, 8, scene.victim_pid)))  # F_SETOWN
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
    assert fields[6:9] == ["-1", "-1", "-1"], fields
    assert not scene.canary.exists()
    assert os.waitpid(scene.victim_pid, os.WNOHANG) == (0, 0), "the bystander was killed"


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
    report = json.loads(result.output)
    for layer in ("seccomp", "landlock-fs"):
        assert layer in report["layers"] or report["unavailable"].get(layer), layer
    if not report["confined"]:  # a machine without either: refused, exit 1 (tested below)
        assert result.exit_code == 1
        pytest.skip(f"no confining OS layer here: {report['unavailable']}")
    assert result.exit_code == 0, result.output
    assert report["runs_generated_code"]
    assert report["probes"] and all(p["contained"] for p in report["probes"].values())


def test_a_kernel_without_landlock_or_seccomp_is_named_and_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(oslayers.landlock, "landlock_probe", lambda: (0, "no Landlock here"))
    monkeypatch.setattr(oslayers.seccomp, "seccomp_available", lambda: "libseccomp not found")
    plan = oslayers.plan_isolation(1 << 40, 30)
    assert plan.landlock_abi == 0 and plan.seccomp_program is None
    assert plan.fd_seal_program is None
    assert {"landlock-fs", "seccomp", "fd-seal"} <= set(plan.unavailable)
    assert plan.unavailable["landlock-fs"] == "no Landlock here"
    layers = plan.expected_layers()
    assert not {"landlock-fs", "seccomp", "fd-seal"} & set(layers)
    status = IsolationStatus(tuple(layers), plan.unavailable)
    assert not status.confined
    with pytest.raises(SandboxError) as info:
        require_isolation(status, allow_no_os=False)
    assert "libseccomp not found" in info.value.message
    assert "xhelio doctor" in info.value.message


def test_an_old_landlock_abi_says_which_parts_seccomp_covers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(oslayers.landlock, "landlock_probe", lambda: (1, ""))
    plan = oslayers.plan_isolation(1 << 40, 30)
    assert "landlock-fs" in plan.expected_layers()
    assert "landlock-net" not in plan.expected_layers()
    assert "seccomp still refuses sockets" in plan.unavailable["landlock-net"]
    assert "seccomp still refuses kill" in plan.unavailable["landlock-signal"]
    assert IsolationStatus(tuple(plan.expected_layers())).confined


def test_doctor_says_when_generated_code_would_be_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    degraded = IsolationStatus(
        ("rlimits", "no-new-privs"),
        {"landlock-fs": "the kernel has no Landlock", "seccomp": "libseccomp not found"},
    )

    def isolation(_self: SandboxExecutor) -> IsolationStatus:
        return degraded

    monkeypatch.setattr(SandboxExecutor, "isolation", isolation)
    monkeypatch.delenv(ALLOW_NO_OS_ENV, raising=False)
    result = CliRunner().invoke(app, ["doctor", "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert not report["confined"] and not report["runs_generated_code"]
    assert report["unavailable"]["seccomp"] == "libseccomp not found"
    text = CliRunner().invoke(app, ["doctor"]).output
    assert "generated code is refused" in text
    assert "landlock-fs: the kernel has no Landlock" in text
    assert ALLOW_NO_OS_ENV in text
