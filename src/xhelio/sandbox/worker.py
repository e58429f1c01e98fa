"""The sandbox job runner: what a forked child of the zygote does with one request.

`zygote.py` imports this module, warms it up (`warm_up`) and forks one child per call;
the child applies the OS layers (`oslayers.py`), installs the audit hook
(`install_audit_hook`) and runs the request through `Runner.handle`: decode the sources
(Arrow IPC, no pickle), exec the code with an allowlisted set of builtins and a bounded
stdout, encode `result` under the size and metadata limits of `wire.py`, and map every
outcome to a reply with a containment category.

The audit hook (PEP 578, not removable) refuses `open`, `import` of modules not loaded
at warm-up, every `os.*` and `subprocess.*` event, sockets, ctypes, unpickling, `gc`
object walks and more. It raises a BaseException so `except Exception` in user code
cannot swallow it, and records what was refused. It is defence in depth: the OS layers
are the boundary.

Imports from xhelio only `sandbox.wire`, `sandbox.results`, `sandbox.harden`,
`sandbox.validate` and `analysis.namespace` (the `analysis` module the code sees).
"""

from __future__ import annotations

import builtins
import errno
import importlib.abc
import importlib.machinery
import json
import sys
import time
import warnings
from dataclasses import dataclass, field
from types import ModuleType, TracebackType
from typing import Any, TextIO, cast

import numpy as np
import pandas as pd
import xarray as xr

from xhelio.sandbox import wire
from xhelio.sandbox.harden import Refused as _Blocked
from xhelio.sandbox.prepare import prepare_frame
from xhelio.sandbox.query import bind_namespace
from xhelio.sandbox.results import DECODE_FACTOR, ResultRejected, check_scalar
from xhelio.sandbox.validate import ALLOWED_BUILTINS

__all__ = [
    "Runner",
    "WorkerConfig",
    "install_audit_hook",
    "load_modules",
    "vm_size_bytes",
    "warm_up",
]

CODE_FILENAME = "<sandbox>"
REQUEST_FD = 3
RESPONSE_FD = 4
MAX_MESSAGE_CHARS = 2_000
MAX_WARNINGS = 20
_MAX_REQUEST_BYTES = 1 << 40

_SCIPY_SUBPACKAGES = (
    "cluster", "constants", "differentiate", "fft", "fftpack", "integrate", "interpolate", "linalg",
    "ndimage", "odr", "optimize", "signal", "sparse", "spatial", "special", "stats",
)  # fmt: skip

_LAZY_MODULES = (
    "pandas.core.arrays.arrow.extension_types", "pandas.core.reshape.reshape",
    "xarray.core.resample", "numpy._core._methods",
)  # fmt: skip

_BLOCKED_EVENTS = frozenset(
    {
        "open", "import", "pickle.find_class", "marshal.load", "marshal.loads",
        "gc.get_objects", "gc.get_referrers", "gc.get_referents", "builtins.input",
        "builtins.breakpoint", "code.__new__", "function.__new__", "cpython.run_command",
        "cpython.run_file", "cpython.run_module", "cpython.run_startup",
        "cpython.run_interactivehook", "setopencodehook", "sys.remote_exec",
    }
)  # fmt: skip
_BLOCKED_PREFIXES = (
    "os.", "subprocess.", "socket.", "ctypes.", "shutil.", "tempfile.", "urllib.",
    "http.", "ftplib.", "smtplib.", "poplib.", "imaplib.", "nntplib.", "telnetlib.",
    "webbrowser.", "pty.", "glob.", "mmap.", "resource.", "sqlite3.", "syslog.", "fcntl.",
    "signal.", "msvcrt.", "winreg.", "_winapi.",
)  # fmt: skip

_PREWARM_CODE = """
print(df.head(3)); x = df.rolling(3).mean().dropna(); y = np.sqrt((df ** 2).sum(axis=1))
result = df * 2
"""
_WARMUP_CODE = """
t = df.index
smooth = df.rolling("10min").mean().resample("5min").mean().interpolate(method="time")
both = pd.merge_asof(df, sources["b"], left_index=True, right_index=True)
desc = df.describe(); print(df.head()); print(repr(sources["grid"]))
ew = df.ewm(span=5).mean().diff().shift(1).pct_change().clip(-1, 1).dropna().fillna(0)
g = df.groupby(df.index.hour).agg("mean"); rows = list(df.itertuples()); q = df.quantile(0.9)
s = pd.to_datetime(["2024-01-01T00:00:00Z"]); d = pd.Timedelta("10min"); c = df.corr()
x = df["a"].to_numpy(copy=True); secs = (t - t[0]).total_seconds().to_numpy()
grad = np.gradient(x, secs); fit = np.polynomial.polynomial.polyfit(secs, x, 1)
b, a = scipy.signal.butter(3, 0.1); y = scipy.signal.filtfilt(b, a, x)
f, p = scipy.signal.welch(x, nperseg=32); sg = scipy.signal.savgol_filter(x, 7, 2)
pk = scipy.signal.find_peaks(x); sp = scipy.signal.spectrogram(x, nperseg=16)
h = scipy.signal.hilbert(x); dt = scipy.signal.detrend(x); md = scipy.signal.medfilt(x, 5)
ff = scipy.fft.rfft(x); sf = scipy.interpolate.CubicSpline(secs, x)(secs[:5])
lin = scipy.interpolate.interp1d(secs, x)(secs[:5]); lr = scipy.stats.linregress(secs, x)
z = scipy.stats.zscore(x); ig = scipy.integrate.cumulative_trapezoid(x, secs)
coeffs = pywt.wavedec(x, "db4", level=2); back = pywt.waverec(coeffs, "db4")
cw = pywt.cwt(x[:64], np.arange(1, 8), "morl")
grid = sources["grid"]; gm = grid.mean("time"); gi = grid.interp(energy=[1.5])
gr = grid.rolling(time=3).mean(); gs = grid.to_series(); gd = grid.to_pandas()
gx = df.to_xarray(); gc = xr.concat([grid, grid], dim="time"); np.fft.rfft(x)
print(x); print(repr(x)); str(x[:3].reshape(1, 3)); print(np.arange(2000)); str(x[0])
print(np.array([1 + 2j, 3])); print(np.array(["a"])); print(np.array([True])); repr(np.float32(1))
print(np.array(["2024-01-01"], dtype="M8[ns]")); print(np.ma.array([1.0, 2.0], mask=[True, False]))
print(np.array([[1.5, np.nan, np.inf]])); print(f"{x[0]:.3f} {np.int64(3)}")
print(x.astype("O")[:3])
s2 = df["a"].astype(str).str.upper(); rk = df.rank(); am = df.apply(lambda r: r.sum(), axis=1)
try:
    raise ValueError("warm-up")
except ValueError:
    pass
result = grid if len(df) < 0 else df * 2
"""


@dataclass(frozen=True)
class WorkerConfig:
    """Pipes and limits the executor passes to the zygote on the command line (as JSON)."""

    request_fd: int
    response_fd: int
    control_fd: int
    memory_mb: int
    cpu_s: int
    timeout_s: float
    max_stdout_chars: int
    stdout_hard_cap: int
    max_result_bytes: int
    python_guards: bool = True
    spares: int = 2


class _OutputTooLarge(BaseException):
    """The code printed more than the hard cap on captured output."""


class _ResultError(Exception):
    """The value in `result` cannot be returned (wrong type, too large, not encodable)."""


@dataclass
class _GuardLog:
    """What the audit hook refused during the current job."""

    refused: list[str] = field(default_factory=list[str])


class _BoundedStdout:
    """A stdout replacement that keeps a prefix and refuses output past a hard cap."""

    def __init__(self, keep_chars: int, hard_cap: int) -> None:
        self.keep_chars = keep_chars
        self.hard_cap = hard_cap
        self.parts: list[str] = []
        self.kept = 0
        self.total = 0

    def write(self, text: str) -> int:
        """Record printed text, raising once the total passes the hard cap."""
        self.total += len(text)
        if self.total > self.hard_cap:
            raise _OutputTooLarge(f"printed more than {self.hard_cap} characters")
        if self.kept < self.keep_chars:
            piece = text[: self.keep_chars - self.kept]
            self.parts.append(piece)
            self.kept += len(piece)
        return len(text)

    def flush(self) -> None:
        """Nothing to flush: text is kept in memory."""

    def text(self) -> str:
        """The kept prefix of everything printed."""
        return "".join(self.parts)


def _type_of(obj: object, /) -> type:
    """The sandbox's `type`: one argument, never a metaclass, never the ndarray class.

    `type(int)` would hand the code `type` itself, and `type(name, bases, namespace)`
    through it creates classes with computed dunder methods, which the AST layer forbids;
    `type(arr)(shape, object, buffer)` would forge object pointers from bytes.
    """
    kind = type(obj)
    if issubclass(kind, type):
        raise TypeError(
            "type() of a class is not available in the sandbox; compare classes directly "
            "or use isinstance()"
        )
    if issubclass(kind, np.ndarray):
        # The array class constructs arrays over raw buffers (object pointers, offsets).
        raise TypeError("type() of a NumPy array is not available; use isinstance(x, np.ndarray)")
    return kind


# Modules that compiled library code imports by name on first use (pyarrow's decimal
# and datetime C APIs, NumPy's array printing), through the calling frame's builtins.
_C_IMPORTS = frozenset(
    {"decimal", "datetime", "numpy._core.arrayprint", "numpy._core._methods"}
)  # `_methods`: reductions (std, var) of non-contiguous views


def _loaded_module(
    name: str,
    globals: object = None,  # the signature of __import__
    locals: object = None,
    fromlist: object = (),
    level: int = 0,
) -> ModuleType:
    """The sandbox's `__import__`: only already-loaded helper modules that C code asks for.

    Without it pyarrow aborts the process when it converts Python objects (its
    `ImportDecimalType` finds no `__import__`). Generated code cannot name it (dunder).
    """
    del globals, locals
    module = sys.modules.get(name) if level == 0 and name in _C_IMPORTS else None
    if module is None:
        raise ImportError(f"import of {name[:80]!r} is not available in the sandbox")
    return module if fromlist else sys.modules[name.partition(".")[0]]


def _prime_array_printing() -> None:
    """Let NumPy cache its printing functions now, with the real builtins.

    NumPy's C code imports `numpy._core.arrayprint` on the first `str()`/`repr()` of an
    array, through the `__import__` of the calling frame's builtins; the sandbox's
    builtins have none, so without this `print(ndarray)` fails inside the sandbox.
    """
    for value in (np.arange(3.0), np.arange(3.0).reshape(1, 3), np.ma.array([1.0])):
        str(value)
        repr(value)
    str(np.float64(1.5))
    repr(np.int64(2))


def load_modules() -> dict[str, ModuleType]:
    """Import every library the code may use, so nothing needs importing later."""
    import importlib

    import pywt
    import scipy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in _SCIPY_SUBPACKAGES:
            importlib.import_module(f"scipy.{name}")
        for name in ("polynomial", "random", "fft", "linalg", "ma", "rec", "strings"):
            importlib.import_module(f"numpy.{name}")
        # Loaded lazily when a period/interval column is encoded (then refused cleanly),
        # by GroupBy.describe, by DataArray.resample and by ndarray.std.
        for name in _LAZY_MODULES:
            importlib.import_module(name)
    _prime_array_printing()
    from xhelio.analysis.namespace import sandbox_module
    from xhelio.analysis.namespace import warm_up as warm_up_analysis

    warm_up_analysis()  # its lazy imports happen now, before the audit hook
    return {
        "pd": pd,
        "np": np,
        "xr": xr,
        "scipy": scipy,
        "pywt": pywt,
        "analysis": sandbox_module(),
    }


def vm_size_bytes() -> int:
    """The process's virtual memory size (the base for RLIMIT_AS)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def install_audit_hook(log: _GuardLog) -> None:
    """Install the permanent runtime guard (audit hooks cannot be removed)."""
    blocked = _BLOCKED_EVENTS
    prefixes = _BLOCKED_PREFIXES

    modules = cast("dict[str, object | None]", sys.modules)

    def guard(event: str, args: tuple[object, ...]) -> None:
        if event == "import" and args and modules.get(str(args[0]), modules) is None:
            return  # marked absent at warm-up: the import fails with ImportError anyway
        if event in blocked or event.startswith(prefixes):
            detail = repr(args[0])[:200] if args else ""
            log.refused.append(f"{event}({detail})")
            raise _Blocked(f"'{event}' of {detail}" if detail else f"'{event}'")

    sys.addaudithook(guard)


def _clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters cut]"


def _exception_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # a hostile __str__ must not break the report
        text = "<message could not be shown>"
    return _clip(text)


def _user_line(exc: BaseException) -> int | None:
    """The innermost line of the generated code in the traceback, if any."""
    if isinstance(exc, SyntaxError):
        return exc.lineno
    line: int | None = None
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == CODE_FILENAME:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _decode_sources(
    header: dict[str, Any], blobs: list[bytes]
) -> dict[str, pd.DataFrame | xr.DataArray]:
    sources: dict[str, pd.DataFrame | xr.DataArray] = {}
    position = 0
    for entry in header["sources"]:
        count = int(entry["blobs"])
        sources[str(entry["label"])] = wire.writable(
            wire.decode_value(entry["header"], blobs[position : position + count])
        )
        position += count
    return sources


def _scalar(value: object) -> object:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, pd.Timedelta):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        try:
            return check_scalar(value)
        except ResultRejected as exc:
            raise _ResultError(f"`result` cannot be returned: {exc}") from exc
    raise _ResultError(
        f"`result` is a {type(value).__name__}; assign a pandas DataFrame or Series, an "
        "xarray DataArray, or a single number or string (wrap arrays in pd.Series or "
        "xr.DataArray with their time index)"
    )


def _encode_result(
    value: object, max_bytes: int, sources: dict[str, pd.DataFrame | xr.DataArray]
) -> tuple[dict[str, Any], list[bytes]]:
    """Prepare `result` as the session stores it (`prepare`), then encode it.

    Returns a response header and Arrow blobs; enforces the size cap.
    """
    prepared: list[str] = []
    kind = "dataframe"
    if isinstance(value, pd.Series):
        try:
            value = value.to_frame(name=value.name if value.name is not None else "value")
        except Exception as exc:  # a name pandas cannot turn into a label (a surrogate)
            raise _ResultError(f"`result` cannot be returned: {_exception_text(exc)}") from exc
        kind = "series"
    if isinstance(value, xr.Dataset):
        raise _ResultError("`result` is an xarray Dataset; assign one DataArray from it")
    if isinstance(value, pd.DataFrame):
        try:
            value = prepare_frame(value, sources, prepared)
        except Exception as exc:  # labels pandas cannot turn into text
            raise _ResultError(f"`result` cannot be returned: {_exception_text(exc)}") from exc
    if isinstance(value, pd.DataFrame | xr.DataArray):
        if isinstance(value, xr.DataArray):
            kind = "dataarray"
            estimate = int(value.nbytes)
        else:
            estimate = int(value.memory_usage(index=True, deep=True).sum())
        if estimate > max_bytes:
            raise _OutputTooLarge(f"the result holds about {estimate} bytes")
        try:
            with warnings.catch_warnings():
                # Shown warnings would be formatted with source lines read from files.
                warnings.simplefilter("ignore")
                value, notes = wire.check_result(value)
                value_header, blobs = wire.encode_value(value)
                wire.check_blobs(blobs, DECODE_FACTOR * max_bytes)  # what the parent refuses
        except (wire.ResultRejected, wire.FrameError) as exc:
            raise _ResultError(f"`result` cannot be returned: {exc}") from exc
        except Exception as exc:  # pyarrow raises its own hierarchy for odd dtypes
            raise _ResultError(f"`result` cannot be returned: {_exception_text(exc)}") from exc
        stored = sum(len(blob) for blob in blobs) + len(json.dumps(value_header))
        if stored > max_bytes:  # labels, attrs and index count too, not only the values
            raise _OutputTooLarge(f"the result takes {stored} bytes once encoded")
        return {"kind": kind, "value_header": value_header, "notes": prepared + notes}, blobs
    return {"kind": "scalar", "scalar": _scalar(value)}, []


def _error(category: str, message: str, line: int | None = None) -> dict[str, Any]:
    where = f"line {line}: " if line is not None else ""
    return {"status": "error", "category": category, "message": _clip(where + message)}


def _classify(exc: BaseException, log: _GuardLog) -> dict[str, Any]:
    """Map an exception from a job to an error response with a containment category."""
    line = _user_line(exc)
    text = _exception_text(exc)
    if isinstance(exc, _Blocked) or log.refused:
        what = text if isinstance(exc, _Blocked) else log.refused[0]
        return _error("forbidden", f"blocked at run time: {what}", line)
    if isinstance(exc, PermissionError) or (
        isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENOSYS)
    ):
        # Refused by the operating-system layers (seccomp, Landlock, uid, fd limit).
        return _error("forbidden", f"refused by the operating system sandbox: {text}", line)
    if isinstance(exc, _OutputTooLarge):
        return _error("output", f"output too large: {text}", line)
    if isinstance(exc, MemoryError):
        detail = f" ({text})" if text else ""
        return _error(
            "memory",
            f"out of memory{detail}: the code needed more than the sandbox allows "
            "(sandbox_memory_mb); work on less data or avoid huge intermediates",
            line,
        )
    if isinstance(exc, RecursionError):
        return _error("runtime", "recursion too deep (RecursionError)", line)
    if isinstance(exc, SyntaxError):
        return _error("validation", f"syntax error: {exc.msg}", line)
    if isinstance(exc, _ResultError):
        return _error("output", text)
    return _error("runtime", f"{type(exc).__name__}: {text}", line)


class Runner:
    """Runs jobs in the worker: decode sources, exec, capture output, encode result."""

    def __init__(self, config: WorkerConfig, modules: dict[str, ModuleType]) -> None:
        self.config = config
        self.modules = modules
        self.log = _GuardLog()
        self.safe_builtins = {
            name: getattr(builtins, name) for name in ALLOWED_BUILTINS if hasattr(builtins, name)
        }
        self.safe_builtins["type"] = _type_of
        self.safe_builtins["__import__"] = _loaded_module  # for C code only (dunder in the AST)
        # A small typical job each fresh child runs before its request (see zygote.py).
        self.prewarm_body = b""

    def handle(self, body: bytes) -> tuple[dict[str, Any], list[bytes]]:
        """Run one request body and return the response header and blobs."""
        self.log.refused.clear()
        stdout = _BoundedStdout(self.config.max_stdout_chars, self.config.stdout_hard_cap)
        caught: list[warnings.WarningMessage] = []
        started = time.perf_counter()
        response: dict[str, Any]
        blobs: list[bytes] = []
        try:
            header, request_blobs = wire.unpack_message(body)
            sources = _decode_sources(header, request_blobs)
            value = self._execute(str(header["code"]), sources, stdout, caught)
            if self.log.refused:  # also when the code caught the refusal (`except:`)
                raise _Blocked(self.log.refused[0])
            if stdout.total > stdout.hard_cap:  # the same
                raise _OutputTooLarge(f"printed more than {stdout.hard_cap} characters")
            result_header, blobs = _encode_result(value, self.config.max_result_bytes, sources)
            response = {"status": "ok", **result_header}
        except BaseException as exc:  # every outcome of untrusted code becomes a reply
            response = _classify(exc, self.log)
            blobs = []
        finally:
            np.seterr(all="warn", under="ignore")
        response["elapsed_s"] = time.perf_counter() - started
        response["stdout"] = stdout.text()
        response["stdout_truncated"] = stdout.total > stdout.kept
        response["warnings"] = [_clip(str(w.message), 500) for w in caught[:MAX_WARNINGS]]
        return response, blobs

    def _execute(
        self,
        code: str,
        sources: dict[str, pd.DataFrame | xr.DataArray],
        stdout: _BoundedStdout,
        caught: list[warnings.WarningMessage],
    ) -> object:
        namespace: dict[str, Any] = {
            "__builtins__": dict(self.safe_builtins),
            "__name__": "sandbox",
            "df": next(iter(sources.values()), None),
            "sources": sources,
            **self.modules,
        }
        compiled = compile(code, CODE_FILENAME, "exec")
        bind_namespace(namespace)  # `@name` in df.query
        saved_stdout: TextIO = sys.stdout
        sys.stdout = stdout  # type: ignore[assignment]  # duck-typed writer is enough
        try:
            with warnings.catch_warnings(record=True) as recorded:
                warnings.simplefilter("always")
                exec(compiled, namespace)
                caught.extend(recorded)
        finally:
            sys.stdout = saved_stdout
        if "result" not in namespace:
            raise _ResultError("the code finished without assigning `result`")
        return namespace["result"]


class _MissingModuleRecorder(importlib.abc.MetaPathFinder):
    """Last finder on `sys.meta_path`: notes the optional modules nothing could find."""

    def __init__(self) -> None:
        self.missing: set[str] = set()

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        """Record the name and report it as not found."""
        self.missing.add(fullname)
        return None


def warm_up(runner: Runner) -> None:
    """Run a representative job through the real path so lazy imports happen now.

    Libraries probe optional modules (pyarrow tries `pytz` on every tz-aware frame).
    Those found missing are marked absent in `sys.modules`, so later probes fail fast
    with ImportError instead of reaching the import system (and the guard) every call.
    """
    recorder = _MissingModuleRecorder()
    sys.meta_path.append(recorder)
    try:
        _run_warm_up_job(runner)
    finally:
        sys.meta_path.remove(recorder)
    for name in recorder.missing:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]  # None means "absent"


def _run_warm_up_job(runner: Runner) -> None:
    index = pd.date_range("2024-01-01", periods=200, freq="1min", tz="UTC")
    frame = pd.DataFrame({"a": np.sin(np.arange(200) / 7.0), "b": np.arange(200.0)}, index=index)
    grid = xr.DataArray(
        np.ones((10, 3)),
        dims=("time", "energy"),
        coords={"time": index[:10].tz_localize(None), "energy": [1.0, 2.0, 3.0]},
        name="flux",
    )
    sources: dict[str, pd.DataFrame | xr.DataArray] = {"a": frame, "b": frame, "grid": grid}
    blobs: list[bytes] = []
    entries: list[dict[str, Any]] = []
    for label, value in sources.items():
        value_header, value_blobs = wire.encode_value(value)
        entries.append({"label": label, "header": value_header, "blobs": len(value_blobs)})
        blobs.extend(value_blobs)
    body = wire.pack_message({"code": _WARMUP_CODE, "sources": entries}, blobs)
    runner.prewarm_body = wire.pack_message(
        {"code": _PREWARM_CODE, "sources": entries[:1]}, blobs[: entries[0]["blobs"]]
    )
    response, out_blobs = runner.handle(body)
    if response["status"] != "ok":
        raise RuntimeError(f"sandbox warm-up failed: {response.get('message')}")
    wire.decode_value(response["value_header"], out_blobs, check=True)
    for bad in ("result = undefined_name", "result = 1 +"):
        runner.handle(wire.pack_message({"code": bad, "sources": []}, []))
    json.dumps(response)
