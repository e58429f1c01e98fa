"""A flux with more energy channels than a handful is drawn as a spectrogram, and said."""

from __future__ import annotations

from typing import Any

import pytest

from plan_helpers import plan_of
from xhelio.agents.offline.plan import OfflinePlan
from xhelio.language.parse import Vocabulary


def _traces(plan: OfflinePlan) -> list[dict[str, Any]]:
    (step,) = [s for s in plan.steps if s.kind == "plot"]
    return list(step.calls[0].args["figure"]["data"])


@pytest.mark.parametrize(
    "text",
    ["THEMIS-A ESA ion energy flux 2015-03-17", "Wind 3DP electron flux 2012-03-07"],
)
def test_many_energy_channels_are_one_heatmap(vocab: Vocabulary, text: str) -> None:
    plan = plan_of(vocab, text)
    assert [t["type"] for t in _traces(plan)] == ["heatmap"], plan.notes
    assert any("energy channels: drawn as a spectrogram" in n for n in plan.notes)


def test_a_scalar_series_stays_a_line(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "ACE proton density 2015-03-17")
    assert [t["type"] for t in _traces(plan)] == ["scatter"]
