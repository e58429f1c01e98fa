"""Shared by the request-vs-data check tests: a workspace and a fetch record.

The `workspace` fixture fetches from the catalog-wide loopback HAPI server;
`fetch_record` is the operations-log record of a successful fetch that `check_turn` reads.
Import `catalog_workspace` (registered as the fixture `workspace`) and `fetch_record`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from servers.catalog_hapi import CatalogHapiServer
from xhelio.config import load_settings
from xhelio.tools.workspace import Workspace, open_workspace


@pytest.fixture(name="workspace")
def catalog_workspace(monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    """A workspace whose fetches go to a loopback HAPI server serving the whole catalog."""
    with CatalogHapiServer(max_rows=500) as server:
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        ws = open_workspace(settings=load_settings())
        yield ws
        ws.close()


def fetch_record(dataset: str, parameter: str, window: str) -> dict[str, Any]:
    """The operations-log record of a fetch of `dataset.parameter` over `window`."""
    return {
        "tool": "fetch_data",
        "status": "ok",
        "args": {"dataset_id": dataset, "parameter_id": parameter, "time_range": window},
        "result": {"points": 10, "label": f"{dataset}.{parameter}"},
        "phase": "fetch",
        "produced": [f"{dataset}.{parameter}"],
        "time_ranges": {"time_range": window},
    }
