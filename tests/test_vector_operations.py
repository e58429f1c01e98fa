"""Computations on named vector parameters: the named vector fetched, rotations said or done.

"|V| from ACE SWEPAM V_GSE" fetches V_GSE and computes its magnitude (never the scalar
speed parameter); "rotate B from GSE into GSM" fetches the GSE vector and rotates it with
`analysis.rotate_frame`; a frame offline mode cannot rotate (RTN) is said in words.
"""

from __future__ import annotations

import pytest

from plan_helpers import fetched, plan_of
from xhelio.agents.offline.plan import OfflinePlan
from xhelio.language.operations import frame_rotation
from xhelio.language.parse import Vocabulary


def _codes(plan: OfflinePlan) -> str:
    return "\n".join(
        str(c.args.get("code", "")) for s in plan.steps if s.kind == "compute" for c in s.calls
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rotate ACE MFI B from GSE into GSM", ("GSE", "GSM")),
        ("rotate DSCOVR B1GSE into GSM", ("", "GSM")),
        ("Cluster field transformed from GSE to GSM", ("GSE", "GSM")),
        ("the field in SM coordinates, converted from GSE", ("GSE", "SM")),
        ("ACE B in GSE from 2019-06-01 to 2019-06-02", None),
    ],
)
def test_frame_rotation_reads_source_and_target(
    text: str, expected: tuple[str, str] | None
) -> None:
    found = frame_rotation(text)
    assert (found[:2] if found else None) == expected


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        ("compute |V| from ACE SWEPAM V_GSE on 2012-03-07", r"AC_H\d_SWE", "V_GSE"),
        ("magnitude of DSCOVR B1GSE on 2017-05-27", "DSCOVR_H0_MAG", "B1GSE"),
    ],
)
def test_magnitude_of_a_named_vector_is_computed_from_it(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    plan = plan_of(vocab, text)
    assert [p for _, p in fetched(plan)] == [parameter]
    assert "pow(0.5)" in _codes(plan)
    assert "sqrt(x^2 + y^2 + z^2)" in _codes(plan)  # the code says it is the norm


def test_a_named_vector_leaves_the_other_quantities_alone(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "ACE density and V_GSE on 2012-03-07")
    assert sorted(p for _, p in fetched(plan)) == ["Np", "V_GSE"]


@pytest.mark.parametrize(
    ("text", "parameter"),
    [
        ("rotate ACE MFI B from GSE into GSM on 2012-03-07", "BGSEc"),
        ("rotate DSCOVR B1GSE into GSM for 2017-05-27", "B1GSE"),
        ("Cluster 1 FGM field transformed from GSE to GSM on 2005-03-01", "gse"),
    ],
)
def test_rotation_fetches_the_source_frame_and_rotates(
    vocab: Vocabulary, text: str, parameter: str
) -> None:
    plan = plan_of(vocab, text)
    assert all(parameter in p for _, p in fetched(plan))
    assert "analysis.rotate_frame(df, 'GSE', 'GSM')" in _codes(plan)


def test_rotation_out_of_rtn_is_declined_in_words(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "PSP FIELDS B rotated from RTN into GSE on 2021-04-29")
    assert "rotate_frame" not in _codes(plan)
    assert any("Could not honour the rotation into GSE" in n for n in plan.notes)


@pytest.mark.parametrize(
    ("text", "factor"),
    [
        ("convert the ACE field magnitude from nT to T on 2012-03-07", "df * 1e-9"),
        ("ACE solar wind speed in m/s on 2012-03-07", "df * 1e3"),
    ],
)
def test_unit_conversion_is_computed(vocab: Vocabulary, text: str, factor: str) -> None:
    assert factor in _codes(plan_of(vocab, text))


def test_unit_conversion_of_another_unit_is_declined_in_words(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "ACE proton density converted to tesla on 2012-03-07")
    assert "1e-9" not in _codes(plan)
    assert any("Could not honour 'converted from nT to T'" in n for n in plan.notes)


def test_a_vector_named_by_id_is_fetched_from_its_own_dataset(vocab: Vocabulary) -> None:
    # V_GSE is in Wind's key-parameter file: named by its id, it is not swapped for the
    # science file's scalar speed
    plan = plan_of(vocab, "magnitude of the Wind V_GSE on 2019-06-01")
    assert fetched(plan) == [("WI_K0_SWE", "V_GSE")]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("scale Wind BGSE by 1e-9 on 2019-06-01", "df * 1e-9"),
        ("ACE Bz divided by 2 on 2012-03-07", "df / 2"),
    ],
)
def test_scaling_by_a_number_is_computed(vocab: Vocabulary, text: str, code: str) -> None:
    plan = plan_of(vocab, text)
    assert code in _codes(plan)
    assert len(fetched(plan)) == 1  # a number is no second series to divide by


def test_a_dataset_named_with_a_frame_serves_its_vector_in_that_frame(vocab: Vocabulary) -> None:
    plan = plan_of(
        vocab, "detrend THA_L2_FGM GSM with a 5-min running mean, 2015-03-17 03:00-06:00"
    )
    assert fetched(plan) == [("THA_L2_FGM", "tha_fgs_gsmQ")]
    assert "rolling('300s'" in _codes(plan)


def test_a_plain_letter_is_no_parameter_id(vocab: Vocabulary) -> None:
    # "B" is a parameter's id in a Wind EPACT file: a word, not an id, it never picks it
    plan = plan_of(vocab, "rotate Wind B from GSE to GSM on 2019-06-01")
    assert fetched(plan) == [("WI_H0_MFI", "BGSE")]
