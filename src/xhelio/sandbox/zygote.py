"""The sandbox zygote: a warm, trusted process that forks one fresh child per call.

`executor.py` starts the zygote as a new interpreter (fork+exec, `python -I`, scrubbed
environment, empty read-only working directory) with three pipes: requests in (fd 3),
replies out (fd 4), and the zygote's reports out (fd 5). The zygote imports and warms
every library, hardens them (`harden.py`), decides what the kernel allows
(`oslayers.plan_isolation`), proves it with a trial child, reports `ready` with the
active layers, and then serves calls:

1. it keeps a few spare children forked ahead of the calls. Each spare has two pipes of
   its own (its request in, its reply out) and holds no other descriptor: not the
   executor's pipes, not another child's. It applies every OS layer (rlimits, uid drop
   when root, no-new-privs, not dumpable, Landlock, seccomp), runs a small trusted job so
   the pages a call writes are already copied, and waits for its request. Fork,
   isolation and warm-up are all off the call's path;
2. a request is relayed, frame by frame, to the oldest spare, which reads it, closes
   its request pipe, seals its descriptors, runs the code and writes one reply frame.
   It never sees another call: nothing it changes (module attributes, pandas options,
   RNG state, patched classes, raw memory) survives it;
3. the zygote relays exactly one reply frame to the executor (its length checked
   against the cap), kills the child at the wall-clock timeout or once its frame is
   through, and reports how the call ended on fd 5. A child can write nothing else to
   the executor, so a dying child never needs to be waited for: the next call goes to
   the next spare at once while the last one is torn down.

Generated code never runs in the zygote. The fork happens before any OS layer is
applied (the zygote itself keeps the rights it needs to fork), and copy-on-write keeps
the fork cheap: `gc.freeze()` keeps the child's garbage collector off the zygote's pages.
"""

from __future__ import annotations

import fcntl
import gc
import json
import os
import select
import signal
import struct
import sys
import termios
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from xhelio.sandbox import wire
from xhelio.sandbox.harden import harden_libraries
from xhelio.sandbox.oslayers import (
    SEALED_HIGHEST_FD,
    IsolationFailed,
    IsolationPlan,
    apply_isolation,
    plan_isolation,
    seal_fds,
)
from xhelio.sandbox.worker import (
    Runner,
    WorkerConfig,
    install_audit_hook,
    load_modules,
    vm_size_bytes,
    warm_up,
)

__all__ = ["main"]

REQUEST_FD = SEALED_HIGHEST_FD  # requests in; in a child, its request, then its reply
RESPONSE_FD = 4
CONTROL_FD = 5
_MAX_FD = 1 << 16
_MAX_REQUEST_BYTES = 1 << 40
_MAX_IDLE_DEATHS = 3
_REFILL_AFTER_S = 0.02  # after a call, how long a spare waits to be refilled
_CHUNK = 1 << 20
_SPLICE = hasattr(os, "splice")  # Linux: pipe to pipe without a copy through user space
_TRIAL_CODE = "result = float(np.sqrt(df['a'] ** 2).sum()) if df is not None else 1.0"


def _move_fds(config: WorkerConfig) -> None:
    """Put the pipes on fds 3, 4 and 5 and close every other fd above 2."""
    saved = [os.dup(fd) for fd in (config.request_fd, config.response_fd, config.control_fd)]
    for target, fd in zip((REQUEST_FD, RESPONSE_FD, CONTROL_FD), saved, strict=True):
        os.dup2(fd, target)
    os.closerange(CONTROL_FD + 1, _MAX_FD)


def _child(runner: Runner, plan: IsolationPlan, request_fd: int, reply_fd: int) -> NoReturn:
    """A spare child: keep only its own pipes, isolate, warm, run one request, exit."""
    code = 0
    try:
        os.dup2(request_fd, REQUEST_FD)
        os.dup2(reply_fd, RESPONSE_FD)
        os.closerange(RESPONSE_FD + 1, _MAX_FD)  # the zygote's control pipe, other children's
        failure: str | None = None
        layers: list[str] = []
        try:
            layers = apply_isolation(plan)
        except IsolationFailed as exc:
            failure = str(exc)
        # Each child would otherwise inherit the zygote's RNG state: same "random" numbers
        # in every call. Reseed from the kernel (getrandom needs no file).
        np.random.seed()
        waiting, _, _ = select.select([REQUEST_FD], [], [], 0)
        if failure is None and runner.prewarm_body and not waiting:
            # Trusted code, before the request: the pages a typical call writes to are
            # copied now (copy-on-write) instead of on the call's path. Skipped when a
            # request is already waiting: it would only delay it.
            runner.handle(runner.prewarm_body)
        try:
            body = wire.read_frame_blocking(REQUEST_FD, _MAX_REQUEST_BYTES)
        except wire.FrameError:
            os._exit(0)  # the zygote is shutting down
        os.close(REQUEST_FD)
        # The reply pipe moves to fd 3, then the fds are sealed: no new file, socket or
        # pipe can be opened at all, even by C code (a layer under Landlock/seccomp).
        os.dup2(RESPONSE_FD, REQUEST_FD)
        os.close(RESPONSE_FD)
        if failure is None:
            try:
                layers += seal_fds(plan)
            except IsolationFailed as exc:
                failure = str(exc)
        if failure is not None:
            reply = {
                "status": "error",
                "category": "isolation",
                "message": f"the sandbox could not isolate the call: {failure}",
            }
            wire.write_frame_blocking(REQUEST_FD, wire.pack_message(reply, []))
            os._exit(3)
        if runner.config.python_guards:
            install_audit_hook(runner.log)
        response, blobs = runner.handle(body)
        response["layers"] = layers
        wire.write_frame_blocking(REQUEST_FD, wire.pack_message(response, blobs))
    except BaseException:  # nothing may escape into the zygote's code
        code = 4
    os._exit(code)


def _pidfd(pid: int) -> int:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


@dataclass
class _Spare:
    """A forked child waiting for its request, and the zygote's ends of its pipes."""

    pid: int
    request_fd: int  # write end of the child's request pipe
    reply_fd: int  # read end of the child's reply pipe
    pidfd: int  # readable once the child has exited; -1 where the kernel has none

    def close(self) -> None:
        for fd in (self.request_fd, self.reply_fd, self.pidfd):
            if fd >= 0:
                os.close(fd)
        self.request_fd = self.reply_fd = self.pidfd = -1


def _fork_spare(runner: Runner, plan: IsolationPlan) -> _Spare:
    request_read, request_write = os.pipe()
    reply_read, reply_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        _child(runner, plan, request_read, reply_write)
    os.close(request_read)
    os.close(reply_write)
    return _Spare(pid, request_write, reply_read, _pidfd(pid))


def _exit_description(status: int) -> dict[str, Any]:
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status)}
    return {"exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1}


class _Pool:
    """The spare children, and those killed after their call, waiting to be reaped."""

    def __init__(self, runner: Runner, plan: IsolationPlan, size: int) -> None:
        self.runner = runner
        self.plan = plan
        self.size = size
        self.spares: deque[_Spare] = deque()
        self.ended: list[tuple[int, int]] = []  # (pid, pidfd) of killed children
        self.idle_deaths = 0

    def full(self) -> bool:
        return len(self.spares) >= self.size

    def fork_one(self) -> None:
        self.spares.append(_fork_spare(self.runner, self.plan))

    def take(self) -> _Spare:
        """The oldest live spare (forked now if there is none)."""
        self.reap()
        if not self.spares:
            self.fork_one()
        return self.spares.popleft()

    def watch_fds(self) -> list[int]:
        """The pidfds that become readable when a spare dies or a killed child is reapable."""
        fds = [spare.pidfd for spare in self.spares] + [fd for _, fd in self.ended]
        return [fd for fd in fds if fd >= 0]

    def retire(self, child: _Spare) -> None:
        """Kill a child whose call is over; it is reaped later, off the call's path."""
        os.kill(child.pid, signal.SIGKILL)  # not reaped yet: the pid is still this child's
        self.ended.append((child.pid, child.pidfd))
        child.pidfd = -1  # now owned by `ended`
        child.close()

    def reap(self) -> None:
        """Collect killed children and spares that died before taking a request."""
        still: list[tuple[int, int]] = []
        for pid, pidfd in self.ended:
            if os.waitpid(pid, os.WNOHANG) == (0, 0):
                still.append((pid, pidfd))
            elif pidfd >= 0:
                os.close(pidfd)
        self.ended = still
        for spare in list(self.spares):
            if os.waitpid(spare.pid, os.WNOHANG) != (0, 0):
                self.spares.remove(spare)
                spare.close()
                self.idle_deaths += 1

    def stop(self) -> None:
        while self.spares:
            self.retire(self.spares.popleft())
        for pid, pidfd in self.ended:
            os.waitpid(pid, 0)
            if pidfd >= 0:
                os.close(pidfd)
        self.ended.clear()


class _TargetGone(Exception):
    """The reader of a pipe went away; `consumed` bytes were taken from the source."""

    def __init__(self, consumed: int) -> None:
        super().__init__(f"reader gone after {consumed} bytes")
        self.consumed = consumed


def _move(source: int, target: int, size: int) -> int:
    """Move up to `size` bytes from pipe to pipe (in the kernel where it can); 0 at EOF.

    Raises:
        _TargetGone: nobody reads `target` any more.
    """
    chunk = b""
    try:
        if _SPLICE:
            return os.splice(source, target, size)
        chunk = os.read(source, min(size, _CHUNK))
        wire.write_all(target, chunk)
        return len(chunk)
    except BrokenPipeError as exc:
        raise _TargetGone(len(chunk)) from exc


def _relay_request(prefix: bytes, size: int, target: int) -> bool:
    """Pass one request (its length prefix, then `size` bytes) to a child's pipe.

    A child that died meanwhile gets nothing more: the rest of the request is read and
    dropped, so the executor's stream stays in step, and False is returned.

    Raises:
        EOFError: the executor closed its pipe in the middle of the request.
    """
    remaining = size
    try:
        wire.write_all(target, prefix)
        while remaining:
            moved = _move(REQUEST_FD, target, min(remaining, _CHUNK))
            if moved == 0:
                raise EOFError("the executor closed the request pipe mid-request")
            remaining -= moved
        return True
    except BrokenPipeError:
        pass
    except _TargetGone as gone:
        remaining -= gone.consumed
    while remaining:
        dropped = len(os.read(REQUEST_FD, min(remaining, _CHUNK)))
        if dropped == 0:
            raise EOFError("the executor closed the request pipe mid-request")
        remaining -= dropped
    return False


def _relay_reply(child: _Spare, timeout_s: float, max_reply: int) -> dict[str, Any]:
    """Relay the child's one reply frame to the executor; return the call's report.

    The frame's length is checked before anything is passed on; bytes after the frame
    are never read. Ends with the frame through, the child gone (end of file), over the
    cap, or out of time (the child is then killed).
    """
    started = time.monotonic()
    deadline = started + timeout_s
    prefix = b""
    remaining: int | None = None
    ended: dict[str, Any] = {}
    while True:
        ready, _, _ = select.select([child.reply_fd], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            ended = {"timed_out": True}
            break
        if remaining is None:
            chunk = os.read(child.reply_fd, wire.FRAME_PREFIX.size - len(prefix))
            if not chunk:
                break  # end of file: the child exited without a reply
            prefix += chunk
            if len(prefix) < wire.FRAME_PREFIX.size:
                continue
            (announced,) = wire.FRAME_PREFIX.unpack(prefix)
            if announced > max_reply:
                ended = {"too_large": True, "reply_bytes": announced}
                break
            wire.write_all(RESPONSE_FD, prefix)
            remaining = int(announced)
        else:
            moved = _move(child.reply_fd, RESPONSE_FD, min(remaining, _CHUNK))
            if moved == 0:
                break  # end of file: the child exited in the middle of its reply
            remaining -= moved
        if remaining == 0:
            return {"status": "replied", "child": child.pid, "elapsed_s": _since(started)}
    if ended:
        os.kill(child.pid, signal.SIGKILL)
    _, status = os.waitpid(child.pid, 0)
    return {
        "status": "done",
        "child": child.pid,
        "timed_out": False,
        **ended,
        "elapsed_s": _since(started),
        **_exit_description(status),
    }


def _since(started: float) -> float:
    return time.monotonic() - started


def _unread(fd: int) -> int:
    """Bytes written to a pipe and not yet read (asked through either end)."""
    try:
        (count,) = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))
    except OSError:
        return 0
    return int(count)


def _serve_call(pool: _Pool, config: WorkerConfig) -> dict[str, Any] | None:
    """Relay one request to a spare and its reply back; None when the executor has gone."""
    try:
        prefix = wire.read_exact(REQUEST_FD, wire.FRAME_PREFIX.size)
    except wire.FrameError:
        return None
    (size,) = wire.FRAME_PREFIX.unpack(prefix)
    child = pool.take()
    try:
        delivered = _relay_request(prefix, size, child.request_fd)
    except EOFError:
        pool.retire(child)
        return None
    max_reply = config.max_result_bytes + wire.MAX_HEADER_BYTES
    report = _relay_reply(child, config.timeout_s, max_reply)
    if report["status"] == "replied":
        pool.idle_deaths = 0
        pool.retire(child)  # its work is done: killed now, reaped off the next call's path
    else:
        # A child runs code only once it has read its whole request: if part of it was
        # never read, the child died before running anything (killed from outside, out
        # of memory while waiting) and the executor may send the request again.
        report["never_ran"] = not delivered or _unread(child.request_fd) > 0
        child.close()  # already reaped by `_relay_reply`
    return report


def _trial(runner: Runner, plan: IsolationPlan) -> list[str]:
    """Run one child through the real path to prove the layers apply on this kernel."""
    child = _fork_spare(runner, plan)
    try:
        body = wire.pack_message({"code": _TRIAL_CODE, "sources": []}, [])
        wire.write_frame_blocking(child.request_fd, body)
        reply = wire.read_frame_blocking(child.reply_fd, 1 << 20)
    except (OSError, wire.FrameError) as exc:
        _, status = os.waitpid(child.pid, 0)
        raise RuntimeError(f"trial child failed: {_exit_description(status)}") from exc
    finally:
        child.close()
    os.waitpid(child.pid, 0)
    header, _ = wire.unpack_message(reply)
    if header.get("status") != "ok":
        raise RuntimeError(f"trial call failed: {header.get('message')}")
    return list(header.get("layers", []))


def _serve(pool: _Pool, config: WorkerConfig) -> None:
    """Serve calls until the executor closes the request pipe or spares keep dying.

    Spares are refilled while no request waits, and not in the first moments after a
    call while a spare is left: a call often follows another (a pipeline's steps), and
    a request that arrives during a fork waits for it.
    """
    last_call = 0.0
    while pool.idle_deaths <= _MAX_IDLE_DEATHS:
        pool.reap()
        if pool.full():
            timeout = None
        elif pool.spares:
            timeout = max(0.0, last_call + _REFILL_AFTER_S - time.monotonic())
        else:
            timeout = 0.0
        ready, _, _ = select.select([REQUEST_FD, *pool.watch_fds()], [], [], timeout)
        if REQUEST_FD in ready:
            report = _serve_call(pool, config)
            if report is None:
                return
            wire.write_frame_blocking(CONTROL_FD, wire.pack_message(report, []))
            last_call = time.monotonic()
        elif not ready:
            pool.fork_one()


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
    pool = _Pool(runner, plan, config.spares)
    try:
        _serve(pool, config)
    except (OSError, _TargetGone):
        pass  # the executor's pipes closed under us: it has gone
    finally:
        pool.stop()
    os._exit(0)
