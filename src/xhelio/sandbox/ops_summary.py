"""What another session's model reads of a kept operation: its behaviour, no free text.

Code kept in the ops library is shown to the model of later sessions, so nothing the
code's author chose freely may reach it: not the description, not identifiers, not
string literals, not column labels made up by the code. `neutral_code` rewrites the
reviewed code so that

* every name the code binds (variables, functions, arguments) becomes `v1`, `v2`, ...,
  `f1`, ... (keywords of calls to its own functions follow);
* every string literal is a parameter token (`'db4'`, `'10min'`, `'linear'`, at most
  12 letters, digits and `.:+-`, no spaces or underscores) or a column label of the
  real data the proving run read, and strings written together (a list, tuple, set or
  dict) are column labels or reduction names only, so that no sentence is spelled
  word by word; anything else means the code is not kept;
* raw-memory features (`np.frombuffer`, `.data`, `.ctypes`, `.view`, `as_strided`)
  mean the code is not kept.

`summarize` writes the description later models see, from behaviour only: how many
inputs, what kind of result, its units when they are unit-like, and which library
functions (resolved on the real modules) and methods (of DataFrame, Series, DataArray
or ndarray) it calls.

Imports from xhelio only `sandbox.validate`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import pandas as pd
import xarray as xr

from xhelio.sandbox.validate import assigned_names

__all__ = ["ProvingRun", "neutral_code", "summarize"]

# Reduction names given as strings (`.agg(['mean', 'std'])`); as in sandbox.validate.
REDUCTIONS = frozenset(
    {
        "sum", "mean", "median", "std", "var", "min", "max", "count", "first", "last",
        "prod", "size", "nunique", "sem", "skew", "kurt", "quantile", "ohlc", "describe",
    }
)  # fmt: skip
PROVIDED = frozenset({"df", "sources", "pd", "np", "xr", "scipy", "pywt", "analysis", "result"})
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:+\-]{0,11}")
_UNIT = re.compile(r"[A-Za-z0-9/^*.\-+()]{1,12}")
_RAW_MEMORY = frozenset({"frombuffer", "data", "ctypes", "view", "as_strided", "getbuffer"})
_METHOD_OWNERS: tuple[type, ...] = (pd.DataFrame, pd.Series, xr.DataArray, np.ndarray)
_MAX_LISTED = 12


@dataclass(frozen=True)
class ProvingRun:
    """The run that proves an operation: clean, on real (fetched) data."""

    real_data: bool
    """At least one input came from a dataset (not computed by another operation)."""
    clean: bool
    """The run succeeded with no warnings and a non-empty result."""
    input_columns: tuple[str, ...]
    output_kind: str
    units: tuple[str, ...] = ()


class _Renamer(ast.NodeTransformer):
    def __init__(self, bound: set[str], functions: set[str]) -> None:
        self.names: dict[str, str] = {}
        for name in sorted(functions):
            self.names[name] = f"f{len([n for n in self.names.values() if n[0] == 'f']) + 1}"
        for name in sorted(bound - functions):
            self.names[name] = f"v{len([n for n in self.names.values() if n[0] == 'v']) + 1}"
        self.functions = functions

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self.names.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.ExceptHandler:
        if node.name:
            node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.Call:
        if isinstance(node.func, ast.Name) and node.func.id in self.functions:
            for keyword in node.keywords:
                if keyword.arg is not None:
                    keyword.arg = self.names.get(keyword.arg, keyword.arg)
        self.generic_visit(node)
        return node


def _bound_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """Names the code binds, and those of its own functions (none of the provided)."""
    bound, _ = assigned_names(tree)
    functions = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    return bound - PROVIDED, functions - PROVIDED


def _collection_problem(
    node: ast.List | ast.Tuple | ast.Set | ast.Dict, columns: set[str]
) -> str | None:
    """Several strings together may spell a sentence: only columns or reductions then."""
    items = [*node.keys, *node.values] if isinstance(node, ast.Dict) else list(node.elts)
    texts = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
    free = [t for t in texts if t not in columns and t not in REDUCTIONS]
    if len(texts) >= 2 and free:
        return f"several strings that are not column labels ({', '.join(free[:3])[:40]!r})"
    return None


def neutral_code(code: str, run: ProvingRun) -> tuple[str, list[str]]:
    """The code as later models may read it, and why it cannot be kept (empty when it can)."""
    tree = ast.parse(code)
    problems: list[str] = []
    columns = set(run.input_columns)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            text = node.value if isinstance(node.value, str) else repr(node.value)
            if text not in columns and not _TOKEN.fullmatch(text):
                problems.append(
                    f"a string that is neither a parameter nor a column ({text[:30]!r})"
                )
        if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict):
            problem = _collection_problem(node, columns)
            if problem:
                problems.append(problem)
        if isinstance(node, ast.JoinedStr):
            problems.append("a string built at run time (f-string)")
        if isinstance(node, ast.Attribute) and node.attr in _RAW_MEMORY:
            problems.append(f"raw memory access (.{node.attr})")
    bound, functions = _bound_names(tree)
    renamed = _Renamer(bound, functions).visit(tree)
    return ast.unparse(ast.fix_missing_locations(renamed)), problems


def _resolves(path: list[str], modules: dict[str, ModuleType]) -> bool:
    target: object = modules.get(path[0])
    for part in path[1:]:
        if target is None or part.startswith("_"):
            return False
        target = getattr(target, part, None)
    return callable(target)


def _called(tree: ast.AST, modules: dict[str, ModuleType]) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        parts: list[str] = []
        target: ast.expr = node.func
        while isinstance(target, ast.Attribute):
            parts.insert(0, target.attr)
            target = target.value
        if isinstance(target, ast.Name) and target.id in modules:
            path = [target.id, *parts]
            if _resolves(path, modules):
                names.append(".".join(path))
        elif not parts[-1].startswith("_") and any(
            hasattr(owner, parts[-1]) for owner in _METHOD_OWNERS
        ):
            names.append(f".{parts[-1]}")
    return list(dict.fromkeys(names))


def summarize(code: str, run: ProvingRun, inputs: int, modules: dict[str, ModuleType]) -> str:
    """A one-line description of what the code does, from its behaviour only."""
    called = _called(ast.parse(code), modules)
    listed = ", ".join(called[:_MAX_LISTED]) + (" ..." if len(called) > _MAX_LISTED else "")
    units = [u for u in run.units if _UNIT.fullmatch(u)]
    unit_text = f" in {', '.join(dict.fromkeys(units))}" if units else ""
    plural = "s" if inputs != 1 else ""
    calls = listed or "no library function"
    return f"{inputs} input{plural} -> {run.output_kind}{unit_text}; calls {calls}"
