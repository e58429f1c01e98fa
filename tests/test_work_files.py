"""The session's working folder: uploaded CSV, CDF, netCDF and PDF files the agents can read."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from xhelio.config import load_settings
from xhelio.tools.extraction_tools import work_folder
from xhelio.tools.workspace import Workspace, open_workspace

REAL = Path("/work/shared/data/real")


@pytest.fixture
def workspace() -> Iterator[Workspace]:
    ws = open_workspace(settings=load_settings())
    yield ws
    ws.close()


def call(ws: Workspace, tool: str, **args: object) -> dict[str, object]:
    return ws.funnel.call(tool, dict(args), "data_extraction").to_dict()


def test_list_and_load_an_uploaded_csv_with_times(workspace: Workspace) -> None:
    folder = work_folder(workspace.session)
    (folder / "events.csv").write_text(
        "# shocks\ntime;speed\n2024-01-10T06:00Z;450\n2024-01-11T12:00Z;610\n"
    )
    (folder / "notes.pdf").write_bytes(b"%PDF-1.4")
    listed = call(workspace, "list_work_files")
    assert [(f["name"], f["kind"]) for f in listed["files"]] == [  # type: ignore[index, union-attr]
        ("events.csv", "table"),
        ("notes.pdf", "document"),
    ]
    loaded = call(workspace, "load_work_file", name="events.csv")
    assert loaded["status"] == "ok" and loaded["labels"] == ["events"]
    entry = workspace.session.store.get("events")
    assert isinstance(entry.data.index, pd.DatetimeIndex) and entry.points == 2
    op = workspace.session.operations[-1]
    assert op["produced"] == ["events"]


def test_load_an_uploaded_netcdf_with_units(workspace: Workspace) -> None:
    times = pd.date_range("2021-01-01", periods=60, freq="1min")
    data = xr.Dataset(
        {"xrsb": ("time", np.linspace(1e-7, 2e-7, 60), {"units": "W/m^2", "long_name": "XRS-B"})},
        coords={"time": times},
    )
    data.to_netcdf(work_folder(workspace.session) / "goes.nc")
    loaded = call(workspace, "load_work_file", name="goes.nc", label="goes")
    assert loaded["labels"] == ["goes.xrsb"], loaded
    entry = workspace.session.store.get("goes.xrsb")
    assert entry.units == {"xrsb": "W/m^2"} and entry.points == 60


@pytest.mark.skipif(not (REAL / "ac_k2_mfi_20220101_v03.cdf").exists(), reason="no real data")
def test_load_a_real_uploaded_cdf(workspace: Workspace) -> None:
    shutil.copy(REAL / "ac_k2_mfi_20220101_v03.cdf", work_folder(workspace.session) / "ace.cdf")
    loaded = call(workspace, "load_work_file", name="ace.cdf", variables=["BGSEc"])
    assert loaded["labels"] == ["ace.BGSEc"], loaded
    entry = workspace.session.store.get("ace.BGSEc")
    assert set(entry.units.values()) == {"nT"} and entry.points == 24  # hourly, one day


def test_bad_names_and_formats_are_clear_errors(workspace: Workspace) -> None:
    folder = work_folder(workspace.session)
    (folder / "image.png").write_bytes(b"\x89PNG")
    for name, expected in (
        ("../../etc/passwd", "not a file name of the working folder"),
        ("missing.csv", "No file 'missing.csv' in the working folder (files: image.png)"),
        ("image.png", "is not a CSV, CDF or netCDF file"),
    ):
        result = call(workspace, "load_work_file", name=name)
        assert result["status"] == "error" and expected in str(result["message"]), result


def test_read_document_opens_an_uploaded_pdf_by_name(workspace: Workspace) -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    with (work_folder(workspace.session) / "paper.pdf").open("wb") as fh:
        writer.write(fh)
    result = call(workspace, "read_document", path="paper.pdf")
    assert result["status"] == "ok" and result["kind"] == "pdf" and result["pages"] == 1
    elsewhere = call(workspace, "read_document", path="/etc/hostname")
    assert elsewhere["status"] == "error"
