"""Spectrogram, spectrum and distribution requests end to end on the catalog-wide server.

Each request is asked in offline mode against the loopback HAPI server that serves every
dataset of the shipped catalog. The checks are what a physicist looks at: the dataset
and variable drawn (a 2-D array over the asked axis, of the asked species, never a bin
table, a coordinate matrix or a field vector), the reduction said, and the y axis title
of the heatmap (what the channels span, never a bare "bin" or a dimension name).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from conftest import OfflineSession
from xhelio.agents.turn import TurnResult
from xhelio.catalog.model import BinsAxis, DatasetInfo, ParameterInfo
from xhelio.language.products import instrument_holds, species_of, title_head
from xhelio.language.spectra import channel_title, spectrogram_fit, spectrum_wishes
from xhelio.vocabulary import load_vocabulary


@pytest.fixture(scope="module")
def served_rows() -> int:
    return 500  # heatmaps of a few hundred rows show what is drawn


def _drawn(session: OfflineSession, text: str) -> tuple[TurnResult, list[tuple[str, str]], str]:
    """The answer, the (dataset, parameter) pairs fetched, and the heatmap's y title."""
    result = session.ask(text)
    assert result.error is None, result.answer
    pairs = [(str(d.dataset), str(d.parameter)) for d in result.data if d.dataset]
    current = session.workspace.session.plot.current
    assert current is not None, result.answer
    figure: dict[str, Any] = current.figure
    assert any(t.get("type") == "heatmap" for t in figure["data"]), result.answer
    title = figure["layout"].get("yaxis", {}).get("title", {}).get("text", "")
    return result, pairs, str(title)


def test_a_search_coil_spectrogram_is_served_by_the_filter_bank_titled_with_it(
    session: OfflineSession,
) -> None:
    # THEMIS FBK spectra are "of the Search Coil Magnetometer" by title, not by id: before,
    # "search coil" kept only the SCM waveform files and nothing was fetched.
    result, pairs, y_title = _drawn(session, "THEMIS C FBK search coil wave spectrogram 2010-05-01")
    assert pairs[0][0] == "THC_L2_FBK" and re.search(r"_fb_scm\d$", pairs[0][1]), pairs
    assert "is not from" not in result.answer  # the check reads the same rule
    assert y_title == "frequency channel"  # no frequencies in the metadata: channels, not "bin"


def test_an_ion_spectrogram_is_never_served_by_electron_data_or_a_bin_table(
    session: OfflineSession,
) -> None:
    # Before: FAST ESA ion data missing on the server fell back to the electron survey
    # file's "Energy Bin Nos" table drawn as the spectrogram.
    result, pairs, y_title = _drawn(session, "FAST ion energy spectrogram 1998-09-25")
    for dataset, parameter in pairs:
        assert not re.search(r"_EE[SB]$", dataset), result.answer
        assert not parameter.startswith("compno"), result.answer
    assert re.search(r"proton|ion", pairs[0][1], re.I), pairs
    assert y_title == "energy channel"


def test_an_electron_spectrogram_is_the_omni_spectrum_not_a_matrix_or_a_field_vector(
    session: OfflineSession,
) -> None:
    # Before: MMS EIS's 3x3 "Transformation Matrix BCS to GSE" (9 values) was drawn.
    result, pairs, _ = _drawn(session, "MMS2 electron energy spectrogram 2017-07-11")
    dataset, parameter = pairs[0]
    assert dataset.startswith("MMS2_FPI_") and parameter.endswith("energyspectr_omni_fast"), pairs
    assert "Differs from the request" not in result.answer


def test_an_energy_range_in_a_title_no_longer_hides_its_product_words(
    session: OfflineSession,
) -> None:
    # "Electron omnidirectional fluxes 27 keV - 520 keV, ..., SST Foil": the title was cut
    # at "27 keV", so 'SST' matched no dataset and EESA Low was drawn with a "differs".
    result, pairs, _ = _drawn(session, "Wind 3DP SST electron omnidirectional flux 2012-03-07")
    assert pairs[0][0] == "WI_SFSP_3DP", result.answer
    assert "Differs from the request" not in result.answer


def test_a_pitch_angle_distribution_says_how_the_energy_dimension_was_reduced(
    session: OfflineSession,
) -> None:
    result, pairs, y_title = _drawn(
        session, "Van Allen Probe B HOPE electron pitch angle distribution 2015-03-17"
    )
    assert pairs[0] == ("RBSPB_REL04_ECT-HOPE-PA-L3", "FEDU"), pairs
    assert re.search(r"drawn over pitch angle, averaged over its \d+ energy bins", result.answer)
    assert y_title == "pitch-angle bin"


def test_a_dynamic_spectrogram_is_the_sibling_array_not_the_programme_listing(
    session: OfflineSession,
) -> None:
    # IM_K0_RPI holds plasmagrams and a "[NO PLOT - LISTING ONLY]" programme table; the
    # dynamic spectrogram is IM_K1_RPI's thermal-noise amplitude per root-Hz (its XY
    # summary, the provider's standard display). Before: ProgramSpecs was drawn.
    result, pairs, _ = _drawn(session, "IMAGE RPI dynamic spectrogram 2001-05-01")
    assert pairs[0] == ("IM_K1_RPI", "Amplitude_XY"), result.answer
    assert all(parameter != "ProgramSpecs" for _, parameter in pairs)


def test_averaged_over_pitch_angle_is_an_energy_spectrum_and_a_slice_not_picked_is_said(
    session: OfflineSession,
) -> None:
    # Before: "pitch angle" anywhere made the axis pitch angle, so the flux was drawn over
    # pitch angle with the energies averaged: the opposite of what was asked.
    text = "Van Allen Probe A HOPE electron energy spectrogram averaged over pitch angle"
    result, pairs, y_title = _drawn(session, f"{text} 2015-03-17")
    assert pairs[0] in {
        ("RBSPA_REL04_ECT-HOPE-PA-L3", "FEDO"),
        ("RBSPA_REL04_ECT-HOPE-SCI-L2SA", "FESA"),
    }, pairs
    assert "drawn over pitch angle" not in result.answer
    assert y_title != "pitch-angle bin"
    # A slice the catalog cannot locate (no angles for the bins) is said, never dropped.
    result, _, _ = _drawn(session, "RBSP-A HOPE electron flux at 90 degrees pitch angle 2015-03-17")
    assert re.search(r"Differs from the request: .*90° pitch angle", result.answer)


# ---------------------------------------------------------------- the pieces, offline


def test_the_title_head_keeps_an_energy_range_and_drops_the_investigator() -> None:
    head = "Electron omnidirectional fluxes 27 keV - 520 keV, SST Foil, Wind 3DP"
    assert title_head(f"{head} - R. Lin (UCB)") == head
    assert title_head("ACE/EPAM 5-Minute Level 2 Data - R. Gold (JHU/APL)") == (
        "ACE/EPAM 5-Minute Level 2 Data"
    )


def test_an_instrument_holds_a_dataset_by_id_and_only_on_request_by_title() -> None:
    (scm,) = [i for i in load_vocabulary().instruments_of("themis") if i.datasets.search("_L2_SCM")]
    fbk = DatasetInfo(
        "THA_L2_FBK", title="Electric Field and Search Coil Magnetometer Filter Bank spectra"
    )
    assert instrument_holds(scm, DatasetInfo("THA_L2_SCM"))
    assert not instrument_holds(scm, fbk)
    assert instrument_holds(scm, fbk, by_title=True)


def _fit(text: str, p: ParameterInfo) -> float | None:
    (wish,) = [w for w in spectrum_wishes(text, [], None) if w.quantity == "spectrogram"]
    return spectrogram_fit(wish, p)


def test_tables_matrices_and_vectors_are_never_a_spectrum() -> None:
    flux = ParameterInfo("eflux", units="eV/sr/sec", size=(96,), description="ion energy flux")
    assert _fit("ion energy spectrogram", flux) is not None
    for p in (
        ParameterInfo("compno_96", units="", size=(96,), description="Energy Bin Nos"),
        ParameterInfo("stp", units="", size=(8,), description="PES step number"),
        ParameterInfo("domega", units="ster", size=(64, 96), description="Solid angle"),
        ParameterInfo("sc_to_gse", units=".", size=(9,), description="Transformation Matrix"),
        ParameterInfo("b", units="nT", size=(4,), description="Magnetic Field BCS"),
        ParameterInfo("Specs", units="", size=(25,), description="[NO PLOT - LISTING ONLY]"),
    ):
        assert _fit("energy spectrogram", p) is None, p.name
        assert _fit("wave spectrogram", p) is None, p.name


def test_the_y_title_says_what_the_channels_span_when_the_metadata_has_no_bins() -> None:
    fbk = ParameterInfo("fb_scm1", units="<|nT|>", size=(6,), description="Spectrogram FBK SCM")
    assert channel_title(fbk) == "frequency channel"
    pad = ParameterInfo("FEDU", units="1/(cm^2 s sr keV)", size=(11, 72), description="flux")
    assert channel_title(pad, "pitch") == "pitch-angle bin"
    assert channel_title(pad, "energy") == "energy channel"
    known = BinsAxis("energy", "eV", centers=tuple(float(e) for e in range(1, 33)))
    binned = ParameterInfo("F", units="1/(cm^2 s sr eV)", size=(32,), bins_axes=(known,))
    assert channel_title(binned) is None  # the plot labels real bins itself


def test_a_dimension_averaged_over_or_sliced_at_is_not_the_axis_drawn() -> None:
    def wish(text: str) -> tuple[str | None, tuple[str, ...]]:
        (w,) = [w for w in spectrum_wishes(text, [], None) if w.quantity == "spectrogram"]
        return w.component, w.qualifiers

    assert wish("electron energy spectrogram averaged over pitch angle") == ("energy", ())
    assert wish("electron flux at 90 degrees pitch angle") == ("energy", ("pitch_at:90",))
    assert wish("electron pitch angle distribution") == ("pitch", ())


@pytest.mark.parametrize(
    ("name", "description", "species"),
    [
        # The ISTP flux names say the species where the description does not.
        ("FEDO_SSD", "Omni-directional flux of XEP SSD", {"electron"}),
        ("FPDU", "Unidirectional Differential Proton Flux", {"proton"}),
        ("FPSA", "Spin-averaged flux", {"proton"}),
        ("FODU", "differential flux vs pitch angle", {"oxygen"}),
        # ... and nothing else: an iron name or a field is no electron data.
        ("flux_Fe", "Fe intensity", {"iron"}),
        ("FEEDBACK_STATUS", "status word", set()),
    ],
)
def test_the_species_of_a_flux_is_read_from_its_istp_name(
    name: str, description: str, species: set[str]
) -> None:
    p = ParameterInfo(name, units="1/keV-sr-s-cm2", size=(9,), description=description)
    assert species_of(p) == species
