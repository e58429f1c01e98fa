"""Several spacecraft of a constellation in one request, and follow-ups that switch them.

Every probe named gets the same product (the dataset id with its probe token swapped),
a follow-up naming another probe keeps the product of the last request (said when the
catalog has no such dataset for that probe or time), and follow-ups that move the time
("extend it to", "the day before", "start it two days earlier") keep the rest.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from plan_helpers import fetched
from xhelio.agents.offline.followup import following, is_follow_up, merge
from xhelio.agents.offline.plan import OfflinePlan, build_plan
from xhelio.language.intent import RequestIntent
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.resolve import probe_of_dataset, probe_wanted

try:
    from xhelio.language.resolve import with_probe
except ImportError:  # before the change

    def with_probe(dataset_id: str, probe: str) -> str | None:
        return None


NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def _parse(vocab: Vocabulary, text: str) -> RequestIntent:
    return parse_request(text, vocab, NOW)


def _datasets(plan: OfflinePlan) -> list[str]:
    return [s.calls[0].args["dataset_id"] for s in plan.steps if s.kind == "fetch"]


def _follow(vocab: Vocabulary, *turns: str) -> tuple[RequestIntent, list[str]]:
    """The last turn merged into the ones before it, as the assistant does."""
    state = _parse(vocab, turns[0])
    notes: list[str] = []
    for text in turns[1:]:
        new = _parse(vocab, text)
        assert is_follow_up(new, True), text
        state, notes = merge(state, new)
    return state, notes


@pytest.mark.parametrize(
    ("text", "mission", "probes"),
    [
        ("ARTEMIS P1 and P2 magnetic field 2012-01-05", "themis", ["B", "C"]),
        ("RBSP-A and -B magnetic field 2014-02-01", "rbsp", ["A", "B"]),
        ("THEMIS-D and -E magnetic field 2008-02-26", "themis", ["D", "E"]),
        ("THEMIS A, D and E magnetic field 2008-02-26", "themis", ["A", "D", "E"]),
        ("MMS1 through MMS4 magnetic field 2015-10-16", "mms", ["1", "2", "3", "4"]),
        ("C1-C4 magnetic field 2003-10-29", "cluster", ["1", "2", "3", "4"]),
        ("the two STEREO spacecraft magnetic field 2010-08-01", "stereo", ["A", "B"]),
        ("both ARTEMIS probes magnetic field 2012-01-05", "themis", ["B", "C"]),
        ("GOES 13 and 15 electron flux 2015-03-17", "goes", ["13", "15"]),
        ("Voyager 1 & 2 magnetic field 1979-03-01", "voyager", ["1", "2"]),
        ("THEMIS-A/-D/-E magnetic field 2008-02-26", "themis", ["A", "D", "E"]),
        ("RBSP A/B magnetic field 2015-03-17", "rbsp", ["A", "B"]),
        ("STA/STB magnetic field 2010-08-01", "stereo", ["A", "B"]),
        ("STEREO-A vs -B magnetic field 2010-08-01", "stereo", ["A", "B"]),
        ("MMS1/2/3 magnetic field 2015-10-16", "mms", ["1", "2", "3"]),
    ],
)
def test_every_probe_named_is_read(
    vocab: Vocabulary, text: str, mission: str, probes: list[str]
) -> None:
    intent = _parse(vocab, text)
    assert {m.mission_id for m in intent.missions} == {mission}
    assert [probe_wanted(m.text) for m in intent.missions] == probes
    assert intent.unknown_names == ()
    assert [q.quantity for q in intent.quantities] in (["magnetic_field"], ["particle_flux"])


def test_a_dataset_id_maps_to_another_probe() -> None:
    assert with_probe("MMS1_FPI_FAST_L2_DIS-MOMS", "3") == "MMS3_FPI_FAST_L2_DIS-MOMS"
    assert with_probe("THB_L2_FGM", "C") == "THC_L2_FGM"
    assert with_probe("RBSP-A_MAGNETOMETER_4SEC-GSE_EMFISIS-L3", "B") == (
        "RBSP-B_MAGNETOMETER_4SEC-GSE_EMFISIS-L3"
    )
    assert with_probe("C1_CP_FGM_SPIN", "4") == "C4_CP_FGM_SPIN"
    assert with_probe("GOES13_EPS-MAGED_1MIN", "15") == "GOES15_EPS-MAGED_1MIN"
    assert with_probe("AC_H0_MFI", "2") is None
    assert probe_of_dataset(with_probe("STA_L2_MAGPLASMA_1M", "B") or "") == "B"


@pytest.mark.parametrize(
    "text",
    [
        "STEREO A and B proton speed 2009-05-01",
        "MMS1 through MMS4 ion density 2015-10-16",
        "THEMIS B, C and D ion density 2008-02-26",
        "compare RBSP-A and RBSP-B field magnitude on 2015-03-17",
    ],
)
def test_every_probe_gets_the_same_product(vocab: Vocabulary, text: str) -> None:
    intent = _parse(vocab, text)
    datasets = _datasets(build_plan(vocab, intent, NOW))
    assert len(datasets) == len(intent.missions) > 1
    assert {probe_of_dataset(d) for d in datasets} == {
        probe_wanted(m.text) for m in intent.missions
    }
    assert len({with_probe(d, "*") for d in datasets}) == 1, datasets


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        (
            ("MMS1_FPI_FAST_L2_DIS-MOMS ion density 2015-10-16", "now MMS3"),
            ["MMS3_FPI_FAST_L2_DIS-MOMS"],
        ),
        (("ARTEMIS P1 magnetic field 2012-01-05", "repeat for P2"), ["THC_L2_FGM"]),
        (("C1 magnetic field 2003-10-29", "and for C4?"), ["C4_CP_FGM_SPIN"]),
        (("C2 magnetic field 2005-01-10", "and C3?"), ["C3_CP_FGM_SPIN"]),
        (("STEREO-A magnetic field 2010-08-01", "do it for B instead"), ["STB_L2_MAGPLASMA_1M"]),
        (("STEREO-A magnetic field 2010-08-01", "what about B?"), ["STB_L2_MAGPLASMA_1M"]),
        (("ARTEMIS P1 magnetic field 2012-01-05", "now the other probe"), ["THC_L2_FGM"]),
        (
            ("RBSP-A magnetic field 2015-03-17", "same for probe B"),
            ["RBSP-B_MAGNETOMETER_4SEC-GSE_EMFISIS-L3"],
        ),
    ],
)
def test_another_probe_keeps_the_product(
    vocab: Vocabulary, turns: tuple[str, ...], expected: list[str]
) -> None:
    base = build_plan(vocab, _parse(vocab, turns[0]), NOW)
    merged, _ = _follow(vocab, *turns)
    assert merged.time_range == base.time_range
    assert merged.unknown_names == ()
    assert [q.quantity for q in merged.quantities] == [q.quantity for q in base.intent.quantities]
    datasets = _datasets(build_plan(vocab, merged, NOW))
    assert datasets == expected
    assert {with_probe(d, "*") for d in datasets} == {with_probe(d, "*") for d in _datasets(base)}


def test_all_probes_after_one_keep_its_product(vocab: Vocabulary) -> None:
    turns = ("MMS2_FPI_FAST_L2_DIS-MOMS ion temperature 2015-10-16", "now all four MMS")
    merged, _ = _follow(vocab, *turns)
    assert _datasets(build_plan(vocab, merged, NOW)) == [
        f"MMS{n}_FPI_FAST_L2_DIS-MOMS" for n in "1234"
    ]


def test_the_other_probes_are_all_the_rest(vocab: Vocabulary) -> None:
    turns = ("MMS2_FPI_FAST_L2_DIS-MOMS ion temperature 2015-10-16", "what about the other probes")
    merged, _ = _follow(vocab, *turns)
    assert _datasets(build_plan(vocab, merged, NOW)) == [
        f"MMS{n}_FPI_FAST_L2_DIS-MOMS" for n in "134"
    ]


def test_a_later_follow_up_keeps_the_switched_product(vocab: Vocabulary) -> None:
    merged, _ = _follow(
        vocab, "MMS1_FPI_FAST_L2_DIS-MOMS ion density 2015-10-16", "now MMS3", "smooth it"
    )
    assert _datasets(build_plan(vocab, merged, NOW)) == ["MMS3_FPI_FAST_L2_DIS-MOMS"]


def test_same_for_the_other_stereo_takes_its_own_plasma_product(vocab: Vocabulary) -> None:
    # Proton speed is the 1-minute MAG/PLASTIC merge (the He+ distribution product it used
    # to get is another species); STEREO-B has the same product.
    base = _datasets(build_plan(vocab, _parse(vocab, "STEREO-A proton speed 2009-05-01"), NOW))
    assert base == ["STA_L2_MAGPLASMA_1M"]
    merged, _ = _follow(vocab, "STEREO-A proton speed 2009-05-01", "same for STEREO-B")
    assert _datasets(build_plan(vocab, merged, NOW)) == ["STB_L2_MAGPLASMA_1M"]


@pytest.mark.parametrize(
    ("first", "then", "expected"),
    [
        ("MMS1_FGM_SRVY_L2 2017-09-08", "same for MMS2", "MMS2_FGM_SRVY_L2"),
        ("THA_L2_FGM 2010-01-05", "do it for D instead", "THD_L2_FGM"),
        ("C1_CP_FGM_5VPS 2005-01-10", "and for C3?", "C3_CP_FGM_5VPS"),
        ("C1_CP_FGM_SPIN 2005-01-10", "same for C3", "C3_CP_FGM_SPIN"),
        (
            "RBSPA_REL04_ECT-HOPE-SCI-L2 2015-03-17",
            "same for RBSP-B",
            "RBSPB_REL04_ECT-HOPE-SCI-L2",
        ),
        (
            "RBSP-A_MAGNETOMETER_1SEC-GSM_EMFISIS-L3 2015-03-17",
            "now probe B",
            "RBSP-B_MAGNETOMETER_1SEC-GSM_EMFISIS-L3",
        ),
        ("GOES13_EPS-MAGED_1MIN 2013-03-17", "same for GOES 15", "GOES15_EPS-MAGED_1MIN"),
    ],
)
def test_a_dataset_named_by_id_is_swapped_to_the_other_probe(
    vocab: Vocabulary, first: str, then: str, expected: str
) -> None:
    merged, _ = _follow(vocab, first, then)
    assert _datasets(build_plan(vocab, merged, NOW)) == [expected]


@pytest.mark.parametrize(
    ("first", "then", "expected"),
    [
        ("THA_L2_FGM tha_fgs_gsm 2010-01-05", "now THB", ("THB_L2_FGM", "thb_fgs_gsm")),
        (
            "MMS1_FGM_SRVY_L2 mms1_fgm_b_gsm_srvy_l2 2017-09-08",
            "same for MMS4",
            ("MMS4_FGM_SRVY_L2", "mms4_fgm_b_gsm_srvy_l2"),
        ),
    ],
)
def test_a_parameter_named_by_id_is_swapped_too(
    vocab: Vocabulary, first: str, then: str, expected: tuple[str, str]
) -> None:
    merged, _ = _follow(vocab, first, then)
    assert fetched(build_plan(vocab, merged, NOW)) == [expected]


def test_a_product_the_other_probe_lacks_is_said(vocab: Vocabulary) -> None:
    first = "STA_L3_PLA_HEPLUS_SW_VELCTDIST_5MIN 2009-05-01"
    merged, _ = _follow(vocab, first, "same for STEREO-B")
    plan = build_plan(vocab, merged, NOW)
    assert [probe_of_dataset(d) for d in _datasets(plan)] == ["B"]
    said = " ".join(plan.notes)
    assert "STA_L3_PLA_HEPLUS_SW_VELCTDIST_5MIN" in said and "STEREO-B" in said


def test_a_product_without_data_for_the_time_is_said(vocab: Vocabulary) -> None:
    merged, _ = _follow(vocab, "THEMIS-A magnetic field 2025-06-01", "same for THEMIS-E")
    plan = build_plan(vocab, merged, NOW)
    assert [probe_of_dataset(d) for d in _datasets(plan)] == ["E"]
    assert "THE_L2_FGM" not in _datasets(plan)
    assert any("THE_L2_FGM" in n and "no data" in n for n in plan.notes), plan.notes


def test_another_mission_is_resolved_afresh(vocab: Vocabulary) -> None:
    merged, _ = _follow(vocab, "ACE proton density 2015-03-17", "do it for Wind instead")
    assert [m.mission_id for m in merged.missions] == ["wind"]
    assert all(d.startswith("WI_") for d in _datasets(build_plan(vocab, merged, NOW)))


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("first", "text", "start", "end"),
    [
        (
            "ACE |B| for 2003-10-28 to 2003-10-29",
            "extend it to 2003-10-31",
            "2003-10-28",
            "2003-11-01",
        ),
        (
            "ACE |B| for 2003-10-28 to 2003-10-29",
            "extend it back to 2003-10-25",
            "2003-10-25",
            "2003-10-30",
        ),
        ("Wind |B| for 2019-06-01", "extend by 2 days", "2019-06-01", "2019-06-04"),
        ("OMNI Dst for 2015-03-17", "shift one day later", "2015-03-18", "2015-03-19"),
        ("ACE |B| for 2015-03-17", "the day before", "2015-03-16", "2015-03-17"),
        ("ACE |B| for 2015-03-17", "and the day after?", "2015-03-18", "2015-03-19"),
        ("ACE |B| for 2015-03-16 to 2015-03-18", "the day before", "2015-03-15", "2015-03-16"),
        ("ACE |B| for 2015-03-17", "start it two days earlier", "2015-03-15", "2015-03-18"),
        ("ACE |B| for 2015-03-17", "end it a day later", "2015-03-17", "2015-03-19"),
        ("ACE |B| for 2015-03-17", "one day earlier", "2015-03-16", "2015-03-17"),
        ("ACE |B| for 2015-03-17", "the 3 days before", "2015-03-14", "2015-03-17"),
        (
            "Wind proton density for 2019-06-01",
            "same but for 2015-03-17",
            "2015-03-17",
            "2015-03-18",
        ),
    ],
)
def test_follow_ups_move_the_time(
    vocab: Vocabulary, first: str, text: str, start: str, end: str
) -> None:
    merged, notes = _follow(vocab, first, text)
    assert merged.time_range is not None
    assert (merged.time_range.start, merged.time_range.end) == (_day(start), _day(end))
    assert merged.quantities == _parse(vocab, first).quantities
    assert notes


def test_another_probe_of_a_parameter_shown_by_its_product_word(vocab: Vocabulary) -> None:
    # The first turn draws a parameter named by its product ("fgl"); the follow-up asks
    # the same of another probe, whose own parameter is drawn (it used to raise KeyError).
    merged, _ = _follow(vocab, "THEMIS-C fgl gsm 2008-03-23", "same for thd")
    assert _datasets(build_plan(vocab, merged, NOW)) == ["THD_L2_FGM"]


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        (
            ("MMS1 FGM srvy B GSE 2017-07-11", "add the FPI ion density as another panel"),
            ["MMS1_FGM_SRVY_L2", "MMS1_FPI_FAST_L2_DIS-MOMS"],
        ),
        (
            ("THA_L2_ESA ion density 2008-02-26", "add the THEMIS ESA electron density too"),
            ["THA_L2_ESA", "THA_L2_ESA"],
        ),
    ],
)
def test_a_constellation_added_without_a_probe_is_the_probe_shown(
    vocab: Vocabulary, turns: tuple[str, str], expected: list[str]
) -> None:
    base, new = _parse(vocab, turns[0]), _parse(vocab, turns[1])
    assert new.doubts  # alone, which spacecraft is asked
    new = following(base, new, vocab.probes)
    assert new.doubts == ()
    merged, _ = merge(base, new)
    assert _datasets(build_plan(vocab, merged, NOW)) == expected


def test_a_request_of_its_own_still_asks_which_probe(vocab: Vocabulary) -> None:
    base = _parse(vocab, "MMS1 FGM srvy B GSE 2017-07-11")
    new = _parse(vocab, "MMS FPI electron density 2017-07-11")
    assert following(base, new, vocab.probes).doubts == new.doubts != ()


@pytest.mark.parametrize(
    ("then", "expected"),
    [
        ("same for d", ["THD_L2_FGM"]),
        ("same for d and e", ["THD_L2_FGM", "THE_L2_FGM"]),
        ("same for D and E", ["THD_L2_FGM", "THE_L2_FGM"]),  # "E" is no electric field
        ("try b, c instead", ["THB_L2_FGM", "THC_L2_FGM"]),
        ("now c too", ["THA_L2_FGM", "THC_L2_FGM"]),  # an add word keeps the probe shown
        ("show d as well", ["THA_L2_FGM", "THD_L2_FGM"]),
        ("add probe E", ["THA_L2_FGM", "THE_L2_FGM"]),
    ],
)
def test_probe_letters_ending_a_follow_up_name_the_probes(
    vocab: Vocabulary, then: str, expected: list[str]
) -> None:
    merged, _ = _follow(vocab, "themis a fgm bz gsm 2008-02-26 03:00-06:00", then)
    assert _datasets(build_plan(vocab, merged, NOW)) == expected
