"""What the parent does with a result is bounded; heavy interpretation happens in the child.

A result column of long strings that look like times made the parent run
`pd.to_datetime` with a per-value fallback for about a minute per call, with no timeout.
Now the child turns a time column into the index (ISO 8601 only, vectorised, under the
call's limits) and the parent never parses text. A session's computed results have a
total cap (`sandbox_session_result_mb`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from xhelio.config import Settings
from xhelio.data.entry import DataEntry
from xhelio.sandbox import SandboxExecutor
from xhelio.services import Services
from xhelio.tools.compute_tools import adopt_result
from xhelio.tools.workspace import Workspace, open_workspace


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxExecutor]:
    with SandboxExecutor(replace(Settings(), sandbox_timeout_s=30.0)) as executor:
        executor.warm_up()
        yield executor


def _source(rows: int = 200) -> DataEntry:
    index = pd.date_range("2024-01-01", periods=rows, freq="1min", tz="UTC")
    frame = pd.DataFrame({"bx": np.linspace(0.0, 1.0, rows)}, index=index)
    return DataEntry("mag", frame, {"bx": "nT"}, "", "AC_H2_MFI", "BGSEc", True)


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> Any:
        raise AssertionError("the parent parsed times from a result")

    monkeypatch.setattr(pd, "to_datetime", refuse)  # the parent only: the child is a fork


LONG_TIMES = (
    "t = [str(ts) + ' (measured at the spacecraft, corrected for light travel time)' "
    "for ts in df.index]\n"
    "result = pd.DataFrame({'time': t, 'v': df['bx'].to_numpy()})"
)


def test_time_like_strings_are_never_parsed_by_the_parent(
    sandbox: SandboxExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _source()
    outcome = sandbox.run(LONG_TIMES, {"mag": source.data})
    assert isinstance(outcome.value, pd.DataFrame) and "time" in outcome.value.columns
    assert any("ISO 8601" in w for w in outcome.warnings)
    _no_parsing(monkeypatch)
    entry, _ = adopt_result(outcome.value, "out", [source], "")
    assert isinstance(entry.data, pd.DataFrame) and len(entry.data) == 200


def test_the_child_turns_an_iso_time_column_into_the_index(
    sandbox: SandboxExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _source()
    code = (
        "out = df.resample('10min').mean().reset_index().rename(columns={'index': 'time'})\n"
        "out['time'] = out['time'].dt.strftime('%Y-%m-%dT%H:%M:%SZ')\nresult = out"
    )
    outcome = sandbox.run(code, {"mag": source.data})
    frame = outcome.value
    assert isinstance(frame, pd.DataFrame) and isinstance(frame.index, pd.DatetimeIndex)
    assert str(frame.index.tz) == "UTC" and list(frame.columns) == ["bx"]
    _no_parsing(monkeypatch)
    entry, _ = adopt_result(frame, "ten_min", [source], "")
    assert entry.is_timeseries and len(entry.data) == 20


@pytest.fixture
def workspace(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("XHELIO_HOME", str(tmp_path))
    settings = replace(Settings(), sandbox_session_result_mb=1, sandbox_timeout_s=30.0)
    services = Services(settings)
    ws = open_workspace(settings=settings, services=services, ephemeral=True)
    ws.session.store.put(_source(20_000))
    try:
        yield ws
    finally:
        ws.close()
        services.close()


def _compute(ws: Workspace, code: str, label: str) -> dict[str, Any]:
    args = {"source_labels": ["mag"], "code": code, "output_label": label}
    return ws.funnel.call("custom_operation", args, caller="orchestrator").to_dict()


def test_a_session_s_computed_results_have_a_total_cap(workspace: Workspace) -> None:
    code = "result = df * 2"  # 20,000 rows: ~0.3 MB with its index
    for label in ("a", "b", "c"):
        assert _compute(workspace, code, label).get("status") != "error"
    refused = _compute(workspace, code, "d")
    assert refused.get("status") == "error", refused
    assert "sandbox_session_result_mb" in str(refused.get("message"))
    assert not workspace.session.store.has("d")
    # Replacing an earlier result frees its size.
    assert _compute(workspace, code, "a").get("status") != "error"
