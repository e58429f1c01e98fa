"""Data that keeps its meaning: cleaning, units, scaled indices, citations, figure text."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from servers.cdas_server import CdasTestServer
from xhelio.catalog.model import DatasetInfo
from xhelio.cli.main import app
from xhelio.data.arrays import entry_from_parameter
from xhelio.data.meaning import (
    citation_for,
    citation_text,
    display_units,
    prefers_log_colour,
    scale_factor,
)
from xhelio.data.store import DataStore
from xhelio.render.figure import render_plotly_json
from xhelio.sources.base import ParameterData

runner = CliRunner(env={"COLUMNS": "200"})
DE2 = "de2_ion2s_rpa_19830213_v01.cdf"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("Km/s", "km/s"),
        ("km/sec", "km/s"),
        ("Per cc", "cm^-3"),
        ("#/cc", "cm^-3"),
        ("ions/cc", "cm^-3"),
        ("cm!E-2!N", "cm^-2"),
        ("cm!u-3!n", "cm^-3"),
        ("cm!E-2!Nsr!E-1!Nsec!E-1!NMeV!E-1!N", "cm^-2 sr^-1 s^-1 MeV^-1"),
        ("R!dE!n", "R_E"),
        ("nT", "nT"),
        ("", ""),
    ],
)
def test_units_are_normalised_for_display(raw: str, shown: str) -> None:
    assert display_units(raw) == shown


def test_scaled_index_and_log_colour_rules() -> None:
    kp = "Kp - 3-hour Kp*10 (Kp=1-,1,1+ corresponds to 7,10,13), fromNGDC"
    assert scale_factor("KP", kp) == 10
    assert scale_factor("BZ_GSM", "Bz, GSM") is None
    assert prefers_log_colour("Ion_Flux", "cm!E-2!N s!E-1!N sr!E-1!N MeV!E-1!N")
    assert prefers_log_colour("PSD", "nT^2/Hz")
    assert prefers_log_colour("counts", "")
    assert not prefers_log_colour("PitchAngle", "deg")


def test_citation_carries_doi_pi_provider_and_acknowledgement() -> None:
    cited = citation_for(
        "AC_H2_ULE", "10.48322/agmq-ex61", "G. Mason", provider="P", acknowledgement="Thank P."
    )
    assert cited["doi"] == "10.48322/agmq-ex61" and cited["pi"] == "G. Mason"
    assert cited["doi_url"] == "https://doi.org/10.48322/agmq-ex61"
    assert (cited["provider"], cited["acknowledgement"]) == ("P", "Thank P.")
    assert citation_text(cited) == "Data: AC_H2_ULE; PI G. Mason; doi:10.48322/agmq-ex61; via P"
    assert "via" not in citation_text(citation_for("X"))  # no provider known: none invented
    assert citation_for("X", "doi:10.1/abc")["doi"] == "10.1/abc"


def _kp_entry() -> ParameterData:
    index = pd.date_range("2024-01-01", periods=8, freq="3h", tz="UTC", name="time")
    frame = pd.DataFrame({"KP": [7.0, 10, 13, 30, 40, 33, 20, 10]}, index=index)
    return ParameterData(
        "KP", frame, units="", description="Kp - 3-hour Kp*10 (Kp=1-,1,1+ is 7,10,13)"
    )


def test_figure_says_scale_title_citation_and_keeps_single_legend() -> None:
    info = DatasetInfo(
        "OMNI2_H0_MRG1HR",
        title="OMNI hourly",
        mission_id="omni",
        instrument="Solar wind and indices",
        pi_name="N. Papitashvili",
        doi="10.48322/1shr-ht18",
    )
    store = DataStore()
    store.put(entry_from_parameter("OMNI2_H0_MRG1HR", _kp_entry(), info))
    result = render_plotly_json({"data": [{"data_label": "OMNI2_H0_MRG1HR.KP"}]}, store)
    layout = result.figure["layout"]
    assert "KP x10" in layout["yaxis"]["title"]["text"]
    assert layout["title"]["text"] == "OMNI Solar wind and indices \u2014 OMNI2_H0_MRG1HR"
    trace = result.figure["data"][0]
    assert trace["showlegend"] is True
    citation = [a for a in layout["annotations"] if a.get("name") == "xhelio-citation"]
    assert (
        "doi:10.48322/1shr-ht18" in citation[0]["text"] and "N. Papitashvili" in citation[0]["text"]
    )


def test_long_y_titles_wrap_inside_the_panel() -> None:
    index = pd.date_range("2024-01-01", periods=5, freq="1h", tz="UTC", name="time")
    frame = pd.DataFrame({"V": np.arange(5.0)}, index=index)
    long = "Bulk flow speed of the proton population"
    store = DataStore()
    store.put(entry_from_parameter("X", ParameterData("V", frame, "km per sec", long)))
    result = render_plotly_json({"data": [{"data_label": "X.V"}]}, store)
    title = result.figure["layout"]["yaxis"]["title"]["text"]
    assert "<br>" in title and title.endswith("(km/s)")
    assert all(len(line) <= 40 for line in title.split("<br>"))


@pytest.fixture
def de2(real_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CdasTestServer]:
    with CdasTestServer() as server:
        server.add_file(
            "DE2_ION2S_RPA",
            real_data / DE2,
            datetime(1983, 2, 13, tzinfo=UTC),
            datetime(1983, 2, 14, tzinfo=UTC),
        )
        monkeypatch.setenv("XHELIO_CDAS_URL", server.url)
        yield server


def test_valid_range_is_opt_in_and_counted_on_a_real_file(
    de2: CdasTestServer, tmp_path: Path
) -> None:
    base = ["fetch", "DE2_ION2S_RPA", "glon", "--source", "cdf", "-t", "1983-02-13"]
    out = tmp_path / "glon.csv"
    result = runner.invoke(app, [*base, "-o", str(out)])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out)
    assert int((table["glon [deg]"] < 0).sum()) == 859  # genuine western longitudes are kept
    masked = runner.invoke(app, [*base, "--valid-range"])
    assert masked.exit_code == 0, masked.output
    assert "masked 859 value(s) outside VALIDMIN/VALIDMAX [0, 360]" in masked.output.replace(
        "\n", ""
    )
