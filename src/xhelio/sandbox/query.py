"""`DataFrame.query` in the sandbox: a small evaluator of row conditions, not pandas' eval.

pandas' `query` hands its string to `pandas.eval`, which resolves names, attributes and
calls in ways no static check can see, so the sandbox disables every evaluator
(`harden.py`). Row selection is ordinary science, though, so `query` is provided again
here, evaluating only what a row condition needs:

* column names (also in backticks: `` `B mag` > 3 ``), `index`, `@name` for a variable
  of the code's top level, numbers, strings, True/False/None, lists and tuples;
* comparisons (chained too), `in` / `not in`, `and` / `or` / `not`, `&` `|` `~` (as in
  pandas, `&` and `|` bind like `and` and `or`: `a > 0 & b < 1` needs no parentheses),
  and arithmetic (`+ - * / // % **`, unary minus).

Anything else (attributes, calls, subscripts, lambdas) is refused with a message that
says to use a boolean mask. Imports nothing from xhelio.
"""

from __future__ import annotations

import ast
import io
import operator
import re
import tokenize
from collections.abc import Callable
from typing import Any

import pandas as pd

__all__ = ["QueryRefused", "bind_namespace", "query"]

MAX_EXPRESSION_CHARS = 2_000
_BACKTICK = re.compile(r"`([^`]*)`")
_AT_NAME = re.compile(r"@([A-Za-z_][A-Za-z_0-9]*)")
_ADVICE = "use a boolean mask instead: df[(df['bx'] > 0) & (df['by'] < 5)]"
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}  # fmt: skip
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}  # fmt: skip
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
    ast.Not: operator.invert,
}  # fmt: skip
_namespace: list[dict[str, Any]] = [{}]


class QueryRefused(ValueError):
    """The query uses something a row condition does not need; the message says what."""


def bind_namespace(namespace: dict[str, Any]) -> None:
    """Where `@name` is looked up: the running code's top-level variables."""
    _namespace[0] = namespace


class _Evaluator:
    def __init__(self, frame: pd.DataFrame, names: dict[str, str]) -> None:
        self.frame = frame
        self.names = names  # placeholder -> column label or "@variable"

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.List | ast.Tuple):
            return [self.value(item) for item in node.elts]
        if isinstance(node, ast.BoolOp):
            combine = operator.and_ if isinstance(node.op, ast.And) else operator.or_
            values = [self.value(v) for v in node.values]
            result = values[0]
            for item in values[1:]:
                result = combine(result, item)
            return result
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](self.value(node.left), self.value(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](self.value(node.operand))
        if isinstance(node, ast.Compare):
            return self._compare(node)
        raise QueryRefused(f"query: `{type(node).__name__}` is not supported here; {_ADVICE}")

    def _name(self, name: str) -> Any:
        label = self.names.get(name, name)
        if label.startswith("@"):
            if label[1:] not in _namespace[0]:
                raise QueryRefused(f"query: no variable named {label[1:]!r}")
            return _namespace[0][label[1:]]
        if label in self.frame.columns:
            return self.frame[label]
        if label == "index" or label == self.frame.index.name:
            return pd.Series(self.frame.index, index=self.frame.index)
        raise QueryRefused(f"query: no column named {label[:60]!r}")

    def _compare(self, node: ast.Compare) -> Any:
        left = self.value(node.left)
        result: Any = None
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.value(right_node)
            if isinstance(op, ast.In | ast.NotIn):
                member = pd.Series(left, index=self.frame.index).isin(list(right))
                step = ~member if isinstance(op, ast.NotIn) else member
            elif type(op) in _COMPARE:
                step = _COMPARE[type(op)](left, right)
            else:
                raise QueryRefused(f"query: `{type(op).__name__}` is not supported; {_ADVICE}")
            result = step if result is None else result & step
            left = right
        return result


def _boolean_words(text: str) -> str:
    """`&` and `|` as `and` and `or`: in a query they bind like them, after comparisons."""
    tokens = [
        (tokenize.NAME, {"&": "and", "|": "or"}[t.string])
        if t.type == tokenize.OP and t.string in ("&", "|")
        else (t.type, t.string)
        for t in tokenize.generate_tokens(io.StringIO(text).readline)
    ]
    return tokenize.untokenize(tokens)


def query(frame: pd.DataFrame, expr: object, **options: object) -> pd.DataFrame:
    """The rows of `frame` where `expr` (a row condition, see the module doc) holds.

    Raises:
        QueryRefused: the expression is not a string, too long, or uses anything else.
    """
    if options.get("inplace"):
        raise QueryRefused("query: inplace=True is not supported; assign the result")
    if not isinstance(expr, str) or len(expr) > MAX_EXPRESSION_CHARS:
        raise QueryRefused(
            f"query: the condition must be a string of at most {MAX_EXPRESSION_CHARS} characters"
        )
    names: dict[str, str] = {}

    def placeholder(label: str) -> str:
        key = f"_xq{len(names)}_"
        names[key] = label
        return key

    text = _BACKTICK.sub(lambda m: placeholder(m.group(1)), expr)
    text = _AT_NAME.sub(lambda m: placeholder("@" + m.group(1)), text)
    try:
        tree = ast.parse(_boolean_words(text.strip()), mode="eval")
    except (SyntaxError, ValueError, RecursionError, tokenize.TokenError) as exc:
        raise QueryRefused(f"query: cannot read the condition ({exc}); {_ADVICE}") from exc
    mask = _Evaluator(frame, names).value(tree.body)
    if not isinstance(mask, pd.Series):
        raise QueryRefused(f"query: the condition does not depend on any column; {_ADVICE}")
    return frame.loc[mask.astype(bool)]
