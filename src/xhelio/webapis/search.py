"""Pluggable search: literature (NASA ADS) and web search as providers of one interface.

A provider has a `name`, a `kind` (``literature`` or ``web``), the address it calls
(`url`, which joins the allowlist), says why it is off (`off_reason`: "" when ready) and
`search`es through the guarded `WebClient`, returning `SearchHit`s with a link each.
Built in: `AdsProvider` (needs ``ads_token``) and `SearxProvider` (a SearXNG-style JSON
endpoint at ``web_search_url``). A package adds its own like a data source does: an
entry point in the group ``xhelio.search_providers`` whose value is a callable taking the
`Settings` and returning a provider (one that fails to load is logged and left out). An
unconfigured provider stays listed, off, and a search through it says how to turn it on.
Imports `config`, `errors` and `webapis`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Literal, Protocol, cast

from xhelio.config import Settings
from xhelio.webapis.client import WebClient
from xhelio.webapis.schema import SchemaDriftError, problems

__all__ = [
    "AdsProvider",
    "SearchHit",
    "SearchKind",
    "SearchProvider",
    "SearxProvider",
    "search_providers",
]

SearchKind = Literal["literature", "web"]
ENTRY_POINT_GROUP = "xhelio.search_providers"
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchHit:
    """One result: what it is, where to read it, and who found it."""

    title: str
    url: str
    snippet: str = ""
    authors: str = ""
    year: str = ""
    ident: str = ""
    provider: str = ""

    def to_dict(self) -> dict[str, str]:
        """JSON form (one row of the results table)."""
        return {
            "title": self.title,
            "url": self.url,
            "authors": self.authors,
            "year": self.year,
            "id": self.ident,
            "snippet": self.snippet,
            "provider": self.provider,
        }


class SearchProvider(Protocol):
    """What a search provider offers (see the module doc)."""

    @property
    def name(self) -> str:
        """Its name (``ads``, ``web``, a plugin's)."""
        ...

    @property
    def kind(self) -> SearchKind:
        """``literature`` or ``web``."""
        ...

    @property
    def url(self) -> str:
        """The address it calls (its host joins the allowlist)."""
        ...

    @property
    def user_configured(self) -> bool:
        """Its address came from the user (so it may be a loopback or private address)."""
        ...

    def off_reason(self) -> str:
        """Why the provider cannot search ("" when it can)."""
        ...

    def search(self, client: WebClient, query: str, rows: int) -> list[SearchHit]:
        """Up to `rows` hits for `query`."""
        ...


def _checked(value: Any, schema: dict[str, Any], what: str) -> None:
    found = problems(value, schema)
    if found:
        raise SchemaDriftError(
            f"{what} answered in an unexpected format ({'; '.join(found)}); the service has "
            "changed its format."
        )


_ADS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["response"],
    "properties": {
        "response": {
            "type": "object",
            "required": ["docs"],
            "properties": {
                "docs": {
                    "type": "array",
                    "items": {"type": "object", "required": ["bibcode"]},
                }
            },
        }
    },
}


@dataclass(frozen=True)
class AdsProvider:
    """NASA ADS literature search (``ads_url``, ``ads_token``)."""

    url: str
    token: str
    user_configured: bool = False
    name: str = "ads"
    kind: SearchKind = "literature"

    def off_reason(self) -> str:
        """Off without a token."""
        if self.token:
            return ""
        return (
            "literature search (NASA ADS) is off: set XHELIO_ADS_TOKEN (or ads_token in the "
            "config file) to your ADS API token from ui.adsabs.harvard.edu (Account > API Token)"
        )

    def search(self, client: WebClient, query: str, rows: int) -> list[SearchHit]:
        """ADS search/query: title, authors, year, bibcode, DOI, abstract."""
        answer = client.get_json(
            f"{self.url}/search/query",
            params={
                "q": query,
                "rows": str(rows),
                "fl": "title,author,year,bibcode,doi,abstract",
                "sort": "score desc",
            },
            headers={"Authorization": f"Bearer {self.token}"},
            what="NASA ADS search",
        )
        _checked(answer.value, _ADS_SCHEMA, "NASA ADS search")
        docs = cast(list[dict[str, Any]], answer.value["response"]["docs"])
        return [_ads_hit(doc, self.name) for doc in docs[:rows]]


def _first(value: Any) -> str:
    if isinstance(value, list):
        items = cast(list[Any], value)
        return str(items[0]) if items else ""
    return "" if value is None else str(value)


def _ads_hit(doc: dict[str, Any], provider: str) -> SearchHit:
    bibcode = str(doc["bibcode"])
    authors = [str(a) for a in cast(list[Any], doc.get("author") or [])]
    shown = "; ".join(authors[:3]) + (" et al." if len(authors) > 3 else "")
    doi = _first(doc.get("doi"))
    return SearchHit(
        title=_first(doc.get("title")) or bibcode,
        url=f"https://ui.adsabs.harvard.edu/abs/{bibcode}/abstract",
        snippet=_first(doc.get("abstract"))[:300],
        authors=shown,
        year=_first(doc.get("year")),
        ident=f"{bibcode} doi:{doi}" if doi else bibcode,
        provider=provider,
    )


_SEARX_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["results"],
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["url", "title"],
                "properties": {"url": {"type": "string"}, "title": {"type": "string"}},
            },
        }
    },
}


@dataclass(frozen=True)
class SearxProvider:
    """Web search through a SearXNG-style JSON endpoint (``web_search_url``)."""

    url: str
    key: str = ""
    user_configured: bool = True
    name: str = "web"
    kind: SearchKind = "web"

    def off_reason(self) -> str:
        """Off without an endpoint."""
        if self.url:
            return ""
        return (
            "web search is off: set XHELIO_WEB_SEARCH_URL (or web_search_url in the config "
            "file) to a SearXNG-compatible search endpoint, e.g. https://searx.example.org/search"
        )

    def search(self, client: WebClient, query: str, rows: int) -> list[SearchHit]:
        """GET ``url?q=...&format=json``; title, link and snippet of each result."""
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        answer = client.get_json(
            self.url, params={"q": query, "format": "json"}, headers=headers, what="Web search"
        )
        _checked(answer.value, _SEARX_SCHEMA, "Web search")
        results = cast(list[dict[str, Any]], answer.value["results"])
        return [
            SearchHit(
                title=str(r["title"]),
                url=str(r["url"]),
                snippet=str(r.get("content") or "")[:300],
                provider=self.name,
            )
            for r in results[:rows]
        ]


def search_providers(settings: Settings) -> list[SearchProvider]:
    """The built-in providers, then those packages register (entry point group)."""
    ads_default = Settings.ads_url
    found: list[SearchProvider] = [
        AdsProvider(settings.ads_url, settings.ads_token, settings.ads_url != ads_default),
        SearxProvider(settings.web_search_url, settings.web_search_key),
    ]
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            make = point.load()
            found.append(cast(SearchProvider, make(settings)))
        except Exception as exc:  # a broken plugin never takes the other providers down
            _log.warning("Search provider %r could not be loaded: %s", point.name, exc)
    return found
