"""The species, sub-detector and fleet satellite a request names are the data served.

The shipped catalog is read (no network). A charge state is a species of its own (He+
beside He++ = alpha, on MMS HPCA and FAST TEAMS); a bare element symbol before particle
words ("O intensities", "Fe/O") names the element; a telescope or sensor product named in
words ("5 vectors per second", "spin resolution", a data level "K0") picks that product; a
fleet satellite named by its launch designation ("LANL-97A", "LANL 1994-084", "LANL 1994") picks the
datasets the catalog titles with that launch year, and its numbers are not read as a
date. A plasma velocity is never the spacecraft's own velocity, which only a request
saying "spacecraft velocity" gets; a field with scaled units ("0.1nT") is the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from plan_helpers import fetched as _fetched
from plan_helpers import plan_of as _plan
from xhelio.catalog.index import Catalog, open_catalog
from xhelio.language.grounding import open_request
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.products import product_terms
from xhelio.language.slots import find_designations
from xhelio.vocabulary import load_vocabulary


@pytest.fixture(scope="module")
def catalog() -> Iterator[Catalog]:
    with open_catalog() as cat:
        yield cat


@pytest.fixture(scope="module")
def vocab(catalog: Catalog) -> Vocabulary:
    return Vocabulary.from_catalog(catalog)


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        # charge states of helium: He++ (alpha) and He+ are different parameters
        ("MMS1 HPCA He++ density on 2017-07-11", r"^MMS1_HPCA_", r"heplusplus_number_density"),
        ("MMS1 HPCA alpha temperature 2017-07-11", r"^MMS1_HPCA_", r"heplusplus_.*temp"),
        ("MMS4 HPCA He+ number density 2016-12-09", r"^MMS4_HPCA_", r"_heplus_number_density"),
        (
            "FAST TEAMS He+ energy flux on 1998-09-25",
            r"^FA_K0_TMS|^FAST_TEAMS",
            r"^He\+|^helium_",
        ),
        # "heavy ions": not protons
        ("MMS1 HPCA heavy ion density 2017-07-11", r"^MMS1_HPCA_", r"oplus_number_density"),
        # the analyser named of one plasma instrument
        (
            "Geotail CPI solar wind analyser ion velocity 1996-05-01",
            r"^GE_(K0|H0|SW)_CPI",
            r"^SW_V|^Velocity",
        ),
        ("Geotail CPI hot plasma analyzer ion density 1996-05-01", r"^GE_HPAMOM_CPI", r""),
        # a bare element symbol before particle words
        ("STEREO A LET O intensities on 2012-07-23", r"^STA_L1_LET", r"^O_unsec_flux"),
        ("STEREO-B LET Fe flux 2010-05-01", r"^STB_L1_LET", r"^Fe_unsec_flux"),
        # the plasma velocity, not the spacecraft's (the parameter has no units)
        ("PSP SPC proton velocity on 2020-01-29", r"^PSP_SWP_SPC", r"^vp"),
        # a field in units of 0.1 nT
        ("Geotail K0 MGF magnetic field magnitude 1998-03-10", r"^GE_K0_MGF", r"^IB$"),
        # a sensor product in words
        ("Cluster C3 FGM 5 vectors per second 2004-02-15", r"^C3_CP_FGM_5VPS", r""),
        ("Cluster 2 FGM spin resolution field 2003-03-10", r"^C2_CP_FGM_SPIN", r""),
        # a fleet satellite by its launch designation
        ("LANL-97A MPA ion density 2001-03-31", r"^L7_", r"^dens_"),
        ("LANL-02A MPA density 2005-01-01", r"^A2_K0_MPA", r"^dens_"),
        ("LANL 1991-080 MPA electron density 2002-01-01", r"^L1_K0_MPA", r"^dens_e"),
        # by its launch year alone, or a designation typed in lower case
        ("LANL 1989 MPA density 2000-01-10", r"^L9_K0_MPA", r"^dens_"),
        ("mpa density on lanl-01a 2004-07-25", r"^A1_K0_MPA", r"^dens_"),
    ],
)
def test_the_named_species_product_or_satellite_is_fetched(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    fetched = _fetched(_plan(vocab, text))
    assert fetched, text
    got_dataset, got_parameter = fetched[0]
    assert re.search(dataset, got_dataset), (text, fetched)
    assert re.search(parameter, got_parameter), (text, fetched)


def test_a_designation_is_a_name_not_a_day(vocab: Vocabulary) -> None:
    intent = parse_request("LANL 1994-084 SOPA electron flux 2001-05-01", vocab)
    assert intent.time_range is not None
    assert intent.time_range.start.isoformat().startswith("2001-05-01")
    assert find_designations("LANL 1994-084 flux") == [(5, 9)]
    assert find_designations("ACE flux 1994-084") == []
    assert find_designations("LANL 1994 flux") == [(5, 9)]


def test_spacecraft_velocity_is_asked_in_words(vocab: Vocabulary) -> None:
    fetched = _fetched(_plan(vocab, "PSP spacecraft velocity on 2020-01-29"))
    assert fetched
    assert re.search(r"(?i)sc_vel", fetched[0][1]), fetched
    plasma = _fetched(_plan(vocab, "FAST TEAMS O+ velocity 1998-09-25"))
    assert plasma
    assert not re.search(r"(?i)v_sc", plasma[0][1]), plasma


@pytest.mark.parametrize(
    ("text", "species"),
    [
        ("He+ flux", {"helium_ion"}),
        ("He++ density", {"alpha"}),
        ("alphas", {"alpha"}),
        ("singly charged helium", {"helium_ion"}),
        ("Fe/O ratio", {"iron", "oxygen"}),
        ("C6+ flux", {"carbon"}),
        ("S flux", {"sulfur"}),
        ("THEMIS C ion density", {"ion"}),
        ("the S/C ion data", {"ion"}),
        ("Ne density", set[str]()),
        ("heavy ions", {"heavy_ion"}),
    ],
)
def test_species_words(text: str, species: set[str]) -> None:
    assert {key for key, _ in load_vocabulary().species_named(text)} == species


@pytest.mark.parametrize(
    ("said", "species"),
    [
        ("mms1_hpca_heplus_number_density Number Density Helium+", {"helium_ion"}),
        ("mms1_hpca_heplusplus_number_density Number Density Helium++", {"alpha"}),
        ("helium_omni_flux He+ omnidirectional energy flux", {"helium_ion"}),
        ("Alpha_Na_nonlin Alpha number density", {"alpha"}),
    ],
)
def test_species_cues_tell_charge_states_apart(said: str, species: set[str]) -> None:
    vocabulary = load_vocabulary()
    assert {s.key for s in vocabulary.species if s.cues.search(said)} == species


def test_fleet_and_sensor_words_mean_catalog_tokens() -> None:
    tokens = {t.typed: t.tokens for t in product_terms("LANL-97A and LANL 1990-095 and LANL-01A")}
    assert tokens == {
        "LANL-97A": frozenset({"1997"}),
        "LANL 1990-095": frozenset({"1990"}),
        "LANL-01A": frozenset({"2001"}),
    }
    assert any("5VPS" in t.tokens for t in product_terms("FGM 5 vectors per second"))
    assert any(t.tokens == {"K0"} for t in product_terms("Geotail K0 MGF"))


def test_a_bare_symbol_is_read_beside_a_synonym() -> None:
    concepts = open_request("LET O intensities").concepts
    assert any(c.kind == "species" and c.tokens == {"oxygen"} for c in concepts)
