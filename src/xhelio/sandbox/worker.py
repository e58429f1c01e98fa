"""The sandbox worker: a separate, freshly spawned Python process that runs generated code.

`executor.py` starts it (fork+exec of a new interpreter, never a fork of the parent) with
a minimal environment and an empty working directory, and talks to it over two pipes
with the framing of `wire.py` (JSON headers, Arrow IPC data, no pickle). Start-up:

1. import pandas, numpy, xarray, scipy (every public sub-package but `io`, `datasets`,
   `misc`) and pywt, then run a warm-up job through the real code path so every lazily
   imported module is loaded now rather than while user code runs;
2. replace the file and network functions of those libraries with stubs that refuse;
3. move the two pipes to fds 3 and 4, close every other fd and set `RLIMIT_NOFILE` to
   5, so the kernel refuses any new file, socket or pipe (also from C code such as Arrow
   or netCDF that Python audit hooks never see); set `RLIMIT_AS` (memory),
   `RLIMIT_FSIZE` 0, `RLIMIT_NPROC` 0 and `RLIMIT_CORE` 0;
4. install an audit hook, which Python offers no way to remove, that refuses `open`,
   `import` of modules not yet loaded, every `os.*` and `subprocess.*` event, sockets,
   ctypes, unpickling, `gc` object walks and more. It raises a BaseException so
   `except Exception` in user code cannot swallow it, and it records what was refused.

Each job runs with an allowlisted set of builtins and a bounded stdout. After a job that
ran out of memory, broke a runtime rule, or changed a library class or module, the
worker exits and the executor starts a fresh one. This is not a kernel-level jail: see
docs/sandbox.md for what is and is not guaranteed.

Imports from xhelio only `sandbox.wire` and `sandbox.validate` (through the package).
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.machinery
import json
import os
import resource
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import ModuleType, TracebackType
from typing import Any, NoReturn, TextIO, cast

import numpy as np
import pandas as pd
import xarray as xr

from xhelio.sandbox import wire
from xhelio.sandbox.validate import ALLOWED_BUILTINS

__all__ = ["WorkerConfig", "main"]

CODE_FILENAME = "<sandbox>"
REQUEST_FD = 3
RESPONSE_FD = 4
MAX_MESSAGE_CHARS = 2_000
MAX_WARNINGS = 20
_MAX_REQUEST_BYTES = 1 << 40

_SCIPY_SUBPACKAGES = (
    "cluster", "constants", "differentiate", "fft", "integrate", "interpolate", "linalg",
    "ndimage", "odr", "optimize", "signal", "sparse", "spatial", "special", "stats",
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

_IO_METHODS = (
    "to_csv", "to_parquet", "to_pickle", "to_hdf", "to_sql", "to_json", "to_excel",
    "to_feather", "to_stata", "to_netcdf", "to_zarr", "to_clipboard", "to_html",
    "to_latex", "to_markdown", "to_xml", "to_orc", "to_gbq", "to_iris",
)  # fmt: skip
_NUMPY_IO = (
    "load", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt",
    "fromfile", "memmap", "fromregex", "DataSource",
)  # fmt: skip
_XARRAY_IO = (
    "open_dataset", "open_dataarray", "open_mfdataset", "open_zarr", "open_datatree",
    "open_groups", "load_dataset", "load_dataarray", "save_mfdataset",
)  # fmt: skip

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
s2 = df["a"].astype(str).str.upper(); rk = df.rank(); am = df.apply(lambda r: r.sum(), axis=1)
try:
    raise ValueError("warm-up")
except ValueError:
    pass
result = grid if len(df) < 0 else df * 2
"""


@dataclass(frozen=True)
class WorkerConfig:
    """Limits the executor passes to its worker on the command line (as JSON)."""

    request_fd: int
    response_fd: int
    memory_mb: int
    max_stdout_chars: int
    stdout_hard_cap: int
    max_result_bytes: int


class _Blocked(BaseException):
    """A runtime guard refused an operation; BaseException so `except Exception` misses it."""


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


def _refuse(what: str) -> Callable[..., NoReturn]:
    def refused(*_args: object, **_kwargs: object) -> NoReturn:
        raise _Blocked(f"{what} is disabled in the sandbox (no file or network access)")

    return refused


def _disable(owner: object, names: Iterable[str], prefix: str) -> None:
    for name in names:
        if hasattr(owner, name):
            setattr(owner, name, _refuse(f"{prefix}.{name}"))


def _load_modules() -> dict[str, ModuleType]:
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
    return {"pd": pd, "np": np, "xr": xr, "scipy": scipy, "pywt": pywt}


def _strip_capabilities(modules: dict[str, ModuleType]) -> None:
    """Swap the libraries' file and network entry points for refusing stubs."""
    _disable(pd, [n for n in dir(pd) if n.startswith("read_")], "pd")
    _disable(pd, ["ExcelWriter", "ExcelFile", "HDFStore", "to_pickle"], "pd")
    for cls in (pd.DataFrame, pd.Series, pd.Index, xr.DataArray, xr.Dataset):
        _disable(cls, _IO_METHODS, cls.__name__)
    _disable(np, _NUMPY_IO, "np")
    _disable(xr, _XARRAY_IO, "xr")
    pywt_data = getattr(modules["pywt"], "data", None)
    if pywt_data is not None:
        _disable(pywt_data, [n for n in dir(pywt_data) if not n.startswith("_")], "pywt.data")


def _vm_size_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _compact_fds(request_fd: int, response_fd: int) -> None:
    """Put the pipes on fds 3 and 4 and close every other fd above 2."""
    high_request = os.dup(request_fd)
    high_response = os.dup(response_fd)
    os.dup2(high_request, REQUEST_FD)
    os.dup2(high_response, RESPONSE_FD)
    os.closerange(RESPONSE_FD + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def _apply_rlimits(memory_mb: int) -> None:
    """Lower the kernel limits; a non-root process can never raise them again."""
    baseline = _vm_size_bytes()
    address_space = baseline + memory_mb * 1024 * 1024
    limits = {
        resource.RLIMIT_AS: address_space,
        resource.RLIMIT_NOFILE: RESPONSE_FD + 1,
        resource.RLIMIT_FSIZE: 0,
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_NPROC: 0,
    }
    for limit, value in limits.items():
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            # Some platforms refuse a limit (e.g. NPROC under some containers): keep the rest.
            continue


def _install_audit_hook(log: _GuardLog) -> None:
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


class _IntegrityCheck:
    """Detect code that replaced functions of the shared libraries for later jobs."""

    def __init__(self, owners: Iterable[object]) -> None:
        self.saved = [(owner, dict(vars(owner))) for owner in owners]

    def intact(self) -> bool:
        """True when no saved attribute was replaced or removed."""
        missing = object()
        for owner, saved in self.saved:
            current = vars(owner)
            for key, value in saved.items():
                if current.get(key, missing) is not value:
                    return False
        return True


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
        sources[str(entry["label"])] = wire.decode_value(
            entry["header"], blobs[position : position + count]
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
        return value
    raise _ResultError(
        f"`result` is a {type(value).__name__}; assign a pandas DataFrame or Series, an "
        "xarray DataArray, or a single number or string (wrap arrays in pd.Series or "
        "xr.DataArray with their time index)"
    )


def _encode_result(value: object, max_bytes: int) -> tuple[dict[str, Any], list[bytes]]:
    """Turn `result` into a response header and Arrow blobs, enforcing the size cap."""
    kind = "dataframe"
    if isinstance(value, pd.Series):
        value = value.to_frame(name=value.name if value.name is not None else "value")
        kind = "series"
    if isinstance(value, xr.Dataset):
        raise _ResultError("`result` is an xarray Dataset; assign one DataArray from it")
    if isinstance(value, pd.DataFrame | xr.DataArray):
        if isinstance(value, xr.DataArray):
            kind = "dataarray"
            estimate = int(value.nbytes)
        else:
            estimate = int(value.memory_usage(index=True, deep=True).sum())
        if estimate > max_bytes:
            raise _OutputTooLarge(f"the result holds about {estimate} bytes")
        try:
            value_header, blobs = wire.encode_value(value)
        except (ValueError, TypeError, NotImplementedError) as exc:
            raise _ResultError(f"`result` cannot be returned: {_exception_text(exc)}") from exc
        except Exception as exc:  # pyarrow raises its own hierarchy for odd dtypes
            raise _ResultError(f"`result` cannot be returned: {_exception_text(exc)}") from exc
        return {"kind": kind, "value_header": value_header}, blobs
    scalar = _scalar(value)
    if isinstance(scalar, str) and len(scalar) > max_bytes:
        raise _OutputTooLarge(f"the result string has {len(scalar)} characters")
    return {"kind": "scalar", "scalar": scalar}, []


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


class _Runner:
    """Runs jobs in the worker: decode sources, exec, capture output, encode result."""

    def __init__(self, config: WorkerConfig, modules: dict[str, ModuleType]) -> None:
        self.config = config
        self.modules = modules
        self.log = _GuardLog()
        self.safe_builtins = {
            name: getattr(builtins, name) for name in ALLOWED_BUILTINS if hasattr(builtins, name)
        }
        self.safe_builtins["type"] = _type_of
        self.integrity: _IntegrityCheck | None = None

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
            if self.log.refused:
                raise _Blocked(self.log.refused[0])
            result_header, blobs = _encode_result(value, self.config.max_result_bytes)
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
        response["retire"] = response.get("category") in {"memory", "forbidden"} or not (
            self.integrity is None or self.integrity.intact()
        )
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


def _warm_up(runner: _Runner) -> None:
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


def _run_warm_up_job(runner: _Runner) -> None:
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
    response, out_blobs = runner.handle(body)
    if response["status"] != "ok":
        raise RuntimeError(f"sandbox warm-up failed: {response.get('message')}")
    wire.decode_value(response["value_header"], out_blobs, check=True)
    for bad in ("result = undefined_name", "result = 1 +"):
        runner.handle(wire.pack_message({"code": bad, "sources": []}, []))
    json.dumps(response)


def _serve(runner: _Runner) -> None:
    while True:
        try:
            body = wire.read_frame_blocking(REQUEST_FD, _MAX_REQUEST_BYTES)
        except wire.FrameError:
            return  # the executor closed the pipe: shut down
        response, blobs = runner.handle(body)
        wire.write_frame_blocking(RESPONSE_FD, wire.pack_message(response, blobs))
        if response["retire"]:
            return


def main(argv: list[str]) -> None:
    """Worker entry point: `argv[0]` is the JSON form of a `WorkerConfig`."""
    config = WorkerConfig(**json.loads(argv[0]))
    try:
        modules = _load_modules()
        runner = _Runner(config, modules)
        _warm_up(runner)
        _strip_capabilities(modules)
        _compact_fds(config.request_fd, config.response_fd)
        _apply_rlimits(config.memory_mb)
        _install_audit_hook(runner.log)
        runner.integrity = _IntegrityCheck(
            [*modules.values(), pd.DataFrame, pd.Series, pd.Index, xr.DataArray, xr.Dataset]
        )
    except Exception as exc:  # report any start-up failure to the executor, then stop
        failure = {"status": "failed", "message": f"{type(exc).__name__}: {_clip(str(exc))}"}
        wire.write_frame_blocking(config.response_fd, wire.pack_message(failure, []))
        os._exit(1)
    ready = {"status": "ready", "pid": os.getpid()}
    wire.write_frame_blocking(RESPONSE_FD, wire.pack_message(ready, []))
    _serve(runner)
    os._exit(0)
