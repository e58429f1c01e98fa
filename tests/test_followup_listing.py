"""A follow-up naming other probes of the last plot asks for that plot, not a catalog list."""

from __future__ import annotations

from conftest import OfflineSession


def test_the_other_spacecraft_after_a_plot_is_plotted_not_listed(session: OfflineSession) -> None:
    session.ask("STEREO-A proton speed 2009-05-01")
    done = len(session.workspace.session.operations)
    answer = session.ask("now show the other spacecraft").answer
    ops = session.workspace.session.operations[done:]
    fetched = {op["args"]["dataset_id"] for op in ops if op["tool"] == "fetch_data"}
    assert fetched and all(d.startswith("STB_") for d in fetched), answer
    assert "missions with data" not in answer
    # The turn after it builds on STEREO-B (the session replays it as a follow-up).
    done = len(session.workspace.session.operations)
    session.ask("smooth it over 1 hour")
    ops = session.workspace.session.operations[done:]
    fetched = {op["args"]["dataset_id"] for op in ops if op["tool"] == "fetch_data"}
    assert fetched and all(d.startswith("STB_") for d in fetched)
