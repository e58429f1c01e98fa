"""The zygote's protocol: spare children, one relayed reply per call, nothing carried over.

Hostile children here get past the AST layer (`run_without_validation`) and the audit
hook (`python_guards=False`) and then attack the reply channel itself: forged frames
written by a thread that outlives the reply, an oversized length prefix, a reply cut
short. Each must end that call with a clear error at most, and the next call on the
same zygote must get its own, correct result.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from xhelio.config import Settings
from xhelio.errors import SandboxError
from xhelio.sandbox import SandboxExecutor

REACH = (
    "B = pd.io.common.__builtins__\nos = pd.io.common.os\nimp = B['__import__']\n"
    "struct = imp('struct')\nthreading = imp('threading')\ntime = imp('time')\n"
    "wire = imp('xhelio.sandbox.wire', fromlist=['pack_message'])\n"
)
FORGED = (
    "body = wire.pack_message({'status': 'ok', 'kind': 'scalar', 'scalar': 666.0,"
    " 'stdout': '', 'warnings': []}, [])\n"
    "frame = struct.pack('!Q', len(body)) + body\n"
)


def _spammer(delay_s: float) -> str:
    """Code whose thread writes forged reply frames to fd 3 until the process dies."""
    return (
        REACH
        + FORGED
        + "def spam():\n"
        + f"    time.sleep({delay_s})\n"
        + "    while True:\n"
        + "        try:\n"
        + "            os.write(3, frame)\n"
        + "        except OSError:\n"
        + "            time.sleep(0.0005)\n"
        + "threading.Thread(target=spam, daemon=True).start()\n"
        + "result = df * 2\n"
    )


@pytest.fixture
def frame() -> pd.DataFrame:
    index = pd.date_range("2024-01-01", periods=40, freq="1min", tz="UTC")
    values = np.random.default_rng(3).normal(size=(40, 2))
    return pd.DataFrame(values, index=index, columns=["bx", "by"])


@pytest.fixture(scope="module")
def hostile() -> Iterator[SandboxExecutor]:
    """An executor whose children run with the OS layers only (no audit hook)."""
    settings = replace(Settings(), sandbox_timeout_s=8.0, sandbox_cpu_s=30)
    sandbox = SandboxExecutor(settings, python_guards=False, allow_no_os_layers=True)
    sandbox.warm_up()
    yield sandbox
    sandbox.close()


def _children(pid: int) -> set[int]:
    path = f"/proc/{pid}/task/{pid}/children"
    if not os.path.exists(path):
        pytest.skip("this kernel does not list a process's children")
    with open(path) as handle:
        return {int(p) for p in handle.read().split()}


def _check_clean_call(sandbox: SandboxExecutor, frame: pd.DataFrame) -> None:
    result = sandbox.run_without_validation("result = df * 2", {"b": frame})
    pd.testing.assert_frame_equal(result.value, frame * 2, check_freq=False)  # type: ignore[arg-type]


def test_back_to_back_calls_each_get_a_fresh_child(
    hostile: SandboxExecutor, frame: pd.DataFrame
) -> None:
    zygote = hostile.worker_pid
    pids = [
        hostile.run_without_validation(REACH + "result = float(os.getpid())", {}).value
        for _ in range(6)
    ]
    assert len(set(pids)) == 6
    assert zygote not in pids
    assert hostile.worker_pid == zygote
    _check_clean_call(hostile, frame)


@pytest.mark.parametrize("delay_s", [0.0, 0.002, 0.02])
def test_a_thread_forging_replies_cannot_reach_the_next_call(
    hostile: SandboxExecutor, frame: pd.DataFrame, delay_s: float
) -> None:
    zygote = hostile.worker_pid
    for _ in range(3):
        # This call's own reply may be the forgery: it is the attacker's own call.
        with contextlib.suppress(SandboxError):
            hostile.run_without_validation(_spammer(delay_s), {"b": frame})
        for _ in range(3):
            _check_clean_call(hostile, frame)
    assert hostile.worker_pid == zygote


def test_an_oversized_reply_is_refused_before_it_is_read(
    hostile: SandboxExecutor, frame: pd.DataFrame
) -> None:
    zygote = hostile.worker_pid
    code = REACH + "os.write(3, struct.pack('!Q', 1 << 40) + b'x' * 4096)\ntime.sleep(30)\n"
    started = time.monotonic()
    with pytest.raises(SandboxError) as info:
        hostile.run_without_validation(code, {})
    assert info.value.category == "output"
    assert "larger than" in info.value.message
    assert time.monotonic() - started < 8.0  # refused at once, not at the timeout
    assert hostile.worker_pid == zygote  # the zygote checked it: no restart needed
    _check_clean_call(hostile, frame)


def test_a_reply_cut_short_is_a_crash_and_the_next_call_works(
    hostile: SandboxExecutor, frame: pd.DataFrame
) -> None:
    zygote = hostile.worker_pid
    code = REACH + "os.write(3, struct.pack('!Q', 1000) + b'{' * 10)\nos._exit(7)\n"
    with pytest.raises(SandboxError) as info:
        hostile.run_without_validation(code, {})
    assert info.value.category == "crashed"
    assert "exit code 7" in info.value.message
    assert hostile.worker_pid == zygote
    _check_clean_call(hostile, frame)


def test_spares_killed_from_outside_are_replaced(frame: pd.DataFrame) -> None:
    settings = replace(Settings(), sandbox_spares=2)
    with SandboxExecutor(settings, allow_no_os_layers=True) as sandbox:
        sandbox.warm_up()
        zygote = sandbox.worker_pid
        assert zygote is not None
        for _ in range(3):
            deadline = time.monotonic() + 20
            while len(_children(zygote)) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            spares = _children(zygote)
            assert len(spares) == 2  # forked ahead of the next call
            for pid in spares:
                os.kill(pid, signal.SIGKILL)
            # The call goes to a dead spare first; it never read its request, so the
            # request goes to the next child and the user sees only the result.
            result = sandbox.run("result = df * 2", {"b": frame})
            pd.testing.assert_frame_equal(result.value, frame * 2, check_freq=False)  # type: ignore[arg-type]
            assert sandbox.worker_pid == zygote
            assert not spares & _children(zygote)  # the dead ones were reaped


def test_without_spares_each_call_forks_its_child_and_nothing_lingers(
    frame: pd.DataFrame,
) -> None:
    settings = replace(Settings(), sandbox_spares=0)
    with SandboxExecutor(settings, allow_no_os_layers=True) as sandbox:
        for _ in range(3):
            result = sandbox.run("result = df * 2", {"b": frame})
            pd.testing.assert_frame_equal(result.value, frame * 2, check_freq=False)  # type: ignore[arg-type]
        zygote = sandbox.worker_pid
        assert zygote is not None
        deadline = time.monotonic() + 10
        while _children(zygote) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _children(zygote) == set()  # the last call's child was killed and reaped
