"""A mission word that is a part of another named mission's dataset id is not a spacecraft.

"MMS3 EDP FAST DCE" is the MMS product MMS3_EDP_FAST_L2_DCE (fast mode), not MMS and the
FAST spacecraft; "C1 STA SM" is Cluster's STAFF product, not Cluster and STEREO-A. Two
spacecraft named as such stay two. Parsed and planned against the shipped catalog.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from xhelio.agents.offline.plan import build_plan
from xhelio.language.parse import Vocabulary, parse_request

NOW = datetime(2026, 11, 27, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "mission", "dataset"),
    [
        ("MMS3 EDP FAST DCE 2017-07-11", "mms", "MMS3_EDP_FAST_L2_DCE"),
        ("C1 STA SM on 2005-03-01", "cluster", "C1_CP_STA_SM"),
        ("mms2 dsp fast bpsd, 2016-01-05", "mms", "MMS2_DSP_FAST_L2_BPSD"),
    ],
)
def test_an_id_part_is_not_another_spacecraft(
    vocab: Vocabulary, text: str, mission: str, dataset: str
) -> None:
    intent = parse_request(text, vocab, NOW)
    assert [m.mission_id for m in intent.missions] == [mission]
    fetched = [
        c.args["dataset_id"]
        for s in build_plan(vocab, intent, NOW).steps
        for c in s.calls
        if c.tool == "fetch_data"
    ]
    assert fetched[:1] == [dataset]


@pytest.mark.parametrize(
    "text",
    ["compare FAST and MMS1 electron density 2017-07-11", "STA and C1 magnetic field 2008-01-01"],
)
def test_two_spacecraft_named_as_such_stay_two(vocab: Vocabulary, text: str) -> None:
    assert len(parse_request(text, vocab, NOW).missions) == 2
