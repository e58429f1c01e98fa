"""Sources register themselves: a plugin from a separate package works end to end.

`tests/plugins` holds packages "installed by hand" (a ``*.dist-info`` with
``entry_points.txt``): on `sys.path`, importlib.metadata registers their sources exactly
as after ``pip install``. The demo source is fetched, cached, plotted, exported, found
in the one search and replayed in a saved pipeline; the broken one is reported, and
never stops the others.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from servers.hapi_server import HapiTestServer, make_info, synthetic_frame
from xhelio.api.assistant import Assistant
from xhelio.cli.main import app
from xhelio.config import load_settings
from xhelio.errors import UserError
from xhelio.pipelines.extract import extract_pipeline
from xhelio.pipelines.model import TIME_RANGE_VAR
from xhelio.pipelines.replay import replay_pipeline
from xhelio.pipelines.store import PipelineStore
from xhelio.services import Services
from xhelio.sources.cache_front import SourceBehindCache
from xhelio.sources.registry import make_source, registrations, source_names
from xhelio.tools.workspace import Workspace, open_workspace

PLUGINS = Path(__file__).parent / "plugins"
DAY = "2024-01-01"
FEBRUARY_DAY = "2024-02-01"


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(PLUGINS))
    yield


def _demo(services: Services) -> Any:
    """The demo source object inside the cache wrapper, to see what reached it."""
    source = services.source("demo")
    assert isinstance(source, SourceBehindCache)
    return source.inner


def _call(ws: Workspace, tool: str, **args: Any) -> dict[str, Any]:
    result = ws.funnel.call(tool, args, caller="test").to_dict()
    assert result.get("status", "ok") == "ok", result
    return result


def test_plugin_registers_beside_the_builtins_and_a_broken_one_is_reported(
    plugins: None,
) -> None:
    regs = {r.name: r for r in registrations(load_settings())}
    assert {"hapi", "cdf", "demo", "broken"} <= set(regs)
    assert regs["demo"].usable and regs["demo"].origin.startswith("xhelio-demo-source")
    assert not regs["broken"].usable and "libnothing" in regs["broken"].problem
    names = source_names(load_settings())
    assert set(names[:2]) == {"hapi", "cdf"} and "demo" in names and "broken" not in names


def test_without_the_plugin_its_name_is_unknown_and_the_error_lists_the_names() -> None:
    with pytest.raises(UserError) as caught:
        make_source("demo", load_settings())
    assert "Unknown data source 'demo'" in caught.value.message
    assert "Registered sources: cdf, hapi, pds." in caught.value.message


def test_a_broken_plugin_is_a_clear_user_error_when_asked_for(plugins: None) -> None:
    with pytest.raises(UserError, match="libnothing"):
        make_source("broken", load_settings())


def test_plugin_source_is_fetched_cached_plotted_exported_found_and_replayed(
    plugins: None,
) -> None:
    with Services() as services:
        ws = open_workspace(services=services)
        try:
            schema = ws.funnel.registry.get("fetch_data")
            assert schema is not None
            listed = json.dumps(schema.schema["properties"]["source"])
            assert '"demo"' in listed and '"hapi"' in listed and '"broken"' not in listed

            found = _call(ws, "search_datasets", query="demo wave amplitude")["results"]
            assert found[0]["dataset_id"] == "DEMO_WAVE_1MIN" and found[0]["source"] == "demo"

            fetched = _call(
                ws,
                "fetch_data",
                dataset_id="DEMO_WAVE_1MIN",
                parameter_id="amplitude",
                time_range=DAY,
                source="demo",
            )
            assert fetched["points"] == 1440 and fetched["units"] == "nT"
            demo = _demo(services)
            assert len(demo.fetches) == 1
            entry = ws.session.store.get("DEMO_WAVE_1MIN.amplitude")
            assert entry.citation["provider"] == "Demo Observatory"
            assert entry.citation["doi"] == "10.99999/demo-wave"

            figure = {
                "data": [{"type": "scatter", "data_label": "DEMO_WAVE_1MIN.amplitude"}],
                "layout": {"title": {"text": "Demo wave"}},
            }
            _call(ws, "render_plotly_json", figure=figure)
            plotted = ws.session.plot.current
            assert plotted is not None
            assert "via Demo Observatory" in json.dumps(plotted.figure["layout"])

            csv = Path(_call(ws, "save_data", label=entry.label, format="csv")["path"])
            assert len(pd.read_csv(csv, comment="#")) == 1440
            parquet = Path(_call(ws, "save_data", label=entry.label, format="parquet")["path"])
            stored = json.loads(pq.read_schema(parquet).metadata[b"xhelio"])
            assert stored["citations"][0]["provider"] == "Demo Observatory"

            pipeline = extract_pipeline(ws.session.operations, "Demo wave day")
            PipelineStore(services.settings).save(pipeline)
        finally:
            ws.close()

        fresh = open_workspace(services=services)  # nothing in memory: the cache serves it
        try:
            loaded = PipelineStore(services.settings).load("Demo wave day")
            again = replay_pipeline(loaded, fresh.funnel, {TIME_RANGE_VAR: DAY})
            assert again.status == "completed", again.summary()
            assert len(demo.fetches) == 1  # the same day came from the fragment cache
            other = replay_pipeline(loaded, fresh.funnel, {TIME_RANGE_VAR: FEBRUARY_DAY})
            assert other.status == "completed", other.summary()
            assert len(demo.fetches) == 2 and demo.fetches[-1][0] == "DEMO_WAVE_1MIN"
            replayed = fresh.session.store.get("DEMO_WAVE_1MIN.amplitude").data
            assert replayed.index[0] == pd.Timestamp("2024-02-01", tz="UTC")
        finally:
            fresh.close()
    assert demo.closed  # Services closes every source it opened


def test_offline_mode_finds_and_plots_a_plugin_dataset_the_catalog_lacks(plugins: None) -> None:
    with Assistant(load_settings()) as xh:
        sid = xh.new_session()
        said = xh.run("plot demo wave amplitude for 2024-01-01", session_id=sid)
        assert said.error is None, said.answer
        assert "DEMO_WAVE_1MIN" in said.answer and "'demo'" in said.answer
        with xh.hub.checkout(sid) as entry:
            assert entry.workspace is not None
            assert entry.workspace.session.store.labels() == ["DEMO_WAVE_1MIN.amplitude"]
            assert entry.workspace.session.plot.current is not None
        both = xh.run("DEMO_WAVE_1MIN for 2024-01-02", session_id=sid)  # the id: all its series
        assert both.error is None and "phase" in both.answer and "amplitude" in both.answer
        nothing = xh.run("plot zorblax quux for 2024-01-01", session_id=sid)
        assert "DEMO" not in nothing.answer  # no archive guessed at


def test_parameters_and_coverage_of_a_plugin_dataset_are_listed(plugins: None) -> None:
    with Services() as services:
        ws = open_workspace(services=services)
        try:
            listed = _call(ws, "list_parameters", dataset_id="DEMO_TEMP_1H", source="demo")
            assert [p["name"] for p in listed["parameters"]] == ["temperature"]
            covered = _call(ws, "get_data_availability", dataset_id="DEMO_TEMP_1H", source="demo")
            assert covered["start"].startswith("2000-01-01")
        finally:
            ws.close()


def test_xhelio_sources_lists_every_source_and_reports_the_broken_plugin(
    plugins: None,
) -> None:
    result = CliRunner().invoke(app, ["sources", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.output)}
    assert rows["broken"]["state"] == "broken" and "libnothing" in rows["broken"]["detail"]
    assert rows["demo"]["state"] == "local" and rows["demo"]["datasets"] == 2
    assert rows["demo"]["provider"] == "Demo Observatory"
    # XHELIO_HAPI_URL points at a closed loopback port in tests: offline, not broken
    assert rows["hapi"]["state"] == "offline" and rows["hapi"]["datasets"] > 1000
    assert rows["cdf"]["state"] == "offline"
    table = CliRunner().invoke(app, ["sources"])
    assert table.exit_code == 0 and "libnothing" in table.output


def test_a_configured_hapi_server_is_a_source_with_its_own_catalog(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start, stop = "2024-01-01", "2024-01-03"
    with HapiTestServer(version="3.3", formats=("csv",)) as server:
        server.add_dataset(
            "LAB_DENSITY",
            make_info(start, stop, [("n", "cm^-3", None)], cadence="PT1H"),
            synthetic_frame(start, stop, "PT1H", ["n"]),
            title="Laboratory plasma density",
        )
        monkeypatch.setenv("XHELIO_HAPI_SERVERS", f"lab={server.url}")
        assert "lab" in source_names(load_settings())
        with Services() as services:
            hits = services.search("laboratory plasma density").hits
            assert [(h.dataset_id, h.source) for h in hits][:1] == [("LAB_DENSITY", "lab")]
            ws = open_workspace(services=services, ephemeral=True)
            try:
                args = {"dataset_id": "LAB_DENSITY", "parameter_id": "n", "source": "lab"}
                fetched = _call(ws, "fetch_data", time_range="2024-01-01", **args)
                assert fetched["points"] == 24
                citation = ws.session.store.get("LAB_DENSITY.n").citation
            finally:
                ws.close()
        # the server's /about title names it; never "NASA CDAWeb"
        assert citation["provider"] == "xhelio loopback HAPI server"
        assert citation["provider_url"] == server.url
        server.stop()
        # the catalog was kept: searching works with the server gone
        with Services() as services:
            hits = services.search("laboratory density").hits
            assert hits and hits[0].source == "lab"


def test_configured_server_names_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XHELIO_HAPI_SERVERS", "Bad Name=http://x")
    with pytest.raises(UserError, match="lower-case"):
        load_settings()
    monkeypatch.setenv("XHELIO_HAPI_SERVERS", "lab=ftp://x")
    with pytest.raises(UserError, match="http"):
        load_settings()


def test_cdaweb_citation_names_cdaweb_only_when_the_data_comes_from_cdaweb(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    local = make_source("hapi", load_settings(), cached=False)
    try:
        cited = local.cite("AC_H2_MFI")
    finally:
        local.close()
    assert cited.provider == "the server at 127.0.0.1:9" and not cited.acknowledgement
    assert cited.doi and cited.title  # the catalog still knows the dataset
    monkeypatch.setenv("XHELIO_HAPI_URL", "https://cdaweb.gsfc.nasa.gov/hapi")
    real = make_source("hapi", load_settings(), cached=False)
    try:
        cited = real.cite("AC_H2_MFI")
    finally:
        real.close()
    assert cited.provider == "NASA CDAWeb" and "CDAWeb" in cited.acknowledgement


def test_a_default_source_nobody_registered_is_a_clear_error_when_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XHELIO_DEFAULT_SOURCE", "nope")
    with Services() as services, pytest.raises(UserError, match="Registered sources: cdf, hapi"):
        services.source()
