"""The PDS PPI source against a loopback stand-in of the archive serving real label formats.

The test builds its products: a PDS3 fixed-width table with its ODL ``.LBL`` (Juno FGM,
day-of-year times, folders without dates as the real archive has them) and a PDS4
character table with its XML label (Cassini MAG, ISO times, year folders, a DOI). They
are found in the shipped catalog, fetched over HTTP, read with pdr, cached, plotted,
exported and cited; the archive's failures (missing products, web pages instead of
files, damaged labels) are honest errors.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from servers.ppi_server import Column, PpiTestServer, iso_minutes, pds3_product, pds4_product
from xhelio.config import load_settings
from xhelio.errors import NoDataError, ServerError, UnknownDatasetError
from xhelio.services import Services
from xhelio.sources.registry import make_source
from xhelio.timerange import TimeRange, parse_time_range
from xhelio.tools.workspace import Workspace, open_workspace

pytest.importorskip("pdr")
pytest.importorskip("pdsmcp")

JUNO = "pds3:JNO-J-3-FGM-CAL-V1.0:DATA"
JUNO_FOLDER = "/data/JNO-J-3-FGM-CAL-V1.0/DATA/JUPITER/PC/PERI-01"
CASSINI = "urn:nasa:pds:cassini-mag-cal:data-1min-krtp"
CASSINI_FOLDER = "/data/cassini-mag-cal/data-1min-krtp"
CASSINI_DOI = "10.17189/1519605"
FILL3 = -9999.999
FILL4 = -1.0e32


def _juno_day(day: datetime, base: float) -> dict[str, bytes]:
    """One day of Juno FGM at 1-minute steps (the real cadence is 1 s; fewer rows suffice)."""
    count = 1440
    bx = base + np.arange(count) / 100.0
    bx[5] = FILL3
    by = np.full(count, -2.5)
    bz = np.linspace(0.0, 14.39, count)
    return pds3_product(
        f"FGM_JNO_L3_{day:%Y%j}PC_R60S_V01",
        iso_minutes(day, count, doy=True),
        [
            Column("BX PLANETOCENTRIC", bx, "NANOTESLA", missing=FILL3),
            Column("BY PLANETOCENTRIC", by, "NANOTESLA"),
            Column("BZ PLANETOCENTRIC", bz, "NANOTESLA"),
        ],
    )


def _cassini_day(day: datetime) -> dict[str, bytes]:
    count = 1440
    br = np.arange(count, dtype=float)
    br[10] = FILL4
    return pds4_product(
        f"{day:%Y%m%d}_FGM_KRTP_1M",
        "urn:nasa:pds:cassini-mag-cal:data-1min-krtp",
        [t + "Z" for t in iso_minutes(day, count)],
        [
            Column("BR", br, "nT", missing=FILL4, width=14),
            Column("BTHETA", np.full(count, 3.25), "nT", width=14),
        ],
        doi=CASSINI_DOI,
    )


@pytest.fixture
def archive(monkeypatch: pytest.MonkeyPatch) -> Iterator[PpiTestServer]:
    with PpiTestServer() as server:
        for n, day in enumerate((26, 27, 28)):
            server.add(JUNO_FOLDER, _juno_day(datetime(2016, 8, day, tzinfo=UTC), 100.0 * n))
        server.add(f"{CASSINI_FOLDER}/2005", _cassini_day(datetime(2005, 2, 15, tzinfo=UTC)))
        server.add(f"{CASSINI_FOLDER}/2005", _cassini_day(datetime(2005, 2, 16, tzinfo=UTC)))
        server.add(f"{CASSINI_FOLDER}/2004", _cassini_day(datetime(2004, 12, 31, tzinfo=UTC)))
        monkeypatch.setenv("XHELIO_PDS_URL", server.url)
        yield server


def _range(text: str) -> TimeRange:
    return parse_time_range(text)


def _call(ws: Workspace, tool: str, **args: Any) -> dict[str, Any]:
    result = ws.funnel.call(tool, args, caller="test").to_dict()
    assert result.get("status", "ok") == "ok", result
    return result


def test_pds3_fixed_width_table_values_times_fills_and_units(archive: PpiTestServer) -> None:
    source = make_source("pds", load_settings(), cached=False)
    try:
        got = source.fetch(
            JUNO,
            ["BX PLANETOCENTRIC", "BZ PLANETOCENTRIC"],
            _range("2016-08-27T00:00 to 2016-08-27T00:10"),
        )
    finally:
        source.close()
    bx = got["BX PLANETOCENTRIC"]
    assert bx.units == "nT" and bx.meta["raw_units"] == "NANOTESLA"
    assert bx.meta["fill"] == [FILL3]
    frame = bx.frame
    assert len(frame) == 10 and str(frame.index.tz) == "UTC"
    assert frame.index[0] == pd.Timestamp("2016-08-27T00:00", tz="UTC")  # day 240
    assert frame.index[-1] == pd.Timestamp("2016-08-27T00:09", tz="UTC")
    values = frame["BX PLANETOCENTRIC"].to_numpy()
    assert values[0] == pytest.approx(100.0) and values[4] == pytest.approx(100.04)
    assert np.isnan(values[5])  # MISSING_CONSTANT
    assert got["BZ PLANETOCENTRIC"].frame.iloc[1, 0] == pytest.approx(0.01)
    # only the day asked for was downloaded; its neighbours' tables were not
    tables = [p for p in archive.requests if p.endswith(".TAB")]
    assert tables == [f"{JUNO_FOLDER}/FGM_JNO_L3_2016240PC_R60S_V01.TAB"]


def test_pds4_table_across_year_folders_with_doi_citation(archive: PpiTestServer) -> None:
    source = make_source("pds", load_settings(), cached=False)
    try:
        got = source.fetch(
            CASSINI, ["BR", "BTHETA"], _range("2005-02-15 23:58 to 2005-02-16 00:02")
        )
        cited = source.cite(CASSINI)
    finally:
        source.close()
    br = got["BR"].frame["BR"]
    assert list(br.index) == list(
        pd.date_range("2005-02-15 23:58", periods=4, freq="min", tz="UTC")
    )
    assert br.tolist() == [1438.0, 1439.0, 0.0, 1.0]  # two products joined in time order
    assert got["BR"].units == "nT" and got["BR"].meta["fill"] == [FILL4]
    assert cited.provider == "NASA PDS PPI" and cited.doi == CASSINI_DOI
    assert cited.dataset == CASSINI and "cassini-mag-cal" in cited.title
    assert "Planetary Data System" in cited.acknowledgement
    assert not any("/2004/" in p for p in archive.requests)  # the year folder of no use


def test_pds4_fill_becomes_nan(archive: PpiTestServer) -> None:
    source = make_source("pds", load_settings(), cached=False)
    try:
        got = source.fetch(CASSINI, ["BR"], _range("2005-02-15T00:05 to 2005-02-15T00:15"))
    finally:
        source.close()
    values = got["BR"].frame["BR"]
    assert np.isnan(values.iloc[5]) and values.iloc[4] == 9.0


def test_search_finds_pds_datasets_by_mission_instrument_and_target() -> None:
    with Services() as services:
        juno = services.search("Juno magnetometer Jupiter", limit=10).hits
        cassini = services.search("Cassini MAG KRTP 1 min", limit=10).hits
        voyager = services.search("Voyager 1 magnetometer Saturn", limit=10).hits
    assert (JUNO, "pds") in [(h.dataset_id, h.source) for h in juno]
    assert CASSINI in [h.dataset_id for h in cassini if h.source == "pds"][:3]
    assert any(h.source == "pds" and "VG1-S-MAG" in h.dataset_id for h in voyager)


def test_fetch_cache_plot_export_and_cite_through_the_funnel(archive: PpiTestServer) -> None:
    with Services() as services:
        ws = open_workspace(services=services, ephemeral=True)
        try:
            found = _call(ws, "search_datasets", query="Juno magnetometer Jupiter")["results"]
            assert any(r["dataset_id"] == JUNO and r["source"] == "pds" for r in found)
            args = {"dataset_id": JUNO, "parameter_id": "BX PLANETOCENTRIC", "source": "pds"}
            fetched = _call(
                ws, "fetch_data", time_range="2016-08-27T00:00 to 2016-08-27T01:00", **args
            )
            assert fetched["points"] == 60 and fetched["units"] == "nT"
            label = f"{JUNO}.BX PLANETOCENTRIC"
            entry = ws.session.store.get(label)
            assert entry.citation["provider"] == "NASA PDS PPI"
            assert entry.citation["dataset"] == JUNO
            figure = {
                "data": [{"type": "scatter", "data_label": label}],
                "layout": {"title": {"text": "Juno FGM"}},
            }
            _call(ws, "render_plotly_json", figure=figure)
            plotted = ws.session.plot.current
            assert plotted is not None and "NASA PDS PPI" in json.dumps(plotted.figure["layout"])
            csv = Path(_call(ws, "save_data", label=label, format="csv")["path"])
            assert len(pd.read_csv(csv, comment="#")) == 60
            parquet = Path(_call(ws, "save_data", label=label, format="parquet")["path"])
            stored = json.loads(pq.read_schema(parquet).metadata[b"xhelio"])
            assert stored["citations"][0]["provider"] == "NASA PDS PPI"
        finally:
            ws.close()
        asked = len(archive.requests)
        again = open_workspace(services=services, ephemeral=True)
        try:
            _call(again, "fetch_data", time_range="2016-08-27T00:00 to 2016-08-27T01:00", **args)
        finally:
            again.close()
        assert len(archive.requests) == asked  # served by the fragment cache


def test_missing_products_and_unknown_datasets_are_honest(archive: PpiTestServer) -> None:
    source = make_source("pds", load_settings(), cached=False)
    try:
        with pytest.raises(NoDataError, match="no products"):
            source.fetch(JUNO, ["BX PLANETOCENTRIC"], _range("2016-09-15"))
        with pytest.raises(UnknownDatasetError):
            source.info("pds3:NO-SUCH-DATASET-V1.0")
        # in the catalog, but the archive has no folder for it
        with pytest.raises(UnknownDatasetError):
            source.fetch(
                "urn:nasa:pds:cassini-mag-cal:data-1sec-krtp", ["BR"], _range("2005-02-15")
            )
    finally:
        source.close()


def test_a_web_page_instead_of_a_table_is_refused_and_not_cached(
    archive: PpiTestServer,
) -> None:
    table = f"{JUNO_FOLDER}/FGM_JNO_L3_2016241PC_R60S_V01.TAB"
    archive.serve_html_instead(table)
    source = make_source("pds", load_settings(), cached=False)
    try:
        with pytest.raises(ServerError, match="web page instead of"):
            source.fetch(
                JUNO, ["BX PLANETOCENTRIC"], _range("2016-08-28T00:00 to 2016-08-28T00:10")
            )
    finally:
        source.close()


def test_a_damaged_label_is_a_clear_error(archive: PpiTestServer) -> None:
    archive.add(
        f"{CASSINI_FOLDER}/2006",
        {
            "20060101_FGM_KRTP_1M.xml": b"<Product_Observational><broken",
            "20060101_FGM_KRTP_1M.tab": b"2006-01-01T00:00:00.000Z 1.0\r\n",
        },
    )
    source = make_source("pds", load_settings(), cached=False)
    try:
        with pytest.raises(ServerError, match=r"label 20060101_FGM_KRTP_1M\.xml cannot be read"):
            source.fetch(CASSINI, ["BR"], _range("2006-01-01T00:00 to 2006-01-01T00:10"))
    finally:
        source.close()


def test_fields_come_from_the_archive_when_the_catalog_has_none(
    archive: PpiTestServer,
) -> None:
    dataset = "urn:nasa:pds:cassini-mag-cal:data-shm-hkrate"
    archive.add(
        "/data/cassini-mag-cal/data-shm-hkrate/2001",
        pds4_product(
            "20010101_SHM",
            dataset,
            [t + "Z" for t in iso_minutes(datetime(2001, 1, 1, tzinfo=UTC), 3)],
            [Column("B_SHM", [1.0, 2.0, 3.0], "nT")],
        ),
    )
    source = make_source("pds", load_settings(), cached=False)
    try:
        info = source.info(dataset)
    finally:
        source.close()
    assert [(p.name, p.units) for p in info.data_parameters] == [("B_SHM", "nT")]


def test_cli_search_and_fetch_reach_pds(archive: PpiTestServer, tmp_path: Path) -> None:
    from xhelio.cli.main import app

    runner = CliRunner()
    found = runner.invoke(app, ["catalog", "search", "Cassini", "MAG", "KRTP", "--json"])
    assert found.exit_code == 0, found.output
    assert any(
        h["dataset_id"] == CASSINI and h["source"] == "pds" for h in json.loads(found.output)
    )
    out = tmp_path / "cassini.csv"
    fetched = runner.invoke(
        app,
        [
            "fetch",
            CASSINI,
            "BTHETA",
            "--time",
            "2005-02-15T00:00 to 2005-02-15T00:30",
            "--source",
            "pds",
            "--out",
            str(out),
        ],
    )
    assert fetched.exit_code == 0, fetched.output
    written = pd.read_csv(out, comment="#")
    assert len(written) == 30 and set(written.iloc[:, -1]) == {3.25}


def test_rest_search_lists_pds_datasets(archive: PpiTestServer, tmp_path: Path) -> None:
    from server_fixtures import live_api

    for api in live_api(tmp_path / "home", "http://127.0.0.1:9/hapi"):
        found = api.client.get("/catalog/search", params={"q": "Juno magnetometer Jupiter"})
        assert found.status_code == 200
        hits = found.json()["results"]
        assert any(h["dataset_id"] == JUNO and h["source"] == "pds" for h in hits)
