"""Run generated pandas/numpy/xarray/scipy/pywt code in a warm, isolated worker process.

`SandboxExecutor.run(code, sources)` validates the code (`validate.py`), sends it with the
source data (Arrow IPC, no pickle) to a worker process and returns a `SandboxResult`.

The worker is a fresh interpreter started with fork+exec (`subprocess`, so the parent's
memory is never inherited as it would be with a fork, and the environment can be given
explicitly, which `multiprocessing`'s spawn start method cannot do): a minimal
environment with no API keys, an empty private working directory, no inherited fds
besides its two pipes, its own session. It stays warm across calls, so a call costs
milliseconds. The wall-clock timeout (`sandbox_timeout_s`) and the CPU-time limit
(`sandbox_cpu_s`, applied with `prlimit` before each call) come from the settings, never
from the caller. A worker that times out, dies or hits a limit is killed and replaced;
the executor goes on.

Honest scope: this is defence in depth (AST allowlist + audit hook + rlimits + process
isolation), not a kernel-level jail: no seccomp, no namespaces, no separate user. Run
xhelio as a non-root user, or the rlimits can be raised. Details in docs/sandbox.md.

Must not import anything above the sandbox layer (tools, agents, sessions).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import pandas as pd
import xarray as xr

from xhelio.config import Settings
from xhelio.errors import SandboxError
from xhelio.sandbox import wire
from xhelio.sandbox.validate import validate_code

__all__ = ["SandboxExecutor", "SandboxResult", "SandboxValue"]

SandboxValue = pd.DataFrame | xr.DataArray | float | int | str | bool | None
ResultKind = Literal["dataframe", "series", "dataarray", "scalar"]

DEFAULT_MAX_RESULT_BYTES = 200 * 1024 * 1024
DEFAULT_MAX_STDOUT_CHARS = 20_000
DEFAULT_STDOUT_HARD_CAP = 2_000_000
_RESPONSE_SLACK_BYTES = 64 * 1024 * 1024
_SOURCE_ROOT = str(Path(__file__).resolve().parents[2])
_BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from xhelio.sandbox.worker import main; main(sys.argv[2:])"
)


@dataclass(frozen=True)
class SandboxResult:
    """What a sandboxed run produced: the `result` value plus captured output."""

    value: SandboxValue
    kind: ResultKind
    stdout: str
    stdout_truncated: bool
    warnings: tuple[str, ...]
    elapsed_s: float


def _minimal_env(workdir: str) -> dict[str, str]:
    """The whole environment of the worker: nothing from the parent, so no secrets."""
    return {
        "PATH": os.defpath,
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        # One thread per library: predictable CPU accounting and no thread creation later.
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
        "ARROW_DEFAULT_MEMORY_POOL": "system",
    }


def _cpu_seconds_used(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    # Fields 14 and 15 of stat(5) (utime, stime) sit at 11 and 12 after the command name.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _limit_cpu(pid: int, budget_s: int) -> None:
    """Let the worker use `budget_s` more CPU seconds; past that the kernel kills it."""
    try:
        soft = int(_cpu_seconds_used(pid)) + budget_s + 1
        _, hard = resource.prlimit(pid, resource.RLIMIT_CPU)
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.prlimit(pid, resource.RLIMIT_CPU, (soft, hard))
    except (OSError, ValueError, AttributeError):
        pass  # no /proc or prlimit on this OS: the wall-clock timeout still applies


class _Worker:
    """One worker process and the parent's ends of its two pipes."""

    def __init__(self, settings: Settings, limits: dict[str, int]) -> None:
        self.workdir = tempfile.mkdtemp(prefix="xhelio-sandbox-")
        request_read, self.request_fd = os.pipe()
        self.response_fd, response_write = os.pipe()
        config = {
            "request_fd": request_read,
            "response_fd": response_write,
            "memory_mb": settings.sandbox_memory_mb,
            **limits,
        }
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-B", "-c", _BOOTSTRAP, _SOURCE_ROOT, json.dumps(config)],
                env=_minimal_env(self.workdir),
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(request_read, response_write),
                close_fds=True,
                start_new_session=True,
            )
        finally:
            os.close(request_read)
            os.close(response_write)
        os.chmod(self.workdir, 0o500)  # nothing may be created there, even by a bug
        os.set_blocking(self.request_fd, False)
        os.set_blocking(self.response_fd, False)
        self.ready = False

    @property
    def pid(self) -> int:
        """Process id of the worker."""
        return self.process.pid

    def wait_ready(self, timeout_s: float) -> None:
        """Block until the worker finished warming up, or raise SandboxError."""
        try:
            body = wire.read_frame(self.response_fd, time.monotonic() + timeout_s, 1 << 20)
            header, _ = wire.unpack_message(body)
        except wire.FrameTimeout as exc:
            raise SandboxError(
                f"The sandbox worker did not start within {timeout_s:.0f} s. The machine may "
                "be overloaded; try again.",
                "crashed",
            ) from exc
        except wire.FrameError as exc:
            raise SandboxError(
                f"The sandbox worker failed to start ({self.exit_description()}). Check that "
                "pandas, numpy, xarray, scipy, PyWavelets and pyarrow import cleanly.",
                "crashed",
            ) from exc
        if header.get("status") != "ready":
            raise SandboxError(
                f"The sandbox worker failed to start: {header.get('message', header)}. Check "
                "that pandas, numpy, xarray, scipy, PyWavelets and pyarrow import cleanly.",
                "crashed",
            )
        self.ready = True

    def exchange(self, body: bytes, deadline: float, max_bytes: int) -> bytes:
        """Send one request and wait for its response until `deadline`."""
        wire.write_frame(self.request_fd, body, deadline)
        return wire.read_frame(self.response_fd, deadline, max_bytes)

    def exit_description(self) -> str:
        """How the process ended, waiting briefly for it to finish dying."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "still running"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def stop(self, graceful: bool) -> None:
        """End the process (politely if asked), close the pipes, remove the workdir."""
        for fd in (self.request_fd, self.response_fd):
            with contextlib.suppress(OSError):  # already closed by an earlier stop
                os.close(fd)
        if graceful:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=2)
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
            self.process.wait()
        if os.path.isdir(self.workdir):
            os.chmod(self.workdir, 0o700)
            shutil.rmtree(self.workdir, ignore_errors=True)


def _shutdown(holder: list[_Worker | None]) -> None:
    worker = holder[0]
    holder[0] = None
    if worker is not None:
        worker.stop(graceful=False)


class SandboxExecutor:
    """Validate and run generated code in a warm, isolated, resource-limited worker."""

    def __init__(
        self,
        settings: Settings,
        *,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        max_stdout_chars: int = DEFAULT_MAX_STDOUT_CHARS,
        stdout_hard_cap: int = DEFAULT_STDOUT_HARD_CAP,
        startup_timeout_s: float = 120.0,
    ) -> None:
        self.settings = settings
        self.max_result_bytes = max_result_bytes
        self.startup_timeout_s = startup_timeout_s
        self._limits = {
            "max_stdout_chars": max_stdout_chars,
            "stdout_hard_cap": stdout_hard_cap,
            "max_result_bytes": max_result_bytes,
        }
        self._lock = threading.Lock()
        self._holder: list[_Worker | None] = [None]
        self._closed = False
        self._finalizer = weakref.finalize(self, _shutdown, self._holder)

    def __enter__(self) -> SandboxExecutor:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def worker_pid(self) -> int | None:
        """Process id of the current worker, or None before the first call."""
        worker = self._holder[0]
        return None if worker is None else worker.pid

    def warm_up(self) -> None:
        """Start the worker now (and wait for it) so the first call is fast."""
        with self._lock:
            self._ready_worker()

    def run(self, code: str, sources: dict[str, pd.DataFrame | xr.DataArray]) -> SandboxResult:
        """Validate `code`, run it on `sources` (the first is `df`) and return `result`.

        Raises:
            SandboxError: with category validation, timeout, memory, crashed, runtime,
                output, forbidden or input.
        """
        validate_code(code)
        return self._execute(code, sources)

    def run_without_validation(
        self, code: str, sources: dict[str, pd.DataFrame | xr.DataArray]
    ) -> SandboxResult:
        """Test-only: skip the AST layer to prove the runtime layers hold on their own.

        Never pass model-written code here; use `run`.
        """
        return self._execute(code, sources)

    def close(self) -> None:
        """Stop the worker; later calls raise SandboxError."""
        with self._lock:
            self._closed = True
            worker = self._holder[0]
            self._holder[0] = None
            if worker is not None:
                worker.stop(graceful=True)

    def _ready_worker(self) -> _Worker:
        if self._closed:
            raise SandboxError("The sandbox executor was closed; create a new one.", "crashed")
        worker = self._holder[0]
        if worker is not None and worker.process.poll() is not None:
            self._discard()
            worker = None
        if worker is None:
            worker = _Worker(self.settings, self._limits)
            self._holder[0] = worker
        if not worker.ready:
            try:
                worker.wait_ready(self.startup_timeout_s)
            except SandboxError:
                self._discard()
                raise
        return worker

    def _discard(self, replace: bool = False, diagnose: bool = False) -> str:
        """Kill the current worker; optionally start its successor warming up now."""
        worker = self._holder[0]
        self._holder[0] = None
        description = "not running"
        if worker is not None:
            # A worker whose pipe hit EOF is dying: let it finish to learn why.
            description = worker.exit_description() if diagnose else "stopped"
            worker.stop(graceful=False)
        if replace and not self._closed:
            self._holder[0] = _Worker(self.settings, self._limits)
        return description

    def _execute(self, code: str, sources: dict[str, pd.DataFrame | xr.DataArray]) -> SandboxResult:
        body = _encode_request(code, sources)
        with self._lock:
            worker = self._ready_worker()
            started = time.perf_counter()
            timeout_s = self.settings.sandbox_timeout_s
            _limit_cpu(worker.pid, self.settings.sandbox_cpu_s)
            try:
                raw = worker.exchange(
                    body,
                    time.monotonic() + timeout_s,
                    self.max_result_bytes + _RESPONSE_SLACK_BYTES,
                )
            except wire.FrameTimeout as exc:
                self._discard(replace=True)
                raise SandboxError(
                    f"The code ran longer than {timeout_s:g} s (sandbox_timeout_s) and was "
                    "stopped. Make it faster: vectorise loops, or work on less data.",
                    "timeout",
                ) from exc
            except wire.FrameTooLarge as exc:
                self._discard(replace=True)
                raise SandboxError(
                    f"The result is larger than {self.max_result_bytes} bytes, the sandbox "
                    "cap. Return less data (resample, select columns or a time range).",
                    "output",
                ) from exc
            except wire.FrameError as exc:
                raise self._death_error(self._discard(replace=True, diagnose=True)) from exc
            elapsed = time.perf_counter() - started
            header, blobs = _unpack_response(raw)
            if header.get("retire"):
                self._discard(replace=True)
        return _to_result(header, blobs, elapsed)

    def _death_error(self, how: str) -> SandboxError:
        if how == f"killed by {signal.SIGXCPU.name}":
            return SandboxError(
                f"The code used more than {self.settings.sandbox_cpu_s} s of CPU time "
                "(sandbox_cpu_s) and was stopped. Make it cheaper or work on less data.",
                "timeout",
            )
        if how == f"killed by {signal.SIGXFSZ.name}":
            return SandboxError(
                "The code tried to write a file and was stopped: the sandbox has no file "
                "access. Return data through `result` instead.",
                "forbidden",
            )
        return SandboxError(
            f"The sandbox worker died while running the code ({how}); it may have run out "
            "of memory or hit a bug in a compiled library. A fresh worker will be used for "
            "the next call; try simpler code or less data.",
            "crashed",
        )


def _encode_request(code: str, sources: dict[str, pd.DataFrame | xr.DataArray]) -> bytes:
    entries: list[dict[str, Any]] = []
    blobs: list[bytes] = []
    for label, given in sources.items():
        value = cast(object, given)  # callers are not type-checked at run time: look
        if not isinstance(value, pd.DataFrame | xr.DataArray):
            raise SandboxError(
                f"Source '{label}' is a {type(value).__name__}; the sandbox takes pandas "
                "DataFrames and xarray DataArrays.",
                "input",
            )
        try:
            value_header, value_blobs = wire.encode_value(value)
        except Exception as exc:  # pyarrow raises its own hierarchy for odd dtypes
            raise SandboxError(
                f"Source '{label}' cannot be sent to the sandbox: {exc}. Convert object "
                "columns to numbers or strings first.",
                "input",
            ) from exc
        entries.append({"label": str(label), "header": value_header, "blobs": len(value_blobs)})
        blobs.extend(value_blobs)
    return wire.pack_message({"code": code, "sources": entries}, blobs)


def _unpack_response(raw: bytes) -> tuple[dict[str, Any], list[bytes]]:
    try:
        return wire.unpack_message(raw)
    except wire.FrameError as exc:
        raise SandboxError(
            f"The sandbox worker sent an unreadable reply ({exc}); try again.", "crashed"
        ) from exc


def _to_result(header: dict[str, Any], blobs: list[bytes], elapsed: float) -> SandboxResult:
    """Check and decode a worker reply; the worker is not trusted to be well-formed."""
    if header.get("status") != "ok":
        category = str(header.get("category", "crashed"))
        message = str(header.get("message", "no message"))
        raise SandboxError(f"The sandboxed code failed ({category}): {message}", category)
    kind = header.get("kind")
    value: SandboxValue
    if kind in ("dataframe", "series", "dataarray"):
        value_header = header.get("value_header")
        if not isinstance(value_header, dict):
            raise SandboxError("The sandbox worker sent a reply without data.", "crashed")
        try:
            value = wire.decode_value(value_header, blobs, check=True)  # pyright: ignore[reportUnknownArgumentType]
        except wire.FrameError as exc:
            raise SandboxError(f"The sandbox result could not be decoded: {exc}", "output") from exc
    elif kind == "scalar":
        scalar = header.get("scalar")
        if not (scalar is None or isinstance(scalar, bool | int | float | str)):
            raise SandboxError("The sandbox worker sent an invalid scalar.", "crashed")
        value = scalar
    else:
        raise SandboxError(f"The sandbox worker sent an unknown result kind {kind!r}.", "crashed")
    warnings_list = header.get("warnings", [])
    return SandboxResult(
        value=value,
        kind=kind,
        stdout=str(header.get("stdout", "")),
        stdout_truncated=bool(header.get("stdout_truncated", False)),
        warnings=tuple(str(w) for w in warnings_list) if isinstance(warnings_list, list) else (),
        elapsed_s=elapsed,
    )
