"""Every dataset is cited (issue 26).

All of a figure's datasets, computed series citing their inputs, and the same citations
in written files and entry summaries.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xhelio.data.entry import DataEntry
from xhelio.data.outputs import output_metadata
from xhelio.data.store import DataStore
from xhelio.render.figure import render_plotly_json
from xhelio.tools.compute_tools import adopt_result
from xhelio.tools.data_tools import entry_summary

TIMES = pd.date_range("2024-01-01", periods=100, freq="1min", tz="UTC")
DATASETS = ["AC_H1_MFI", "WI_H0_MFI", "OMNI_HRO_1MIN", "PSP_FLD_L2_MAG_RTN_1MIN"]


def _cited(dataset: str) -> DataEntry:
    frame = pd.DataFrame({"B": np.linspace(1.0, 2.0, TIMES.size)}, index=TIMES)
    citation = {"dataset": dataset, "pi": f"PI of {dataset}", "doi": f"10.1/{dataset.lower()}"}
    return DataEntry(
        f"{dataset}.B",
        frame,
        {"B": "nT"},
        source_dataset=dataset,
        source_parameter="B",
        meta={"citation": citation},
    )


def _footer(figure: dict[str, object]) -> str:
    layout = figure["layout"]
    assert isinstance(layout, dict)
    notes = [a["text"] for a in layout.get("annotations", []) if a.get("name") == "xhelio-citation"]
    assert len(notes) == 1
    return str(notes[0])


def test_a_four_dataset_figure_cites_all_four() -> None:
    store = DataStore()
    for dataset in DATASETS:
        store.put(_cited(dataset))
    spec = {
        "data": [{"data_label": f"{d}.B", "yaxis": f"y{i + 1}"} for i, d in enumerate(DATASETS)]
    }
    footer = _footer(render_plotly_json(spec, store).figure)
    for dataset in DATASETS:
        assert f"Data: {dataset}; PI PI of {dataset}; doi:10.1/{dataset.lower()}" in footer


def test_a_computed_series_inherits_the_citations_of_its_inputs() -> None:
    ace, wind = _cited("AC_H1_MFI"), _cited("WI_H0_MFI")
    frame = pd.DataFrame({"dB": ace.data["B"] - wind.data["B"]}, index=TIMES)
    computed, _ = adopt_result(frame, "diff.dB", [ace, wind, ace], "ACE minus Wind", "nT")
    assert [c["dataset"] for c in computed.citations] == ["AC_H1_MFI", "WI_H0_MFI"]
    # On the figure, in written files' metadata and in the summary the web pages show.
    store = DataStore()
    store.put(computed)
    footer = _footer(render_plotly_json({"data": [{"data_label": "diff.dB"}]}, store).figure)
    assert "Data: AC_H1_MFI" in footer and "Data: WI_H0_MFI" in footer
    files = output_metadata([computed])["citations"]
    assert [c["dataset"] for c in files] == ["AC_H1_MFI", "WI_H0_MFI"]
    assert [c["doi"] for c in entry_summary(computed)["citations"]] == [
        "10.1/ac_h1_mfi",
        "10.1/wi_h0_mfi",
    ]


def test_an_entry_without_a_citation_has_none() -> None:
    frame = pd.DataFrame({"x": [1.0, 2.0]}, index=TIMES[:2])
    assert DataEntry("table.x", frame, {"x": ""}).citations == []
