"""More operations as physicists write them: each done with its values right, or declined.

Time integrals ("fluence", "integrate over the day", "cumulative"), ratios written with a
slash ("Te/Ti", "Bz/|B|"), statistics in stated windows ("std in 5-min windows", "rolling
variance over 30 s") and element-wise transforms ("log10", "z-score", "normalised by the
mean", "lagged by 45 min"). Each request runs end to end through the offline assistant
against the catalog-wide loopback HAPI server; the values of the computed series are read
back from the session store and checked against numpy.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

from servers.catalog_hapi import CatalogHapiServer
from xhelio.agents.factory import make_assistant
from xhelio.agents.turn import run_turn
from xhelio.config import load_settings
from xhelio.tools.workspace import Workspace, open_workspace


@pytest.fixture
def workspace(monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    with CatalogHapiServer(max_rows=600) as srv:
        monkeypatch.setenv("XHELIO_HAPI_URL", srv.url)
        ws = open_workspace(settings=load_settings(), ephemeral=True)
        try:
            yield ws
        finally:
            ws.close()


def _turn(ws: Workspace, text: str) -> tuple[str, list[dict[str, Any]]]:
    """The answer and the successful computations of one turn."""
    assistant, _ = make_assistant(ws)
    first = len(ws.session.operations)
    result = run_turn(ws, assistant, text)
    ops = [
        op
        for op in ws.session.operations[first:]
        if op.get("phase") == "compute" and op.get("status") == "ok"
    ]
    return result.answer + (f"\n{result.error}" if result.error else ""), ops


def _frame(ws: Workspace, label: str) -> pd.DataFrame:
    data = ws.session.store.get(label).data
    assert isinstance(data, pd.DataFrame)
    return data


def _with_code(ops: list[dict[str, Any]], piece: str) -> dict[str, Any]:
    found = [op for op in ops if piece in str(op["args"].get("code", ""))]
    assert found, [op["args"].get("code") for op in ops]
    return found[-1]


@pytest.mark.parametrize(
    ("text", "unit"),
    [
        ("integrate the OMNI flow speed over the day, 2015-03-17", "km"),
        ("cumulative AE index from OMNI for 2015-03-17", "nT s"),
        ("time-integrated Wind proton density over 2019-06-01 to 2019-06-02", " s"),
        ("running total of the ACE |B| on 2016-02-10", "nT s"),
    ],
)
def test_time_integral_is_the_cumulative_trapezoid(
    workspace: Workspace, text: str, unit: str
) -> None:
    answer, ops = _turn(workspace, text)
    op = _with_code(ops, "cumulative_trapezoid")
    result = _frame(workspace, op["args"]["output_label"]).iloc[:, 0]
    source = _frame(workspace, op["args"]["source_labels"][0]).iloc[:, 0].astype(float)
    ok = source.notna()
    seconds = (source.index - source.index[0]).total_seconds().to_numpy()[ok.to_numpy()]
    values = source[ok].to_numpy()
    steps = np.diff(seconds) * (values[1:] + values[:-1]) / 2
    expected = np.concatenate([[0.0], np.cumsum(steps)])
    np.testing.assert_allclose(result[ok].to_numpy(), expected, rtol=1e-9, atol=1e-9)
    assert np.isclose(result.dropna().iloc[-1], np.trapezoid(values, seconds))
    assert unit in op["args"]["units"], op["args"]
    assert "Time integral" in answer and "trapezoid" in answer, answer
    assert "Not done" not in answer, answer


def test_fluence_is_the_integral_of_a_flux_per_second_cancelled(workspace: Workspace) -> None:
    answer, ops = _turn(workspace, "fluence of ACE EPAM particles over 2017-09-10 to 2017-09-12")
    op = _with_code(ops, "cumulative_trapezoid")
    units = op["args"]["units"]
    assert "cm" in units and re.search(r"(?<![a-z])s(?![a-z])", units) is None, units
    assert "total over the window" in answer
