"""An average asked that the product already is, is not computed again, and is said."""

from __future__ import annotations

import pytest

from plan_helpers import plan_of
from xhelio.catalog.model import DatasetInfo
from xhelio.language.candidate import product_cadence
from xhelio.language.parse import Vocabulary


@pytest.mark.parametrize(
    ("title", "seconds"),
    [
        ("H2 - ACE Magnetic Field 1-Hour Level 2 Data", 3600.0),
        ("Voyager I LECP Ion-Electron daily averaged fluxes", 86400.0),
        ("ACE/SIS Solar Isotope Spectrometer 256-sec Level 2 Data", 256.0),
        ("Wind Magnetic Fields Investigation: 3 sec, 1 min, and hourly Definitive Data", None),
    ],
)
def test_a_product_cadence_is_read_from_its_title(title: str, seconds: float | None) -> None:
    assert product_cadence(DatasetInfo("X_Y", title)) == seconds


def test_an_average_the_product_already_is_is_skipped_and_said(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "Voyager 1 LECP daily averages 1995-01-01 to 1995-03-01")
    assert not [s for s in plan.steps if s.kind == "compute"], plan.steps
    assert any("not averaged again" in n for n in plan.notes), plan.notes


def test_a_coarser_average_is_still_computed(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "ACE 16-second field magnitude hourly averages 2015-03-17")
    assert [s for s in plan.steps if s.kind == "compute"]
    assert not any("not averaged again" in n for n in plan.notes)
