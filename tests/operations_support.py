"""Shared pieces of the operations tests: a served workspace and the computations of a turn.

`workspace` is an ephemeral workspace whose data comes from the catalog-wide loopback
HAPI server; `computations` runs one request through the offline assistant and returns
its answer and successful compute operations; `frame` and `with_code` read them back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

from servers.catalog_hapi import CatalogHapiServer
from xhelio.agents.factory import make_assistant
from xhelio.agents.turn import run_turn
from xhelio.config import load_settings
from xhelio.sandbox.validate import validate_code
from xhelio.tools.workspace import Workspace, open_workspace
from xhelio.vocabulary import DerivedQuantity, load_vocabulary


@pytest.fixture
def workspace(monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    """An ephemeral workspace served every dataset of the shipped catalog (600 rows each)."""
    with CatalogHapiServer(max_rows=600) as srv:
        monkeypatch.setenv("XHELIO_HAPI_URL", srv.url)
        ws = open_workspace(settings=load_settings(), ephemeral=True)
        try:
            yield ws
        finally:
            ws.close()


def computations(ws: Workspace, text: str) -> tuple[str, list[dict[str, Any]]]:
    """The answer (with any error) and the successful computations of one turn."""
    assistant, _ = make_assistant(ws)
    first = len(ws.session.operations)
    result = run_turn(ws, assistant, text)
    ops = [
        op
        for op in ws.session.operations[first:]
        if op.get("phase") == "compute" and op.get("status") == "ok"
    ]
    return result.answer + (f"\n{result.error}" if result.error else ""), ops


def stored_frame(ws: Workspace, label: str) -> pd.DataFrame:
    """The stored data of `label` as a DataFrame."""
    data = ws.session.store.get(label).data
    assert isinstance(data, pd.DataFrame)
    return data


def with_code(ops: list[dict[str, Any]], piece: str) -> dict[str, Any]:
    """The last computation whose code contains `piece` (fails listing the codes if none)."""
    found = [op for op in ops if piece in str(op["args"].get("code", ""))]
    assert found, [op["args"].get("code") for op in ops]
    return found[-1]


def differences(answer: str) -> list[str]:
    """The answer's "Differs from the request" lines that depart from the computation.

    A part standing in for a scalar temperature the dataset lacks (MMS FPI holds only
    Tpar/Tperp) is the honest note of language/flavours.py, not such a departure.
    """
    return [
        line
        for line in answer.splitlines()
        if "Differs from the request" in line and "holds no scalar temperature" not in line
    ]


def derived_entry(key: str) -> DerivedQuantity:
    """The vocabulary's derived quantity `key`."""
    return next(d for d in load_vocabulary().derived if d.key == key)


def run_code(code: str, inputs: list[pd.DataFrame]) -> pd.DataFrame:
    """Run generated code as the sandbox does: validated, with the same names."""
    validate_code(code)
    sources = {f"in{i}": frame for i, frame in enumerate(inputs)}
    scope: dict[str, Any] = {"pd": pd, "np": np, "df": inputs[0], "sources": sources}
    exec(code, scope)
    return scope["result"]
