"""Words of a spectrum's name and of its instrument read as the catalog means them (issue 20).

"power spectral density" holds no density asked; "omni" in brackets after a spectrum is
its look direction, not the OMNI data set; Ulysses URAP names the radio receivers whose
titles say only "RARA" or "R144"; and no candidate of an electron spectrogram is proton
data (a description's "selected" once read as an electron cue). Plans only, no fetch.
"""

from __future__ import annotations

import re

from plan_helpers import plan_of
from xhelio.language.parse import Vocabulary, parse_request


def _candidates(vocab: Vocabulary, text: str) -> list[str]:
    plan = plan_of(vocab, text)
    return [str(c.args["dataset_id"]) for s in plan.steps if s.kind == "fetch" for c in s.calls]


def test_the_density_of_a_power_spectral_density_is_no_density_asked(vocab: Vocabulary) -> None:
    intent = parse_request("MMS1 search-coil magnetic power spectral density 2016-12-09", vocab)
    assert not any(w.quantity == "density" for w in intent.quantities), intent.quantities
    assert [o.kind for o in intent.operations] == ["psd"]
    # A density named outside the spectrum's words is still asked.
    intent = parse_request("Wind proton density power spectral density 2010-01-01", vocab)
    assert [w.quantity for w in intent.quantities] == ["density"]


def test_omni_in_brackets_after_a_spectrum_is_its_look_direction(vocab: Vocabulary) -> None:
    intent = parse_request("mms3 dsp electric field psd (omni) 2016-12-09", vocab)
    assert [m.mission_id for m in intent.missions] == ["mms"]
    assert not any(d.startswith("OMNI") for d in _candidates(vocab, intent.text))
    # A list naming OMNI keeps it.
    intent = parse_request("ACE proton density, omni 2015-01-01", vocab)
    assert [m.mission_id for m in intent.missions] == ["ace", "omni"]


def test_ulysses_urap_names_its_radio_receivers(vocab: Vocabulary) -> None:
    plan = plan_of(vocab, "ulysses urap radio spectrogram 2000-01-01")
    assert not any("urap" in n for n in plan.notes), plan.notes  # "Not used: 'urap'"
    candidates = _candidates(vocab, "ulysses urap radio spectrogram 2000-01-01")
    assert candidates and all(re.search(r"^UY_M0_(RAR|R144|PFR|WF)", d) for d in candidates)


def test_no_candidate_of_an_electron_spectrogram_is_proton_data(vocab: Vocabulary) -> None:
    candidates = _candidates(vocab, "FAST EES electron energy spectrogram 1998-05-01")
    assert candidates and all(re.search(r"^FA_ESA_L2_EE[SB]$", d) for d in candidates), candidates
