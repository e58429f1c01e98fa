"""A frame named after an instrument product picks that product's vector in the frame.

"THEMIS-C fgl gsm" is the FGL field in GSM, not the FGL magnitude the product's own
words fit as well (issue 20): the frames a parameter is in come from its own name or
words, the frames a request names from the vocabulary's frame list.
Plans are read with the shipped catalog; phrasings here differ from tests/eval on purpose.
"""

from __future__ import annotations

import re

import pytest

from xhelio.agents.offline.plan import build_plan
from xhelio.catalog.model import ParameterInfo
from xhelio.language.frames import frames_named, parameter_frames
from xhelio.language.parse import Vocabulary, parse_request


@pytest.mark.parametrize(
    ("name", "description", "frames"),
    [
        ("thc_fgl_gsm", "", {"GSM"}),
        ("tha_fgs_gseQ", "", {"GSE"}),
        ("BGSEc", "", {"GSE"}),
        ("mag_8sec_sm", "", {"SM"}),
        ("thc_fgl_btotal", "FGL magnetic field B magnitude", set()),
        ("B_vec", "Magnetic field vector in GSM coordinates", {"GSM"}),
        ("SMOOTH", "smoothed density", set()),
    ],
)
def test_the_frames_a_parameter_is_in(name: str, description: str, frames: set[str]) -> None:
    assert parameter_frames(ParameterInfo(name, description=description)) == frames


def test_the_frames_a_request_names() -> None:
    assert frames_named("THEMIS-C fgl gsm, then B in RTN") == ("GSM", "RTN")


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        ("THEMIS-C fgl gsm 2015-03-17", "THC_L2_FGM", r"thc_fgl_gsmQ?"),
        ("THEMIS-A fgs GSE for 2015-03-17", "THA_L2_(FGM|FIT)", r"tha_fgs_gseQ?"),
        ("THEMIS-D fgh dsl on 2015-03-17", "THD_L2_FGM", r"thd_fgh_dslQ?"),
    ],
)
def test_a_frame_after_a_product_picks_its_vector_in_that_frame(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    plan = build_plan(vocab, parse_request(text, vocab))
    fetched = [
        (s.candidates[0].dataset_id, s.candidates[0].parameter)
        for s in plan.steps
        if s.kind == "fetch" and s.candidates
    ]
    assert len(fetched) == 1, fetched
    assert re.fullmatch(dataset, fetched[0][0]), fetched
    assert re.fullmatch(parameter, fetched[0][1]), fetched
