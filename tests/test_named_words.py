"""Instrument, product and parameter words a request names, grounded in the catalog (issue 20).

Plans only (no fetch): what the offline resolver would fetch, read with the shipped
catalog. A word naming a parameter or a product outranks a generic reading of it; a
word the pick cannot honour is said. Phrasings differ from the held-out sets on purpose.
"""

from __future__ import annotations

import re

import pytest

from plan_helpers import fetched, plan_of
from xhelio.catalog.index import Catalog
from xhelio.language.parse import Vocabulary
from xhelio.language.products import channel_family, main_parameter, product_id_words


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        # a parameter's own name typed: the parameter, not a quantity the words read as
        ("RBSP-B WFR BuBu magnetic field 2014-01-01", r"RBSP-B_WFR-SPECTRAL-MATRIX\S*", r"BuBu"),
        # the sensor letter typed with its instrument is the sibling's
        ("SolO EPD SIS-A rates 2021-10-28", r"SOLO_L2_EPD-SIS-A-\S+", r".+"),
        ("SolO EPD SIS-B rates 2021-10-28", r"SOLO_L2_EPD-SIS-B-\S+", r".+"),
        # "KP" after an instrument is its key-parameter product, not the Kp index
        ("Polar MFE KP 1998-05-01", r"PO_K0_MFE", r"B_\w+"),
        ("KP index 2003-10-27", r"OMNI\w+", r"(?i)kp"),
        # a quantity only a parameter's description names by its line (121.5 nm)
        ("TIMED SEE Lyman-alpha 2005-01-01", r"TIMED_L3A_SEE", r"FLUX_SP_121"),
        # "all flag values included" is the measured field, not a quality flag
        ("MMS3 EDP DC E-field GSE 2017-07-11", r"MMS3_EDP_\w+_L2_DCE", r"mms3_edp_dce_gse_\w+"),
    ],
)
def test_named_words_pick_what_they_name(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    got = fetched(plan_of(vocab, text))
    assert got, text
    assert all(re.fullmatch(dataset, d) and re.fullmatch(parameter, p) for d, p in got), got


def test_a_word_naming_only_another_product_is_said(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "DE-2 VEFI AC electric field 1982-01-10")
    assert any("could not honour 'AC'" in n and "DE2_AC500MS_VEFI" in n for n in plan.notes)


def test_id_words_hold_sensor_letters_and_cadence_heads(catalog: Catalog) -> None:
    assert "SIS-B" in product_id_words(catalog.dataset("SOLO_L2_EPD-SIS-B-RATES-FAST"))
    assert "AC" in product_id_words(catalog.dataset("DE2_AC500MS_VEFI"))


def test_main_data_is_the_vector_not_its_magnitude(catalog: Catalog) -> None:
    param = main_parameter(catalog.dataset("THC_L2_FGM"), [])
    assert param is not None and param.components == 3, param


def test_a_species_of_a_whole_product_is_every_channel(catalog: Catalog) -> None:
    info = catalog.dataset("AC_H1_EPM")
    first = info.parameter("DE1")
    assert first is not None
    assert [p.name for p in channel_family(info, first)] == ["DE1", "DE2", "DE3", "DE4"]
