"""The tool registry: typed functions with a name, a category and a schema.

A tool is a plain function whose first parameter is the `ToolContext`; the remaining
parameters (with type hints and Google-style `Args:` docs) become its JSON schema and
its argument validation. Imports pydantic and the standard library only.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

__all__ = ["CATEGORIES", "Tool", "ToolRegistry", "tool"]

CATEGORIES = (
    "discovery",
    "data_ops_fetch",
    "data_ops_compute",
    "function_docs",
    "visualization",
    "data_extraction",
    "conversation",
    "routing",
    "pipeline",
    "pipeline_ops",
)

ToolFunction = Callable[..., dict[str, Any]]


def _split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Return (description, {param: text}) from a Google-style docstring."""
    description_lines: list[str] = []
    params: dict[str, str] = {}
    section = "description"
    current: str | None = None
    for raw in inspect.cleandoc(doc).splitlines():
        line = raw.rstrip()
        header = line.strip().rstrip(":")
        if (
            line
            and not line.startswith(" ")
            and line.endswith(":")
            and header
            in {
                "Args",
                "Arguments",
                "Returns",
                "Raises",
                "Examples",
                "Example",
            }
        ):
            section = header
            current = None
            continue
        if section == "description":
            description_lines.append(line)
        elif section in {"Args", "Arguments"}:
            match = re.match(r"\s+(\w+)(?:\s*\([^)]*\))?:\s*(.*)", line)
            if match:
                current = str(match.group(1))
                params[current] = str(match.group(2)).strip()
            elif current is not None and line.strip():
                params[current] += " " + line.strip()
    return "\n".join(description_lines).strip(), params


@dataclass(frozen=True)
class Tool:
    """One callable tool: function, name, category, description and argument model."""

    name: str
    category: str
    function: ToolFunction
    description: str
    arguments: type[BaseModel]

    @property
    def schema(self) -> dict[str, Any]:
        """The JSON schema of the tool's arguments."""
        return self.arguments.model_json_schema()

    def describe(self) -> dict[str, Any]:
        """Name, category, description and parameter schema, as JSON."""
        return {
            "name": self.name,
            "category": self.category,
            "description": self.description,
            "parameters": self.schema,
        }


def _arguments_model(name: str, fn: ToolFunction, docs: dict[str, str]) -> type[BaseModel]:
    hints = get_type_hints(fn, include_extras=True)  # keep Annotated metadata (schemas)
    fields: dict[str, Any] = {}
    parameters = list(inspect.signature(fn).parameters.values())[1:]  # skip the context
    for param in parameters:
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, Field(default, description=docs.get(param.name)))
    model_name = "".join(part.title() for part in name.split("_")) + "Args"
    return create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)


def tool(category: str, name: str | None = None) -> Callable[[ToolFunction], Tool]:
    """Declare a function as a tool in `category`."""
    if category not in CATEGORIES:
        raise ValueError(f"Unknown tool category {category!r}; use one of {CATEGORIES}.")

    def wrap(fn: ToolFunction) -> Tool:
        tool_name = name or fn.__name__
        description, docs = _split_docstring(fn.__doc__ or tool_name)
        return Tool(tool_name, category, fn, description, _arguments_model(tool_name, fn, docs))

    return wrap


class ToolRegistry:
    """Tools by name, selectable by category."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, t: Tool) -> None:
        """Register `t`; names must be unique."""
        if t.name in self._tools:
            raise ValueError(f"Tool {t.name!r} is registered twice.")
        self._tools[t.name] = t

    def get(self, name: str) -> Tool | None:
        """Return the tool called `name`, or None."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """All tool names, in registration order."""
        return list(self._tools)

    def by_category(self, *categories: str) -> list[Tool]:
        """Tools whose category is one of `categories`."""
        return [t for t in self._tools.values() if t.category in categories]

    def __iter__(self):
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)
