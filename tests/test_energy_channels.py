"""Spectra of instruments that keep each energy channel as its own parameter.

ACE EPAM (P1..P8), ULEIS (H_S1..), SEPICA (He1..), Voyager CRS (PROTONFLUX1..) publish
one scalar per channel, not an array with energy bins. A spectrum request draws the
channels of the species asked, ordered by the energies their descriptions give, as
lines on one log panel, and says so; uncertainties are never channels.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from servers.catalog_hapi import CatalogHapiServer
from xhelio.agents.offline import OfflineAssistant
from xhelio.agents.turn import TurnResult, run_turn
from xhelio.catalog.index import open_catalog
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.config import load_settings
from xhelio.language.channels import energy_channels
from xhelio.language.intent import QuantityWish
from xhelio.language.spectra import spectrogram_fit
from xhelio.tools.workspace import Workspace, open_workspace

FLUX = "1/(cm**2-s-sr-MeV)"


def _info(*params: ParameterInfo) -> DatasetInfo:
    return DatasetInfo("XX_H1_EPI", "Test energetic particles", parameters=params)


def test_channels_are_ordered_by_the_energies_their_descriptions_give() -> None:
    info = _info(
        ParameterInfo("C3", units=FLUX, description="C3 (Ions; 1.2-4.0 MeV), sector avg"),
        ParameterInfo("C1", units=FLUX, description="C1 (Ions; 50-120 keV), sector avg"),
        ParameterInfo("C2", units=FLUX, description="C2 (Ions; 0.12-1.2 MeV), sector avg"),
        ParameterInfo("unc_C1", units=FLUX, description="C1 (Ions; 50-120 keV), Uncertainty"),
        ParameterInfo("E1", units=FLUX, description="E1 (Electrons; 40-60 keV), sector avg"),
    )
    family = energy_channels(info, "proton")
    assert family is not None
    assert [c.parameter for c in family.channels] == ["C1", "C2", "C3"]  # keV before MeV
    assert family.channels[0].label == "C1 50-120 keV"
    assert family.fit[0] == 1  # ions serve protons, said as ions
    assert energy_channels(info, "electron") is None  # two electron channels are no spectrum
    assert energy_channels(info, "oxygen") is None


def test_catalog_families_follow_species_and_product_words() -> None:
    with open_catalog() as catalog:
        epam = catalog.dataset("AC_H1_EPM")
        ions = energy_channels(epam, "proton")
        assert ions is not None
        assert [c.parameter for c in ions.channels] == [f"P{n}" for n in range(1, 9)]
        deflected = energy_channels(epam, "electron", ["deflected"])
        assert deflected is not None
        assert [c.parameter for c in deflected.channels] == ["DE1", "DE2", "DE3", "DE4"]
        helium = energy_channels(catalog.dataset("AC_H2_ULE"), "alpha")
        assert helium is not None and all(c.parameter.startswith("He4_") for c in helium.channels)
        lows = [c.low_kev for c in helium.channels]
        assert lows == sorted(lows)
        protons = energy_channels(catalog.dataset("VOYAGER1_CRS_DAILY_FLUX"), "proton")
        assert protons is not None
        assert all(re.fullmatch(r"PROTONFLUX\d+", c.parameter) for c in protons.channels)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, Any]]:
    home = tmp_path_factory.mktemp("channels-home")
    with CatalogHapiServer(max_rows=200) as server, pytest.MonkeyPatch.context() as env:
        env.setenv("XHELIO_HOME", str(home))
        env.setenv("XHELIO_HAPI_URL", server.url)
        workspace = open_workspace(settings=load_settings(), ephemeral=True)
        try:
            yield workspace, OfflineAssistant(workspace)
        finally:
            workspace.close()


def _ask(session: tuple[Workspace, Any], text: str) -> tuple[TurnResult, list[dict[str, Any]]]:
    workspace, assistant = session
    result = run_turn(workspace, assistant, text)
    assert result.error is None, result.answer
    current = workspace.session.plot.current
    assert current is not None, result.answer
    return result, current.figure["data"]


def test_epam_proton_spectrum_draws_its_channels_in_one_log_panel(
    session: tuple[Workspace, Any],
) -> None:
    result, traces = _ask(session, "ACE EPAM proton energy spectrum 2017-09-10")
    fetched = [(d.dataset, d.parameter) for d in result.data if d.dataset]
    assert fetched == [("AC_H1_EPM", f"P{n}") for n in range(1, 9)], fetched
    assert len(traces) == 8 and all(t["type"] in ("scatter", "scattergl") for t in traces)
    assert {t.get("yaxis", "y") for t in traces} == {"y"}  # one panel
    assert "0.047-0.065 MeV" in traces[0]["name"] and "1.91-4.75 MeV" in traces[-1]["name"]
    layout = session[0].session.plot.current.figure["layout"]  # type: ignore[union-attr]
    assert layout["yaxis"].get("type") == "log"
    assert "channel" in result.answer and "not as a spectrogram" in result.answer


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("ACE EPAM ion spectrogram 2003-10-28 to 2003-10-30", 0.047, 4.75),
        ("EPAM deflected electron spectrogram on ACE, 2012-03-07", 0.038, 0.315),
    ],
)
def test_a_channel_spectrogram_is_one_heatmap_over_the_channel_energies(
    session: tuple[Workspace, Any], text: str, low: float, high: float
) -> None:
    result, traces = _ask(session, text)
    assert [t["type"] for t in traces] == ["heatmap"], result.answer
    figure = session[0].session.plot.current.figure  # type: ignore[union-attr]
    assert figure["layout"]["yaxis"]["title"]["text"] == "Energy (MeV)"
    cells = [y for y in traces[0]["y"] if y is not None]
    assert min(cells) == pytest.approx(low) and max(cells) == pytest.approx(high)
    assert "Drawn as a spectrogram of its" in result.answer


def test_a_named_product_with_channels_beats_another_instruments_spectrum(
    session: tuple[Workspace, Any],
) -> None:
    # The ranking offered a plasma-wave spectrum and said it lacked 'CRS': the CRS
    # dataset's own proton channels serve the request instead.
    result, _ = _ask(session, "Voyager 1 CRS proton flux spectrum 2012-08-01 to 2012-09-30")
    datasets = {d.dataset for d in result.data if d.dataset}
    assert datasets == {"VOYAGER1_CRS_DAILY_FLUX"}, result.answer
    assert "PWS" not in result.answer


@pytest.mark.parametrize(
    "text",
    [
        "Voyager 1 PWS 16-channel spectrum 2012-08-20 to 2012-08-30",
        "Voyager 2 PWS channel spectrogram 1989-08-20 to 1989-08-27",
    ],
)
def test_a_wave_instrument_named_by_its_id_keeps_its_spectrum(
    session: tuple[Workspace, Any], text: str
) -> None:
    # The PWS titles spell the instrument out ('Plasma Waves Instrument'); only the ids
    # say 'PWS'. A word like 'channel' must not hand the request to CRS particle channels.
    result, traces = _ask(session, text)
    datasets = {d.dataset for d in result.data if d.dataset}
    assert datasets and all("_PWS" in d for d in datasets), (datasets, result.answer)
    assert [t["type"] for t in traces] == ["heatmap"]


def test_a_spectrum_variable_is_still_drawn_as_a_spectrogram(
    session: tuple[Workspace, Any],
) -> None:
    _, traces = _ask(session, "Wind 3DP electron energy spectrogram 2012-03-07")
    assert [t["type"] for t in traces] == ["heatmap"]


def test_channels_of_unknown_kind_never_serve_a_particle_spectrum() -> None:
    # "---> Electric Field (stacked plots)" in V/m: its channels say no axis, so it may be
    # a spectrogram named by its product alone, never a proton energy spectrum.
    field = ParameterInfo(
        "electric_field_stack", units="V/m", size=(16,), description="---> Electric Field"
    )
    proton = QuantityWish("spectrogram", "spectrum", 0, component="energy", species="proton")
    assert spectrogram_fit(proton, field) is None
    assert spectrogram_fit(QuantityWish("spectrogram", "spectrogram", 0), field) is not None


def test_channels_with_data_replace_a_spectrum_without_data_for_the_time(
    session: tuple[Workspace, Any],
) -> None:
    # Voyager 1's plasma ion spectra end in 1980: CRS channels have data in 2010.
    result, traces = _ask(session, "Voyager 1 proton energy spectrum 2010-01-01 to 2010-02-01")
    assert {d.dataset for d in result.data if d.dataset} == {"VOYAGER1_CRS_DAILY_FLUX"}
    assert len(traces) >= 3 and "channel" in result.answer
