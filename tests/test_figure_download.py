"""A figure downloaded from the page is not an analysis step (issue 26).

Exporting the current figure over REST writes the file but records no operation, so a
pipeline saved afterwards has no export step.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from server_fixtures import Api, hapi, live_api  # noqa: F401  (fixture)
from servers.catalog_hapi import CatalogHapiServer


@pytest.fixture(scope="module")
def api(hapi: CatalogHapiServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:  # noqa: F811
    yield from live_api(tmp_path_factory.mktemp("download-home"), hapi.url)


def _tools(api: Api, sid: str) -> list[str]:
    operations = api.client.get(f"/sessions/{sid}/operations").json()["operations"]
    return [op["tool"] for op in operations]


def test_downloading_the_figure_records_no_step(api: Api) -> None:
    sid = api.client.post("/sessions", json={}).json()["id"]
    body = {"dataset_id": "AC_H1_MFI", "parameter_id": "Magnitude", "time_range": "2024-01-01"}
    label = api.client.post(f"/sessions/{sid}/fetch", json=body).json()["label"]
    assert api.client.post(f"/sessions/{sid}/plot", json={"labels": [label]}).status_code == 200
    before = _tools(api, sid)
    assert before[-1] == "render_plotly_json"
    for fmt in ("html", "png"):
        file = api.client.get(f"/sessions/{sid}/figure/export", params={"format": fmt})
        assert file.status_code == 200 and len(file.content) > 1000
    assert _tools(api, sid) == before


def test_the_registered_sources_are_listed(api: Api) -> None:
    listed = api.client.get("/catalog/sources").json()
    names = [s["name"] for s in listed["sources"] if s["usable"]]
    assert {"hapi", "cdf"} <= set(names)
    assert listed["default"] in names
