"""Requests the catalog has data for fetch it, however the quantity is written.

The shipped catalog is read (no network). Physicists name a quantity by its symbol with a
species or a frame, the way parameters are named ("Ne", "T_i", "B_RTN", "BGSE"), or by the
kind of instrument that measured it ("search coil", "Langmuir probe"); each must fetch the
dataset and parameter whose own metadata holds it, across missions. A request the catalog
cannot serve asks, naming what it could not find and what the mission does hold.
"""

from __future__ import annotations

import re

import pytest

from xhelio.agents.offline.plan import build_plan
from xhelio.language.parse import Vocabulary, parse_request


def _first(vocab: Vocabulary, text: str) -> tuple[str, str] | None:
    plan = build_plan(vocab, parse_request(text, vocab))
    for step in plan.steps:
        if step.kind == "fetch" and step.calls:
            args = step.calls[0].args
            return str(args["dataset_id"]), str(args["parameter_id"])
    return None


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        # A symbol with a frame: the field or velocity vector in that frame.
        ("PSP B_RTN 2020-01-29", r"^PSP_FLD_L2_MAG_RTN", r"(?i)mag_RTN"),
        ("ACE V_GSE 2010-04-05", r"^AC_H\d_SWE$", r"^V_GSE$"),
        ("Wind B_GSM 2012-03-08", r"^WI_H\d_MFI$", r"^BGSM$"),
        ("Geotail BGSE 1998-05-04", r"^GE_", r"(?i)gse"),
        ("SolO MAG B_RTN 2021-01-01", r"^SOLO_L2_MAG-RTN", r"^B_RTN$"),
        # A symbol with a species: that species' moment.
        ("CNOFS Te 2009-06-01", r"^CNOFS_PLP_PLASMA_1SEC$", r"^Te$"),
        ("MMS2 FPI-DES Ne on 2017-07-11", r"^MMS2_FPI_FAST_L2_DES-MOMS$", r"numberdensity"),
        ("MMS1 DIS Ni 2016-01-10", r"^MMS1_FPI_FAST_L2_DIS-MOMS$", r"numberdensity"),
        ("Polar HYDRA Ne 1997-01-10", r"^PO.*HYD", r"(?i)DENSITY_ELE|ELE_DENSITY"),
        ("Helios 1 Tp 1976-04-01 to 1976-04-03", r"^HELIOS1_", r"(?i)^Tp$|protonTemp"),
        ("MAVEN LPW Te 2016-01-01", r"^MVN_INSITU_KP", r"^LPW_Electron_temperature$"),
        ("DE-2 Langmuir probe Te 1982-03-01", r"^DE2_.*LANG", r"(?i)electronTemp"),
        # The kind of instrument: its datasets, and what it measures.
        ("THEMIS-E search coil 2010-05-01", r"^THE_L2_SCM$", r"^the_sc"),
        ("MMS1 search coil 2016-01-10", r"^MMS1_SCM_", r"(?i)scm"),
        ("THEMIS-A search coil Bz GSM 2008-03-01", r"^THA_L2_SCM$", r"gsm"),
        ("MAVEN Langmuir probe electron density 2016-01-01", r"^MVN_INSITU_KP", r"^LPW_Elec"),
    ],
)
def test_the_quantity_as_typed_is_fetched(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    first = _first(vocab, text)
    assert first is not None, text
    assert re.search(dataset, first[0]) and re.search(parameter, first[1]), first


@pytest.mark.parametrize(
    "text",
    ["Ne/O ratio from ACE SWICS 2012-03-07", "NE sector of the plot", "ne of them"],
)
def test_words_that_only_look_like_symbols_are_no_moment(vocab: Vocabulary, text: str) -> None:
    intent = parse_request(text, vocab)
    assert not any(w.text.lower() == "ne" for w in intent.quantities), intent.quantities


def test_a_symbol_names_its_species_and_a_frame_its_vector(vocab: Vocabulary) -> None:
    intent = parse_request("Wind T_i and V_GSM 2005-01-10", vocab)
    found = {(w.quantity, w.species, w.frame) for w in intent.quantities}
    assert ("temperature", "ion", None) in found
    assert ("velocity", None, "GSM") in found


@pytest.mark.parametrize(
    ("text", "offered"),
    [
        ("DSCOVR Bz GSM 2017-09-07", r"DSCOVR_H0_MAG B1GSE"),
        ("Helios 2 electron temperature 1976-04-01", r"HELIOS2_\S+ Tp"),
    ],
)
def test_what_the_mission_lacks_is_asked_with_what_it_holds(
    vocab: Vocabulary, text: str, offered: str
) -> None:
    plan = build_plan(vocab, parse_request(text, vocab))
    assert not [s for s in plan.steps if s.kind == "fetch"]
    assert any(re.search(offered, m) and "would do instead" in m for m in plan.missing), plan


def test_a_mission_with_no_such_data_asks_rather_than_fetching(vocab: Vocabulary) -> None:
    plan = build_plan(vocab, parse_request("Arase Ne 2017-09-08", vocab))
    assert not [s for s in plan.steps if s.kind == "fetch"]
    assert plan.missing
    assert any("No Arase dataset in the catalog holds density (electron)" in n for n in plan.notes)


def test_a_frame_the_mission_lacks_is_never_served_by_another_mission_elsewhere() -> None:
    # Before: the search over every archive took a Galileo PDS dataset for "Bz GSM".
    from xhelio.api.assistant import Assistant
    from xhelio.config import load_settings

    with Assistant(load_settings()) as xh:
        said = xh.run("DSCOVR Bz GSM 2017-09-07", session_id=xh.new_session())
    assert "galileo" not in said.answer.lower(), said.answer
    assert "DSCOVR_H0_MAG" in said.answer and "would do instead" in said.answer, said.answer


def test_quantities_with_no_spacecraft_ask_which_rather_than_search_other_archives() -> None:
    # Before: "magnetic field and density" (no spacecraft, no solar wind word) went to the
    # search over every archive and fetched Cassini or Lunar Prospector data from PDS.
    from xhelio.api.assistant import Assistant
    from xhelio.config import load_settings

    with Assistant(load_settings()) as xh:
        said = xh.run("magnetic field and density on 2015-03-17", session_id=xh.new_session())
    assert "in source 'pds'" not in said.answer and not said.data, said.answer
    assert "I still need a mission (spacecraft)" in said.answer, said.answer
    assert "Planning failed" not in said.answer  # what is missing is said once, plainly


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        (
            "RBSP-A EFW spacecraft potential 2013-03-17",
            r"^RBSPA_EFW-L3$",
            r"^spacecraft_potential$",
        ),
        ("RBSP-A EFW Vsc 2013-03-17", r"^RBSPA_EFW-L3$", r"^spacecraft_potential$"),
        ("Cluster 3 EFW Vsc 2004-03-10", r"^C3_CP_EFW_L3_P$", r"^Spacecraft_potential"),
        ("MMS1 V_sc 2016-01-10", r"^MMS1_EDP_\w+_SCPOT$", r"scpot"),
        ("Wind N_alpha 2005-01-10", r"^WI_", r"(?i)alpha|_a_|A_DENS|he2"),
    ],
)
def test_the_spacecraft_potential_is_not_a_probe_potential_nor_vsc_x_b(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    first = _first(vocab, text)
    assert first is not None, text
    assert re.search(dataset, first[0]) and re.search(parameter, first[1]), first


def _fetched(vocab: Vocabulary, text: str) -> list[tuple[str, str]]:
    plan = build_plan(vocab, parse_request(text, vocab))
    return [
        (str(s.calls[0].args["dataset_id"]), str(s.calls[0].args["parameter_id"]))
        for s in plan.steps
        if s.kind == "fetch" and s.calls
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "EFW spacecraft potential for Cluster 1 and Cluster 4 on 2004-03-10",
            [r"^C1_CP_EFW_L3_P$", r"^C4_CP_EFW_L3_P$"],
        ),
        ("MMS1 and MMS2 spacecraft potential 2016-01-10", [r"^MMS1_EDP_", r"^MMS2_EDP_"]),
        ("THEMIS-A and THEMIS-D search coil 2008-03-01", [r"^THA_L2_SCM$", r"^THD_L2_SCM$"]),
        # Datasets named by id alone: the main data of each, never support data.
        ("C1_CP_EFW_L3_P and C4_CP_EFW_L3_P 2004-03-10", [r"^C1_CP_EFW", r"^C4_CP_EFW"]),
    ],
)
def test_an_open_quantity_of_several_spacecraft_is_fetched_from_each(
    vocab: Vocabulary, text: str, expected: list[str]
) -> None:
    fetched = _fetched(vocab, text)
    assert len(fetched) == len(expected), fetched
    for (dataset, _), pattern in zip(fetched, expected, strict=True):
        assert re.search(pattern, dataset), fetched
    assert len({parameter for _, parameter in fetched}) == len(expected), fetched  # each its own
