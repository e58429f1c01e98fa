"""The sandbox zygote: a warm, trusted process that forks one fresh child per call.

`executor.py` starts the zygote as a new interpreter (fork+exec, `python -I`, scrubbed
environment, empty read-only working directory) with three pipes: requests in (fd 3),
the child's reply out (fd 4), and the zygote's own control messages out (fd 5). The
zygote imports and warms every library, hardens them (`harden.py`), decides what the
kernel allows (`oslayers.plan_isolation`), proves it with a trial child, reports
`ready` with the active layers, and then loops:

1. read one request frame (the code and its Arrow-encoded sources);
2. fork. The child closes the request and control pipes, applies every OS layer
   (uid drop when root, no-new-privs, not dumpable, Landlock, seccomp, rlimits),
   installs the audit hook, runs the code and writes its reply to fd 4, then exits.
   It never sees another call: nothing it changes (module attributes, pandas options,
   RNG state, patched classes, raw memory) survives it;
3. wait for the child, killing it at the wall-clock timeout, and report how it ended
   on fd 5, which the child never held, so a child cannot forge that report.

Generated code never runs in the zygote. The fork happens before any OS layer is
applied (the zygote itself keeps the rights it needs to fork), and copy-on-write keeps
the fork cheap: `gc.freeze()` keeps the child's garbage collector off the zygote's pages.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import sys
import time
from typing import Any

from xhelio.sandbox import wire
from xhelio.sandbox.harden import harden_libraries
from xhelio.sandbox.oslayers import IsolationFailed, IsolationPlan, apply_isolation, plan_isolation
from xhelio.sandbox.worker import (
    Runner,
    WorkerConfig,
    install_audit_hook,
    load_modules,
    vm_size_bytes,
    warm_up,
)

__all__ = ["main"]

REQUEST_FD = 3
RESPONSE_FD = 4
CONTROL_FD = 5
_MAX_REQUEST_BYTES = 1 << 40
_TRIAL_CODE = "result = float(np.sqrt(df['a'] ** 2).sum()) if df is not None else 1.0"


def _move_fds(config: WorkerConfig) -> None:
    """Put the pipes on fds 3, 4 and 5 and close every other fd above 2."""
    saved = [os.dup(fd) for fd in (config.request_fd, config.response_fd, config.control_fd)]
    for target, fd in zip((REQUEST_FD, RESPONSE_FD, CONTROL_FD), saved, strict=True):
        os.dup2(fd, target)
    os.closerange(CONTROL_FD + 1, 1 << 16)


def _child(runner: Runner, plan: IsolationPlan, body: bytes) -> None:
    """The forked child: isolate, run one request, reply, exit. Never returns."""
    code = 0
    try:
        os.close(REQUEST_FD)
        os.close(CONTROL_FD)
        try:
            layers = apply_isolation(plan)
        except IsolationFailed as exc:
            failure = {
                "status": "error",
                "category": "isolation",
                "message": f"the sandbox could not isolate the call: {exc}",
            }
            wire.write_frame_blocking(RESPONSE_FD, wire.pack_message(failure, []))
            os._exit(3)
        install_audit_hook(runner.log)
        response, blobs = runner.handle(body)
        response["layers"] = layers
        wire.write_frame_blocking(RESPONSE_FD, wire.pack_message(response, blobs))
    except BaseException:  # nothing may escape into the zygote's loop
        code = 4
    os._exit(code)


def _wait(pid: int, timeout_s: float) -> tuple[int, bool]:
    """Wait for the child; kill it at the timeout. Returns (wait status, timed out)."""
    timed_out = False
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = -1
    if pidfd >= 0:
        try:
            ready, _, _ = select.select([pidfd], [], [], timeout_s)
        finally:
            os.close(pidfd)
        if not ready:
            os.kill(pid, signal.SIGKILL)  # not reaped yet: the pid is still this child's
            timed_out = True
    else:
        deadline = time.monotonic() + timeout_s
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                timed_out = True
                break
            time.sleep(0.002)
    _, status = os.waitpid(pid, 0)
    return status, timed_out


def _exit_description(status: int) -> dict[str, Any]:
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status)}
    return {"exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1}


def _run_one(runner: Runner, plan: IsolationPlan, body: bytes, timeout_s: float) -> dict[str, Any]:
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        _child(runner, plan, body)
    status, timed_out = _wait(pid, timeout_s)
    return {
        "status": "done",
        "child": pid,
        "timed_out": timed_out,
        "elapsed_s": time.perf_counter() - started,
        **_exit_description(status),
    }


def _trial(runner: Runner, plan: IsolationPlan) -> list[str]:
    """Fork one child through the real path to prove the layers apply on this kernel."""
    read_end, write_end = os.pipe()
    saved = os.dup(RESPONSE_FD)
    os.dup2(write_end, RESPONSE_FD)
    os.close(write_end)
    try:
        body = wire.pack_message({"code": _TRIAL_CODE, "sources": []}, [])
        report = _run_one(runner, plan, body, 60.0)
    finally:
        os.dup2(saved, RESPONSE_FD)
        os.close(saved)
    reply = wire.read_frame_blocking(read_end, 1 << 20)
    os.close(read_end)
    header, _ = wire.unpack_message(reply)
    if header.get("status") != "ok":
        raise RuntimeError(f"trial call failed: {header.get('message', report)}")
    return list(header.get("layers", []))


def _serve(runner: Runner, plan: IsolationPlan, timeout_s: float) -> None:
    while True:
        try:
            body = wire.read_frame_blocking(REQUEST_FD, _MAX_REQUEST_BYTES)
        except wire.FrameError:
            return  # the executor closed the pipe: shut down
        report = _run_one(runner, plan, body, timeout_s)
        wire.write_frame_blocking(CONTROL_FD, wire.pack_message(report, []))


def main(argv: list[str]) -> None:
    """Zygote entry point: `argv[0]` is the JSON form of a `WorkerConfig`."""
    config = WorkerConfig(**json.loads(argv[0]))
    try:
        _move_fds(config)
        modules = load_modules()
        runner = Runner(config, modules)
        warm_up(runner)
        wrapped = harden_libraries(modules["pywt"])
        plan = plan_isolation(
            vm_size_bytes() + config.memory_mb * 1024 * 1024, config.cpu_s, [sys.path[0]]
        )
        gc.collect()
        gc.freeze()  # children's collections skip these objects: fewer copied pages
        layers = _trial(runner, plan)
    except Exception as exc:  # report any start-up failure to the executor, then stop
        failure = {"status": "failed", "message": f"{type(exc).__name__}: {str(exc)[:2000]}"}
        wire.write_frame_blocking(CONTROL_FD, wire.pack_message(failure, []))
        os._exit(1)
    ready = {
        "status": "ready",
        "pid": os.getpid(),
        "layers": layers,
        "unavailable": plan.unavailable,
        "hardened_getattr": wrapped,
        "threads": len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1,
    }
    wire.write_frame_blocking(CONTROL_FD, wire.pack_message(ready, []))
    _serve(runner, plan, config.timeout_s)
    os._exit(0)
