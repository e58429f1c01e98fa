"""The tool registry: typed functions with a name, a category, a schema and a meaning.

A tool is a plain function whose first parameter is the `ToolContext`; the remaining
parameters (with type hints and Google-style `Args:` docs) become its JSON schema and
its argument validation. Its `@tool(...)` declaration says what a call means: its phase,
which labels it produces (`Produces`) and reads, which arguments are time ranges, whether
it edits the current figure, runs generated code or opens the user's files, and the
pydantic model of its result. The funnel records these with every call, so no consumer
needs to know a tool's name (see docs/tools.md). Imports pydantic, `xhelio.operations`
and the standard library only.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from xhelio.operations import Phase, label_mentions, label_references

__all__ = ["CATEGORIES", "Produces", "Tool", "ToolOutput", "ToolRegistry", "tool"]

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
    "web_api",
    "literature",
)

_CATEGORY_PHASES: dict[str, Phase] = {
    "discovery": "discover",
    "data_ops_fetch": "fetch",
    "data_ops_compute": "compute",
    "function_docs": "discover",
    "visualization": "render",
    "data_extraction": "compute",
    "conversation": "conversation",
    "routing": "conversation",
    "pipeline": "pipeline",
    "pipeline_ops": "pipeline",
    "web_api": "fetch",
    "literature": "fetch",
}
"""The phase a tool of each category has unless its declaration says otherwise."""

ToolFunction = Callable[..., dict[str, Any] | BaseModel]


class ToolOutput(BaseModel):
    """A tool's JSON result; the base of every declared result model (extra fields kept)."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True)
class Produces:
    """Which DataStore labels a successful call creates.

    Exactly one of: `argument`, the argument whose value is the new label (e.g.
    custom_operation's `output_label`); or `result_field`, the result field that lists it
    (a string or a list of strings, e.g. fetch_data's `label`, made from its arguments).
    """

    argument: str | None = None
    result_field: str | None = None

    def __post_init__(self) -> None:
        if (self.argument is None) == (self.result_field is None):
            raise ValueError("Produces names exactly one of argument or result_field.")

    def labels(self, args: Mapping[str, Any], result: Mapping[str, Any]) -> list[str]:
        """The labels a successful call with `args` that returned `result` created."""
        value = (
            args.get(self.argument)
            if self.argument is not None
            else result.get(self.result_field or "")
        )
        items: list[Any] = value if isinstance(value, list) else [value]  # type: ignore[misc]
        return [item.strip() for item in items if isinstance(item, str) and item.strip()]


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
    """One callable tool: its function, schema and what a call of it means.

    Attributes:
        name: The name models and callers use.
        category: Which agents are offered it (see `CATEGORIES`).
        function: The function; its first parameter is the context.
        description: The docstring's description (what the model reads).
        arguments: The pydantic model its arguments are validated by.
        phase: What it does (see `xhelio.operations.Phase`).
        produces: Which labels a successful call creates (None: none).
        reads: Arguments whose strings may name stored labels it reads.
        mentions: Arguments whose text names stored labels inside it (SQL, formulas).
        time_args: Arguments that are time ranges.
        result: The pydantic model of its successful result.
        edits_figure: It acts on the current figure instead of drawing a new one.
        runs_code: It runs generated code (a server refuses it without OS isolation).
        file_args: Arguments that are paths of the user's own files.
        public: Offered on every surface as it is: an MCP tool of the same name, REST
            `POST /api/v1/sessions/{id}/tools/{name}` and `Assistant.call_tool`.
    """

    name: str
    category: str
    function: ToolFunction
    description: str
    arguments: type[BaseModel]
    phase: Phase = "discover"
    produces: Produces | None = None
    reads: tuple[str, ...] = ()
    mentions: tuple[str, ...] = ()
    time_args: tuple[str, ...] = ()
    result: type[BaseModel] = ToolOutput
    edits_figure: bool = False
    runs_code: bool = False
    file_args: tuple[str, ...] = ()
    public: bool = False

    def produced(self, args: Mapping[str, Any], result: Mapping[str, Any]) -> list[str]:
        """The labels a successful call with `args` that returned `result` created."""
        return self.produces.labels(args, result) if self.produces is not None else []

    def read_labels(self, args: Mapping[str, Any], known: Iterable[str]) -> list[str]:
        """The stored labels (of `known`) a call with `args` reads."""
        known = list(known)
        found = label_references((args.get(k) for k in self.reads), known)
        mentioned = label_mentions((args.get(k) for k in self.mentions), known)
        return [*found, *(label for label in mentioned if label not in found)]

    def time_ranges(self, args: Mapping[str, Any]) -> dict[str, str]:
        """Its time-range arguments that `args` gives, as text."""
        return {k: str(args[k]) for k in self.time_args if isinstance(args.get(k), str)}

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


def tool(
    category: str,
    *,
    phase: Phase | None = None,
    name: str | None = None,
    produces: Produces | None = None,
    reads: tuple[str, ...] = (),
    mentions: tuple[str, ...] = (),
    time_args: tuple[str, ...] = (),
    result: type[BaseModel] = ToolOutput,
    edits_figure: bool = False,
    runs_code: bool = False,
    file_args: tuple[str, ...] = (),
    public: bool = False,
) -> Callable[[ToolFunction], Tool]:
    """Declare a function as a tool in `category` and say what a call of it means.

    Args:
        category: Which agents are offered it (see `CATEGORIES`).
        phase: What it does: discover, fetch, compute, render, export, conversation or
            pipeline (default: the usual phase of its category).
        name: Its name (default: the function's).
        produces: Which labels a successful call creates (default: none).
        reads: Arguments whose strings may name stored labels it reads.
        mentions: Arguments whose text names stored labels inside it (SQL, formulas).
        time_args: Arguments that are time ranges.
        result: The pydantic model of its successful result (extra fields allowed).
        edits_figure: It acts on the current figure instead of drawing a new one.
        runs_code: It runs generated code.
        file_args: Arguments that are paths of the user's own files.
        public: Offer it on MCP, REST and the Python API with no more code.

    Raises:
        ValueError: an unknown category, or a declared argument the function does not have.
    """
    if category not in CATEGORIES:
        raise ValueError(f"Unknown tool category {category!r}; use one of {CATEGORIES}.")

    def wrap(fn: ToolFunction) -> Tool:
        tool_name = name or fn.__name__
        description, docs = _split_docstring(fn.__doc__ or tool_name)
        arguments = _arguments_model(tool_name, fn, docs)
        declared = {*reads, *mentions, *time_args, *file_args}
        if produces is not None and produces.argument is not None:
            declared.add(produces.argument)
        unknown = declared - set(arguments.model_fields)
        if unknown:
            raise ValueError(f"Tool {tool_name!r} declares unknown arguments {sorted(unknown)}.")
        return Tool(
            tool_name,
            category,
            fn,
            description,
            arguments,
            phase=phase or _CATEGORY_PHASES[category],
            produces=produces,
            reads=reads,
            mentions=mentions,
            time_args=time_args,
            result=result,
            edits_figure=edits_figure,
            runs_code=runs_code,
            file_args=file_args,
            public=public,
        )

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

    def by_phase(self, *phases: Phase) -> list[Tool]:
        """Tools whose phase is one of `phases`."""
        return [t for t in self._tools.values() if t.phase in phases]

    def public(self) -> list[Tool]:
        """The tools offered on every surface as they are (MCP, REST, Python API)."""
        return [t for t in self._tools.values() if t.public]

    def label_makers(self) -> list[Tool]:
        """The tools whose successful calls create DataStore labels."""
        return [t for t in self._tools.values() if t.produces is not None]

    def __iter__(self):
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)
