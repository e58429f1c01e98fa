"""In-process hardening of the libraries, applied once in the zygote before any fork.

Every child inherits these changes; generated code never runs in the zygote, so it
cannot undo them for later calls (each call runs in a fresh fork anyway):

* file and network entry points of pandas/numpy/xarray/pywt are replaced by stubs that
  refuse (also reached through method names given as strings);
* the string expression evaluators (`pd.eval`, `DataFrame.eval/query`, xarray's
  `eval/query`, pandas' internal `computation.eval.eval`) refuse, so no route, however
  indirect (`df.agg("eval", ...)`), reaches an evaluator that resolves names itself;
* pandas' string dispatch (`df.agg("name")`, `transform`, `apply`) resolves only
  reduction and transformation names (the AST layer's list and pandas' own kernels),
  never another method or accessor (`style`, `plot`, writers, the evaluators);
* `importlib.import_module`, wherever a loaded module holds it (library helpers such as
  xarray's `attempt_import(name)` import by a name the code chooses, and importing an
  already-loaded module raises no audit event), refuses the interpreter and operating
  system modules of the standard library (`builtins`, `sys`, `os`, `ctypes`, ...):
  only third-party packages and a few pure computing modules can be named;
* scipy.sparse matrices check their index arrays in full, and BSplines their knots,
  coefficients and degree, before any method uses them (out of range or
  inconsistent, set when built or written later, they made the compiled kernels
  read and write outside their buffers); so do FITPACK's functions given a
  `(t, c, k)` tuple (`splev`, `splder`, `splint`, ...), and `lu_solve` its pivots;
* classes of these libraries that answer attribute lookups from their data
  (`__getattr__`: DataFrame columns, Series index labels, xarray attrs and coords,
  scipy's OptimizeResult keys, ...) refuse dunder names, so a protocol lookup such as
  `__array_interface__` or `__array_struct__` made by `np.asarray` can never be answered
  by data the code chose (which would build an array over an arbitrary address).

Imports from xhelio only `sandbox.validate` (the reduction names it allows).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, NoReturn, cast

import numpy as np
import pandas as pd
import xarray as xr

from xhelio.sandbox.query import query
from xhelio.sandbox.validate import SAFE_STRING_FUNCTIONS

__all__ = ["Refused", "harden_libraries"]

_LIBRARIES = ("pandas", "numpy", "xarray", "scipy", "pywt", "pyarrow")

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
_EVALUATORS = frozenset({"eval", "query"})


class Refused(BaseException):
    """A hardened entry point was called; BaseException so `except Exception` misses it."""


def _refuse(what: str) -> Callable[..., NoReturn]:
    def refused(*_args: object, **_kwargs: object) -> NoReturn:
        raise Refused(f"{what} is disabled in the sandbox")

    return refused


def _disable(owner: object, names: Iterable[str], prefix: str) -> None:
    for name in names:
        if hasattr(owner, name):
            setattr(owner, name, _refuse(f"{prefix}.{name}"))


def _strip_io(pywt: Any) -> None:
    """Swap the libraries' file and network entry points for refusing stubs."""
    _disable(pd, [n for n in dir(pd) if n.startswith("read_")], "pd")
    _disable(pd, ["ExcelWriter", "ExcelFile", "HDFStore", "to_pickle"], "pd")
    for cls in (pd.DataFrame, pd.Series, pd.Index, xr.DataArray, xr.Dataset):
        _disable(cls, _IO_METHODS, cls.__name__)
    _disable(np, _NUMPY_IO, "np")
    _disable(xr, _XARRAY_IO, "xr")
    pywt_data = getattr(pywt, "data", None)
    if pywt_data is not None:
        _disable(pywt_data, [n for n in dir(pywt_data) if not n.startswith("_")], "pywt.data")


def _disable_evaluators() -> None:
    """Make every string expression evaluator refuse (pandas' and xarray's)."""
    _disable(pd, ["eval"], "pd")
    computation = sys.modules.get("pandas.core.computation.eval")
    if computation is not None:
        _disable(computation, ["eval"], "pandas.eval")
    for cls in (pd.DataFrame, pd.Series, xr.Dataset, xr.DataArray):
        _disable(cls, [n for n in _EVALUATORS if n in vars(cls)], cls.__name__)
    pd.DataFrame.query = _row_query  # pyright: ignore[reportAttributeAccessIssue]  # not pandas.eval


def _row_query(self: pd.DataFrame, expr: object, **options: object) -> pd.DataFrame:
    """`DataFrame.query` through `sandbox.query` (see there)."""
    return query(self, expr, **options)


def _dispatchable_names() -> frozenset[str]:
    """Method names pandas' string dispatch may resolve: reductions and transforms only."""
    names = set(SAFE_STRING_FUNCTIONS)
    kernels = sys.modules.get("pandas.core.groupby.base")
    for table in ("reduction_kernels", "transformation_kernels"):
        names.update(cast("frozenset[str]", getattr(kernels, table, frozenset[str]())))
    return frozenset(names) - _EVALUATORS


def _guard_string_dispatch() -> None:
    """Pandas' `agg("name")` path: only reductions and transforms are resolved by name.

    `getattr(obj, name)` on a DataFrame reaches every method and accessor (`style`,
    `plot`, writers), and the AST layer cannot see a name that arrives through
    `pipe(pd.DataFrame.agg, name)` with the AST layer off, so the dispatcher itself
    resolves only the reduction and transformation kernels pandas lists.
    """
    allowed = _dispatchable_names()
    apply_module = sys.modules.get("pandas.core.apply")
    if apply_module is None:
        return

    def refuse_unless_allowed(func: object) -> None:
        if not isinstance(func, str) or func not in allowed:
            raise Refused(f"the method name {str(func)[:80]!r} given as a string is refused")

    def wrap_apply_str(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
        # `apply_str` reads the attribute (a property such as `style` runs) before
        # `_apply_str` is reached: check the name first.
        @functools.wraps(original)
        def apply_str(self: Any) -> Any:
            refuse_unless_allowed(self.func)
            return original(self)

        return apply_str

    def wrap_private(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def checked(self: object, obj: object, func: str, *args: object, **kwargs: object) -> Any:
            refuse_unless_allowed(func)
            return original(self, obj, func, *args, **kwargs)

        return checked

    for member in list(vars(apply_module).values()):
        if not isinstance(member, type) or member.__module__ != apply_module.__name__:
            continue
        namespace = vars(member)
        if "apply_str" in namespace:
            member.apply_str = wrap_apply_str(namespace["apply_str"])  # type: ignore[attr-defined]
        if "_apply_str" in namespace:
            member._apply_str = wrap_private(namespace["_apply_str"])  # type: ignore[attr-defined]
    _guard_groupby_dispatch(refuse_unless_allowed)


def _guard_groupby_dispatch(refuse_unless_allowed: Callable[[object], None]) -> None:
    """GroupBy's own `agg`/`apply`/`transform` resolve a string with `getattr(self, name)`."""
    groupby = sys.modules.get("pandas.core.groupby.groupby")
    generic = sys.modules.get("pandas.core.groupby.generic")
    classes = [
        getattr(groupby, "GroupBy", None),
        getattr(generic, "SeriesGroupBy", None),
        getattr(generic, "DataFrameGroupBy", None),
    ]

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def checked(self: object, *args: object, **kwargs: object) -> Any:
            func = args[0] if args else kwargs.get("func")
            if isinstance(func, str):
                refuse_unless_allowed(func)
            return original(self, *args, **kwargs)

        return checked

    for cls in classes:
        if not isinstance(cls, type):
            continue
        for name in ("aggregate", "agg", "apply", "transform"):
            method = vars(cls).get(name)
            if callable(method):
                setattr(cls, name, wrap(method))


# Standard-library modules a library may import by name at run time: pure computation.
# Every other standard-library module (builtins, sys, os, ctypes, importlib, io, gc,
# subprocess, ...) hands out the interpreter or the operating system.
_STDLIB_BY_NAME = frozenset(
    {
        "math", "cmath", "datetime", "decimal", "fractions", "numbers", "statistics", "re",
        "string", "textwrap", "itertools", "collections", "bisect", "heapq", "zoneinfo",
        "calendar", "json", "struct", "array", "difflib", "unicodedata",
    }
)  # fmt: skip


def _importable_by_name(name: str) -> bool:
    root = name.partition(".")[0]
    return root not in sys.stdlib_module_names or root in _STDLIB_BY_NAME


def _guard_import_by_name() -> int:
    """Replace `importlib.import_module` in every loaded module that holds it.

    Returns how many references were replaced.
    """
    original = importlib.import_module

    @functools.wraps(original)
    def import_module(name: str, package: str | None = None) -> ModuleType:
        try:
            absolute = importlib.util.resolve_name(name, package)
        except (ImportError, ValueError, TypeError, AttributeError):
            absolute = ""
        if not absolute or not _importable_by_name(absolute):
            raise ImportError(f"importing {str(name)[:80]!r} by name is refused in the sandbox")
        return original(name, package)

    return _replace_everywhere({id(original): import_module})


def _replace_everywhere(replacements: dict[int, Callable[..., Any]]) -> int:
    """Swap functions (by identity) in every loaded module that holds a reference.

    Returns how many references were replaced.
    """
    count = 0
    modules = cast("dict[str, ModuleType | None]", sys.modules)
    for module in list(modules.values()):
        try:
            namespace = vars(module)
        except TypeError:
            continue
        for key, value in list(namespace.items()):
            replacement = replacements.get(id(value))
            if replacement is not None:
                namespace[key] = replacement
                count += 1
    return count


# Methods of checked classes (sparse matrices, splines) that run without a check:
# construction (the object is not complete yet), the checks, attribute plumbing.
_UNCHECKED_METHODS = frozenset(
    {
        "__init__", "check_format", "_check", "__getattr__", "__getattribute__",
        "__setattr__", "__delattr__", "__del__", "__repr__", "__str__", "__len__",
    }
)  # fmt: skip


def _sparse_classes() -> list[type]:
    base = getattr(sys.modules.get("scipy.sparse._base"), "_spbase", None)
    if not isinstance(base, type):
        return []
    found: dict[int, type] = {}
    modules = cast("dict[str, ModuleType | None]", sys.modules)
    for name, module in list(modules.items()):
        if module is None or not name.startswith("scipy.sparse._"):
            continue
        for member in list(vars(module).values()):
            if isinstance(member, type) and issubclass(member, base):
                for cls in member.__mro__:
                    if cls.__module__.startswith("scipy.sparse."):
                        found[id(cls)] = cls
    return list(found.values())


def _guard_sparse_indices() -> int:
    """scipy.sparse: index arrays are checked in full before any method uses them.

    A compressed (CSR/CSC/BSR) or COO matrix keeps its index arrays as plain, writable
    attributes, checked only partly when built: `csr_matrix((data, [10**9], [0, 1]))`,
    or `m.indices[0] = 10**9` later, makes the compiled kernels read and write outside
    their buffers (raw memory, like the NumPy constructors the AST layer refuses). Every
    method now first runs scipy's own full check (`check_format(full_check=True)`, COO's
    `_check`), once per outermost call. Returns how many methods were wrapped.
    """

    def check(obj: object) -> None:
        fields = getattr(obj, "__dict__", {})
        if "indptr" in fields and "indices" in fields:
            cast(Any, obj).check_format(full_check=True)
        elif "coords" in fields or "row" in fields:
            cast(Any, obj)._check()

    return _check_before_methods(_sparse_classes(), check)


def _check_spline(spline: Any) -> None:
    """Re-run the BSpline constructor's checks on the knots, coefficients and degree held."""
    fields = getattr(spline, "__dict__", {})
    if "k" in fields:  # complete (`t` and `c` may be properties over private fields)
        type(spline)(spline.t, spline.c, spline.k, extrapolate=spline.extrapolate, axis=0)


def _guard_splines() -> int:
    """scipy.interpolate.BSpline: knots, coefficients and degree checked before each use.

    `t`, `c` and `k` are plain attributes checked only by the constructor (and not at
    all by `construct_fast`, whose result is checked at its first use); written later,
    the compiled evaluator reads outside its buffers (a value from elsewhere in memory
    came back; a large `k` crashed).
    """
    module = sys.modules.get("scipy.interpolate._bsplines")
    spline = getattr(module, "BSpline", None)
    if not isinstance(spline, type):
        return 0
    return _check_before_methods([spline], _check_spline)


# FITPACK functions that take a (t, c, k) tuple, and where the tuple is in the arguments.
_TCK_FUNCTIONS = {
    "splev": 1, "splder": 0, "splantider": 0, "splint": 2, "sproot": 0, "spalde": 1,
    "insert": 1,
}  # fmt: skip


def _check_tck(tck: object) -> None:
    """A (t, c, k) tuple must pass BSpline's checks (each coefficient array, if several)."""
    if not isinstance(tck, tuple | list) or len(tck) != 3:
        return  # a BSpline object: its own methods are checked (`_guard_splines`)
    spline = getattr(sys.modules.get("scipy.interpolate._bsplines"), "BSpline", None)
    if spline is None:
        return
    knots, coefficients, degree = cast("tuple[Any, Any, Any]", tuple(tck))
    parts = coefficients if isinstance(coefficients, list | tuple) else [coefficients]
    for part in list(parts):
        spline(np.asarray(knots, dtype=float), np.asarray(part), degree, axis=0)


def _guard_tck_functions() -> int:
    """FITPACK's tuple form: `splev(x, (t, c, k))` trusts the tuple (a bad `k` crashed).

    Each function is replaced wherever a loaded module holds it. Returns how many
    references were replaced.
    """
    module = sys.modules.get("scipy.interpolate._fitpack_py")
    if module is None:
        return 0
    replacements: dict[int, Callable[..., Any]] = {}
    for name, position in _TCK_FUNCTIONS.items():
        original = getattr(module, name, None)
        if not callable(original):
            continue

        def checked(
            *args: object,
            _original: Callable[..., Any] = original,
            _position: int = position,
            **kwargs: object,
        ) -> Any:
            _check_tck(args[_position] if len(args) > _position else kwargs.get("tck"))
            return _original(*args, **kwargs)

        replacements[id(original)] = functools.wraps(original)(checked)
    return _replace_everywhere(replacements)


def _guard_lu_pivots() -> int:
    """`scipy.linalg.lu_solve((lu, piv), b)` hands `piv` to LAPACK as row numbers.

    Pivots out of range (given, or written into `lu_factor`'s output) made `getrs`
    read and write outside the matrix. Returns how many references were replaced.
    """
    module = sys.modules.get("scipy.linalg._decomp_lu")
    original = getattr(module, "lu_solve", None)
    if not callable(original):
        return 0

    @functools.wraps(original)
    def lu_solve(lu_and_piv: Any, *args: Any, **kwargs: Any) -> Any:
        lu, piv = lu_and_piv
        rows = np.shape(lu)[0] if np.ndim(lu) == 2 else -1
        pivots = np.asarray(piv)
        if (
            pivots.ndim != 1
            or pivots.dtype.kind not in "iu"
            or len(pivots) != rows
            or (rows > 0 and (pivots.min() < 0 or pivots.max() >= rows))
        ):
            raise ValueError("lu_solve: the pivots must be the row numbers lu_factor returned")
        return original(lu_and_piv, *args, **kwargs)

    return _replace_everywhere({id(original): lu_solve})


def _check_before_methods(classes: list[type], check: Callable[[object], None]) -> int:
    """Run `check(self)` before every method of `classes`, once per outermost call.

    Construction runs unchecked (the object is not complete yet), and so does what the
    check itself calls. Returns how many methods were wrapped.
    """
    state = threading.local()

    def wrap(original: Callable[..., Any], constructing: bool) -> Callable[..., Any]:
        @functools.wraps(original)
        def checked(self: object, *args: object, **kwargs: object) -> Any:
            if getattr(state, "busy", False):
                return original(self, *args, **kwargs)
            state.busy = True
            try:
                if not constructing:
                    check(self)
                return original(self, *args, **kwargs)
            finally:
                state.busy = False

        return checked

    count = 0
    for cls in classes:
        for name, value in list(vars(cls).items()):
            if not isinstance(value, types.FunctionType):
                continue
            if name in _UNCHECKED_METHODS and name != "__init__":
                continue
            setattr(cls, name, wrap(value, constructing=name == "__init__"))
            count += 1
    return count


def _no_dunder_getattr(original: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    @functools.wraps(original)
    def __getattr__(self: Any, name: str) -> Any:  # it replaces this dunder
        if name.startswith("__") and name.endswith("__"):
            # Protocol lookups (__array_interface__, ...) are never answered by data.
            raise AttributeError(name)
        return original(self, name)

    return __getattr__


def _classes_with_getattr() -> list[type]:
    seen: dict[int, type] = {}
    modules = cast("dict[str, ModuleType | None]", sys.modules)
    for name, module in list(modules.items()):
        if module is None or name.split(".")[0] not in _LIBRARIES:
            continue
        try:
            members = list(vars(module).values())
        except TypeError:
            continue
        for member in members:
            if isinstance(member, type) and member.__module__.split(".")[0] in _LIBRARIES:
                for cls in member.__mro__:
                    if "__getattr__" in vars(cls) and cls is not object:
                        seen[id(cls)] = cls
    return list(seen.values())


def _harden_getattr() -> int:
    """Wrap every library class's `__getattr__`; returns how many were wrapped."""
    count = 0
    for cls in _classes_with_getattr():
        original = vars(cls)["__getattr__"]
        if not callable(original):
            continue
        try:
            cls.__getattr__ = _no_dunder_getattr(original)  # type: ignore[method-assign]
        except (TypeError, AttributeError):
            continue  # a C extension type: its lookups are not served from data
        count += 1
    return count


def _writable(value: object) -> object:
    if isinstance(value, np.ndarray) and not value.flags.writeable:
        return np.array(value)
    return value


# Compiled kernels whose buffers are not declared const: they refuse read-only arrays.
_NON_CONST_KERNELS = (
    "pywt._extensions._dwt", "pywt._extensions._swt", "pywt._extensions._cwt",
    "scipy.spatial.transform._rotation_cy",
)  # fmt: skip


def _writable_kernel_inputs() -> int:
    """Compiled kernels that refuse read-only buffers get writable copies.

    PyWavelets' and scipy Rotation's Cython kernels take non-const buffers and refuse
    read-only ones ("buffer source array is read-only"), but pandas' copy-on-write
    hands out only read-only views, so `pywt.wavedec(df['bx'], 'db4')` or
    `r.apply(df.to_numpy())` failed on every column. Read-only arrays given to a
    function of _NON_CONST_KERNELS (whatever public function or class calls it) are
    copied first. Returns how many references were replaced.
    """

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def call(*args: Any, **kwargs: Any) -> Any:
            return original(
                *(_writable(a) for a in args), **{k: _writable(v) for k, v in kwargs.items()}
            )

        return call

    replacements: dict[int, Callable[..., Any]] = {}
    for name in _NON_CONST_KERNELS:
        module = sys.modules.get(name)
        for member_name in dir(module) if module is not None else []:
            member = getattr(module, member_name)
            if (
                not member_name.startswith("_")
                and callable(member)
                and not isinstance(member, type)
            ):
                replacements[id(member)] = wrap(member)
    return _replace_everywhere(replacements)


def _guard_frombuffer() -> int:
    """`np.frombuffer` refuses buffers of Python objects.

    An object array exports its pointers as a buffer: a writable uint8 view of them
    forges object pointers (raw memory), with or without `.data`.
    """
    original = np.frombuffer

    @functools.wraps(original)
    def frombuffer(buffer: Any, *args: Any, **kwargs: Any) -> Any:
        owner = buffer.obj if isinstance(buffer, memoryview) else buffer
        if isinstance(owner, np.ndarray) and owner.dtype.hasobject:
            raise ValueError(
                "np.frombuffer: the buffer holds Python objects, not numbers; use "
                "np.asarray(values, dtype=float)"
            )
        return original(buffer, *args, **kwargs)

    return _replace_everywhere({id(original): frombuffer})


def _issubclass_of_loaded(cls: type, modname: str, clsname: str) -> bool:
    module = sys.modules.get(modname)
    return module is not None and issubclass(cls, getattr(module, clsname))


def _tolerate_absent_modules() -> int:
    """Let scipy's array-API helper take absent modules (cupy, torch, jax, ...) as absent.

    The warm-up marks optional modules found missing as absent (None in `sys.modules`,
    so imports fail fast before the guard), which that helper took for a module:
    every call through `array_namespace` (`resample_poly`, `ks_2samp`, ...) failed.
    """
    module = sys.modules.get("scipy._lib.array_api_compat.common._helpers")
    if module is None or not hasattr(module, "_issubclass_fast"):
        return 0
    vars(module)["_issubclass_fast"] = _issubclass_of_loaded
    return 1


def harden_libraries(pywt: Any) -> int:
    """Apply every hardening step; returns the number of `__getattr__` methods wrapped."""
    _strip_io(pywt)
    _disable_evaluators()
    _guard_string_dispatch()
    _guard_import_by_name()
    _guard_sparse_indices()
    _guard_splines()
    _guard_tck_functions()
    _guard_lu_pivots()
    _guard_frombuffer()
    _writable_kernel_inputs()
    _tolerate_absent_modules()
    return _harden_getattr()
