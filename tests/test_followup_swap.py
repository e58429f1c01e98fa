"""A follow-up that swaps one spacecraft for another ("replace ACE with DSCOVR")."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import OfflineSession


def _fetched(session: OfflineSession, first: str, text: str) -> tuple[set[str], set[str], str]:
    """The dataset prefixes and windows the follow-up fetched (or found loaded), its answer."""
    session.ask(first)
    done = len(session.workspace.session.operations)
    answer = session.ask(text).answer
    ops: list[dict[str, Any]] = session.workspace.session.operations[done:]
    fetches = [op for op in ops if op["tool"] == "fetch_data"]
    missions = {op["args"]["dataset_id"].split("_")[0] for op in fetches}
    windows = {op["args"]["time_range"] for op in fetches}
    return missions, windows, answer


@pytest.mark.parametrize(
    ("first", "text", "missions"),
    [
        ("ACE magnetic field 2017-09-07", "replace ACE with DSCOVR", {"DSCOVR"}),
        ("DSCOVR magnetic field 2018-03-10", "replace DSCOVR with Wind", {"WI"}),
        ("Wind proton speed 2016-05-01", "swap Wind for ACE", {"AC"}),
        ("ACE magnetic field 2017-09-07", "use Wind instead of ACE", {"WI"}),
        ("ACE and Wind |B| 2017-09-07", "replace Wind with DSCOVR", {"AC", "DSCOVR"}),
    ],
)
def test_the_spacecraft_swapped_out_leaves_and_the_other_comes_in(
    session: OfflineSession, first: str, text: str, missions: set[str]
) -> None:
    fetched, windows, answer = _fetched(session, first, text)
    assert fetched == missions, answer
    day = first.split()[-1]
    assert all(w.startswith(f"{day}T00:00:00Z") for w in windows), answer
