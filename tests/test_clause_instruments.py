"""Each instrument serves the quantity phrase of its own clause, in requests and follow-ups.

"RBSP-A EMFISIS |B| and HOPE electron density" asks |B| of EMFISIS and the density of
HOPE; "add the THEMIS ESA ion density" after FGM |B| asks the density of ESA (the
follow-up's newline is a clause boundary); "LEP-e and MEP-e omni electron flux" asks the
flux of each. A follow-up switching spacecraft ("now F16") keeps the quantity asked,
read with the same words ("total"), not the name of the spacecraft left.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from xhelio.agents.offline.followup import following, merge
from xhelio.agents.offline.plan import build_plan
from xhelio.language.parse import Vocabulary, parse_request

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


def _fetched(vocab: Vocabulary, *turns: str) -> list[tuple[str, str]]:
    intent = parse_request(turns[0], vocab, NOW)
    for text in turns[1:]:
        new = following(intent, parse_request(text, vocab, NOW), vocab.probes)
        intent, _ = merge(intent, new)
    plan = build_plan(vocab, intent, NOW)
    calls = [s.calls[0].args for s in plan.steps if s.kind == "fetch"]
    return [(c["dataset_id"], c.get("parameter_id", "")) for c in calls]


@pytest.mark.parametrize(
    ("turns", "wanted"),
    [
        (
            ("RBSP-A EMFISIS |B| and HOPE electron density, 2015-03-17",),
            [r"^RBSP-A_MAGNETOMETER_.*EMFISIS", r"^RBSPA_REL04_ECT-HOPE-MOM-L3\.Dens_e_200$"],
        ),
        (
            ("arase LEP-e and MEP-e omni electron flux side by side, 2017-09-08",),
            [r"^ERG_LEPE_L2_OMNIFLUX\.FEDO$", r"^ERG_MEPE_L2_OMNIFLUX\.FEDO$"],
        ),
        (
            ("THEMIS-A FGM field magnitude 2008-02-26", "also the THEMIS ESA ion density"),
            [r"^THA_L2_FGM\.tha_fg[slh]_btotal", r"^THA_L2_ESA\.tha_pei[frb]_density"],
        ),
        (
            ("RBSP-A EMFISIS magnetic field, 2015-03-17", "add the HOPE electron density"),
            [r"^RBSP-A_MAGNETOMETER_.*EMFISIS", r"^RBSPA_REL04_ECT-HOPE-MOM-L3\.Dens_e_200$"],
        ),
    ],
)
def test_each_instrument_serves_its_own_clause(
    vocab: Vocabulary, turns: tuple[str, ...], wanted: list[str]
) -> None:
    got = [f"{d}.{p}" for d, p in _fetched(vocab, *turns)]
    assert len(got) == len(wanted), got
    for pattern in wanted:
        assert any(re.search(pattern, g) for g in got), (pattern, got)


@pytest.mark.parametrize(
    ("before", "text", "dataset", "parameter"),
    [
        (
            "DMSP F18 SSJ electron total energy flux 2013-03-17",
            "now F16",
            "DMSP-F16_SSJ_PRECIPITATING-ELECTRONS-IONS",
            "ELE_TOTAL_ENERGY_FLUX",
        ),
        (
            "NOAA-19 MEPED 90 degree electron flux 2013-03-17",
            "switch to NOAA-18",
            "NOAA18_POES-SEM2_FLUXES-2SEC",
            "mep_ele_flux_stackt0",
        ),
        (
            "THEMIS-D FGM field magnitude 2009-02-15",
            "now the E probe",
            "THE_L2_FGM",
            "the_fgs_btotalQ",
        ),
        (
            "STEREO-A PLASTIC proton speed 2010-01-05",
            "same for the other STEREO",
            "STB_L2_PLA_1DMAX_1MIN",
            "proton_bulk_speed",
        ),
    ],
)
def test_a_spacecraft_switch_keeps_the_quantity_asked(
    vocab: Vocabulary, before: str, text: str, dataset: str, parameter: str
) -> None:
    assert _fetched(vocab, before, text) == [(dataset, parameter)]
