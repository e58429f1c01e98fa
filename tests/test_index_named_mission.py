"""An index named together with a spacecraft that measures it comes from that spacecraft.

Indices no spacecraft measures (F10.7, Kp, Dst ...) come from OMNI when a request names
no source. When the request names a spacecraft whose own catalog parameters say they hold
the quantity (MAVEN's EUV monitor measures Lyman-alpha at Mars; TIMED SABER files carry
the daily F10.7 they were processed with), the named spacecraft is the source: serving
OMNI there would be other data than asked. A parameter computed *for* an index value
("MLT for Kp=2") does not hold the index.
"""

from __future__ import annotations

import pytest

from conftest import OfflineSession
from xhelio.agents.turn import TurnResult


def _fetched(turn: TurnResult) -> list[tuple[str | None, str | None]]:
    return [(d.dataset, d.parameter) for d in turn.data if d.dataset]


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        (
            "MAVEN Lyman-alpha irradiance on 2016-03-01",
            "MVN_INSITU_KP-4SEC",
            "LPW_EUV_irradiance_lyman_alpha",
        ),
        ("TIMED SABER F10.7 for January 2005", "TIMED_L", "solf10p7"),
        ("sunspot number from TIMED, 2004-06-01 to 2004-06-10", "TIMED_L2A_SABER", "solSpotNo"),
    ],
)
def test_the_named_spacecraft_measures_the_index(
    session: OfflineSession, text: str, dataset: str, parameter: str
) -> None:
    turn = session.ask(text)
    fetched = _fetched(turn)
    assert fetched, turn.answer
    assert all(d is not None and d.startswith(dataset) for d, _ in fetched), (fetched, turn.answer)
    assert any(p is not None and p.startswith(parameter) for _, p in fetched), fetched


@pytest.mark.parametrize(
    "text",
    [
        "F10.7 for January 2005",
        "Kp during the BARREL 1A flight, 2013-01-20",  # BARREL has MLT *for* Kp=2, not Kp
        "Dst and ACE Bz on 2015-03-17",
    ],
)
def test_an_index_no_named_spacecraft_measures_comes_from_omni(
    session: OfflineSession, text: str
) -> None:
    turn = session.ask(text)
    fetched = _fetched(turn)
    assert any(d is not None and d.startswith("OMNI") for d, _ in fetched), (fetched, turn.answer)
    assert not any(d is not None and d.startswith("BAR_") for d, _ in fetched), fetched


@pytest.mark.xfail(strict=True, reason="only the TWINS LAD dataset title says Lyman-alpha")
def test_a_lyman_alpha_detector_named_only_in_a_title_is_its_source(
    session: OfflineSession,
) -> None:
    turn = session.ask("TWINS LAD Lyman-alpha on 2010-06-01")
    fetched = _fetched(turn)
    assert fetched and all(d is not None and d.startswith("TWINS") for d, _ in fetched), fetched
