"""Tools over documented web APIs and search: list, describe and call; search papers and web.

`call_api` stores the answer as a DataStore entry (time-indexed when the answer has a
time field, else a table) citing the API and the address asked; `search_literature` and
`search_web` store their hits as a table with a link per row. Every call goes through
`xhelio.webapis` (the hosts of the descriptions only, limits, schema checks). Registered
through the ``xhelio.tools`` entry point (``API_TOOLS``). Imports `tools`, `data`,
`webapis`.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from xhelio.data.entry import DataEntry
from xhelio.errors import UserError
from xhelio.tools.context import ToolContext
from xhelio.tools.data_tools import entry_summary
from xhelio.tools.registry import Produces, tool
from xhelio.webapis import ApiTable, SearchHit, WebAccess, open_web
from xhelio.webapis.search import SearchKind

__all__ = ["API_TOOLS", "api_entry", "default_label", "web_access"]

_PREVIEW_ROWS = 12
_LABEL = re.compile(r"^[A-Za-z0-9_.:-]{1,80}$")


def web_access(ctx: ToolContext) -> WebAccess:
    """The web APIs and search providers of the context's settings."""
    return open_web(ctx.settings)


def default_label(api: str, endpoint: str, params: dict[str, str]) -> str:
    """``api.endpoint``, with the dates asked for when any (``donki.CME.2024-05-08_2024-05-15``)."""
    dates = [v for v in params.values() if re.match(r"^\d{4}-\d{2}-\d{2}", v)]
    suffix = "_".join(d[:10] for d in dates)
    return f"{api}.{endpoint}" + (f".{suffix}" if suffix else "")


def _checked_label(label: str | None, default: str) -> str:
    chosen = (label or "").strip() or default
    if not _LABEL.match(chosen):
        raise UserError(
            f"Label {chosen!r} may hold only letters, digits and . _ : - (at most 80 characters)."
        )
    return chosen


def _asked_range(params: dict[str, str]) -> tuple[str, str] | None:
    """The days a call asked for (first date, day after the last), when it named dates."""
    dates = sorted(v[:10] for v in params.values() if re.match(r"^\d{4}-\d{2}-\d{2}", v))
    if not dates:
        return None
    end = pd.Timestamp(dates[-1], tz="UTC") + pd.Timedelta(days=1)
    return (pd.Timestamp(dates[0], tz="UTC").isoformat(), end.isoformat())


def api_entry(table: ApiTable, label: str) -> DataEntry:
    """The DataStore entry of an API answer, citing the API and the address asked."""
    frame = table.frame
    return DataEntry(
        label,
        frame,
        dict(table.units),
        f"{table.title} ({table.url})",
        f"{table.api}/{table.endpoint}",
        None,
        isinstance(frame.index, pd.DatetimeIndex),
        fetched_range=_asked_range(table.params),
        meta={
            "citation": {
                "dataset": table.title,
                "url": table.url,
                "acknowledgement": table.citation,
            },
            "source_url": table.url,
        },
    )


def _preview(frame: pd.DataFrame) -> list[dict[str, Any]]:
    shown = frame.tail(_PREVIEW_ROWS).reset_index()
    shown = shown.astype(object).where(shown.notna(), None)
    return [{str(k): _plain(v) for k, v in row.items()} for row in shown.to_dict("records")]


def _plain(value: Any) -> Any:
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return value if isinstance(value, str | int | float | bool) or value is None else str(value)


@tool("web_api", phase="discover", public=True)
def list_apis(ctx: ToolContext) -> dict[str, Any]:
    """List the web APIs xhelio can call and whether web and literature search are on.

    The APIs are NOAA SWPC, NASA DONKI and any the user added.
    """
    access = web_access(ctx)
    return {
        "apis": [api.summary() for api in access.apis.apis.values()],
        "search": access.status(),
    }


@tool("web_api", phase="discover", public=True)
def describe_api(ctx: ToolContext, name: str) -> dict[str, Any]:
    """Describe one web API: its endpoints and their parameters.

    Args:
        name: The API's name from list_apis, e.g. 'swpc' or 'donki'.
    """
    api = web_access(ctx).apis.get(name)
    return {
        **api.summary(),
        "description": api.description,
        "citation": api.citation,
        "endpoints": [e.to_dict() for e in api.endpoints.values()],
    }


@tool("web_api", phase="fetch", produces=Produces(result_field="label"), public=True)
def call_api(
    ctx: ToolContext,
    api: str,
    endpoint: str,
    params: dict[str, str] | None = None,
    output_label: str | None = None,
) -> dict[str, Any]:
    """Call a described web API endpoint; the answer is stored as data, with its source.

    Args:
        api: The API's name, e.g. 'swpc' or 'donki'.
        endpoint: The endpoint's name from describe_api, e.g. 'planetary_k_index' or 'CME'.
        params: Its parameters, e.g. {"startDate": "2024-05-08", "endDate": "2024-05-15"}.
        output_label: Label for the stored table (default: api.endpoint plus the dates).
    """
    table = web_access(ctx).apis.call(api, endpoint, params or {})
    base = {"api": table.api, "endpoint": table.endpoint, "source": table.url}
    base["citation"] = table.citation
    if table.frame.empty:
        return {**base, "label": None, "rows": 0, "message": f"{table.title}: nothing listed."}
    label = _checked_label(output_label, default_label(table.api, table.endpoint, table.params))
    entry = api_entry(table, label)
    ctx.store.put(entry)
    ctx.session.events.publish(
        "data_stored", tool="call_api", summary=f"{label} ({entry.points} rows from {table.url})"
    )
    return {
        **base,
        **entry_summary(entry),
        "rows": entry.points,
        "last_rows": _preview(table.frame),
    }


def _search(
    ctx: ToolContext, kind: SearchKind, query: str, rows: int, label: str | None
) -> dict[str, Any]:
    provider, hits = web_access(ctx).search(kind, query, rows)
    result: dict[str, Any] = {"provider": provider.name, "query": query, "hits": len(hits)}
    result["results"] = [h.to_dict() for h in hits]
    if not hits:
        return {**result, "label": None, "message": f"No {kind} results for {query!r}."}
    slug = re.sub(r"[^a-z0-9]+", "_", query.lower()).strip("_")[:40] or "results"
    name = _checked_label(label, f"{'papers' if kind == 'literature' else 'web'}.{slug}")
    ctx.store.put(_hits_entry(hits, name, provider.name, query))
    return {**result, "label": name}


def _hits_entry(hits: list[SearchHit], label: str, provider: str, query: str) -> DataEntry:
    frame = pd.DataFrame([h.to_dict() for h in hits])
    return DataEntry(
        label,
        frame,
        {str(c): "" for c in frame.columns},
        f"{provider} search results for {query!r}",
        f"search/{provider}",
        None,
        False,
        meta={
            "citation": {"dataset": f"{provider} search: {query}"},
            "links": frame["url"].tolist(),
        },
    )


@tool("literature", produces=Produces(result_field="label"), public=True)
def search_literature(
    ctx: ToolContext, query: str, rows: int = 10, output_label: str | None = None
) -> dict[str, Any]:
    """Search the literature (NASA ADS) for papers; each result has a link to cite.

    Args:
        query: What to look for, e.g. 'May 2024 geomagnetic storm CME' or an ADS query.
        rows: How many papers (1-50).
        output_label: Label for the stored list (default: papers.<query words>).
    """
    return _search(ctx, "literature", query, rows, output_label)


@tool("literature", produces=Produces(result_field="label"), public=True)
def search_web(
    ctx: ToolContext, query: str, rows: int = 10, output_label: str | None = None
) -> dict[str, Any]:
    """Search the web (the configured search service); each result has a link to cite.

    Args:
        query: What to look for.
        rows: How many results (1-50).
        output_label: Label for the stored list (default: web.<query words>).
    """
    return _search(ctx, "web", query, rows, output_label)


API_TOOLS = [list_apis, describe_api, call_api, search_literature, search_web]
