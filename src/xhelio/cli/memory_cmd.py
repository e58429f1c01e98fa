"""`xhelio memory`: add, list, search, edit, disable, enable, delete and status of memories."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from xhelio.cli.errors import handle_errors
from xhelio.config import load_settings
from xhelio.long_term_memory.model import Memory
from xhelio.long_term_memory.search import load_embedder, search_memories
from xhelio.long_term_memory.status import memory_status
from xhelio.long_term_memory.store import MemoryStore

__all__ = ["app"]

app = typer.Typer(
    help="Long-term memory kept across sessions (preferences, lessons, summaries).",
    no_args_is_help=True,
)
Scope = Annotated[
    list[str] | None,
    typer.Option("--scope", help="generic, data_ops, visualization or mission:<ID>; repeatable."),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _store() -> MemoryStore:
    return MemoryStore.open(load_settings())


def _show(memories: list[Memory], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps([m.to_dict() for m in memories], indent=2))
        return
    if not memories:
        Console().print("No memories.")
        return
    table = Table("id", "type", "scopes", "memory", "source", "used", "on")
    for m in memories:
        stars = f" {'*' * m.review.stars}" if m.review else ""
        table.add_row(
            m.id, m.type, ", ".join(m.scopes), m.content, m.source + stars,
            str(m.access_count), "yes" if m.enabled else "no",
        )  # fmt: skip
    Console().print(table)


@app.command("add")
@handle_errors
def add(
    text: Annotated[str, typer.Argument(help="The memory, one sentence.")],
    type: Annotated[
        str, typer.Option("--type", help="preference, pitfall, reflection or summary.")
    ] = "preference",
    scope: Scope = None,
    as_json: AsJson = False,
) -> None:
    """Remember something for every future session."""
    memory = _store().add(text, type, scope or ["generic"], source="user_explicit")
    if as_json:
        _show([memory], as_json)
    else:
        Console().print(f"Remembered {memory.id}: {memory.content}", highlight=False)


@app.command("list")
@handle_errors
def list_(
    type: Annotated[str | None, typer.Option("--type", help="Only this type.")] = None,
    scope: Annotated[str | None, typer.Option("--scope", help="Only this scope.")] = None,
    archived: Annotated[bool, typer.Option("--archived", help="Include old versions.")] = False,
    as_json: AsJson = False,
) -> None:
    """List memories, newest first."""
    found = _store().list(types=[type] if type else (), scope=scope, include_archived=archived)
    _show(found, as_json)


@app.command("search")
@handle_errors
def search(
    query: Annotated[str, typer.Argument(help="Words to look for.")],
    limit: Annotated[int, typer.Option("--limit", min=1, max=100)] = 10,
    as_json: AsJson = False,
) -> None:
    """Search memories (lexical; semantic too when an embedding model is configured)."""
    settings = load_settings()
    store = MemoryStore.open(settings)
    _show(search_memories(store, query, embedder=load_embedder(settings), limit=limit), as_json)


@app.command("edit")
@handle_errors
def edit(
    memory_id: Annotated[str, typer.Argument(help="The memory's id.")],
    text: Annotated[str | None, typer.Option("--text", help="New text.")] = None,
    scope: Scope = None,
) -> None:
    """Change a memory's text or scopes (the old version is kept, archived)."""
    if text is None and not scope:
        raise typer.BadParameter("Give --text and/or --scope.")
    memory = _store().edit(memory_id, content=text, scopes=scope or None)
    Console().print(f"Memory {memory_id} is now {memory.id} (version {memory.version}).")


@app.command("disable")
@handle_errors
def disable(memory_id: Annotated[str, typer.Argument(help="The memory's id.")]) -> None:
    """Keep a memory but never show it to the agents."""
    _store().set_enabled(memory_id, False)
    Console().print(f"Memory {memory_id} is disabled.")


@app.command("enable")
@handle_errors
def enable(memory_id: Annotated[str, typer.Argument(help="The memory's id.")]) -> None:
    """Switch a disabled memory back on."""
    _store().set_enabled(memory_id, True)
    Console().print(f"Memory {memory_id} is enabled.")


@app.command("delete")
@handle_errors
def delete(memory_id: Annotated[str, typer.Argument(help="The memory's id.")]) -> None:
    """Delete a memory for good."""
    _store().delete(memory_id)
    Console().print(f"Memory {memory_id} is deleted.")


@app.command("status")
@handle_errors
def status(as_json: AsJson = False) -> None:
    """Is memory on, how does it search, how many memories of each type."""
    info = memory_status(load_settings())
    if as_json:
        typer.echo(json.dumps(info, indent=2))
        return
    console = Console()
    state = "on" if info["enabled"] else "off (memory_enabled = false)"
    console.print(f"Long-term memory: {state}; database {info['database']}", highlight=False)
    counts = ", ".join(f"{n} {t}" for t, n in sorted(info["by_type"].items())) or "none"
    console.print(
        f"Memories: {counts}; {info['disabled']} disabled, {info['archived']} archived",
        highlight=False,
    )
    console.print(f"Search: {info['search']}", highlight=False)
    every = info["every_turns"]
    agent = f"after every {every} turns" if every else "off (memory_every_turns = 0)"
    console.print(
        f"Memory agent: {agent}; prompt budget {info['injection_tokens']} tokens, "
        f"{info['per_type']} memories per type before consolidation",
        highlight=False,
    )
