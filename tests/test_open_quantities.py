"""Open-vocabulary quantities: a request's own words matched against catalog metadata.

The shipped catalog is read (no network). A quantity the quantity table does not know
("spacecraft potential", "charge state", an energy channel) is found from the parameters'
own names, descriptions and units; a species or energy channel named must be the one
picked, and none is picked when the named instrument has no such parameter.
"""

from __future__ import annotations

import re

import pytest

from xhelio.agents.offline.plan import build_plan
from xhelio.catalog.index import Catalog
from xhelio.language.grounding import energy_range, open_request, order_parameters, rank_open
from xhelio.language.parse import Vocabulary, parse_request


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("47-68 keV ions", (47.0, 68.0)),
        ("0.047-0.065 MeV Ions", (47.0, 65.0)),
        ("electrons above 2 MeV", (2000.0, float("inf"))),
        ("E>0.7 MeV Ions", (700.0, float("inf"))),
        ("1.5 keV electrons", (1.5, 1.5)),
        ("ion temperature", None),
    ],
)
def test_energy_ranges_are_read_in_kev(text: str, expected: tuple[float, float] | None) -> None:
    assert energy_range(text) == expected


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
        ("ACE SIS oxygen flux 2012-03-07", r"^AC_H\d_SIS$", r"^flux_O$"),
        ("ACE SIS iron intensity 2012-03-07", r"^AC_H\d_SIS$", r"^flux_Fe$"),
        ("Geotail LEP ion temperature 2005-01-10", r"^GE_.*LEP$", r"^T$"),
        ("ACE EPAM 47-68 keV ions 2012-03-07", r"^AC_(H\d|K\d)_EPM$", r"^(P1p?|Ion_very_lo)$"),
        ("ACE EPAM 175-315 keV electrons 2012-03-07", r"^AC_(H\d|K\d)_EPM$", r"^(DE4|E4p?)$"),
        ("ACE SWICS iron charge state 2013-05-01", r"^AC_H3_SW2$", r"^avqFe$"),
        ("MMS1 spacecraft potential 2017-07-11", r"^MMS1_EDP_.*SCPOT$", r"scpot"),
        ("ACE SWICS O8+/O6+ ratio 2013-03-07", r"^AC_H3_SW2$", r"^O8to6$"),
        ("Wind EPACT Fe fluxes 2012-03-07", r"^WI_.*EPACT", r"(?i)fe"),
        ("GOES-15 EPEAD >2 MeV electrons 2012-03-07", r"^GOES15_EPEAD", r"^E2"),
    ],
)
def test_the_parameter_whose_metadata_says_the_words_is_fetched(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    got = _first(vocab, text)
    assert got is not None, text
    assert re.search(dataset, got[0]) and re.search(parameter, got[1]), got


@pytest.mark.parametrize(
    "text",
    [
        "ACE SWEPAM oxygen density 2012-03-07",
        "ACE EPAM 40-50 MeV electrons 2012-03-07",
    ],
)
def test_a_species_or_channel_the_instrument_lacks_is_never_a_sibling(
    vocab: Vocabulary, text: str
) -> None:
    assert _first(vocab, text) is None


def test_a_named_species_excludes_every_other_species(catalog: Catalog) -> None:
    datasets = [catalog.dataset("AC_H1_SIS")]
    picks = rank_open(open_request("Fe flux"), datasets)
    assert picks and all("Fe" in c.parameter for c in picks)
    assert not rank_open(open_request("electron flux"), datasets)


def test_support_variables_are_never_picked(catalog: Catalog) -> None:
    info = catalog.dataset("WI_EPACT_STEP-DIRECTIONAL-DIFF-FE-FLUX-10MIN")
    picks = rank_open(open_request("Fe flux"), [info])
    assert picks and not picks[0].parameter.lower().startswith("energy")


def test_a_word_no_parameter_covers_is_said(catalog: Catalog) -> None:
    picks = rank_open(open_request("precipitating oxygen flux"), [catalog.dataset("AC_H1_SIS")])
    assert picks
    assert any("precipitating" in n for n in picks[0].notes)
    assert all("Differs from the request" in n for n in picks[0].notes)


def test_list_parameters_order_puts_the_named_species_and_channel_first(catalog: Catalog) -> None:
    sis = [p.name for p in order_parameters(catalog.dataset("AC_H1_SIS"), "Fe flux")]
    assert sis[0] == "flux_Fe"
    epam = [p.name for p in order_parameters(catalog.dataset("AC_H3_EPM"), "47-68 keV ions")]
    assert epam[0] in ("P1", "P1p")
    plain = catalog.dataset("AC_H1_SIS")
    assert order_parameters(plain, "") == list(plain.data_parameters)
