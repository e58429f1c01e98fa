"""Spacecraft lists, arithmetic across probes and follow-ups that name other spacecraft.

"THEMIS probes C, D and E", "thc, thd, the", "Cluster spacecraft 1, 3 and 4" read every
spacecraft listed; "ratio of MMS1 to MMS4" is two spacecraft, not MMS1 through MMS4; a
follow-up naming another numbered spacecraft ("same for GOES 11") keeps the time window;
"add 6 more hours" lengthens it; "now all four" after one probe takes every probe.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from xhelio.agents.offline.followup import is_follow_up, is_undo, merge
from xhelio.agents.offline.plan import OfflinePlan, build_plan
from xhelio.catalog.index import Catalog, build_index
from xhelio.language.intent import RequestIntent
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.resolve import probe_of_dataset, probe_wanted

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> Vocabulary:
    path: Path = tmp_path_factory.mktemp("catalog") / "catalog.sqlite"
    build_index(path)
    return Vocabulary.from_catalog(Catalog(path))


def _parse(vocab: Vocabulary, text: str) -> RequestIntent:
    return parse_request(text, vocab, NOW)


def _follow(vocab: Vocabulary, *turns: str) -> tuple[RequestIntent, list[str]]:
    state = _parse(vocab, turns[0])
    notes: list[str] = []
    for text in turns[1:]:
        new = _parse(vocab, text)
        assert is_follow_up(new, True), text
        state, notes = merge(state, new)
    return state, notes


def _datasets(plan: OfflinePlan) -> list[str]:
    return [s.calls[0].args["dataset_id"] for s in plan.steps if s.kind == "fetch"]


@pytest.mark.parametrize(
    ("text", "mission", "probes"),
    [
        ("magnetic field from THEMIS probes C, D and E on 2008-02-26", "themis", "CDE"),
        ("THEMIS spacecraft A and E ion density 2009-03-10", "themis", "AE"),
        ("ion density for thc, thd, the on 2009-03-10", "themis", "CDE"),
        ("tha, thd and the magnetic field 2009-03-10", "themis", "ADE"),
        ("Cluster spacecraft 1, 3 and 4 magnetic field 2004-01-10", "cluster", "134"),
        ("MMS probes 2 and 3 magnetic field 2016-12-09", "mms", "23"),
        ("ratio of MMS1 to MMS4 |B| on 2017-07-11", "mms", "14"),
        ("the ratio of C1 to C3 field magnitude 2004-01-10", "cluster", "13"),
        ("MMS spacecraft 1-4 magnetic field 2016-12-09", "mms", "1234"),
        ("MMS magnetic field, all four spacecraft, 2016-12-09", "mms", "1234"),
        ("Cluster field from every spacecraft 2004-01-10", "cluster", "1234"),
        ("THEMIS ion density for all five probes 2009-03-10", "themis", "ABCDE"),
        ("STEREO magnetic field, both spacecraft, 2010-08-01", "stereo", "AB"),
    ],
)
def test_every_spacecraft_listed_is_read(
    vocab: Vocabulary, text: str, mission: str, probes: str
) -> None:
    intent = _parse(vocab, text)
    assert {m.mission_id for m in intent.missions} == {mission}
    assert [probe_wanted(m.text) for m in intent.missions] == list(probes)


def test_a_ratio_across_two_probes_fetches_both_and_divides(vocab: Vocabulary) -> None:
    plan = build_plan(vocab, _parse(vocab, "ratio of MMS1 to MMS4 |B| on 2017-07-11"), NOW)
    assert sorted(probe_of_dataset(d) for d in _datasets(plan)) == ["1", "4"]
    assert any(s.kind != "fetch" and "ratio" in str(s).lower() for s in plan.steps)


@pytest.mark.parametrize(
    ("first", "text", "probe"),
    [
        ("GOES 12 magnetic field on 2008-01-10", "same for GOES 11", "11"),
        ("GOES 12 magnetic field on 2008-01-10", "now GOES-11", "11"),
        ("NOAA 15 electron flux on 2014-01-01", "same for NOAA 18", "18"),
        ("DMSP F16 magnetometer data on 2010-05-01", "now DMSP F17", "17"),
        ("THEMIS A magnetic field on 2008-02-26", "go to probe D", "D"),
    ],
)
def test_another_spacecraft_keeps_the_time_window(
    vocab: Vocabulary, first: str, text: str, probe: str
) -> None:
    merged, notes = _follow(vocab, first, text)
    assert merged.time_range == _parse(vocab, first).time_range
    assert [probe_wanted(m.text) for m in merged.missions] == [probe]
    assert not any("Shifted" in n for n in notes), notes


@pytest.mark.parametrize(
    ("text", "hours"),
    [
        ("add 6 more hours", 30),
        ("2 more days please", 72),
        ("add another day", 48),
        ("show 12 extra hours", 36),
    ],
)
def test_more_time_lengthens_the_window(vocab: Vocabulary, text: str, hours: int) -> None:
    first = "Wind |B| on 2015-03-17"
    merged, _ = _follow(vocab, first, text)
    start = _parse(vocab, first).time_range
    assert start is not None and merged.time_range is not None
    assert merged.time_range.start == start.start
    assert merged.time_range.end - merged.time_range.start == timedelta(hours=hours)


@pytest.mark.parametrize(
    "text", ["now all four", "show all of them", "all probes please", "every spacecraft"]
)
def test_all_of_a_constellation_after_one(vocab: Vocabulary, text: str) -> None:
    merged, _ = _follow(vocab, "Cluster C1 magnetic field on 2004-01-10", text)
    assert [probe_wanted(m.text) for m in merged.missions] == ["1", "2", "3", "4"]
    plan = build_plan(vocab, merged, NOW)
    assert sorted(probe_of_dataset(d) for d in _datasets(plan)) == ["1", "2", "3", "4"]


@pytest.mark.parametrize(
    ("text", "mission", "probes"),
    [
        # The catalog has no NOAA-17 dataset: the range is what the catalog numbers.
        ("NOAA 15 through 19 electron flux 2014-01-01", "noaa", ["15", "16", "18", "19"]),
        ("DMSP F16-F18 magnetometer data 2010-05-01", "dmsp", ["16", "17", "18"]),
        ("GOES 13 to 15 electron flux 2015-03-17", "goes", ["13", "14", "15"]),
        ("GOES-13 - GOES-15 difference in the field 2015-03-17", "goes", ["13", "15"]),
        ("GOES 15 minus GOES 13 field 2015-03-17", "goes", ["15", "13"]),
    ],
)
def test_numbered_fleets_read_ranges_from_the_catalog(
    vocab: Vocabulary, text: str, mission: str, probes: list[str]
) -> None:
    intent = _parse(vocab, text)
    assert {m.mission_id for m in intent.missions} == {mission}
    assert [probe_wanted(m.text) for m in intent.missions] == probes


@pytest.mark.parametrize(
    ("first", "text", "probes"),
    [
        ("THEMIS A magnetic field on 2008-02-26", "now probes D and E", ["D", "E"]),
        ("THEMIS A magnetic field on 2008-02-26", "now probes A and D", ["A", "D"]),
        ("GOES 12 magnetic field on 2008-01-10", "now satellites 11 and 10", ["11", "10"]),
        ("DMSP F16 magnetometer data on 2010-05-01", "same for F17", ["17"]),
        ("RBSP-A magnetic field 2015-03-17", "same for the other Van Allen probe", ["B"]),
    ],
)
def test_follow_ups_name_other_spacecraft_of_the_fleet(
    vocab: Vocabulary, first: str, text: str, probes: list[str]
) -> None:
    merged, _ = _follow(vocab, first, text)
    assert [probe_wanted(m.text) for m in merged.missions] == probes
    assert merged.time_range == _parse(vocab, first).time_range


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("zoom to 6 to 12", "2016-12-09T06:00", "2016-12-09T12:00"),
        ("narrow it to 14-18h", "2016-12-09T14:00", "2016-12-09T18:00"),
        ("add the previous day", "2016-12-08T00:00", "2016-12-10T00:00"),
        ("include the next day too", "2016-12-09T00:00", "2016-12-11T00:00"),
        ("show the previous day", "2016-12-08T00:00", "2016-12-09T00:00"),
    ],
)
def test_follow_ups_zoom_and_grow_the_loaded_span(
    vocab: Vocabulary, text: str, start: str, end: str
) -> None:
    merged, _ = _follow(vocab, "MMS1 FGM magnetic field 2016-12-09", text)
    assert merged.time_range is not None
    day = datetime.fromisoformat
    assert (merged.time_range.start, merged.time_range.end) == (
        day(start).replace(tzinfo=UTC),
        day(end).replace(tzinfo=UTC),
    )


@pytest.mark.parametrize(
    ("text", "undo"),
    [
        ("undo the zoom", True),
        ("back to the previous one", True),
        ("revert the last change", True),
        ("go back to the original time range", True),
        ("go back a day", False),
        ("go back to 2015-03-10", False),
    ],
)
def test_undo_in_its_common_forms(text: str, undo: bool) -> None:
    assert is_undo(text) is undo
