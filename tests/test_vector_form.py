"""The form of a quantity asked picks the parameter: magnitude, vector or components.

"|B|", "Btotal", "B_mag", "field strength" ask for the magnitude: a dataset's own
magnitude parameter is drawn, not one computed from its vector. "Components" or
"vector" ask for all three: a dataset holding them only as scalars (Helios NESS
"Bx (SSE)", Voyager "BR (B1)") gives those three, never its magnitude. Spectra a
request fits equally (a receiver's antenna channels) give the one the catalog lists
first, and the answer names it and the others.
"""

from __future__ import annotations

import pytest

from plan_helpers import fetched, plan_of
from xhelio.language.parse import Vocabulary, parse_request


@pytest.mark.parametrize(
    ("text", "component"),
    [
        ("emfisis |B| on van allen probe A 2015-03-17", "magnitude"),
        ("THEMIS-A FGM Btotal 2016-02-01", "magnitude"),
        ("Cluster 3 B_mag 2004-01-05", "magnitude"),
        ("MMS1 FGM field strength 2017-07-11", "magnitude"),
        ("IMP 8 magnetic field three components 1995-02-01", "vector"),
        ("Helios 1 mag components 1980-04-09", "vector"),
    ],
)
def test_the_form_asked(vocab: Vocabulary, text: str, component: str) -> None:
    wishes = [w for w in parse_request(text, vocab).quantities if w.quantity == "magnetic_field"]
    assert [w.component for w in wishes] == [component], wishes


def test_the_datasets_own_magnitude_before_its_vector(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "emfisis |B| on van allen probe A 2015-03-17")
    assert [p for _, p in fetched(plan)] == ["Magnitude"], fetched(plan)


@pytest.mark.parametrize(
    ("text", "params"),
    [
        ("helios 1 6-sec ness mag components 1980-04-09", ["BXSSE", "BYSSE", "BZSSE"]),
        ("voyager 2 10 s mag B-field components 1989-07-19", ["B1", "B2", "B3"]),
    ],
)
def test_components_held_as_scalars_are_fetched_as_three(
    vocab: Vocabulary, text: str, params: list[str]
) -> None:
    got = fetched(plan_of(vocab, text))
    assert [p for _, p in got] == params, got
    assert len({d for d, _ in got}) == 1, got


@pytest.mark.parametrize(
    ("text", "channel"),
    [
        ("psp fields rfs hfr radio spectrogram 2020-01-29", "ch0_V1V2"),
        ("psp fields rfs hfr ch1 V3V4 spectrogram 2020-01-29", "ch1_V3V4"),
    ],
)
def test_equal_spectra_give_the_first_listed_and_say_so(
    vocab: Vocabulary, text: str, channel: str
) -> None:
    plan = plan_of(vocab, text)
    got = fetched(plan)
    assert [p for _, p in got] == [f"psp_fld_l2_rfs_hfr_auto_averages_{channel}"], got
    said = " ".join(plan.notes)
    assert ("the first the dataset lists" in said) == (channel == "ch0_V1V2"), said


@pytest.mark.parametrize(
    "text", ["DSCOVR solar wind speed 2017-09-08", "DSCOVR Newell coupling function, 2017-09-08"]
)
def test_a_thermal_speed_is_no_magnitude_of_the_bulk_velocity(vocab: Vocabulary, text: str) -> None:
    # "most probable thermal speed" says "speed" but not "magnitude": the bulk velocity's
    # own |V| is computed from V_GSE, never the thermal speed.
    pairs = fetched(plan_of(vocab, text))
    assert ("DSCOVR_H1_FC", "V_GSE") in pairs, pairs
