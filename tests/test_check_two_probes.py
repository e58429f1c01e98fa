"""The request-vs-data check with two probes of one constellation named.

"STEREO Ahead and Behind" fetched from both spacecraft is what was asked: the check must
not warn that A's data is "from spacecraft A, but STEREO Behind was asked". A probe named
whose data was not fetched is still said.
"""

from __future__ import annotations

import pytest

from conftest import OfflineSession


@pytest.mark.parametrize(
    "text",
    [
        "STEREO Ahead and Behind proton speed 2010-08-01",
        "RBSP-A and RBSP-B magnetic field magnitude on 2015-03-17",
        "MMS1 vs MMS2 Bz GSM 2017-07-11 22:30 to 22:40",
    ],
)
def test_each_named_probe_served_is_not_a_mismatch(session: OfflineSession, text: str) -> None:
    turn = session.ask(text)
    probes = {d.dataset for d in turn.data if d.dataset}
    assert len(probes) >= 2, (probes, turn.answer)
    assert "is from spacecraft" not in turn.answer, turn.answer
    assert "Differs from the request" not in turn.answer, turn.answer
