"""Offline SQL selections: the skill fetches what the request names and writes the SQL.

Against the catalog-wide loopback HAPI server (synthetic data), the days a selection
returns are checked against the fetched data itself with pandas.
"""

from __future__ import annotations

import re

import pandas as pd

from conftest import OfflineSession
from xhelio.agents.turn import TurnResult
from xhelio.data.entry import DataEntry
from xhelio.pipelines.extract import extract_pipeline
from xhelio.pipelines.model import TIME_RANGE_VAR
from xhelio.pipelines.replay import replay_pipeline


def _labels(turn: TurnResult) -> list[str]:
    return [d.label for d in turn.data]


def _daily(entry: DataEntry, how: str) -> pd.Series:
    assert isinstance(entry.data, pd.DataFrame)
    return entry.data.iloc[:, 0].resample("1D").agg(how).dropna()


def test_days_below_a_threshold(session: OfflineSession) -> None:
    turn = session.ask("days when Dst < -20 in March 2015")
    assert turn.error is None, turn.answer
    assert "SQL: WITH" in turn.answer and "< -20" in turn.answer
    source, result = (session.entry(label) for label in _labels(turn)[-2:])
    assert source.source_dataset is not None and source.source_dataset.startswith("OMNI")
    expected = _daily(source, "min")
    expected = expected[expected < -20]
    assert len(expected) > 0
    assert list(result.data.index.date) == list(expected.index.date)


def test_two_conditions_on_two_quantities(session: OfflineSession) -> None:
    turn = session.ask(
        "which days in March 2015 had Dst below -20 and solar wind faster than 400 km/s"
    )
    assert turn.error is None, turn.answer
    assert " AND " in turn.answer
    result = session.entry(_labels(turn)[-1])
    speed = next(
        session.entry(lb) for lb in _labels(turn) if "km/s" in session.entry(lb).units.values()
    )
    dst = next(session.entry(lb) for lb in _labels(turn) if "DST" in lb.upper())
    slow = _daily(speed, "max")
    low = _daily(dst, "min")
    both = sorted(set(low[low < -20].index) & set(slow[slow > 400].index))
    assert list(result.data.index) == both


def test_hourly_means_per_day_as_a_table(session: OfflineSession) -> None:
    turn = session.ask("hourly mean OMNI Bz per day as a table for 2015-03-17 to 2015-03-18")
    assert turn.error is None, turn.answer
    assert re.search(r"\| day \| hour \| mean_\w+ \(nT\) \|", turn.answer)
    result = session.entry(_labels(turn)[-1])
    assert result.points == 48
    assert "GROUP BY 1, 2" in turn.answer


def test_typed_sql_runs_as_it_is(session: OfflineSession) -> None:
    session.ask("days when Dst < -20 in March 2015")
    dst = next(lb for lb in session.workspace.session.store.labels() if lb.endswith(".DST"))
    turn = session.ask(f'SELECT count(*) AS n FROM "{dst}"')
    assert turn.error is None, turn.answer
    assert "| n |" in turn.answer


def test_other_requests_are_not_taken(session: OfflineSession) -> None:
    from xhelio.agents.offline.sql_skill import answer

    others = (
        "plot ACE magnetic field last week",
        "hourly mean Bz last week",
        "hello",
        "Compute ACE |B| for 2024-06-06, smooth it over 1 hour and compare with OMNI |B|",
        "show the days with the strongest field in 2015",
    )
    for text in others:
        assert answer(session.assistant, text) is None


def test_a_saved_selection_replays_with_its_fetches_for_another_month(
    session: OfflineSession,
) -> None:
    first = len(session.workspace.session.operations)
    turn = session.ask("days when Dst < -20 in March 2015")
    assert turn.error is None, turn.answer
    ops = session.workspace.session.operations[first:]
    pipeline = extract_pipeline(ops, "storm days")
    tools = [step.tool for step in pipeline.steps]
    assert "fetch_data" in tools and tools[-1] == "query_data", tools
    query = pipeline.steps[-1]
    assert query.depends_on, "the query step depends on the fetch it reads"
    again = replay_pipeline(pipeline, session.workspace.funnel, {TIME_RANGE_VAR: "2015-04"})
    assert again.status == "completed", again.summary()
    result = session.entry(_labels(turn)[-1])
    assert all(t.month == 4 for t in result.data.index), list(result.data.index)
