"""Run generated pandas/numpy/xarray/scipy/pywt code in a fresh, OS-isolated process per call.

`SandboxExecutor.run(code, sources)` validates the code (`validate.py`), sends it with the
source data (Arrow IPC, no pickle) to the sandbox zygote and returns a `SandboxResult`.

The zygote (`zygote.py`) is a fresh interpreter started with fork+exec (`subprocess`, so
the parent's memory is never inherited, and the environment is given explicitly): a
minimal environment with no API keys, an empty read-only working directory, no
inherited fds besides its three pipes, its own session. It stays warm, and forks a clean
child for every call; the child applies the OS layers (`oslayers.py`: unprivileged uid
when root, no-new-privs, Landlock, seccomp, rlimits) before it runs the code, so a call
costs milliseconds and nothing one call does reaches the next. Each executor has its
own zygote: give every session its own executor and no worker serves two sessions.

The wall-clock timeout (`sandbox_timeout_s`), the CPU-time limit (`sandbox_cpu_s`) and
the memory limit come from the settings, never from the caller. Generated code is
refused when the kernel offers no confining OS layer (neither Landlock nor seccomp),
unless the user opts in with `XHELIO_SANDBOX_ALLOW_NO_OS=1` (or `allow_no_os_layers`).
Details in docs/sandbox.md.

Must not import anything above the sandbox layer (tools, agents, sessions).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import pandas as pd
import xarray as xr

from xhelio.config import Settings
from xhelio.errors import SandboxError
from xhelio.sandbox import wire
from xhelio.sandbox.oslayers import CONFINING_LAYERS
from xhelio.sandbox.results import (
    DECODE_FACTOR,
    MAX_COORDS,
    ResultRejected,
    check_scalar,
    clean_text,
)
from xhelio.sandbox.text import display_text
from xhelio.sandbox.validate import validate_code

__all__ = [
    "ALLOW_NO_OS_ENV",
    "IsolationStatus",
    "SandboxExecutor",
    "SandboxResult",
    "SandboxValue",
    "require_isolation",
]

SandboxValue = pd.DataFrame | xr.DataArray | float | int | str | bool | None
ResultKind = Literal["dataframe", "series", "dataarray", "scalar"]

ALLOW_NO_OS_ENV = "XHELIO_SANDBOX_ALLOW_NO_OS"
DEFAULT_MAX_RESULT_BYTES = 200 * 1024 * 1024
DEFAULT_MAX_STDOUT_CHARS = 20_000
DEFAULT_STDOUT_HARD_CAP = 2_000_000
MAX_WARNINGS = 40
_MAX_TEXT = 4_000
_CATEGORIES = frozenset(
    {"validation", "forbidden", "timeout", "memory", "output", "runtime", "crashed", "input"}
    | {"isolation"}
)
_RESENDS = 3  # a request whose child died before reading it goes to the next child
_ZYGOTE_GRACE_S = 15.0  # past the child's timeout, the zygote itself is presumed stuck
_SOURCE_ROOT = str(Path(__file__).resolve().parents[2])
_BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from xhelio.sandbox.zygote import main; main(sys.argv[2:])"
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
    layers: tuple[str, ...] = ()


@dataclass(frozen=True)
class IsolationStatus:
    """Which OS layers the sandbox applies to every call on this machine, and why not others."""

    layers: tuple[str, ...]
    unavailable: dict[str, str] = field(default_factory=dict[str, str])
    allowed_without_os: bool = False

    @property
    def confined(self) -> bool:
        """True when at least one layer confines files, processes and the network."""
        return bool(CONFINING_LAYERS & set(self.layers))


def _minimal_env(workdir: str) -> dict[str, str]:
    """The whole environment of the zygote: nothing from the parent, so no secrets."""
    return {
        "PATH": os.defpath,
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        # One thread per library: predictable CPU accounting, and a single-threaded
        # zygote forks safely (no lock held by a thread that the child would not have).
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
        "ARROW_DEFAULT_MEMORY_POOL": "system",
        "JE_ARROW_MALLOC_CONF": "background_thread:false",
    }


def _allow_no_os_from_env() -> bool:
    return os.environ.get(ALLOW_NO_OS_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


class _Zygote:
    """One zygote process and the parent's ends of its three pipes."""

    def __init__(self, settings: Settings, limits: dict[str, int | bool]) -> None:
        self.workdir = tempfile.mkdtemp(prefix="xhelio-sandbox-")
        request_read, self.request_fd = os.pipe()
        self.response_fd, response_write = os.pipe()
        self.control_fd, control_write = os.pipe()
        config = {
            "request_fd": request_read,
            "response_fd": response_write,
            "control_fd": control_write,
            "memory_mb": settings.sandbox_memory_mb,
            "cpu_s": settings.sandbox_cpu_s,
            "spares": settings.sandbox_spares,
            "timeout_s": settings.sandbox_timeout_s,
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
                pass_fds=(request_read, response_write, control_write),
                close_fds=True,
                start_new_session=True,
            )
        finally:
            for fd in (request_read, response_write, control_write):
                os.close(fd)
        os.chmod(self.workdir, 0o555)  # nothing may be created there, even by a bug
        for fd in (self.request_fd, self.response_fd, self.control_fd):
            os.set_blocking(fd, False)
        self.status: IsolationStatus | None = None

    @property
    def pid(self) -> int:
        """Process id of the zygote."""
        return self.process.pid

    def wait_ready(self, timeout_s: float, allow_no_os: bool) -> IsolationStatus:
        """Block until the zygote finished warming up, or raise SandboxError."""
        advice = "Check that pandas, numpy, xarray, scipy, PyWavelets and pyarrow import cleanly."
        try:
            body = wire.read_frame(self.control_fd, time.monotonic() + timeout_s, 1 << 20)
            header, _ = wire.unpack_message(body)
        except wire.FrameTimeout as exc:
            raise SandboxError(
                f"The sandbox did not start within {timeout_s:.0f} s. The machine may be "
                "overloaded; try again.",
                "crashed",
            ) from exc
        except wire.FrameError as exc:
            raise SandboxError(
                f"The sandbox failed to start ({self.exit_description()}). {advice}", "crashed"
            ) from exc
        if header.get("status") != "ready":
            raise SandboxError(
                f"The sandbox failed to start: {header.get('message', header)}. {advice}",
                "crashed",
            )
        unavailable = header.get("unavailable")
        self.status = IsolationStatus(
            layers=tuple(str(layer) for layer in header.get("layers", [])),
            unavailable={str(k): str(v) for k, v in dict(unavailable or {}).items()},
            allowed_without_os=allow_no_os,
        )
        return self.status

    def exchange(
        self, body: bytes, budget_s: float, max_bytes: int
    ) -> tuple[bytearray, dict[str, Any]]:
        """Send one request; return the reply the zygote relayed and its report on the call.

        The zygote relays at most one reply frame (its length checked against the cap)
        and then writes its report, so once the report is in, every byte of the reply
        is in the pipe. It does not wait for the child's exit: its teardown overlaps
        the caller's work and the next call.

        Raises:
            wire.FrameTimeout: nothing conclusive arrived within `budget_s`.
            wire.FrameTooLarge: more than `max_bytes` arrived (the zygote checks first).
            wire.FrameError: the zygote died or its report was malformed.
        """
        deadline = time.monotonic() + budget_s
        wire.write_frame(self.request_fd, body, deadline)
        reply = bytearray()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise wire.FrameTimeout
            readable, _, _ = select.select([self.response_fd, self.control_fd], [], [], remaining)
            if self.response_fd in readable:
                self._read_available(reply, max_bytes)
            if self.control_fd in readable:
                report = self._report(deadline)
                self._read_available(reply, max_bytes)
                return reply, report

    def _read_available(self, reply: bytearray, max_bytes: int) -> None:
        while True:
            try:
                chunk = os.read(self.response_fd, 1 << 20)
            except BlockingIOError:
                return
            if not chunk:
                raise wire.FrameError("the sandbox zygote closed its reply pipe")
            reply += chunk
            if len(reply) > max_bytes:
                raise wire.FrameTooLarge(f"the reply passed {max_bytes} bytes")

    def _report(self, deadline: float) -> dict[str, Any]:
        header, _ = wire.unpack_message(wire.read_frame(self.control_fd, deadline, 1 << 20))
        return header

    def exit_description(self) -> str:
        """How the zygote ended, waiting briefly for it to finish dying."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "still running"
        return _describe_exit(code)

    def stop(self, graceful: bool) -> None:
        """End the zygote and any child (politely if asked), close pipes, remove workdir."""
        for fd in (self.request_fd, self.response_fd, self.control_fd):
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


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def require_isolation(status: IsolationStatus, allow_no_os: bool) -> None:
    """Refuse to run generated code without a confining OS layer, unless opted in.

    Raises:
        SandboxError: category "isolation", naming what is missing and the opt-in.
    """
    if status.confined or allow_no_os:
        return
    reasons = "; ".join(f"{k}: {v}" for k, v in status.unavailable.items()) or "none found"
    raise SandboxError(
        "Generated code was not run: this machine offers no operating-system sandbox "
        f"layer ({reasons}). Run xhelio on Linux with Landlock or seccomp (see "
        f"`xhelio doctor`), or accept the risk explicitly with {ALLOW_NO_OS_ENV}=1.",
        "isolation",
    )


@contextlib.contextmanager
def _displayable_errors() -> Generator[None]:
    """Every SandboxError leaves with a message that is text to show, never terminal control.

    Messages quote what the code or its child wrote (string literals, exception text).
    """
    try:
        yield
    except SandboxError as exc:
        exc.message = display_text(exc.message)
        exc.args = (exc.message,)
        raise


def _shutdown(holder: list[_Zygote | None]) -> None:
    zygote = holder[0]
    holder[0] = None
    if zygote is not None:
        zygote.stop(graceful=False)


class SandboxExecutor:
    """Validate and run generated code in a fresh, OS-isolated child of a warm zygote."""

    def __init__(
        self,
        settings: Settings,
        *,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        max_stdout_chars: int = DEFAULT_MAX_STDOUT_CHARS,
        stdout_hard_cap: int = DEFAULT_STDOUT_HARD_CAP,
        startup_timeout_s: float = 120.0,
        allow_no_os_layers: bool | None = None,
        python_guards: bool = True,
    ) -> None:
        """Set the limits; the zygote starts on the first call (or `warm_up`).

        Args:
            settings: Timeouts and memory/CPU limits (`sandbox_*`).
            max_result_bytes: Cap on everything a result stores (values, labels, attrs).
            max_stdout_chars: Printed characters kept.
            stdout_hard_cap: Printed characters past which the call fails.
            startup_timeout_s: How long the zygote may take to warm up.
            allow_no_os_layers: Run code even with no confining OS layer (default: the
                XHELIO_SANDBOX_ALLOW_NO_OS environment variable).
            python_guards: Diagnostics and tests only: False leaves out the audit hook
                so that probes exercise the OS layers alone (`xhelio doctor`).
        """
        self.settings = settings
        self.max_result_bytes = max_result_bytes
        self.max_stdout_chars = max_stdout_chars
        self.startup_timeout_s = startup_timeout_s
        self.allow_no_os_layers = (
            _allow_no_os_from_env() if allow_no_os_layers is None else allow_no_os_layers
        )
        self._limits = {
            "max_stdout_chars": max_stdout_chars,
            "stdout_hard_cap": stdout_hard_cap,
            "max_result_bytes": max_result_bytes,
            "python_guards": python_guards,
        }
        self._lock = threading.Lock()
        self._holder: list[_Zygote | None] = [None]
        self._closed = False
        self._finalizer = weakref.finalize(self, _shutdown, self._holder)

    def __enter__(self) -> SandboxExecutor:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def worker_pid(self) -> int | None:
        """Process id of the current zygote, or None before the first call."""
        zygote = self._holder[0]
        return None if zygote is None else zygote.pid

    def warm_up(self) -> None:
        """Start the zygote now (and wait for it) so the first call is fast."""
        with self._lock:
            self._ready_zygote()

    def isolation(self) -> IsolationStatus:
        """The OS layers every call gets here (starts the zygote if needed)."""
        with self._lock:
            status = self._ready_zygote().status
        assert status is not None  # set by wait_ready
        return status

    def run(self, code: str, sources: dict[str, pd.DataFrame | xr.DataArray]) -> SandboxResult:
        """Validate `code`, run it on `sources` (the first is `df`) and return `result`.

        Raises:
            SandboxError: with category validation, timeout, memory, crashed, runtime,
                output, forbidden, input or isolation.
        """
        with _displayable_errors():
            validate_code(code)
            return self._execute(code, sources)

    def run_without_validation(
        self, code: str, sources: dict[str, pd.DataFrame | xr.DataArray]
    ) -> SandboxResult:
        """Test-only: skip the AST layer to prove the runtime and OS layers hold on their own.

        Never pass model-written code here; use `run`.
        """
        with _displayable_errors():
            return self._execute(code, sources)

    def close(self) -> None:
        """Stop the zygote; later calls raise SandboxError."""
        with self._lock:
            self._closed = True
            zygote = self._holder[0]
            self._holder[0] = None
            if zygote is not None:
                zygote.stop(graceful=True)

    def _ready_zygote(self) -> _Zygote:
        if self._closed:
            raise SandboxError("The sandbox executor was closed; create a new one.", "crashed")
        zygote = self._holder[0]
        if zygote is not None and zygote.process.poll() is not None:
            self._discard()
            zygote = None
        if zygote is None:
            zygote = _Zygote(self.settings, self._limits)
            self._holder[0] = zygote
        if zygote.status is None:
            try:
                zygote.wait_ready(self.startup_timeout_s, self.allow_no_os_layers)
            except SandboxError:
                self._discard()
                raise
        return zygote

    def _discard(self, diagnose: bool = False) -> str:
        """Kill the current zygote (and its child); the next call starts a new one."""
        zygote = self._holder[0]
        self._holder[0] = None
        description = "not running"
        if zygote is not None:
            description = zygote.exit_description() if diagnose else "stopped"
            zygote.stop(graceful=False)
        return description

    def _execute(self, code: str, sources: dict[str, pd.DataFrame | xr.DataArray]) -> SandboxResult:
        body = _encode_request(code, sources)
        with self._lock:
            zygote = self._ready_zygote()
            assert zygote.status is not None  # set by wait_ready
            require_isolation(zygote.status, self.allow_no_os_layers)
            started = time.perf_counter()
            timeout_s = self.settings.sandbox_timeout_s
            budget_s = timeout_s + _ZYGOTE_GRACE_S
            max_reply = self.max_result_bytes + wire.MAX_HEADER_BYTES
            try:
                raw, report = zygote.exchange(body, budget_s, max_reply)
                for _ in range(_RESENDS):  # its child died before reading it: send again
                    if not report.get("never_ran"):
                        break
                    raw, report = zygote.exchange(body, budget_s, max_reply)
            except wire.FrameTimeout as exc:
                self._discard()
                raise self._timeout_error() from exc
            except wire.FrameTooLarge as exc:
                self._discard()
                raise self._too_large_error() from exc
            except wire.FrameError as exc:
                raise SandboxError(
                    "The sandbox zygote died while running the code "
                    f"({self._discard(diagnose=True)}); a new one starts with the next call.",
                    "crashed",
                ) from exc
            elapsed = time.perf_counter() - started
        if report.get("too_large"):
            raise self._too_large_error()
        if report.get("timed_out"):
            raise self._timeout_error()
        header, blobs = _unpack_reply(raw, report, self._death_error)
        return _to_result(header, blobs, elapsed, self.max_result_bytes, self.max_stdout_chars)

    def _too_large_error(self) -> SandboxError:
        return SandboxError(
            f"The result is larger than {self.max_result_bytes} bytes, the sandbox "
            "cap. Return less data (resample, select columns or a time range).",
            "output",
        )

    def _timeout_error(self) -> SandboxError:
        return SandboxError(
            f"The code ran longer than {self.settings.sandbox_timeout_s:g} s "
            "(sandbox_timeout_s) and was stopped. Make it faster: vectorise loops, or work "
            "on less data.",
            "timeout",
        )

    def _death_error(self, report: dict[str, Any]) -> SandboxError:
        signal_number = report.get("signal")
        if signal_number == signal.SIGXCPU:
            return SandboxError(
                f"The code used more than {self.settings.sandbox_cpu_s} s of CPU time "
                "(sandbox_cpu_s) and was stopped. Make it cheaper or work on less data.",
                "timeout",
            )
        if signal_number == signal.SIGXFSZ:
            return SandboxError(
                "The code tried to write a file and was stopped: the sandbox has no file "
                "access. Return data through `result` instead.",
                "forbidden",
            )
        if signal_number == signal.SIGSYS:
            return SandboxError(
                "The code made a system call the sandbox forbids and was stopped.", "forbidden"
            )
        how = (
            _describe_exit(-int(signal_number))
            if isinstance(signal_number, int)
            else f"exit code {report.get('exit_code')}"
        )
        return SandboxError(
            f"The sandboxed code died while running ({how}); it may have run out of memory "
            "or hit a bug in a compiled library. Try simpler code or less data.",
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


def _unpack_reply(
    raw: bytearray, report: dict[str, Any], death: Callable[[dict[str, Any]], SandboxError]
) -> tuple[dict[str, Any], list[bytes]]:
    """The child's one reply frame; without a whole one, its death explains why."""
    if report.get("status") != "replied":
        raise death(report)
    try:
        body, rest = wire.split_frame(raw)
        if rest:
            raise wire.FrameError("unexpected bytes after the reply")
        return wire.unpack_message(body, max_blobs=MAX_COORDS + 1)
    except wire.FrameError as exc:
        raise SandboxError(
            f"The sandboxed code sent an unreadable reply ({exc}); try again.", "crashed"
        ) from exc


def _text_list(value: object, limit: int, count: int) -> list[str]:
    """At most `count` displayable texts of at most `limit` characters from a reply field."""
    items: list[object] = value[:count] if isinstance(value, list) else []  # pyright: ignore[reportUnknownVariableType]
    return [clean_text(item, limit) for item in items]


def _decode_data(
    header: dict[str, Any], blobs: list[bytes], max_result_bytes: int
) -> tuple[pd.DataFrame | xr.DataArray, list[str]]:
    value_header = header.get("value_header")
    if not isinstance(value_header, dict):
        raise SandboxError("The sandbox worker sent a reply without data.", "crashed")
    try:
        decoded = wire.decode_value(
            value_header,  # pyright: ignore[reportUnknownArgumentType]
            blobs,
            check=True,
            max_decoded_bytes=DECODE_FACTOR * max_result_bytes,
        )
        value, notes = wire.check_result(decoded)  # never trust the worker's own check
    except wire.FrameError as exc:
        raise SandboxError(f"The sandbox result could not be decoded: {exc}", "output") from exc
    except wire.ResultRejected as exc:
        raise SandboxError(f"The sandbox result was refused: {exc}", "output") from exc
    return value, _text_list(header.get("notes"), 500, 10) + notes


def _to_result(
    header: dict[str, Any],
    blobs: list[bytes],
    elapsed: float,
    max_result_bytes: int,
    max_stdout_chars: int,
) -> SandboxResult:
    """Check and decode a worker reply; the worker is not trusted to be well-formed.

    Every field is checked for its type before use, and anything unexpected while
    decoding is a `SandboxError`: a forged reply never raises a raw exception here.
    """
    try:
        return _checked_result(header, blobs, elapsed, max_result_bytes, max_stdout_chars)
    except SandboxError:
        raise
    except Exception as exc:  # a malformed reply field reached code that assumed a type
        raise SandboxError(
            f"The sandboxed code sent a malformed reply ({type(exc).__name__}); try again.",
            "crashed",
        ) from exc


def _checked_result(
    header: dict[str, Any],
    blobs: list[bytes],
    elapsed: float,
    max_result_bytes: int,
    max_stdout_chars: int,
) -> SandboxResult:
    if header.get("status") != "ok":
        category = header.get("category")
        category = category if isinstance(category, str) and category in _CATEGORIES else "crashed"
        message = clean_text(header.get("message", "no message"), _MAX_TEXT)
        raise SandboxError(f"The sandboxed code failed ({category}): {message}", category)
    kind = header.get("kind")
    value: SandboxValue
    notes: list[str] = []
    if kind in ("dataframe", "series", "dataarray"):
        value, notes = _decode_data(header, blobs, max_result_bytes)
    elif kind == "scalar":
        try:
            value = check_scalar(header.get("scalar"))
        except ResultRejected as exc:
            raise SandboxError(f"The sandbox result was refused: {exc}", "output") from exc
    else:
        raise SandboxError(
            f"The sandbox worker sent an unknown result kind {clean_text(kind, 40)!r}.", "crashed"
        )
    warnings_list = _text_list(header.get("warnings"), 500, MAX_WARNINGS)
    return SandboxResult(
        value=value,
        kind=kind,
        stdout=clean_text(header.get("stdout", ""), max_stdout_chars),
        stdout_truncated=header.get("stdout_truncated") is True,
        warnings=tuple([*warnings_list, *notes][:MAX_WARNINGS]),
        elapsed_s=elapsed,
        layers=tuple(_text_list(header.get("layers"), 40, 20)),
    )
