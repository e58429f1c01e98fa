"""Known HAPI servers (AMDA, CSA, SSCWeb, INTERMAGNET, LISIRD...) join the one search on request.

`xhelio catalog refresh --server NAME` (or its address) keeps the server's catalog; the
server is then a source of that name: searched, fetched and cited with its provider. The
registry is data; here its AMDA entry points at a loopback HAPI server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from servers.hapi_server import HapiTestServer, make_info, synthetic_frame
from xhelio.cli.main import app
from xhelio.config import load_settings
from xhelio.services import Services
from xhelio.sources import known_servers
from xhelio.sources.known_servers import KnownServer
from xhelio.sources.registry import source_names
from xhelio.tools.workspace import open_workspace

PROVIDER = "AMDA (CDPP, IRAP Toulouse)"


@pytest.fixture
def amda(monkeypatch: pytest.MonkeyPatch) -> Iterator[HapiTestServer]:
    start, stop = "2024-01-01", "2024-01-03"
    with HapiTestServer(version="3.3", formats=("csv",)) as server:
        server.add_dataset(
            "clust3-fgm-prp",
            make_info(start, stop, [("c3_b_gse", "nT", None)], cadence="PT1H"),
            synthetic_frame(start, stop, "PT1H", ["c3_b_gse"]),
            title="Cluster 3 FGM magnetic field spin resolution",
        )
        loopback = KnownServer("amda", server.url, PROVIDER, "https://amda.irap.omp.eu")
        others = [s for s in known_servers.known_servers() if s.name != "amda"]
        monkeypatch.setattr(known_servers, "known_servers", lambda: (loopback, *others))
        yield server


def test_the_registry_names_the_archives_with_providers() -> None:
    servers = known_servers.known_servers()
    names = [s.name for s in servers]
    assert {"amda", "csa", "sscweb", "intermagnet", "lisird"} <= set(names)
    assert len(names) == len(set(names))
    for server in servers:
        assert re.fullmatch(r"[a-z][a-z0-9_-]{0,39}", server.name)
        assert server.url.startswith(("https://", "http://")) and server.url.endswith("/hapi")
        assert server.provider and "CDAWeb" not in server.provider


def test_a_known_server_is_no_source_until_refreshed(amda: HapiTestServer) -> None:
    assert "amda" not in source_names(load_settings())
    with Services() as services:
        services.search("Cluster 3 FGM magnetic field")
    assert amda.requests == []  # a server nobody refreshed is never asked


def test_refresh_by_name_brings_the_catalog_into_search_fetch_and_citation(
    amda: HapiTestServer,
) -> None:
    result = CliRunner().invoke(app, ["catalog", "refresh", "--server", "amda"])
    assert result.exit_code == 0, result.output
    assert "1 datasets" in result.output and "source 'amda'" in result.output
    assert "amda" in source_names(load_settings())
    listed = CliRunner().invoke(app, ["sources", "--json"])
    rows = {r["name"]: r for r in json.loads(listed.output)}
    assert rows["amda"]["provider"] == PROVIDER and rows["amda"]["datasets"] == 1
    with Services() as services:
        hits = services.search("Cluster 3 FGM magnetic field").hits
        assert ("clust3-fgm-prp", "amda") in [(h.dataset_id, h.source) for h in hits]
        ws = open_workspace(services=services, ephemeral=True)
        try:
            args = {"dataset_id": "clust3-fgm-prp", "parameter_id": "c3_b_gse", "source": "amda"}
            fetched = ws.funnel.call("fetch_data", {**args, "time_range": "2024-01-01"}, "test")
            assert fetched.to_dict()["points"] == 24
            citation = ws.session.store.get("clust3-fgm-prp.c3_b_gse").citation
        finally:
            ws.close()
    assert citation["provider"] == PROVIDER
    assert "amda.irap.omp.eu" in citation["acknowledgement"]


def test_refresh_by_address_finds_the_known_server(amda: HapiTestServer) -> None:
    result = CliRunner().invoke(app, ["catalog", "refresh", "--server", amda.url + "/"])
    assert result.exit_code == 0, result.output
    assert "source 'amda'" in result.output


def test_an_unknown_name_lists_the_known_servers() -> None:
    result = CliRunner().invoke(app, ["catalog", "refresh", "--server", "amdaa"])
    assert result.exit_code == 1
    assert "No HAPI server is known as 'amdaa'" in result.output
    assert "intermagnet" in result.output


def test_a_configured_server_of_the_same_name_wins(
    amda: HapiTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XHELIO_HAPI_SERVERS", f"amda={amda.url}")
    result = CliRunner().invoke(app, ["catalog", "refresh", "--server", "amda"])
    assert result.exit_code == 0, result.output
    listed = CliRunner().invoke(app, ["sources", "--json"])
    rows = [r for r in json.loads(listed.output) if r["name"] == "amda"]
    assert len(rows) == 1 and rows[0]["state"] != "broken"
