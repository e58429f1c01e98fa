"""The sandbox zygote: a warm, trusted process that forks one fresh child per call.

`executor.py` starts the zygote as a new interpreter (fork+exec, `python -I`, scrubbed
environment, empty read-only working directory) with three pipes: requests in (fd 3),
the child's reply out (fd 4), and the zygote's own control messages out (fd 5). The
zygote imports and warms every library, hardens them (`harden.py`), decides what the
kernel allows (`oslayers.plan_isolation`), proves it with a trial child, reports
`ready` with the active layers, and then loops:

1. fork the next child ahead of the call. The child closes the control pipe, applies
   every OS layer (rlimits, uid drop when root, no-new-privs, not dumpable, Landlock,
   seccomp), and only then reads ONE request from fd 3 and closes it, so isolation
   and the fork cost nothing on the call's path;
2. the child installs the audit hook, runs the code, writes its reply to fd 4 and
   exits. It never sees another call: nothing it changes (module attributes, pandas
   options, RNG state, patched classes, raw memory) survives it;
3. the zygote waits for the child, killing it at the wall-clock timeout (counted from
   when the request arrived), and reports how it ended on fd 5, which the child never
   held, so a child cannot forge that report. Then it forks the next child.

Generated code never runs in the zygote. The fork happens before any OS layer is
applied (the zygote itself keeps the rights it needs to fork), and copy-on-write keeps
the fork cheap: `gc.freeze()` keeps the child's garbage collector off the zygote's pages.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import select
import signal
import sys
import time
from typing import Any

import numpy as np

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


_MAX_IDLE_EXITS = 3
_EOF_EXIT = 10  # a waiting child found the request pipe closed: the executor is gone


def _child(runner: Runner, plan: IsolationPlan, started_fd: int, prewarm: bytes) -> None:
    """A pre-forked child: isolate, wait for one request, run it, reply, exit.

    Isolation happens before the request arrives, so its cost is off the call's path.
    The child tells the zygote (one byte on a private pipe) when the request is in, so
    the zygote starts the wall-clock timeout then. Never returns.
    """
    code = 0
    try:
        os.close(CONTROL_FD)
        failure: str | None = None
        layers: list[str] = []
        try:
            layers = apply_isolation(plan)
        except IsolationFailed as exc:
            failure = str(exc)
        # Each child would otherwise inherit the zygote's RNG state: same "random" numbers
        # in every call. Reseed from the kernel (getrandom needs no file).
        np.random.seed()
        if failure is None and prewarm:
            # Trusted code, before the request: the pages a typical call writes to are
            # copied now (copy-on-write) instead of on the call's path.
            runner.handle(prewarm)
        try:
            body = wire.read_frame_blocking(REQUEST_FD, _MAX_REQUEST_BYTES)
        except wire.FrameError:
            os._exit(_EOF_EXIT)
        os.close(REQUEST_FD)  # the code can never read the next call's request
        os.write(started_fd, b"s")
        os.close(started_fd)
        # The reply pipe moves to fd 3 and the fd limit drops to 4: no new file, socket
        # or pipe can be opened at all, even by C code (a layer under Landlock/seccomp).
        os.dup2(RESPONSE_FD, REQUEST_FD)
        os.close(RESPONSE_FD)
        resource.setrlimit(resource.RLIMIT_NOFILE, (REQUEST_FD + 1, REQUEST_FD + 1))
        reply_fd = REQUEST_FD
        if failure is not None:
            reply = {
                "status": "error",
                "category": "isolation",
                "message": f"the sandbox could not isolate the call: {failure}",
            }
            wire.write_frame_blocking(reply_fd, wire.pack_message(reply, []))
            os._exit(3)
        if runner.config.python_guards:
            install_audit_hook(runner.log)
        response, blobs = runner.handle(body)
        response["layers"] = layers
        wire.write_frame_blocking(reply_fd, wire.pack_message(response, blobs))
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


def _fork_child(runner: Runner, plan: IsolationPlan) -> tuple[int, int]:
    """Fork a child that isolates itself and waits for a request: (pid, started fd)."""
    started_read, started_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(started_read)
        _child(runner, plan, started_write, runner.prewarm_body)
    os.close(started_write)
    return pid, started_read


class _Children:
    """Hands out pre-forked children; the next is forked as soon as one takes a request."""

    def __init__(self, runner: Runner, plan: IsolationPlan) -> None:
        self.runner = runner
        self.plan = plan
        self.spare: tuple[int, int] | None = None

    def serve_one(self, timeout_s: float) -> dict[str, Any] | None:
        """Let the spare child take one request; report how it ended.

        Returns None when the executor closed the request pipe (time to shut down).
        """
        pid, started_read = self.spare or _fork_child(self.runner, self.plan)
        self.spare = None
        try:
            signalled = os.read(started_read, 1)  # blocks until the request is in (or EOF)
        finally:
            os.close(started_read)
        if not signalled:
            _, status = os.waitpid(pid, 0)
            if os.WIFEXITED(status) and os.WEXITSTATUS(status) == _EOF_EXIT:
                return None
            # Died before taking a request: the request, if any, waits for the next child.
            return {"status": "idle-exit", "child": pid, **_exit_description(status)}
        started = time.perf_counter()
        status, timed_out = _wait(pid, timeout_s)
        return {
            "status": "done",
            "child": pid,
            "timed_out": timed_out,
            "elapsed_s": time.perf_counter() - started,
            **_exit_description(status),
        }

    def prepare(self) -> None:
        """Fork the next child now, so it is isolated and warm before the next request.

        Done after the previous child ended rather than while it runs: on a busy machine
        the fork would otherwise compete with the call for the CPU.
        """
        if self.spare is None:
            self.spare = _fork_child(self.runner, self.plan)

    def stop(self) -> None:
        """Kill the spare child, if any (used after the trial call)."""
        if self.spare is not None:
            pid, started_read = self.spare
            self.spare = None
            os.close(started_read)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def _trial(runner: Runner, plan: IsolationPlan) -> list[str]:
    """Run one child through the real path to prove the layers apply on this kernel."""
    pipes = [os.pipe(), os.pipe()]
    saved = [os.dup(REQUEST_FD), os.dup(RESPONSE_FD)]
    os.dup2(pipes[0][0], REQUEST_FD)
    os.dup2(pipes[1][1], RESPONSE_FD)
    os.close(pipes[0][0])
    os.close(pipes[1][1])
    try:
        body = wire.pack_message({"code": _TRIAL_CODE, "sources": []}, [])
        wire.write_frame_blocking(pipes[0][1], body)
        os.close(pipes[0][1])
        children = _Children(runner, plan)
        report = children.serve_one(60.0)
        children.stop()
    finally:
        os.dup2(saved[0], REQUEST_FD)
        os.dup2(saved[1], RESPONSE_FD)
        for fd in saved:
            os.close(fd)
    reply = wire.read_frame_blocking(pipes[1][0], 1 << 20)
    os.close(pipes[1][0])
    header, _ = wire.unpack_message(reply)
    if header.get("status") != "ok":
        raise RuntimeError(f"trial call failed: {header.get('message', report)}")
    return list(header.get("layers", []))


def _serve(runner: Runner, plan: IsolationPlan, timeout_s: float) -> None:
    idle_exits = 0
    children = _Children(runner, plan)
    children.prepare()
    while True:
        report = children.serve_one(timeout_s)
        if report is None:
            return
        idle_exits = idle_exits + 1 if report["status"] == "idle-exit" else 0
        wire.write_frame_blocking(CONTROL_FD, wire.pack_message(report, []))
        if idle_exits > _MAX_IDLE_EXITS:
            return  # children die before taking requests: let the executor restart us
        children.prepare()


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
