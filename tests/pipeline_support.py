"""Shared pieces of the pipeline tests: a loopback catalog HAPI server and a real session.

`make_session` drives the tool funnel the way an agent would, with exploratory and failed
calls mixed in: a catalog search, a fetch of a parameter that does not exist, two useful
fetches, one fetch nobody plots, a describe, a 6-line smoothing in the sandbox and a
two-panel render whose title names the time range.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from servers.catalog_hapi import CatalogHapiServer
from xhelio.config import load_settings
from xhelio.tools.workspace import Workspace, open_workspace

__all__ = ["open_workspace"]

JANUARY = "2001-01-01 to 2001-01-04"
MARCH = "2001-03-01 to 2001-03-04"

SMOOTH_CODE = """window = '30min'
smoothed = df.rolling(window, center=True, min_periods=1).mean()
smoothed = smoothed.interpolate(limit=3)
# keep the column names so units carry over
smoothed.columns = [str(c) for c in df.columns]
result = smoothed
"""
SMOOTH_10MIN = SMOOTH_CODE.replace("'30min'", "'10min'")


def figure(time_range: str) -> dict[str, Any]:
    """A two-panel figure of |B| and the smoothed vector, titled with the range."""
    return {
        "data": [
            {"type": "scatter", "data_label": "AC_H2_MFI.Magnitude", "panel": 1},
            {"type": "scatter", "data_label": "B_smooth", "panel": 2},
        ],
        "layout": {"title": {"text": f"ACE |B| and smoothed B, {time_range}"}},
    }


def make_session(ws: Workspace, time_range: str = JANUARY) -> list[dict[str, Any]]:
    """Run a realistic, messy analysis through the funnel; return the results in order."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search_datasets", {"query": "ACE magnetic field"}),
        (
            "fetch_data",
            {"dataset_id": "AC_H2_MFI", "parameter_id": "NoSuchParam", "time_range": time_range},
        ),
        (
            "fetch_data",
            {"dataset_id": "AC_H2_MFI", "parameter_id": "Magnitude", "time_range": time_range},
        ),
        (
            "fetch_data",
            {"dataset_id": "AC_H2_MFI", "parameter_id": "BGSEc", "time_range": time_range},
        ),
        (
            "fetch_data",
            {"dataset_id": "AC_H2_MFI", "parameter_id": "SC_pos_GSE", "time_range": time_range},
        ),
        ("describe_data", {"label": "AC_H2_MFI.BGSEc"}),
        (
            "custom_operation",
            {
                "source_labels": ["AC_H2_MFI.BGSEc"],
                "code": SMOOTH_CODE,
                "output_label": "B_smooth",
                "description": "ACE B smoothed over 30 minutes",
            },
        ),
        ("render_plotly_json", {"figure": figure(time_range)}),
    ]
    return [ws.funnel.call(name, args, caller="test").to_dict() for name, args in calls]


@pytest.fixture(scope="module")
def pl_hapi_server() -> Iterator[CatalogHapiServer]:
    """One catalog-wide loopback HAPI server per test module."""
    with CatalogHapiServer(max_rows=2000) as server:
        yield server


@pytest.fixture
def pl_hapi_env(
    pl_hapi_server: CatalogHapiServer, monkeypatch: pytest.MonkeyPatch
) -> CatalogHapiServer:
    """Point this test's xhelio at the loopback server."""
    monkeypatch.setenv("XHELIO_HAPI_URL", pl_hapi_server.url)
    return pl_hapi_server


@pytest.fixture
def pl_workspace(pl_hapi_env: CatalogHapiServer) -> Iterator[Workspace]:
    """A fresh saved session against the loopback server."""
    ws = open_workspace(settings=load_settings())
    yield ws
    ws.close()


def open_fresh() -> Workspace:
    """Another session, as after a restart (same XHELIO_HOME)."""
    return open_workspace(settings=load_settings())
