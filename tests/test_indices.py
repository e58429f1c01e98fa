"""Geophysical and solar indices by the names physicists use, and the source with none named.

The audit: every index and solar-wind derived parameter of OMNI's hourly dataset has a
common name here, and that name (as typed, with and without "OMNI") fetches exactly
that parameter. A new index parameter in the catalog fails the audit until its name is
in the vocabulary (`vocabulary/quantities.toml`). With no spacecraft named, an index
comes from the mission that holds it; a solar-wind quantity from OMNI only when the
request places it in the solar wind, said in the answer; a bare quantity is asked about.
Plans only (no fetch), read with the shipped catalog.
"""

from __future__ import annotations

import re

import pytest

from plan_helpers import fetched, plan_of
from xhelio.language.parse import Vocabulary

_HOURLY = "OMNI2_H0_MRG1HR"
# Index and derived solar-wind parameters of OMNI: description words that say one.
_INDEX_LIKE = re.compile(
    r"index|sunspot|lyman|f10\.7|beta|mach|electric field|flow pressure", re.IGNORECASE
)

# The hourly OMNI parameter each common name stands for.
COMMON_NAMES: dict[str, tuple[str, ...]] = {
    "R": ("sunspot number", "SSN", "daily sunspot number"),
    "F10_INDEX": ("F10.7", "10.7 cm solar radio flux", "F10.7 index"),
    "KP": ("Kp", "3-hour Kp", "Kp*10", "Kp index"),
    "DST": ("Dst", "Dst index"),
    "AE": ("AE index", "AE"),
    "AP_INDEX": ("ap index", "Ap"),
    "AL_INDEX": ("AL index", "AL"),
    "AU_INDEX": ("AU index", "AU"),
    "PC_N_INDEX": ("polar cap index", "PCN", "PC(N) index", "northern polar cap index"),
    "Solar_Lyman_alpha": ("solar Lyman-alpha", "Lyman alpha"),
    "Pressure": ("flow pressure",),
    "Beta": ("plasma beta",),
    "Mach_num": ("Alfven Mach number",),
    "Mgs_mach_num": ("magnetosonic Mach number",),
    "E": ("electric field",),
}


def _index_parameters(vocab: Vocabulary) -> list[str]:
    info = vocab.catalog.dataset(_HOURLY)
    return [p.name for p in info.data_parameters if _INDEX_LIKE.search(p.description)]


def test_every_index_parameter_of_omni_has_a_common_name(vocab: Vocabulary) -> None:
    named = set(COMMON_NAMES)
    missing = [p for p in _index_parameters(vocab) if p not in named and not p.endswith("1800")]
    assert missing == []


_CASES = [(param, name) for param, names in COMMON_NAMES.items() for name in names]


@pytest.mark.parametrize(("param", "name"), _CASES)
def test_common_name_of_an_omni_parameter_fetches_it(
    vocab: Vocabulary, param: str, name: str
) -> None:
    plan = plan_of(vocab, f"OMNI {name} for 2003-10-28 to 2003-10-31")
    got = fetched(plan)
    assert got, plan.missing
    assert all(d.startswith("OMNI") for d, _ in got), got
    assert {_same(p) for _, p in got} == {_same(param)}, got


def _same(name: str) -> str:
    """One index across OMNI's datasets: "AE" hourly is "AE_INDEX" at 1 minute."""
    return re.sub(r"_?index$", "", name, flags=re.IGNORECASE).lower()


@pytest.mark.parametrize(
    ("text", "param"),
    [
        ("F10.7 solar radio flux 2003-10-20 to 2003-11-10", "F10_INDEX"),
        ("polar cap index PCN on 2015-03-17", "PC_N_INDEX"),
        ("ASY-H on 2015-06-22", "ASY_H"),
        ("sunspot number 2000-01-01 to 2001-12-31", "R"),
        ("AL and AU for 2012-07-14 to 2012-07-16", "AL_INDEX|AU_INDEX"),
        ("ap index for 2015-03-15 to 2015-03-20", "AP_INDEX"),
    ],
)
def test_an_index_with_no_mission_comes_from_the_mission_holding_it(
    vocab: Vocabulary, text: str, param: str
) -> None:
    plan = plan_of(vocab, text)
    got = fetched(plan)
    assert got and all(d.startswith("OMNI") and re.fullmatch(param, p) for d, p in got), got
    assert not plan.missing


def test_an_index_the_catalog_lacks_is_said_not_replaced(vocab: Vocabulary) -> None:
    # OMNI has the northern polar cap index only: the southern one is never PCN instead.
    plan = plan_of(vocab, "PCS index on 2015-03-17")
    assert all(p != "PC_N_INDEX" for _, p in fetched(plan))
    assert plan.missing


def test_one_au_is_a_distance_not_the_au_index(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "OMNI proton density at 1 AU for 2003-10-29")
    assert all(not p.startswith("AU") for _, p in fetched(plan))


@pytest.mark.parametrize(
    "text",
    [
        "magnetic field 2003-10-29",
        "B field on 2013-03-17",
        "electron flux 2012-10-08",
        "proton temperature 2009-02-01",
        "density and temperature 2010-05-01",
    ],
)
def test_a_bare_quantity_with_no_spacecraft_is_asked_about(vocab: Vocabulary, text: str) -> None:
    plan = plan_of(vocab, text)
    assert fetched(plan) == []
    assert any("spacecraft" in m for m in plan.missing), plan.missing


@pytest.mark.parametrize(
    "text",
    [
        "solar wind density 2015-03-17",
        "IMF Bz GSM 2003-10-29 to 2003-10-31",
        "upstream flow pressure 2005-05-15",
        "interplanetary magnetic field magnitude on 2012-07-15",
    ],
)
def test_a_solar_wind_quantity_with_no_spacecraft_is_omni_said_so(
    vocab: Vocabulary, text: str
) -> None:
    plan = plan_of(vocab, text)
    got = fetched(plan)
    assert got and all(d.startswith("OMNI") for d, _ in got), got
    said = " ".join(plan.notes)
    assert re.search(r"No spacecraft (?:was )?named.*OMNI.*bow[- ]shock", said), said


def test_absent_missions_are_absent_and_their_nearest_present(vocab: Vocabulary) -> None:
    from xhelio.vocabulary import read_table

    rows = read_table("absent_missions.toml")
    for key, row in rows.items():
        assert all(vocab.aliases.resolve(str(n)) is None for n in row["names"]), key
        assert all(m in vocab.mission_names for m in row["nearest"]), key


@pytest.mark.parametrize(
    ("text", "nearest"),
    [
        ("Rosetta magnetometer data 2015-08-13", "Ulysses"),
        ("Swarm A magnetic field 2015-03-17", "DMSP"),
        ("Akebono electron density 1990-03-01", "Polar"),
        ("BepiColombo magnetic field 2021-10-01", "MESSENGER"),
    ],
)
def test_a_mission_the_catalog_lacks_is_said_with_the_nearest_it_has(
    vocab: Vocabulary, text: str, nearest: str
) -> None:
    plan = plan_of(vocab, text)
    assert fetched(plan) == []
    said = " ".join(plan.missing)
    assert "no mission by that name" in said and nearest in said, said


def test_a_derived_quantity_asked_to_be_computed_is_computed(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "compute the plasma beta from OMNI n, T and B for 2003-10-29")
    assert {p for _, p in fetched(plan)} >= {"T"}
    assert all(p != "Beta" for _, p in fetched(plan))
