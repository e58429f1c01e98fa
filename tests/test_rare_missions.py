"""Missions the request set rarely names: their names, spacecraft and own products.

A word inside a mission's hyphenated name ("Equator" of Equator-S) is no misspelt name
of another; Interball's two spacecraft are named as people write them (Tail probe,
Interball-1; Auroral probe, Interball-2); a mission whose product title names the
quantity ("Lyman Alpha Detector") is never silently replaced by the quantity's
default mission (OMNI's Lyman-alpha).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conftest import OfflineSession
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.resolve import probe_of_dataset, probe_wanted

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    ["Equator-S magnetometer data 1998-01-20", "Equator-S EDI electric field 1998-04-01"],
)
def test_a_word_of_a_hyphenated_mission_name_is_no_typo(vocab: Vocabulary, text: str) -> None:
    intent = parse_request(text, vocab, NOW)
    assert [m.mission_id for m in intent.missions] == ["equator-s"]
    assert not intent.doubts, intent.doubts


@pytest.mark.parametrize(
    ("text", "probe"),
    [
        ("Interball auroral probe magnetic field 1997-01-10", "AURORAL"),
        ("Interball-2 magnetic field 1997-01-10", "AURORAL"),
        ("Interball tail magnetic field 1996-02-14", "TAIL"),
        ("Interball-1 CORALL ion velocity GSM 1997-01-10", "TAIL"),
    ],
)
def test_interball_spacecraft_are_named_as_people_write_them(
    vocab: Vocabulary, text: str, probe: str
) -> None:
    intent = parse_request(text, vocab, NOW)
    assert not intent.doubts, intent.doubts
    assert [probe_wanted(m.text) for m in intent.missions] == [probe]


def test_interball_dataset_ids_name_their_spacecraft() -> None:
    assert probe_of_dataset("IA_K0_MFI") == "AURORAL"
    assert probe_of_dataset("IT_K0_COR") == "TAIL"


def test_a_product_titled_with_the_quantity_is_the_named_missions_own(
    session: OfflineSession,
) -> None:
    turn = session.ask("TWINS 1 lyman alpha intensity 2010-04-05")
    served = {d.dataset for d in turn.data if d.dataset}
    assert not any(s.startswith("OMNI") for s in served), (served, turn.answer)


def test_an_instrument_word_of_the_dataset_id_picks_no_parameter(session: OfflineSession) -> None:
    # "GME" names I8_H0_GME; its "11 I8 GME Event Type Rates" is no proton spectrogram.
    turn = session.ask("IMP-8 GME proton spectrogram 1989-10-19 to 1989-10-25")
    drawn = {(d.dataset, d.parameter) for d in turn.data if d.dataset}
    assert ("I8_H0_GME", "Proton_DIntn") in drawn, (drawn, turn.answer)
