"""Check a JSON answer against the schema its description promises (a small JSON Schema).

Understood keywords: ``type`` (a name or a list; ``integer`` accepts whole numbers),
``nullable``, ``enum``, ``required``, ``properties``, ``items``, ``minItems`` and the
``x-header`` extension (the first row of a header-row table). Anything else is ignored,
so a richer schema still checks what it can. `problems` lists at most a few mismatches,
each with its JSON path, so a message says what drifted. Imports `errors` only.
"""

from __future__ import annotations

from typing import Any, cast

from xhelio.errors import ServerError

__all__ = ["SchemaDriftError", "problems"]


class SchemaDriftError(ServerError):
    """An answer does not match the schema its description promises."""


_MAX_PROBLEMS = 5
_ITEMS_CHECKED = 2000
"""Rows checked per array: enough to catch a changed format, cheap on big answers."""


def _type_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def _type_ok(value: object, schema: dict[str, Any]) -> bool:
    wanted = schema.get("type")
    if wanted is None:
        return True
    names = {str(w) for w in cast(list[Any], wanted)} if isinstance(wanted, list) else {wanted}
    if schema.get("nullable"):
        names.add("null")
    actual = _type_of(value)
    return actual in names or (actual == "integer" and "number" in names)


def _check(value: object, schema: dict[str, Any], path: str, found: list[str]) -> None:
    if len(found) >= _MAX_PROBLEMS:
        return
    if not _type_ok(value, schema):
        found.append(f"{path}: expected {schema.get('type')}, got {_type_of(value)}")
        return
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        found.append(f"{path}: {value!r} is not one of {enum}")
    if isinstance(value, dict):
        _check_object(cast(dict[str, Any], value), schema, path, found)
    elif isinstance(value, list):
        _check_array(cast(list[Any], value), schema, path, found)


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: str, found: list[str]):
    for key in schema.get("required", ()):
        if key not in value:
            found.append(f"{path}.{key}: missing")
    properties = cast(dict[str, dict[str, Any]], schema.get("properties", {}))
    for key, sub in properties.items():
        if key in value:
            _check(value[key], sub, f"{path}.{key}", found)


def _check_array(value: list[Any], schema: dict[str, Any], path: str, found: list[str]) -> None:
    if len(value) < int(schema.get("minItems", 0)):
        found.append(f"{path}: expected at least {schema['minItems']} items, got {len(value)}")
        return
    header = schema.get("x-header")
    if isinstance(header, list) and value:
        first: object = value[0]
        if first != header:
            found.append(f"{path}[0]: expected the header {header}, got {first!r}")
            return
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value[:_ITEMS_CHECKED]):
            _check(item, cast(dict[str, Any], items), f"{path}[{index}]", found)
            if len(found) >= _MAX_PROBLEMS:
                return


def problems(value: object, schema: dict[str, Any]) -> list[str]:
    """Where `value` departs from `schema` (empty when it matches), at most a few."""
    found: list[str] = []
    _check(value, schema, "$", found)
    return found
