"""A follow-up that replaces one quantity by another ("swap X for Y", "Y instead of X")."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import OfflineSession


def _params(session: OfflineSession, first: str, text: str) -> tuple[set[str], str]:
    """The parameters the follow-up fetched (or found loaded), and its answer."""
    session.ask(first)
    done = len(session.workspace.session.operations)
    answer = session.ask(text).answer
    ops: list[dict[str, Any]] = session.workspace.session.operations[done:]
    fetched = {op["args"]["parameter_id"] for op in ops if op["tool"] == "fetch_data"}
    return fetched, answer


@pytest.mark.parametrize(
    ("first", "text", "kept", "gone"),
    [
        (
            "OMNI flow speed 2015-03-17",
            "swap the speed for the proton density",
            "proton_density",
            "flow_speed",
        ),
        (
            "OMNI proton density 2015-03-17",
            "use the flow speed instead of the density",
            "flow_speed",
            "proton_density",
        ),
        (
            "OMNI proton density and flow speed 2015-03-17",
            "replace the density with the temperature",
            "T",
            "proton_density",
        ),
    ],
)
def test_the_replaced_quantity_goes_and_the_new_one_comes(
    session: OfflineSession, first: str, text: str, kept: str, gone: str
) -> None:
    fetched, answer = _params(session, first, text)
    assert kept in fetched, answer
    assert gone not in fetched, answer
