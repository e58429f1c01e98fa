"""Follow-ups that change the time of what is shown, or keep it while the data change.

Driven through the offline assistant against the loopback catalog HAPI server: the window
asked of the server and the answer's words. A date without its year takes the loaded
range's year; "the next 3 days" and "the previous 2 days" are counted from the range
loaded, not from now; "for the same day" keeps the loaded day and says so.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from conftest import OfflineSession
from xhelio.timerange import find_time_near, parse_time_range


def _windows(session: OfflineSession, first: str, text: str) -> tuple[set[str], set[str], str]:
    """The windows and dataset prefixes the follow-up fetched, and its answer."""
    session.ask(first)
    done = len(session.workspace.session.operations)
    answer = session.ask(text).answer
    ops: list[dict[str, Any]] = session.workspace.session.operations[done:]
    fetched = [op for op in ops if op["tool"] == "fetch_data" and op["status"] == "ok"]
    windows = {op["args"]["time_range"] for op in fetched}
    datasets = {op["args"]["dataset_id"].split("_")[0] for op in fetched}
    return windows, datasets, answer


def _window(start: str, end: str) -> str:
    return f"{start}T00:00:00Z to {end}T00:00:00Z"


@pytest.mark.parametrize(
    ("first", "text", "start", "end", "said"),
    [
        (
            "PSP magnetic field 2021-07-12 to 2021-07-14",
            "extend it through 16 July",
            "2021-07-12",
            "2021-07-17",
            r"Changed the time range to 2021-07-12 to 2021-07-16",
        ),
        (
            "ACE |B| on 2015-03-17",
            "extend it back to 14 March",
            "2015-03-14",
            "2015-03-18",
            r"Changed the time range to 2015-03-14 to 2015-03-17",
        ),
        (
            "ACE |B| for 2015-12-29 to 2015-12-30",
            "extend until 2 January",
            "2015-12-29",
            "2016-01-03",
            r"2015-12-29 to 2016-01-02",
        ),
        (
            "ACE |B| for 2015-03-16 to 2015-03-18",
            "next 3 days",
            "2015-03-19",
            "2015-03-22",
            r"3 d after the time range loaded before",
        ),
        (
            "Wind |B| on 2015-03-17",
            "the previous 2 days",
            "2015-03-15",
            "2015-03-17",
            r"2 d before the time range loaded before",
        ),
        (
            "ACE |B| on 2015-03-17",
            "show the following week",
            "2015-03-18",
            "2015-03-25",
            r"7 d after the time range loaded before",
        ),
        (
            "ACE |B| on 2015-03-17",
            "extend to the whole month",
            "2015-03-01",
            "2015-04-01",
            r"whole calendar month",
        ),
        (
            "OMNI flow speed on 2015-03-18",
            "expand to the full week",
            "2015-03-16",
            "2015-03-23",
            r"whole calendar week \(Monday to Sunday\)",
        ),
    ],
)
def test_a_follow_up_moves_the_time_from_the_range_loaded(
    session: OfflineSession, first: str, text: str, start: str, end: str, said: str
) -> None:
    windows, _, answer = _windows(session, first, text)
    assert windows == {_window(start, end)}, answer
    assert re.search(said, answer), answer


def test_the_same_day_keeps_the_day_and_says_so(session: OfflineSession) -> None:
    windows, datasets, answer = _windows(
        session, "Wind magnetic field on 2012-07-14", "now the SWE proton speed for the same day"
    )
    assert windows == {_window("2012-07-14", "2012-07-15")}, answer
    assert datasets == {"WI"}
    assert "as 'same day' asks" in answer
    assert "could not read the time" not in answer


def test_the_same_interval_for_another_spacecraft(session: OfflineSession) -> None:
    windows, datasets, answer = _windows(
        session, "ACE proton density 2015-03-17 to 2015-03-18", "same interval but Wind"
    )
    assert windows == {_window("2015-03-17", "2015-03-19")}, answer
    assert datasets == {"WI"}
    assert "as 'same interval' asks" in answer


def test_a_day_without_its_year_takes_the_nearest_year() -> None:
    loaded = parse_time_range("2015-12-28 to 2015-12-30")
    found = find_time_near("extend it through 3 January", loaded)
    assert found.range == parse_time_range("2016-01-03")
    assert found.text == "3 January 2016"
    # A date written with its year, or no date at all, is read as the grammar reads it.
    assert find_time_near("for 2003-10-29", loaded).range == parse_time_range("2003-10-29")
    assert find_time_near("smooth it", loaded).range is None


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("extend that through october", "2015-10-01", "2015-11-01"),
        ("carry on until the end of December", "2015-12-01", "2016-01-01"),
        ("stretch it to the 20th", "2015-10-20", "2015-10-21"),
        ("go back to the 28th", "2015-09-28", "2015-09-29"),
    ],
)
def test_a_month_or_a_day_of_month_alone_takes_the_loaded_year_and_month(
    text: str, start: str, end: str
) -> None:
    loaded = parse_time_range("2015-10-01 to 2015-10-10")
    found = find_time_near(text, loaded)
    assert found.range is not None, text
    assert (
        _window(start, end)
        == f"{found.range.start:%Y-%m-%d}T00:00:00Z to {found.range.end:%Y-%m-%d}T00:00:00Z"
    )
    # An ordinal naming a panel, or a modal "may", is no date.
    assert find_time_near("remove the 2nd panel", loaded).range is None
    assert find_time_near("you may add Wind", loaded).range is None


def test_a_month_named_onward_is_the_next_one_not_the_nearest() -> None:
    loaded = parse_time_range("2015-03-17 to 2015-03-19")
    found = find_time_near("extend that through october", loaded)
    assert found.range == parse_time_range("2015-10-01 to 2015-10-31"), found
    found = find_time_near("go back to december", loaded)
    assert found.range == parse_time_range("2014-12-01 to 2014-12-31"), found


def test_extending_through_a_month_ends_after_all_of_it(session: OfflineSession) -> None:
    windows, _, answer = _windows(
        session, "OMNI Bz GSM 2015-03-17 to 2015-03-19", "extend it through March"
    )
    assert windows == {_window("2015-03-17", "2015-04-01")}, answer
