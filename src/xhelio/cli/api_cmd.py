"""`xhelio api list|describe|call` and `xhelio search-papers|search-web`: web APIs and search.

Each command runs its tool through a session's funnel (traced like every tool), so an
API answer or a list of papers is stored as data in that session (``--session`` to keep
working with it) and its sources are printed. Errors are the tools' clear messages.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from xhelio.cli.errors import handle_errors
from xhelio.errors import UserError, XhelioError
from xhelio.services import Services
from xhelio.tools.workspace import open_workspace

__all__ = ["app", "register"]

app = typer.Typer(help="Documented web APIs: NOAA SWPC, NASA DONKI and the ones you added.")

Session = Annotated[
    str | None, typer.Option("--session", "-s", help="Session id; results persist per id.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the tool's JSON result.")]


def _run(tool: str, args: dict[str, Any], session: str | None) -> dict[str, Any]:
    """Run `tool` in the session; its payload, or the tool's error as an `XhelioError`."""
    with Services() as services:
        workspace = open_workspace(session, services=services)
        try:
            result = workspace.funnel.call(tool, args, caller="cli")
            workspace.save()
        finally:
            workspace.context.close()
    if session is None and result.labels:
        Console(stderr=True).print(f"session: {workspace.session.id}", highlight=False)
    if not result.ok:
        raise XhelioError(result.error or f"{tool} failed")
    return {**result.payload, "labels": result.labels}


def _params(pairs: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--param takes key=value, e.g. startDate=2024-05-08 (got {pair!r}).")
        params[key.strip()] = value.strip()
    return params


@app.command("list")
@handle_errors
def list_apis(as_json: AsJson = False) -> None:
    """List the web APIs and whether web and literature search are on."""
    result = _run("list_apis", {}, None)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    table = Table("api", "title", "endpoints", title="Web APIs")
    for api in result["apis"]:
        table.add_row(api["name"], api["title"], ", ".join(api["endpoints"]))
    console = Console()
    console.print(table)
    for provider in result["search"]:
        console.print(f"search {provider['name']} ({provider['kind']}): {provider['status']}")


@app.command("describe")
@handle_errors
def describe_api(
    name: Annotated[str, typer.Argument(help="API name (see `xhelio api list`).")],
    as_json: AsJson = False,
) -> None:
    """Show an API's endpoints and their parameters."""
    result = _run("describe_api", {"name": name}, None)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    console = Console()
    console.print(f"[bold]{result['title']}[/bold] ({result['base_url']})\n{result['description']}")
    for endpoint in result["endpoints"]:
        params = ", ".join(
            p["name"] + ("" if p["required"] else "?") for p in endpoint["parameters"]
        )
        console.print(f"  {endpoint['name']}({params}): {endpoint['summary']}", highlight=False)
    console.print(f"Cite: {result['citation']}", highlight=False)


@app.command("call")
@handle_errors
def call_api(
    name: Annotated[str, typer.Argument(help="API name, e.g. donki.")],
    endpoint: Annotated[str, typer.Argument(help="Endpoint name, e.g. CME.")],
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="A parameter as key=value.")
    ] = None,
    label: Annotated[str | None, typer.Option("--label", help="Label of the stored table.")] = None,
    session: Session = None,
    as_json: AsJson = False,
) -> None:
    """Call an endpoint; the answer is stored as data in the session, with its source."""
    args: dict[str, Any] = {"api": name, "endpoint": endpoint, "params": _params(param or [])}
    if label:
        args["output_label"] = label
    result = _run("call_api", args, session)
    if as_json:
        typer.echo(json.dumps(result, indent=2, default=str))
        return
    console = Console()
    if not result.get("label"):
        console.print(result.get("message", "Nothing listed."), highlight=False)
    else:
        console.print(f"Stored {result['label']}: {result['rows']} rows", highlight=False)
        for row in result.get("last_rows", []):
            console.print("  " + ", ".join(f"{k}={v}" for k, v in row.items()), highlight=False)
    console.print(f"Source: {result['source']} ({result['citation']})", highlight=False)


def _search(tool: str, query: str, rows: int, session: str | None, as_json: bool) -> None:
    result = _run(tool, {"query": query, "rows": rows}, session)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    console = Console()
    if not result["results"]:
        console.print(result.get("message", "No results."), highlight=False)
    for n, hit in enumerate(result["results"], 1):
        who = ", ".join(x for x in (hit["authors"], hit["year"]) if x)
        console.print(f"{n}. {hit['title']}" + (f" ({who})" if who else ""), highlight=False)
        console.print(f"   {hit['url']}", highlight=False)
    if result.get("label"):
        console.print(f"Stored as {result['label']} (from {result['provider']}).", highlight=False)


@handle_errors
def search_papers(
    query: Annotated[str, typer.Argument(help="What to look for (an ADS query works too).")],
    rows: Annotated[int, typer.Option("--rows", "-n", help="How many papers (1-50).")] = 10,
    session: Session = None,
    as_json: AsJson = False,
) -> None:
    """Search the literature (NASA ADS; needs XHELIO_ADS_TOKEN); each paper with its link."""
    _search("search_literature", query, rows, session, as_json)


@handle_errors
def search_web(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    rows: Annotated[int, typer.Option("--rows", "-n", help="How many results (1-50).")] = 10,
    session: Session = None,
    as_json: AsJson = False,
) -> None:
    """Search the web (needs XHELIO_WEB_SEARCH_URL); each result with its link."""
    _search("search_web", query, rows, session, as_json)


def register(holder: typer.Typer) -> None:
    """Add `search-papers` and `search-web` to the app."""
    holder.command("search-papers")(search_papers)
    holder.command("search-web")(search_web)
