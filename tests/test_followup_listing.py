"""Follow-ups that name other probes or another species of the last plot."""

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


def test_a_species_its_instrument_does_not_measure_lets_the_instrument_go(
    session: OfflineSession,
) -> None:
    session.ask("PSP SPAN-I proton density 2021-04-29")
    done = len(session.workspace.session.operations)
    answer = session.ask("now the electrons").answer
    ops = session.workspace.session.operations[done:]
    fetched = {op["args"]["dataset_id"] for op in ops if op["tool"] == "fetch_data"}
    assert fetched and not any("SPI" in d for d in fetched), answer
    assert "Not kept from the previous request: SPAN-I" in answer
    # A later turn, built on the replayed state, lets it go too.
    done = len(session.workspace.session.operations)
    session.ask("smooth it over 10 minutes")
    ops = session.workspace.session.operations[done:]
    fetched = {op["args"]["dataset_id"] for op in ops if op["tool"] == "fetch_data"}
    assert fetched and not any("SPI" in d for d in fetched)
