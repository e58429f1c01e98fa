"""An unqualified temperature is the scalar one; a part of it only when said (issue 20).

"MMS1 FPI ion temperature" was served the parallel temperature without a word; a
pressure in eV/cm^3 passed for a temperature ("THEMIS-A ion temperature"). The scalar
(average, trace, total) goes first; when a dataset holds only parts (parallel,
perpendicular, tensor), the part drawn is said; a part asked ("perpendicular") is drawn.
Plans only (no fetch), read with the shipped catalog.
"""

from __future__ import annotations

import re

import pytest

from plan_helpers import fetched, plan_of
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.flavours import flavour_note, flavour_score, is_part
from xhelio.language.parse import Vocabulary


@pytest.mark.parametrize(
    ("name", "description", "part"),
    [
        ("mms1_dis_temppara_fast", "MMS1 FPI/DIS ion parallel temperature", True),
        ("T_p_perp__C1_PP_CIS", "Proton Perp. Temperature", True),
        ("TxTyTz_RTN", "Temperature components in RTN frame", True),
        ("T3", "electron Temperature eigenvalues after diagonalization", True),
        ("mms1_hpca_hplus_tparallel", "Tparallel H+ for each HPCA half-spin", True),
        ("TEMP", "Average of Trace of Partial Moment Temperature Tensor", False),
        ("tha_peif_avgtempQ", "-----Ion Average Temperature", False),
        ("mms1_hpca_hplus_scalar_temperature", "Scalar Temperature Hydrogen+", False),
        ("T", "Temperature", False),
    ],
)
def test_parts_and_scalars_from_names_and_descriptions(
    name: str, description: str, part: bool
) -> None:
    p = ParameterInfo(name, units="eV", description=description)
    assert is_part(p) is part
    assert (flavour_score("temperature", p) < 0) is part
    assert flavour_score("magnetic_field", p) == 0.0


def test_a_part_standing_in_is_said_with_its_siblings() -> None:
    par = ParameterInfo("T_p_par", units="MK", description="Proton Parallel Temperature")
    perp = ParameterInfo("T_p_perp", units="MK", description="Proton Perp. Temperature")
    info = DatasetInfo("C1_PP_CIS", "CIS Prime Parameters", parameters=(par, perp))
    note = flavour_note("temperature", info, par)
    assert note is not None and note.startswith("Differs from the request")
    assert "T_p_perp" in note and "2 T_perp" in note
    assert flavour_note("temperature", info, ParameterInfo("T", description="Temperature")) is None


@pytest.mark.parametrize(
    ("text", "dataset", "parameter", "said"),
    [
        ("THEMIS-A ion temperature 2015-03-17", r"^THA_L2_", r"avgtemp", False),
        ("MMS1 FPI ion temperature 2017-07-11", r"^MMS1_FPI_\w+_L2_DIS-MOMS$", r"temp", True),
        ("Cluster 1 proton temperature 2005-03-01", r"^C1_PP_CIS$", r"^T_p_", True),
        ("MMS1 FPI ion perpendicular temperature 2017-07-11", r"DIS-MOMS$", r"tempperp", False),
        ("MMS2 FPI parallel electron temperature 2017-07-11", r"DES-MOMS$", r"temppara", False),
        ("PSP SPAN-i alpha temperature 2021-04-29", r"^PSP_SWP_SPI_SF0A_L3_MOM$", r"^TEMP$", False),
        ("MMS1 FPI ion Tpar 2017-07-11", r"^MMS1_FPI_FAST_L2_DIS-MOMS$", r"temppara", False),
        ("MMS1 FPI ion Tperp 2017-07-11", r"^MMS1_FPI_FAST_L2_DIS-MOMS$", r"tempperp", False),
        ("MMS1 FPI ion T∥ 2017-07-11", r"^MMS1_FPI_FAST_L2_DIS-MOMS$", r"temppara", False),
    ],
)
def test_temperature_flavour_in_plans(
    vocab: Vocabulary, text: str, dataset: str, parameter: str, said: bool
) -> None:
    plan = plan_of(vocab, text)
    (got,) = fetched(plan)
    assert re.search(dataset, got[0]) and re.search(parameter, got[1]), got
    stated = [n for n in plan.notes if "holds no scalar temperature" in n]
    assert bool(stated) is said, plan.notes
