"""Abundance and charge-state ratios named by two ions are the catalog's own (issue 20).

"ACE SWICS O7/O6 ratio" was served Fe/O (the first ratio of the file) and "Fe/O" alone
was nothing offline mode could place. Both sides are read into (element, charge) pairs,
from the request and from parameter names ("O7to6") and descriptions ("O+7/O+6"), and
only the same pair serves. Plans only (no fetch), read with the shipped catalog.
"""

from __future__ import annotations

import re

import pytest

from plan_helpers import fetched, plan_of
from xhelio.catalog.model import ParameterInfo
from xhelio.language.parse import Vocabulary
from xhelio.language.ratios import parameter_ratio, requested_ratios


def test_ratios_as_typed() -> None:
    assert [str(r) for r in requested_ratios("O7/O6 and O^7+/O^6+ then Fe/O, C6+/C5+")] == [
        "O7+/O6+",
        "O7+/O6+",
        "Fe/O",
        "C6+/C5+",
    ]
    assert requested_ratios("MMS1 S/C potential") == []
    assert requested_ratios("Wind B/|B| on 2019-06-01") == []


def test_ratios_typed_in_lower_case() -> None:
    # With charges or a two-letter symbol a lower-case ratio is the ions'; without, words.
    typed = "ace swics o7+/o6+, then fe/o and c6/c5"
    assert [str(r) for r in requested_ratios(typed)] == ["O7+/O6+", "Fe/O", "C6+/C5+"]
    assert requested_ratios("the s/n of the s/c potential, n/s asymmetry") == []


@pytest.mark.parametrize(
    ("name", "description", "ratio"),
    [
        ("O7to6", "O+7/O+6 Solar Wind charge_state Ratio", "O7+/O6+"),
        ("C6to4", "C+6/C+4 Solar Wind charge_state Ratio", "C6+/C4+"),
        ("FetoO", "Fe/O Solar Wind elemental abundance ratio", "Fe/O"),
        ("HeO_rat", "He/O ratio of the solar wind", "He/O"),
        ("alpha_ratio", "alpha to proton density ratio", None),
        ("Fe_O_flux", "Fe/O flux in channel 3", None),
    ],
)
def test_ratios_in_the_catalog(name: str, description: str, ratio: str | None) -> None:
    held = parameter_ratio(ParameterInfo(name, description=description))
    assert (str(held) if held else None) == ratio


@pytest.mark.parametrize(
    ("text", "parameter"),
    [
        ("ACE SWICS O7/O6 ratio 2005-01-21", r"^O7to6$"),
        ("ACE SWICS Fe/O 2005-01-21", r"^FetoO$"),
        ("ACE SWICS C6+/C4+ 2005-01-21", r"^C6to4$"),
        ("ace swics o7+/o6+ 2005-01-21", r"^O7to6$"),
    ],
)
def test_the_ratio_named_is_fetched(vocab: Vocabulary, text: str, parameter: str) -> None:
    plan = plan_of(vocab, text)
    assert not plan.missing, plan.missing
    (got,) = fetched(plan)
    assert re.match(r"^AC_H\d_SWI$", got[0]) and re.search(parameter, got[1]), got
    assert not [s for s in plan.steps if s.kind != "fetch" and "ratio" in s.description.lower()]


def test_a_ratio_no_dataset_holds_is_asked(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "Wind Fe/O 2005-01-21")
    assert not fetched(plan)
    assert any("Fe/O ratio" in m for m in plan.missing), plan.missing
