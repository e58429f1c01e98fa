"""Every word of a request accounted for: the slot model and what it changes.

A request is read into slots (missions, quantities, time, operations, places, formulas,
...) and every content word is either consumed by a slot or known filler. A name left
over where a spacecraft goes is asked about; other words left over are stated in the
answer; a place ("at geosynchronous orbit") or a formula ("n v^2") names no spacecraft
and adds no fetch; the request-vs-data check compares the fetched quantity with the
quantity slots. Unit tests read requests with the parser; the end-to-end ones run the
offline assistant against the catalog-wide loopback HAPI server.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from agent_script import Script, scripted_config
from check_support import catalog_workspace, fetch_record  # noqa: F401  (fixture)
from eval.harness import Case, run_case, served_home
from xhelio.agents.check import HEADING, check_turn
from xhelio.agents.offline.plan import build_plan
from xhelio.agents.orchestrator import AgentAssistant
from xhelio.agents.turn import run_turn
from xhelio.language.intent import RequestIntent
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.slots import Slot, account, filler_words
from xhelio.tools.workspace import Workspace

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def _parse(vocab: Vocabulary, text: str) -> RequestIntent:
    return parse_request(text, vocab, NOW)


def _missions(intent: RequestIntent) -> list[str]:
    return [m.mission_id for m in intent.missions]


def _quantities(intent: RequestIntent) -> list[str]:
    return [q.quantity for q in intent.quantities]


def test_filler_is_data_and_leftover_is_what_no_slot_and_no_filler_took() -> None:
    assert {"please", "the", "show"} <= filler_words()
    reading = account("please show the zorbulator density", [Slot("quantity", "density", 27, 34)])
    assert [w.text for w in reading.leftover] == ["zorbulator"]
    assert reading.slots[0].text(reading.text) == "density"


@pytest.mark.parametrize(
    "text",
    [
        "Show ACE proton density and magnetic field magnitude in GSE for 2015-03-17",
        "Could you plot the Wind solar wind speed, smoothed over 1 hour, 2019-06-01 to 2019-06-03?",
        "PSP SWEAP electron pitch angle distribution on 2021-04-29",
        "compare MMS1 and MMS2 Bz in GSM between 2017-07-11 22:00 and 23:00",
    ],
)
def test_plain_requests_leave_no_word_over(vocab: Vocabulary, text: str) -> None:
    reading = _parse(vocab, text).slots
    assert [w.text for w in reading.leftover] == []
    assert reading.slots, "a request with content has slots"


def test_each_quantity_slot_names_the_phrase_that_fed_it(vocab: Vocabulary) -> None:
    text = "ACE proton density and Bz in GSM on 2015-03-17"
    reading = _parse(vocab, text).slots
    phrases = {(s.kind, s.text(text)) for s in reading.slots}
    assert ("mission", "ACE") in phrases
    assert ("quantity", "density") in phrases
    assert ("quantity", "Bz") in phrases
    assert ("species", "proton") in phrases
    assert ("frame", "GSM") in phrases
    assert any(kind == "time" for kind, _ in phrases)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Demo Observatory probe temperature on 2015-03-17", "Demo Observatory"),
        ("Zephyr-3 proton density 2012-07-14", "Zephyr-3"),
        ("plot the solar wind speed seen by the Halcyon orbiter, 2015-03-17", "Halcyon"),
    ],
)
def test_an_unknown_spacecraft_beside_a_known_quantity_is_asked_about(
    vocab: Vocabulary, text: str, name: str
) -> None:
    intent = _parse(vocab, text)
    assert any(name in n for n in intent.unknown_names), intent.unknown_names
    assert not intent.missions


@pytest.mark.parametrize(
    ("text", "missions"),
    [
        ("ACE dynamic pressure n v^2 on 2015-03-17", ["ace"]),
        ("magnetic pressure B^2/2mu0 from Wind, 2015-03-17", ["wind"]),
        ("Wind ram pressure rho*v^2 on 2019-06-01", ["wind"]),
    ],
)
def test_formula_symbols_are_not_mission_names(
    vocab: Vocabulary, text: str, missions: list[str]
) -> None:
    intent = _parse(vocab, text)
    assert _missions(intent) == missions
    assert any(s.kind == "formula" for s in intent.slots.slots)


@pytest.mark.parametrize(
    "text",
    [
        "GOES-15 magnetic field at geosynchronous orbit 2015-03-17",
        "THEMIS B magnetic field in lunar orbit on 2012-01-10",
        "ACE proton density at L1, 2015-03-17",
        "Cluster 1 magnetic field in the magnetosheath on 2003-10-29",
    ],
)
def test_place_words_describe_where_and_fetch_no_position(vocab: Vocabulary, text: str) -> None:
    intent = _parse(vocab, text)
    assert "position" not in _quantities(intent)
    assert any(s.kind == "place" for s in intent.slots.slots)
    assert intent.slots.leftover == ()


def test_a_position_that_is_asked_for_is_still_fetched(vocab: Vocabulary) -> None:
    assert "position" in _quantities(_parse(vocab, "where was Cassini on 2004-07-01"))
    assert "position" in _quantities(_parse(vocab, "GOES-15 orbit on 2015-03-17"))


@pytest.mark.parametrize(
    "text",
    [
        "how fast was the wind at DSCOVR on 2017-05-28",
        "the wind speed seen by DSCOVR, 2017-05-28",
    ],
)
def test_the_wind_blowing_is_not_the_wind_spacecraft(vocab: Vocabulary, text: str) -> None:
    assert _missions(_parse(vocab, text)) == ["dscovr"]


def test_the_wind_spacecraft_is_still_named(vocab: Vocabulary) -> None:
    assert "wind" in _missions(_parse(vocab, "compare Wind and ACE proton density 2019-06-01"))
    assert "wind" in _missions(_parse(vocab, "wind magnetic field on 2019-06-01"))


def test_check_says_when_the_quantity_shown_is_not_the_one_asked(workspace: Workspace) -> None:
    catalog = workspace.context.catalog
    notes = check_turn(
        "ACE proton density on 2015-03-17",
        [fetch_record("AC_H1_MFI", "Magnitude", "2015-03-17")],
        catalog,
    )
    assert any("density" in n and "magnetic field" in n for n in notes), notes
    assert not check_turn(
        "ACE proton density on 2015-03-17",
        [fetch_record("AC_H0_SWE", "Np", "2015-03-17")],
        catalog,
    )


def test_check_names_a_fetch_no_phrase_asked_for(workspace: Workspace) -> None:
    catalog = workspace.context.catalog
    notes = check_turn(
        "ACE proton density on 2015-03-17",
        [
            fetch_record("AC_H0_SWE", "Np", "2015-03-17"),
            fetch_record("AC_H0_SWE", "Vp", "2015-03-17"),
        ],
        catalog,
    )
    assert any("AC_H0_SWE.Vp" in n for n in notes), notes


def test_llm_answer_says_when_its_data_is_another_quantity(workspace: Workspace) -> None:
    # The model fetched the field magnitude for a density request: the answer says so.
    script = Script(
        {
            "orchestrator": [
                [("delegate_to_mission", {"mission_id": "ACE", "request": "proton density"})],
                "Here is the ACE proton density.",
            ],
            "mission:ACE": [
                [
                    (
                        "fetch_data",
                        {
                            "dataset_id": "AC_H1_MFI",
                            "parameter_id": "Magnitude",
                            "time_range": "2015-03-17T00:00 to 2015-03-18T00:00",
                        },
                    )
                ],
                "Fetched it.",
            ],
        }
    )
    assistant = AgentAssistant(workspace, scripted_config(), None, build_model=script.build)
    result = run_turn(workspace, assistant, "Show the ACE proton density on 2015-03-17")
    assert HEADING in result.answer
    said = result.answer.split(HEADING, 1)[1]
    assert "AC_H1_MFI.Magnitude" in said and "'proton density'" in said, said


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_home(tmp_path_factory.mktemp("slots-home")) as server:
        yield server.url


@pytest.mark.parametrize(
    "case",
    [
        Case("no_fabrication", "Demo Observatory probe temperature on 2015-03-17", expect="ask"),
        Case(
            "single",
            "how fast was the wind at DSCOVR on 2017-05-28",
            datasets=("^DSCOVR_",),
        ),
        # GOES-15's only particle datasets in the catalog are electron ones (EPEAD
        # electrons, MAGED): asked whether they would do, never served as protons.
        Case("single", "GOES-15 proton flux at geosynchronous orbit on 2015-03-17", expect="ask"),
        Case(
            "computations",
            "ACE dynamic pressure n v^2 on 2015-03-17",
            datasets=("^AC_",),
        ),
        Case(
            "single",
            "ACE proton density with the zorbulator correction on 2015-03-17",
            datasets=("^AC_",),
            answer=("(?i)zorbulator",),
        ),
    ],
    ids=lambda c: c.text,
)
def test_end_to_end(served: str, case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XHELIO_HAPI_URL", served)
    outcome = run_case(case)
    assert outcome.verdict == "PASS", f"{outcome.reasons}\n{outcome.answer}"


@pytest.mark.parametrize(
    ("text", "operated", "untouched"),
    [
        ("ACE |B| and smoothed proton speed over 1 hour on 2015-03-17", "speed", "field"),
        ("time derivative of ACE Bz and also the proton density 2015-03-17", "field", "density"),
        (
            "Wind proton density plus the running mean of |B| over 10 minutes, 2019-06-01",
            "field",
            "density",
        ),
    ],
)
def test_an_operation_on_one_quantity_is_not_applied_to_another(
    vocab: Vocabulary, text: str, operated: str, untouched: str
) -> None:
    plan = build_plan(vocab, _parse(vocab, text), NOW)
    computed = [s.description for s in plan.steps if s.kind == "compute"]
    ops = [d for d in computed if re.search(r"smooth|derivative|mean|averag", d, re.I)]
    assert ops, computed
    assert all(operated in d for d in ops), ops
    assert not any(untouched in d for d in ops), ops


def test_an_operation_written_after_every_quantity_applies_to_all(vocab: Vocabulary) -> None:
    text = "ACE |B| and proton speed on 2015-03-17, smoothed over 1 hour"
    plan = build_plan(vocab, _parse(vocab, text), NOW)
    smoothed = [s.description for s in plan.steps if "smooth" in s.description]
    assert any("field" in d for d in smoothed) and any("speed" in d for d in smoothed)
