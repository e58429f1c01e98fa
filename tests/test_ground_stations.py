"""Ground magnetometer stations named by place or code, and the component a letter names.

The catalog's per-station datasets say where each station is in their titles ("Ground-based
Vector Magnetic Field at Gillam, Canada"); a place or a code names that station's dataset,
and "H component" / "dH/dt" pick the parameter whose description letters that component.
Also: a catalog parameter stands for a derived quantity only when its own words say the
whole label ("Flow pressure" is no "total pressure"), and an ion ratio's notation is no name.
"""

from __future__ import annotations

import pytest

from plan_helpers import fetched, plan_of
from xhelio.catalog.index import Catalog
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.stations import ground_stations, named_stations


def test_stations_come_from_the_catalog_titles(catalog: Catalog) -> None:
    by_id = {s.dataset_id: s for s in ground_stations(catalog)}
    assert by_id["THG_L2_MAG_GILL"].place == "Gillam"
    assert by_id["THG_L2_MAG_FSMI"].place == "Fort Smith"
    assert by_id["THG_L2_MAG_GILL"].code == "GILL"
    assert len(by_id) > 100


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        (
            "H component at Gillam and Fort Smith on 2015-03-17",
            ["THG_L2_MAG_GILL", "THG_L2_MAG_FSMI"],
        ),
        ("GILL magnetometer, 2015-03-17", ["THG_L2_MAG_GILL"]),
        ("the KEV ground magnetometer 2015-03-17", ["THG_L2_MAG_KEV"]),
        ("Ny Alesund station 2015-03-17", ["THG_L2_MAG_NAL"]),
        # a short code needs a ground-station word; a place in capitals is no place
        ("KEV data on 2015-03-17", []),
        ("NASA magnetometer data 2015-03-17", []),
    ],
)
def test_a_place_or_code_names_the_station(catalog: Catalog, text: str, ids: list[str]) -> None:
    assert [d for d, _ in named_stations(catalog, text)] == ids


@pytest.mark.parametrize(
    ("text", "ids", "params"),
    [
        (
            "H component at Gillam and Fort Smith (THEMIS GMAGs) on 2015-03-17",
            ("THG_L2_MAG_GILL", "THG_L2_MAG_FSMI"),
            ("thg_magh_gill", "thg_magh_fsmi"),
        ),
        ("GILL magnetometer Z component 2015-03-17", ("THG_L2_MAG_GILL",), ("thg_magz_gill",)),
        ("dH/dt at the Gillam ground magnetometer", ("THG_L2_MAG_GILL",), ("thg_magh_gill",)),
        ("horizontal component at ATHA magnetometer", ("THG_L2_MAG_ATHA",), ("thg_magh_atha",)),
        ("the vertical component at Fort Smith", ("THG_L2_MAG_FSMI",), ("thg_magz_fsmi",)),
        ("Iqaluit station east component", ("THG_L2_MAG_IQA",), ("thg_magd_iqa",)),
        (
            "GILL H, E and Z components",
            ("THG_L2_MAG_GILL",),
            ("thg_magh_gill", "thg_magd_gill", "thg_magz_gill"),
        ),
    ],
)
def test_the_lettered_component_is_the_parameter(
    vocab: Vocabulary, text: str, ids: tuple[str, ...], params: tuple[str, ...]
) -> None:
    intent = parse_request(text, vocab)
    assert intent.dataset_ids == ids
    assert intent.parameter_names == params
    assert intent.unknown_names == ()  # "H" is no mission


def test_dh_dt_at_a_station_is_the_derivative_of_h(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "dH/dt at the Gillam ground magnetometer on 2015-03-17")
    assert fetched(plan) == [("THG_L2_MAG_GILL", "thg_magh_gill")]
    assert any("derivative" in str(s.calls) for s in plan.steps if s.kind != "fetch")


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("STEREO-B SEPT electrons for 1 June 2010", ()),
        ("SEPT magnetometer H component 2010-06-01", ("THG_L2_MAG_SEPT",)),
    ],
)
def test_a_code_that_is_an_instrument_name_needs_a_ground_word(
    catalog: Catalog, text: str, ids: tuple[str, ...]
) -> None:
    assert tuple(d for d, _ in named_stations(catalog, text)) == ids


def test_each_component_named_beside_an_instrument_word_is_fetched(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "Fort Smith magnetometer H and Z components on 2015-03-17")
    assert fetched(plan) == [
        ("THG_L2_MAG_FSMI", "thg_magh_fsmi"),
        ("THG_L2_MAG_FSMI", "thg_magz_fsmi"),
    ]


def test_total_pressure_is_not_the_flow_pressure(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "OMNI total pressure on 2015-03-17")
    assert ("OMNI_HRO2_1MIN", "Pressure") not in fetched(plan)
    assert "P_total" in str([s.calls for s in plan.steps if s.kind != "fetch"])


def test_plasma_beta_is_still_the_catalog_one(vocab: Vocabulary) -> None:
    assert fetched(plan_of(vocab, "OMNI plasma beta on 2015-03-17")) == [("OMNI_HRO2_1MIN", "Beta")]


def test_an_ion_ratio_is_no_mission_name(vocab: Vocabulary) -> None:
    intent = parse_request("O7+/O6+ ratio from SWICS for 2005-01-15 to 2005-01-20", vocab)
    assert intent.unknown_names == ()
