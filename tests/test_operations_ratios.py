"""Ratios of two named quantities written as notation, from the catalog or computed.

"Tperp/Tpar", "T⊥/T∥", "Na/Np", "He/H", "alpha-to-proton ratio", "Pth/Pb", "Vth/VA": a
parameter the catalog already has as the ratio is fetched and said as such (never
divided again by a density); otherwise both inputs are fetched and the ratio computed,
and the answer says which. The request-vs-data check takes the notation as the derived
quantity's own words, not as a parameter-level word the drawn parameters lack.
"""

from __future__ import annotations

import re

import pytest

from operations_support import computations, stored_frame, with_code
from plan_helpers import fetched, plan_of
from xhelio.agents.offline.derived import derived_named
from xhelio.language.parse import Vocabulary
from xhelio.tools.workspace import Workspace


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Tperp/Tpar", "temperature_anisotropy"),
        ("T⊥/T∥", "temperature_anisotropy"),
        ("T_perp / T_par", "temperature_anisotropy"),
        ("Na/Np", "alpha_proton_ratio"),
        ("He/H", "alpha_proton_ratio"),
        ("He++/H+", "alpha_proton_ratio"),
        ("alpha-to-proton ratio", "alpha_proton_ratio"),
        ("helium abundance", "alpha_proton_ratio"),
        ("Pth/Pb", "plasma_beta"),
        ("Vth/VA", "thermal_alfven_ratio"),
    ],
)
def test_ratio_notation_names_one_derived_quantity(text: str, key: str) -> None:
    assert [d.key for d in derived_named(f"{text} at Wind on 2019-06-01")] == [key]


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        ("OMNI alpha/proton ratio for 2015-03-17", "^OMNI", "^(Ratio|NaNp_Ratio)$"),
        ("alpha-to-proton ratio at ACE SWEPAM on 2012-03-07", "^AC_H[02]_SWE$", "^alpha_ratio$"),
        ("ACE Na/Np for 2012-03-07", "^AC_", "^alpha_ratio$"),
    ],
)
def test_a_ratio_the_catalog_has_is_fetched_not_computed(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    plan = plan_of(vocab, text)
    pairs = fetched(plan)
    assert len(pairs) == 1 and re.search(dataset, pairs[0][0]), pairs
    assert re.search(parameter, pairs[0][1]), pairs
    assert not [s for s in plan.steps if s.kind == "compute"], plan.steps
    assert any("itself" in n and "nothing computed" in n for n in plan.notes), plan.notes


def test_a_ratio_the_catalog_lacks_is_computed_and_said(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "He/H from Wind SWE on 2019-06-01")
    params = [p for _, p in fetched(plan)]
    assert [p.lower()[:7] for p in params] == ["alpha_n", "proton_"], params
    assert any(s.kind == "compute" for s in plan.steps)
    assert any("computed from its inputs" in n for n in plan.notes), plan.notes


@pytest.mark.parametrize(
    "text", ["MMS1 FPI ion Tperp/Tpar on 2017-07-11", "T⊥/T∥ for MMS2 FPI ions on 2017-07-11"]
)
def test_temperature_anisotropy_fetches_perpendicular_then_parallel(
    vocab: Vocabulary, text: str
) -> None:
    pairs = fetched(plan_of(vocab, text))
    assert len(pairs) == 2, pairs
    (d1, perp), (d2, par) = pairs
    assert "DIS-MOMS" in d1 and "DIS-MOMS" in d2, pairs
    assert "tempperp" in perp and "temppara" in par, pairs


def test_pth_over_pb_is_the_plasma_beta_alone(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "Pth/Pb at Wind on 2019-06-01")
    computed = [s.output for s in plan.steps if s.kind == "compute"]
    assert computed and all("beta" in str(c) for c in computed), computed


def test_vth_over_va_is_no_voyager_and_no_alfven_speed(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "Vth/VA from OMNI on 2015-03-17")
    assert not plan.missing, plan.missing
    computed = [str(s.output) for s in plan.steps if s.kind == "compute"]
    assert computed == [c for c in computed if "thermal_alfven" in c] and computed, computed


def test_anisotropy_values_and_answer_say_no_difference(workspace: Workspace) -> None:
    answer, ops = computations(workspace, "MMS1 FPI ion Tperp/Tpar on 2017-07-11")
    op = with_code(ops, "t_perp / t_par")
    result = stored_frame(workspace, op["args"]["output_label"]).iloc[:, 0]
    perp, par = (
        stored_frame(workspace, label).iloc[:, 0].astype(float)
        for label in op["args"]["source_labels"]
    )
    assert result.to_numpy() == pytest.approx((perp / par).to_numpy(), nan_ok=True)
    assert "Differs from the request" not in answer, answer
