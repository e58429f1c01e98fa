"""Each spacecraft gets the quantities and instrument words said of it.

"Wind SWE proton density and ACE |B|" asks two series, not four, and "SWE" is Wind's
instrument, not ACE's. Unit tests read requests with the parser and bind them; the
end-to-end ones run the offline assistant against the catalog-wide loopback HAPI server.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from eval.harness import Case, run_case, served_home
from xhelio.language.binding import bind_missions
from xhelio.language.parse import Vocabulary, parse_request

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)
B, V = "magnetic_field", "velocity"
SWEPAM_AND_3DP = "compare ACE SWEPAM speed with Wind 3DP ion speed, 2004-11-08"


def _asked(vocab: Vocabulary, text: str) -> dict[str, set[str]]:
    """Per spacecraft typed, the quantity keys asked of it (every one when unbound)."""
    intent = parse_request(text, vocab, now=NOW)
    binding = bind_missions(intent)
    return {
        m.text: {w.quantity for w in intent.quantities if binding is None or binding.wants(m, w)}
        for m in intent.missions
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # each spacecraft its own quantity
        ("Wind SWE proton density and ACE |B| on 2005-05-15", {"Wind": {"density"}, "ACE": {B}}),
        ("Bz at ACE vs solar wind speed at Wind, 2004-11-08", {"ACE": {B}, "Wind": {V}}),
        ("proton density and temperature from Wind and |B| from ACE, 2004-11-08",
         {"Wind": {"density", "temperature"}, "ACE": {B}}),
        ("ACE magnetic field and proton density, and Wind temperature 2004-11-08",
         {"ACE": {B, "density"}, "Wind": {"temperature"}}),
        # one quantity asked of both, in the ways it is said
        ("ACE and Wind solar wind speed 2004-11-08", {"ACE": {V}, "Wind": {V}}),
        ("solar wind speed at ACE and Wind, 2004-11-08", {"ACE": {V}, "Wind": {V}}),
        ("ACE Bz and Wind Bz 2004-11-08", {"ACE": {B}, "Wind": {B}}),
        (SWEPAM_AND_3DP, {"ACE": {V}, "Wind": {V}}),
    ],
)  # fmt: skip
def test_quantities_go_to_the_spacecraft_they_were_said_of(
    vocab: Vocabulary, text: str, expected: dict[str, set[str]]
):
    assert _asked(vocab, text) == expected


def test_one_spacecraft_or_one_clause_binds_nothing(vocab: Vocabulary):
    assert bind_missions(parse_request("ACE |B| and Vp on 2004-11-08", vocab, now=NOW)) is None
    intent = parse_request("ACE Wind speed 2004-11-08", vocab, now=NOW)
    assert bind_missions(intent) is None


def test_instrument_words_belong_to_their_own_spacecraft(vocab: Vocabulary):
    intent = parse_request(SWEPAM_AND_3DP, vocab, now=NOW)
    binding = bind_missions(intent)
    assert binding is not None
    ace, wind = (binding.text_of(m, intent.text) for m in intent.missions)
    assert "SWEPAM" in ace and "3DP" not in ace
    assert "3DP" in wind and "SWEPAM" not in wind


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_home(tmp_path_factory.mktemp("binding-home")) as server:
        yield server.url


def test_two_spacecraft_two_quantities_fetch_two_series(
    served: str, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("XHELIO_HAPI_URL", served)
    case = Case(
        "comparisons",
        "Wind SWE proton density and ACE |B| on 2005-05-15",
        datasets=("^WI_(H1|K0)_SWE$", "^AC_H[0-3]_MFI$"),
        params=("(?i)^Proton_Np|^Np$", "(?i)^Magnitude$"),
        panels=2,
    )
    outcome = run_case(case)
    assert outcome.verdict == "PASS", (outcome.reasons, outcome.answer)
    assert "Differs from the request" not in outcome.answer


def test_each_spacecraft_keeps_its_own_instrument(served: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XHELIO_HAPI_URL", served)
    case = Case(
        "comparisons",
        "ACE SWEPAM proton speed and Wind MFI field magnitude, 2004-11-08",
        datasets=("^AC_H0_SWE$", "^WI_H[0-4]_MFI$"),
        params=("(?i)^Vp$", "(?i)^BF1$"),
    )
    outcome = run_case(case)
    assert outcome.verdict == "PASS", (outcome.reasons, outcome.answer)
    assert "Differs from the request" not in outcome.answer


def test_a_spacecraft_borrowing_a_quantity_does_not_borrow_another_missions_instrument(
    vocab: Vocabulary,
):
    intent = parse_request("Wind 3DP and MMS1 FPI ion temperature 2017-07-11", vocab, now=NOW)
    binding = bind_missions(intent)
    assert binding is not None
    wind, mms = (binding.text_of(m, intent.text) for m in intent.missions)
    assert "temperature" in wind and "FPI" not in wind and "FPI" in mms
    # Spacecraft of one mission share the words: "C1 and C3 EFW spacecraft potential".
    intent = parse_request("C1 and C3 EFW spacecraft potential 2002-02-01", vocab, now=NOW)
    binding = bind_missions(intent)
    assert binding is None or all("EFW" in binding.text_of(m, intent.text) for m in intent.missions)


def test_arithmetic_across_spacecraft_and_frames_keeps_each_spacecraft(
    served: str, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("XHELIO_HAPI_URL", served)
    case = Case(
        "computations",
        "difference between ACE Bz GSM and Wind Bz GSE 2004-11-08",
        datasets=("^AC_H[0-3]_MFI$", "^WI_H[0-4]_MFI$"),
        computed=("(?i)diff",),
    )
    outcome = run_case(case)
    assert outcome.verdict == "PASS", (outcome.reasons, outcome.answer)
    # Said once, of the series that differs: Wind's Bz was asked in GSE.
    assert re.search(r"WI_\w+\.\w+ is in GSM, not GSE as asked", outcome.answer)
    assert not re.search(r"AC_\w+\.\w+ is in GSM, not GSE", outcome.answer)
