"""JSON from the sandbox child, parsed only when its shape is known to be small.

`json.loads` turns a few bytes into a Python object each: 100 MB of `[]` became
2.7 GB of empty lists, and deep nesting raises `RecursionError`. `loads_bounded`
first reads the structure of the text in linear time (strings removed by one regular
expression without nested repetition, then only brackets and commas counted) and
refuses more than `max_items` containers and elements, or nesting deeper than
`max_depth`, before anything is built. So the Python objects a parse can build are
bounded by the text size and `max_items`, and parsing cannot recurse deeply.

Imports nothing from xhelio.
"""

from __future__ import annotations

import json
import re

import numpy as np

__all__ = ["MAX_DEPTH", "MAX_ITEMS", "JsonRefused", "loads_bounded"]

MAX_ITEMS = 200_000
MAX_DEPTH = 16

# A JSON string: quote, then runs of plain characters separated by escapes (unrolled,
# so matching is linear), then quote. Outside strings only structure and scalars remain.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_STRUCTURE = re.compile(rb"[^\[\]{},]+")
_OPEN = frozenset(b"[{")


class JsonRefused(ValueError):
    """The text is not JSON, or its shape passes a limit; the message says which."""


def loads_bounded(raw: bytes, max_items: int = MAX_ITEMS, max_depth: int = MAX_DEPTH) -> object:
    """Parse `raw` as JSON when it holds at most `max_items` items and `max_depth` levels.

    Raises:
        JsonRefused: the shape passes a limit, or the text is not valid JSON.
    """
    structure = _NOT_STRUCTURE.sub(b"", _STRING.sub(b"", raw))
    if len(structure) > 2 * max_items:
        raise JsonRefused(f"more than {max_items} JSON items")
    if structure:
        codes = np.frombuffer(structure, dtype=np.uint8)
        brackets = codes[codes != ord(",")]
        steps = np.where(np.isin(brackets, list(_OPEN)), 1, -1)
        depth = int(np.cumsum(steps).max()) if steps.size else 0
        if depth > max_depth:
            raise JsonRefused(f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise JsonRefused(f"not JSON: {str(exc)[:200]}") from exc
