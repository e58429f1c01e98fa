"""Static validation of generated code against an allowlist, before anything runs.

This is the first containment layer of the sandbox (see docs/sandbox.md): the code is
parsed (never compiled or run here) and every node must be of an allowed type, every
name must be an allowed builtin, a provided variable or one the code itself assigns, and
no attribute may reach interpreter internals, module internals, raw memory (NumPy
buffer constructors and memory views) or file/network I/O.
A violation raises `SandboxError(category="validation")` naming the rule and the line.

The runtime layers in `worker.py` do not trust this module; this module does not trust
them either. Imports nothing from xhelio but `errors`.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterable
from typing import cast

from xhelio.errors import SandboxError

__all__ = [
    "ALLOWED_BUILTINS",
    "PROVIDED_NAMES",
    "SAFE_STRING_FUNCTIONS",
    "assigned_names",
    "validate_code",
]

MAX_CODE_CHARS = 100_000
MAX_AST_NODES = 20_000

PROVIDED_NAMES = frozenset(
    {"df", "sources", "pd", "np", "xr", "scipy", "pywt", "analysis", "result"}
)
MODULE_NAMES = frozenset({"pd", "np", "xr", "scipy", "pywt", "analysis"})

ALLOWED_BUILTINS = frozenset(
    {
        "abs", "all", "any", "bool", "callable", "chr", "complex", "dict", "divmod",
        "enumerate", "filter", "float", "format", "frozenset", "int", "isinstance", "iter",
        "len", "list", "map", "max", "min", "next", "ord", "pow", "print", "range", "repr",
        "reversed", "round", "set", "slice", "sorted", "str", "sum", "tuple", "type", "zip",
        "True", "False", "None", "Ellipsis", "NotImplemented",
        "ArithmeticError", "AssertionError", "AttributeError", "Exception",
        "FloatingPointError", "IndexError", "KeyError", "LookupError", "NotImplementedError",
        "OverflowError", "RuntimeError", "StopIteration", "TypeError", "ValueError",
        "ZeroDivisionError", "Warning", "RuntimeWarning", "UserWarning",
    }
)  # fmt: skip

# Builtins that are never available, with the reason given back to the model.
_FORBIDDEN_NAMES: dict[str, str] = {
    "exec": "dynamic code execution is not allowed",
    "eval": "dynamic code execution is not allowed",
    "compile": "dynamic code execution is not allowed",
    "open": "the sandbox has no file access",
    "getattr": "dynamic attribute access is not allowed; use `obj.name`",
    "setattr": "dynamic attribute access is not allowed",
    "delattr": "dynamic attribute access is not allowed",
    "hasattr": "dynamic attribute access is not allowed",
    "globals": "interpreter introspection is not allowed",
    "locals": "interpreter introspection is not allowed",
    "vars": "interpreter introspection is not allowed",
    "dir": "interpreter introspection is not allowed",
    "input": "the sandbox has no interactive input",
    "breakpoint": "debuggers are not allowed",
    "help": "interactive help is not available; use search_function_docs",
    "memoryview": "raw memory access is not allowed",
    "object": "the base object type is not available",
    "super": "classes are not allowed",
    "classmethod": "classes are not allowed",
    "staticmethod": "classes are not allowed",
    "property": "classes are not allowed",
    "exit": "the code cannot stop the worker",
    "quit": "the code cannot stop the worker",
    "BaseException": "catch `Exception` or a specific error instead",
    "SystemExit": "the code cannot stop the worker",
    "KeyboardInterrupt": "catch `Exception` or a specific error instead",
    "GeneratorExit": "catch `Exception` or a specific error instead",
}

# Attribute names refused on any object: module internals, interpreter internals, I/O.
_FORBIDDEN_ATTRIBUTES = frozenset(
    {
        # modules that reach the operating system or the interpreter
        "os", "sys", "subprocess", "builtins", "importlib", "socket", "shutil", "pathlib",
        "Path", "glob", "tempfile", "ctypes", "ctypeslib", "f2py", "distutils", "pickle",
        "cPickle", "marshal", "shelve", "urllib", "http", "ftplib", "requests", "pooch",
        "multiprocessing", "threading", "resource", "gc", "inspect", "mmap",
        "fcntl", "pty", "platform", "linecache", "traceback", "weakref", "atexit",
        "faulthandler", "sqlite3", "webbrowser", "zipfile", "tarfile", "gzip", "bz2", "lzma",
        # library sub-packages that hold I/O, downloads, internals or global registration
        "io", "lib", "core", "api", "compat", "testing", "tutorial", "datasets", "misc",
        "backends", "LowLevelCallable", "extensions", "plotting", "plot", "conventions",
        # raw BLAS/LAPACK and Cython kernels: sizes, pivots and strides unchecked
        "lapack", "blas", "get_lapack_funcs", "get_blas_funcs", "cython_blas",
        "cython_lapack", "cython_special", "find_best_blas_type",
        # NumPy's compiled internals, also where a module re-exports them under an
        # alias (`np.matrixlib.defmatrix.N.multiarray.scalar` unpickles raw bytes)
        "multiarray", "umath", "overrides",
        # file and network I/O functions
        "load", "loads", "save", "savez", "savez_compressed", "savetxt", "loadtxt",
        "genfromtxt", "fromfile", "tofile", "memmap", "fromregex", "DataSource", "dump",
        "dumps", "to_csv", "to_parquet", "to_pickle", "to_hdf", "to_sql", "to_json",
        "to_excel", "to_feather", "to_stata", "to_netcdf", "to_zarr", "to_clipboard",
        "to_html", "to_latex", "to_markdown", "to_xml", "to_orc", "to_gbq", "to_iris",
        "HDFStore", "ExcelWriter", "ExcelFile", "open_dataset", "open_mfdataset",
        "open_dataarray", "open_zarr", "open_datatree", "load_dataset", "load_dataarray",
        "save_mfdataset", "style", "show_versions", "fromtextfile", "openfile", "rptfile",
        "errfile",
        # standard-library helpers re-exported by library modules: dynamic attribute
        # access by computed name (attrgetter, update_wrapper), imports by name, class
        # factories, process-wide state
        "operator", "attrgetter", "methodcaller", "functools", "update_wrapper", "wraps",
        "import_module", "entry_points", "EntryPoint", "getfullargspec", "contextlib",
        "abc", "ABCMeta", "dataclasses", "make_dataclass", "enum", "typing", "types",
        "warnings", "locale", "codecs", "set_options", "set_global_backend", "set_backend",
        # string-evaluated expressions
        "eval", "format_map",
        # frames, generators, code objects, tracebacks
        "f_globals", "f_locals", "f_back", "f_builtins", "f_code", "f_trace", "gi_frame",
        "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "ag_frame", "ag_code",
        "tb_frame", "tb_next", "co_code", "co_consts", "co_names", "func_globals",
        "func_code", "mro", "with_traceback",
    }
)  # fmt: skip
_FORBIDDEN_ATTRIBUTE_PREFIXES = ("read_", "open_", "load_", "save_", "register_")
# Library helpers that import a module by a name the code chooses (xarray's
# `attempt_import`, pandas' `import_optional_dependency`, `import_module`, ...) hand out
# `builtins`, `sys` or `os`: any attribute naming an import is refused.
_FORBIDDEN_ATTRIBUTE_PARTS = ("import",)
# Builtins refused as names are refused as attributes too: a module object obtained
# some other way (`somemodule.builtins`-like re-exports) must not give them back.
_FORBIDDEN_BUILTIN_ATTRIBUTES = frozenset(
    {
        "exec", "compile", "getattr", "setattr", "delattr", "hasattr", "globals", "locals",
        "vars", "memoryview", "breakpoint", "super", "classmethod", "staticmethod", "object",
    }
)  # fmt: skip

# Sub-modules refused only right after a module name (elsewhere the word is ordinary).
_FORBIDDEN_MODULE_MEMBERS: dict[str, frozenset[str]] = {
    "pywt": frozenset({"data"}),
    "pd": frozenset({"util", "options", "set_option", "reset_option", "option_context"}),
    "np": frozenset({"set_printoptions", "setbufsize"}),
}

# NumPy features that hand out raw memory: object pointers forged from bytes
# (`np.void(b"...", dtype=[("a", "O")])`, `np.ndarray(..., dtype=object, buffer=...)`),
# reads and writes before a buffer (`offset=-4096`), or a writable byte view of an object
# array's pointers (`arr.data.cast("B")`). Refused by name; `np.ndarray` stays usable in
# isinstance()/issubclass().
_RAW_MEMORY_ATTRIBUTES: dict[str, str] = {
    "cast": "casting raw memory views is not allowed",
    "void": "raw record scalars are not allowed",
    "rec": "record arrays over raw buffers are not allowed; use a DataFrame",
    "recarray": "record arrays over raw buffers are not allowed; use a DataFrame",
    "chararray": "character arrays over raw buffers are not allowed; use a Series of str",
    "baseclass": "the array class is not available; create arrays with np.array or np.zeros",
}
_CLASS_CHECK_ONLY = frozenset({"ndarray"})
# Members refused right after a given attribute: scipy.fftpack.convolve holds the raw
# convolution kernels (sizes unchecked); scipy.signal.convolve is ordinary.
_FORBIDDEN_AFTER: dict[str, frozenset[str]] = {"fftpack": frozenset({"convolve"})}

# Public functions reached through a refused sub-package, allowed when written out in
# full from the module name (an alias of the sub-package stays refused).
_ALLOWED_PATH = re.compile(
    r"np\.lib\.stride_tricks\.sliding_window_view"
    r"|pd\.api\.types\.(?:is_\w+|infer_dtype|pandas_dtype)"
)
# Sub-modules whose name is also a dispatcher's (`.transform`): not a method there.
_MODULE_PATHS = frozenset({"scipy.spatial.transform"})
# What to write instead of a refused attribute.
_ATTRIBUTE_ADVICE: dict[str, str] = {
    "eval": "write the expression directly: `df['bx'] + df['by']`",
    "lib": "use the function's np.* name (np.pad, np.histogram, ...); sliding windows: "
    "`np.lib.stride_tricks.sliding_window_view(x, n)` written out in full",
    "api": "dtype checks: `pd.api.types.is_numeric_dtype(s)` (any pd.api.types.is_* "
    "written out in full)",
    "core": "use the public name (np.*, pd.*, xr.*, scipy.*)",
    "io": "the data are already loaded: use df and sources['label']",
    "plot": "return the data through `result`; figures are made by the plotting tools",
    "style": "return the data through `result`; the session formats tables",
    "format_map": "use an f-string: f'{value:.2f}'",
    "set_options": "format values explicitly (round(), f-strings) instead of global options",
}
_IO_ADVICE = (
    "the data are already loaded (df, sources['label']) and leave through `result`; "
    "the session stores, saves and exports them"
)
_DEFAULT_ADVICE = "use the public pd/np/xr/scipy/pywt functions on df and sources"

# Calls whose positional arguments past this count name a file: `df.to_string(path)`
# writes to `path`; scipy.odr's errfile/rptfile follow its first 8/13 arguments.
_MAX_POSITIONAL_ARGS = {"to_string": 0, "ODR": 8, "odr": 13, "pivot_table": 3, "crosstab": 3}
_FILE_KEYWORDS = frozenset({"buf", "path_or_buf", "rptfile", "errfile"})

# pandas methods that resolve a string to a method of the object (`getattr`): the
# function they are given must be visibly a function or a listed reduction name.
_STRING_DISPATCH_METHODS = frozenset({"apply", "agg", "aggregate", "transform"})
# Methods that call what they are given but never resolve strings: only literal or
# computed strings are refused there (a Name may hold a mapping, e.g. `s.map(table)`).
_CALLING_METHODS = frozenset({"map", "applymap", "pipe", "reduce"})
_FUNCTION_KEYWORDS = frozenset({"func", "arg", "aggfunc"})
_DISPATCH_ADVICE = (
    "the function given to {what} must be a lambda, a function you defined, a builtin, "
    "a library function such as np.mean, or a literal name of a listed reduction "
    "('mean', 'sum', ...); a name held in a variable or computed is not allowed "
    "(for a scipy Rotation pass the array itself: `r.apply(df.to_numpy())`)"
)
SAFE_STRING_FUNCTIONS = frozenset(
    {
        "sum", "mean", "median", "std", "var", "min", "max", "count", "first", "last",
        "prod", "size", "nunique", "cumsum", "cumprod", "cummax", "cummin", "diff", "abs",
        "idxmin", "idxmax", "sem", "skew", "kurt", "quantile", "rank", "ohlc", "any",
        "all", "shift", "pct_change", "bfill", "ffill", "round", "mode", "nth", "unique",
        "sqrt", "log", "log10", "exp", "square", "describe",
    }
)  # fmt: skip

_ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Module, ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.While,
    ast.If, ast.Pass, ast.Break, ast.Continue, ast.FunctionDef, ast.Return, ast.Raise,
    ast.Try, ast.ExceptHandler, ast.Assert, ast.Delete, ast.BoolOp, ast.NamedExpr,
    ast.BinOp, ast.UnaryOp, ast.Lambda, ast.IfExp, ast.Dict, ast.Set, ast.ListComp,
    ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.comprehension, ast.Compare, ast.Call,
    ast.keyword, ast.FormattedValue, ast.JoinedStr, ast.Constant, ast.Attribute,
    ast.Subscript, ast.Starred, ast.Name, ast.List, ast.Tuple, ast.Slice, ast.arguments,
    ast.arg, ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop,
    ast.With, ast.withitem,
)  # fmt: skip

_NODE_ADVICE: dict[type[ast.AST], str] = {
    ast.Import: "imports are not allowed; pd, np, xr, scipy (all sub-packages) and pywt "
    "are already available, e.g. `scipy.signal.butter`",
    ast.ImportFrom: "imports are not allowed; pd, np, xr, scipy (all sub-packages) and pywt "
    "are already available, e.g. `scipy.signal.butter`",
    ast.ClassDef: "class definitions are not allowed; use functions",
    ast.Global: "`global` is not allowed",
    ast.Nonlocal: "`nonlocal` is not allowed",
    ast.Yield: "generators (`yield`) are not allowed; build a list",
    ast.YieldFrom: "generators (`yield from`) are not allowed; build a list",
    ast.Await: "async code is not allowed",
    ast.AsyncFunctionDef: "async code is not allowed",
    ast.AsyncFor: "async code is not allowed",
    ast.AsyncWith: "async code is not allowed",
    ast.Match: "`match` statements are not allowed; use if/elif",
}


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _fail(node: ast.AST, rule: str) -> SandboxError:
    line = getattr(node, "lineno", None)
    where = f"line {line}: " if line is not None else ""
    return SandboxError(
        f"Code rejected by the sandbox ({where}{rule}). Rewrite the code without it.",
        "validation",
    )


def assigned_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """Every name the code binds, and those bound other than by `def` (may hold data)."""
    names: set[str] = set()
    data: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            data.add(node.id)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            data.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            data.add(node.name)
    return names | data, data


def _literal_templates(tree: ast.AST) -> dict[str, list[str]]:
    """Names bound only by `name = "literal"` (every binding), with their literals."""
    literal_targets: dict[int, str] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            literal_targets[id(node.targets[0])] = node.value.value
    templates: dict[str, list[str]] = {}
    other: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            if id(node) in literal_targets:
                templates.setdefault(node.id, []).append(literal_targets[id(node)])
            else:
                other.add(node.id)
        elif isinstance(node, ast.arg | ast.FunctionDef):
            other.add(node.arg if isinstance(node, ast.arg) else node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            other.add(node.name)
    return {name: values for name, values in templates.items() if name not in other}


def _dotted_path(node: ast.expr) -> str | None:
    """`np.lib.stride_tricks` for a chain of attributes on a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _is_allowed_context(node: ast.expr) -> bool:
    """`np.errstate(...)`: the only context manager generated code needs."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "errstate"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "np"
    )


def _attribute_advice(attr: str) -> str:
    if attr in _ATTRIBUTE_ADVICE:
        return _ATTRIBUTE_ADVICE[attr]
    if attr.startswith(("read_", "open_", "load", "save", "to_")) or attr in {
        "dump", "dumps", "tofile", "fromfile", "memmap", "HDFStore", "DataSource",
    }:  # fmt: skip
        return _IO_ADVICE
    if "import" in attr.lower():
        return "pd, np, xr, scipy (all sub-packages) and pywt are already loaded"
    return _DEFAULT_ADVICE


def _module_root(node: ast.expr) -> str | None:
    """Name at the root of an attribute chain such as `pd.io.common`, if any."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _check_format_string(node: ast.AST, template: str) -> None:
    """Refuse `str.format` templates whose fields reach attributes or items."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise _fail(node, f"malformed format string: {exc}") from exc
    for _literal, field, spec, _conversion in parsed:
        if field and not (field.isdigit() or field.isidentifier()):
            raise _fail(
                node,
                f"format field '{{{field}}}' reaches into an object; use an f-string "
                "with a plain expression",
            )
        if spec and "{" in spec:
            _check_format_string(node, spec)


class _Checker(ast.NodeVisitor):
    """Walk the tree once, raising on the first rule broken."""

    def __init__(
        self, bound_names: set[str], data_names: set[str], templates: dict[str, list[str]]
    ) -> None:
        self.known_names = bound_names | PROVIDED_NAMES | ALLOWED_BUILTINS
        # Names only ever bound to literal strings: usable as `.format` templates.
        self.templates = templates
        # Attribute nodes inside an allowed full path (`np.lib.stride_tricks....`).
        self.allowed_path_nodes: set[int] = set()
        # Names bound other than by `def` (assignments, loops, arguments): may hold data.
        self.data_names = data_names
        # Attribute nodes used as the class argument of isinstance()/issubclass().
        self.class_checks: set[int] = set()
        # Attribute nodes that are the function of a call (`df.agg(...)`).
        self.called: set[int] = set()

    def generic_visit(self, node: ast.AST) -> None:
        if not isinstance(node, _ALLOWED_NODES):
            advice = _NODE_ADVICE.get(type(node))
            raise _fail(node, advice or f"`{type(node).__name__}` syntax is not allowed")
        super().generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if _is_dunder(name):
            raise _fail(node, f"name '{name}': double-underscore names are not allowed")
        if name in _FORBIDDEN_NAMES and isinstance(node.ctx, ast.Load):
            raise _fail(node, f"'{name}' is forbidden: {_FORBIDDEN_NAMES[name]}")
        if isinstance(node.ctx, ast.Load) and name not in self.known_names:
            raise _fail(
                node,
                f"name '{name}' is not available; the code sees df, sources, pd, np, xr, "
                "scipy, pywt, its own variables and common builtins",
            )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if attr.startswith("_"):
            raise _fail(node, f"attribute '.{attr}': names starting with '_' are private")
        path = _dotted_path(node)
        if path and _ALLOWED_PATH.fullmatch(path) and _module_root(node) not in self.data_names:
            self.allowed_path_nodes.update(id(n) for n in ast.walk(node.value))
        if id(node) not in self.allowed_path_nodes and (
            attr in _FORBIDDEN_ATTRIBUTES
            or attr in _FORBIDDEN_BUILTIN_ATTRIBUTES
            or attr.startswith(_FORBIDDEN_ATTRIBUTE_PREFIXES)
            or any(part in attr.lower() for part in _FORBIDDEN_ATTRIBUTE_PARTS)
        ):
            raise _fail(
                node,
                f"attribute '.{attr}' is forbidden: it reaches files, the network, "
                f"string-evaluated code or library internals; {_attribute_advice(attr)}",
            )
        before = node.value.attr if isinstance(node.value, ast.Attribute) else ""
        if attr in _FORBIDDEN_AFTER.get(before, frozenset[str]()):
            raise _fail(
                node,
                f"'.{before}.{attr}' holds raw kernels; use scipy.signal.fftconvolve or scipy.fft",
            )
        if attr == "format":
            self._check_format_receiver(node)
        if (
            attr in _STRING_DISPATCH_METHODS
            and id(node) not in self.called
            and path not in _MODULE_PATHS
        ):
            # Passed on (`df.pipe(pd.DataFrame.agg, name)`) or aliased, the dispatcher
            # would receive its method name where no check sees it.
            raise _fail(
                node,
                f"'.{attr}' may only be called directly (`df.{attr}(function)`), not passed "
                "on or stored",
            )
        root = _module_root(node.value)
        module_members = _FORBIDDEN_MODULE_MEMBERS.get(root or "", frozenset[str]())
        if isinstance(node.value, ast.Name) and attr in module_members:
            raise _fail(node, f"'{root}.{attr}' is forbidden in the sandbox")
        if attr in _RAW_MEMORY_ATTRIBUTES:
            raise _fail(node, f"attribute '.{attr}': {_RAW_MEMORY_ATTRIBUTES[attr]}")
        if attr in _CLASS_CHECK_ONLY and id(node) not in self.class_checks:
            raise _fail(
                node,
                f"'.{attr}' may only be used in isinstance()/issubclass(); create arrays "
                "with np.array, np.zeros, np.asarray, ...",
            )
        if isinstance(node.ctx, ast.Store | ast.Del) and root in MODULE_NAMES:
            raise _fail(node, f"changing module attribute '{root}....{attr}' is not allowed")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, str) and _is_dunder(value.strip()):
            raise _fail(node, f"string '{value.strip()}' names an interpreter internal")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.decorator_list:
            raise _fail(node.decorator_list[0], "decorators are not allowed")
        if _is_dunder(node.name):
            raise _fail(node, f"function name '{node.name}' is not allowed")
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            if not _is_allowed_context(item.context_expr) or "np" in self.data_names:
                raise _fail(
                    node,
                    "`with` is only allowed for numerical error state: `with np.errstate("
                    "divide='ignore', invalid='ignore'):` (no files or other contexts exist here)",
                )
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg is not None and node.arg.startswith("_"):
            raise _fail(node, f"keyword argument '{node.arg}' is not allowed")
        if node.arg in _FILE_KEYWORDS:
            raise _fail(node, f"the `{node.arg}=` argument could write a file; return the value")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        self.called.add(id(func))
        if isinstance(func, ast.Name) and func.id == "type" and len(node.args) != 1:
            raise _fail(node, "`type()` takes exactly one argument here")
        if isinstance(func, ast.Call):
            inner = func.func
            if isinstance(inner, ast.Name) and inner.id == "type":
                raise _fail(node, "calling `type(x)(...)` is not allowed")
        if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass"):
            for part in node.args[1:2]:
                names = list(ast.walk(part))
                # Only plain names: `isinstance(x, (A := np.ndarray))` must not bind it.
                if all(
                    isinstance(n, ast.Attribute | ast.Name | ast.Tuple | ast.Load) for n in names
                ):
                    self.class_checks.update(id(n) for n in names)
        if isinstance(func, ast.Attribute) and func.attr in _STRING_DISPATCH_METHODS:
            self._check_dispatch(node)
        elif isinstance(func, ast.Attribute) and func.attr in _CALLING_METHODS:
            self._check_string_dispatch(node)
        for keyword in node.keywords:
            if keyword.arg == "aggfunc" and not self._is_function(keyword.value):
                raise _fail(node, _DISPATCH_ADVICE.format(what="`aggfunc=`"))
        called = ""
        if isinstance(func, ast.Attribute):
            called = func.attr
        elif isinstance(func, ast.Name):
            called = func.id
        limit = _MAX_POSITIONAL_ARGS.get(called)
        if limit is not None and len(node.args) > limit:
            raise _fail(
                node,
                f"`{called}` with more than {limit} positional arguments could write a "
                "file or name a function by string; pass options by keyword",
            )
        self.generic_visit(node)

    def _check_format_receiver(self, node: ast.Attribute) -> None:
        """`.format` only on a literal template, or a name only ever bound to literals."""
        receiver = node.value
        if isinstance(receiver, ast.Constant) and isinstance(receiver.value, str):
            _check_format_string(node, receiver.value)
            return
        if isinstance(receiver, ast.Name) and receiver.id in self.templates:
            for template in self.templates[receiver.id]:
                _check_format_string(node, template)
            return
        raise _fail(
            node,
            "`.format` is only allowed on a literal string or a variable only ever assigned "
            "literal strings (`template = '{:.2f} nT'`); use an f-string instead",
        )

    def _is_function(self, node: ast.expr) -> bool:
        """True when `node` is visibly a function (or a listed reduction name), never data."""
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str) and node.value in SAFE_STRING_FUNCTIONS
        if isinstance(node, ast.Lambda):
            return True
        if isinstance(node, ast.Name):
            # A `def` of the code or a builtin, unless the code also assigns the name.
            return node.id not in self.data_names and node.id not in PROVIDED_NAMES - MODULE_NAMES
        if isinstance(node, ast.Attribute):
            root = _module_root(node)
            return root in MODULE_NAMES and root not in self.data_names
        if isinstance(node, ast.Call):
            # Whatever a call returns (`r.apply(df.to_numpy())` on a scipy Rotation):
            # a string from it still meets harden's run-time dispatch guard.
            return True
        if isinstance(node, ast.List | ast.Tuple):
            return all(self._is_function(item) for item in node.elts)
        if isinstance(node, ast.Dict):
            return all(self._is_function(v) for v in node.values)
        return False

    def _is_named_aggregation(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Tuple) and len(node.elts) == 2:
            column, function = node.elts
            return isinstance(column, ast.Constant) and self._is_function(function)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            return (
                name == "NamedAgg"
                and all(isinstance(a, ast.Constant) for a in node.args[:1])
                and all(self._is_function(a) for a in node.args[1:2])
                and all(
                    (kw.arg == "column" and isinstance(kw.value, ast.Constant))
                    or (kw.arg == "aggfunc" and self._is_function(kw.value))
                    for kw in node.keywords
                )
            )
        return False

    def _check_dispatch(self, node: ast.Call) -> None:
        """`apply`/`agg`/`aggregate`/`transform`: the function must be visibly one.

        pandas resolves a string given here with `getattr` on the object, which reaches
        any method (the expression evaluators included), so a name held in a variable,
        computed, or taken from data is refused by construction; only literals from
        SAFE_STRING_FUNCTIONS, lambdas, the code's own functions, builtins and module
        functions (np.mean, ...) pass, also inside lists and dicts.
        """
        method = cast(ast.Attribute, node.func).attr
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            kw.arg is None for kw in node.keywords
        ):
            raise _fail(node, f"`*`/`**` arguments are not allowed in `.{method}()`")
        functions = [
            *node.args[:1],
            *(kw.value for kw in node.keywords if kw.arg in _FUNCTION_KEYWORDS),
        ]
        for function in functions:
            literal = isinstance(function, ast.Constant) and isinstance(function.value, str)
            if literal and cast(ast.Constant, function).value not in SAFE_STRING_FUNCTIONS:
                raise _fail(
                    node,
                    f"method name '{cast(ast.Constant, function).value}' passed as a string "
                    "is not allowed; pass a function (e.g. np.mean) or a lambda",
                )
            if isinstance(function, ast.JoinedStr | ast.BinOp):
                raise _fail(
                    node, "a computed method name is not allowed; pass a function or a lambda"
                )
            if not self._is_function(function):
                raise _fail(node, _DISPATCH_ADVICE.format(what=f"`.{method}()`"))
        if not functions and method in ("agg", "aggregate"):
            for keyword in node.keywords:
                if not self._is_named_aggregation(keyword.value):
                    raise _fail(
                        node,
                        f"named aggregation `{keyword.arg}=` must be a literal "
                        "('column', function) pair or pd.NamedAgg with a function",
                    )

    def _check_string_dispatch(self, node: ast.Call) -> None:
        candidates: Iterable[ast.expr] = [
            *node.args[:1],
            *(kw.value for kw in node.keywords if kw.arg in {"func", "arg"}),
        ]
        for candidate in candidates:
            if isinstance(candidate, ast.Constant) and isinstance(candidate.value, str):
                if candidate.value not in SAFE_STRING_FUNCTIONS:
                    raise _fail(
                        node,
                        f"method name '{candidate.value}' passed as a string is not "
                        "allowed; pass a function (e.g. np.mean) or a lambda",
                    )
            elif isinstance(candidate, ast.JoinedStr | ast.BinOp):
                raise _fail(
                    node,
                    "a computed method name is not allowed; pass a function or a lambda",
                )


def validate_code(code: str) -> ast.Module:
    """Check generated code against the sandbox allowlist and return its parsed tree.

    Raises:
        SandboxError: category "validation", naming the broken rule and its line.
    """
    if len(code) > MAX_CODE_CHARS:
        raise SandboxError(
            f"Code rejected by the sandbox: {len(code)} characters is more than the "
            f"{MAX_CODE_CHARS} allowed. Write shorter code.",
            "validation",
        )
    try:
        tree = ast.parse(code, filename="<sandbox>", mode="exec")
    except SyntaxError as exc:
        raise SandboxError(
            f"Code rejected by the sandbox (line {exc.lineno}: syntax error: {exc.msg}). "
            "Fix the Python syntax.",
            "validation",
        ) from exc
    except (RecursionError, MemoryError, ValueError) as exc:
        raise SandboxError(
            f"Code rejected by the sandbox: it cannot be parsed ({type(exc).__name__}). "
            "Write simpler, less deeply nested code.",
            "validation",
        ) from exc
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_AST_NODES:
        raise SandboxError(
            f"Code rejected by the sandbox: {nodes} syntax nodes is more than the "
            f"{MAX_AST_NODES} allowed. Write shorter code.",
            "validation",
        )
    bound, data_names = assigned_names(tree)
    try:
        _Checker(bound, data_names, _literal_templates(tree)).visit(tree)
    except RecursionError as exc:
        raise SandboxError(
            "Code rejected by the sandbox: it is nested too deeply to check. Write flatter code.",
            "validation",
        ) from exc
    if "result" not in bound:
        raise SandboxError(
            "Code rejected by the sandbox: it never assigns `result`. End with "
            "`result = ...` (a DataFrame, Series, DataArray or scalar).",
            "validation",
        )
    return tree
