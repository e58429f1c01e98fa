"""`WebAccess`: the web APIs and search providers of one settings, behind one allowlist.

`open_web` loads the API descriptions and the search providers and builds one
`WebApis` whose allowlist holds the hosts of both. `search` runs the first ready
provider of a kind; when none is ready it raises a `SearchOffError` that says how to turn
one on. Imports `config`, `errors` and `webapis`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xhelio.config import Settings
from xhelio.errors import UserError
from xhelio.sources.http import RetryPolicy
from xhelio.webapis.search import SearchHit, SearchKind, SearchProvider, search_providers
from xhelio.webapis.service import WebApis

__all__ = ["SearchOffError", "WebAccess", "open_web"]


class SearchOffError(UserError):
    """No search provider of the kind asked for is configured."""


@dataclass
class WebAccess:
    """Described APIs and search providers sharing one guarded client."""

    apis: WebApis
    providers: list[SearchProvider]

    def provider(self, kind: SearchKind, name: str | None = None) -> SearchProvider:
        """The provider called `name`, else the first ready one of `kind`.

        Raises:
            SearchOffError: None is configured (the message says how to configure one).
            UserError: No provider is called `name`.
        """
        of_kind = [p for p in self.providers if p.kind == kind]
        if name:
            chosen = [p for p in of_kind if p.name == name.strip().lower()]
            if not chosen:
                known = ", ".join(p.name for p in of_kind) or "none"
                raise UserError(f"No {kind} search provider {name!r}; known: {known}.")
            of_kind = chosen
        for provider in of_kind:
            if not provider.off_reason():
                return provider
        reasons = "; ".join(p.off_reason() for p in of_kind) or f"no {kind} search provider"
        raise SearchOffError(f"Search is off: {reasons}.")

    def search(
        self, kind: SearchKind, query: str, rows: int = 10, name: str | None = None
    ) -> tuple[SearchProvider, list[SearchHit]]:
        """Search with the chosen provider; (provider, hits)."""
        if not query.strip():
            raise UserError("Give words to search for.")
        provider = self.provider(kind, name)
        return provider, provider.search(self.apis.client, query.strip(), max(1, min(rows, 50)))

    def status(self) -> list[dict[str, str]]:
        """Each provider: name, kind and whether it is on (and why not)."""
        return [
            {"name": p.name, "kind": p.kind, "status": p.off_reason() or "on"}
            for p in self.providers
        ]


def open_web(settings: Settings, retry: RetryPolicy | None = None) -> WebAccess:
    """The web APIs and search providers of `settings`."""
    providers = search_providers(settings)
    hosts = [(p.url, p.user_configured) for p in providers if p.url]
    return WebAccess(WebApis(settings, extra_hosts=hosts, retry=retry), providers)
