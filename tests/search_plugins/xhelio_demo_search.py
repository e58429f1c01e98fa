"""A search provider a separate package registers (test plugin for the search interface)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xhelio.webapis.search import SearchHit


@dataclass(frozen=True)
class DemoProvider:
    """A web search provider answering from a fixed list (no network)."""

    name: str = "demo"
    kind: str = "web"
    url: str = "https://search.demo.example"
    user_configured: bool = False

    def off_reason(self) -> str:
        return ""

    def search(self, client: Any, query: str, rows: int) -> list[SearchHit]:
        hit = SearchHit(f"About {query}", "https://search.demo.example/1", provider=self.name)
        return [hit][:rows]


def make_provider(settings: Any) -> DemoProvider:
    return DemoProvider()
