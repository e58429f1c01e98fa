"""The shape of the code: layers, no import cycle, no branching on tool names.

Read from the source with `ast`, so the checks hold for any module added later.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from xhelio.tools.toolset import default_registry

SRC = Path(__file__).resolve().parents[1] / "src" / "xhelio"

LAYERS: list[tuple[str, ...]] = [
    ("cli", "server", "mcp_server", "api", "notebook"),
    ("agents",),
    ("tools",),
    ("report",),
    ("services",),
    ("pipelines",),
    ("memory", "long_term_memory"),
    ("session",),
    ("events",),
    ("render",),
    ("sandbox",),
    ("sql",),
    ("data",),
    ("ephemeris",),
    ("webapis",),
    ("analysis",),
    ("sources",),
    ("catalog", "language"),
    ("config", "errors", "timerange", "operations", "migrations", "vocabulary"),
]
"""ARCHITECTURE.md's layers, top first: data flows down, nothing imports from a layer
above it. `services` (the process's resources) sits between the tools that use them and
the lower layers it owns; `sql` (queries over the session's entries) sits just above
the data it reads; `webapis` (described web APIs and search) reuses the sources' HTTP
plumbing and hands plain tables up; `analysis` (the pure analysis methods, issue 23) sits
below the data layer so the tools, the sandbox and exported scripts can all use it;
`language` (request words against dataset metadata) serves the catalog's ranking and the
agents; `operations` (what a tool call means), `migrations` (the SQLite schema steps) and
`vocabulary` (the domain words as data, which the time grammar reads for named events) are
core."""


def _layer(module: str) -> int | None:
    """The layer index of `xhelio.<part>...`; None for the package's `__init__`."""
    parts = module.split(".")
    if parts[0] != "xhelio" or len(parts) < 2:
        return None
    for index, names in enumerate(LAYERS):
        if parts[1] in names:
            return index
    raise AssertionError(f"{module} is in no layer; add its package to LAYERS")


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path


def _imports(module: str, path: Path) -> set[str]:
    """The xhelio modules `module` imports (anywhere in it, type-checking ones too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("xhelio"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            if base.startswith("xhelio"):
                known = {m for m, _ in _modules()}
                subs = {f"{base}.{a.name}" for a in node.names} & known
                found.update(subs or {base})
    return found


GRAPH = {name: _imports(name, path) for name, path in _modules()}


def test_no_module_imports_from_a_layer_above_it() -> None:
    upward: list[str] = []
    for module, imported in GRAPH.items():
        mine = _layer(module)
        for target in imported:
            theirs = _layer(target)
            if mine is not None and theirs is not None and theirs < mine:
                upward.append(f"{module} -> {target}")
    assert not upward, "imports from a higher layer:\n" + "\n".join(sorted(upward))


def test_there_is_no_import_cycle() -> None:
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> None:
        if module in path:
            cycle = [*path[path.index(module) :], module]
            pytest.fail("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        path.append(module)
        for target in sorted(GRAPH.get(module, set())):
            visit(target)
        path.pop()
        done.add(module)

    for module in GRAPH:
        visit(module)


TOOL_NAMES = frozenset(default_registry().names())


def _names_in(node: ast.AST) -> list[str]:
    """Tool names written as string literals in `node` (a literal or a container of them)."""
    if isinstance(node, ast.Constant) and node.value in TOOL_NAMES:
        return [str(node.value)]
    if isinstance(node, ast.Set | ast.List | ast.Tuple):
        return [name for item in node.elts for name in _names_in(item)]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"frozenset", "set", "tuple", "list"}
        and node.args
    ):
        return _names_in(node.args[0])
    if isinstance(node, ast.Dict):
        return [name for key in node.keys if key is not None for name in _names_in(key)]
    return []


def _name_branches(path: Path) -> list[str]:
    """Where a module compares a tool's name, directly or through a constant of names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = _names_in(node.value) if not isinstance(node.value, ast.Constant) else []
            for target in targets:
                if isinstance(target, ast.Name) and names:
                    constants[target.id] = names
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                names = _names_in(side)
                if isinstance(side, ast.Name):
                    names = constants.get(side.id, [])
                if isinstance(side, ast.Dict):
                    names = _names_in(side)
                found += [f"{path.name}:{node.lineno} compares {n}" for n in names]
        elif isinstance(node, ast.MatchValue):
            found += [f"{path.name}:{node.lineno} matches {n}" for n in _names_in(node.value)]
        elif isinstance(node, ast.Dict) and _names_in(node):
            found += [f"{path.name}:{node.lineno} maps {n}" for n in _names_in(node)]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "get"
            and isinstance(node.value, ast.Name)
            and node.value.id in constants
        ):
            found.append(f"{path.name}:{node.lineno} looks up {node.value.id} by tool name")
    return found


def test_no_module_outside_tools_branches_on_a_tool_name() -> None:
    found: list[str] = []
    for module, path in _modules():
        if module.startswith("xhelio.tools"):
            continue
        found += _name_branches(path)
    assert not found, "branching on tool names (read the tool's spec instead):\n" + "\n".join(found)


def test_the_name_check_catches_each_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "PLOTS = frozenset({'render_plotly_json', 'manage_plot'})\n"
        "KEYS = {'fetch_data': 'label'}\n"
        "def f(op, tool):\n"
        "    if op['tool'] == 'fetch_data': pass\n"
        "    if tool in PLOTS: pass\n"
        "    if tool not in ('save_data',): pass\n"
        "    KEYS.get(tool)\n"
        "    match tool:\n"
        "        case 'custom_operation': pass\n"
        "    run('fetch_data')\n"  # calling a tool by name is fine
    )
    found = _name_branches(sample)
    assert {f.split()[0] for f in found if "compares" in f} == {
        "sample.py:4",
        "sample.py:5",
        "sample.py:6",
    }
    assert any("matches custom_operation" in f for f in found)
    assert any("maps fetch_data" in f for f in found)
    assert any("looks up KEYS" in f for f in found)
    assert not any(":10 " in f for f in found)
