"""Which variable serves a spectrogram request: grounded in each parameter's own metadata.

Parameters are built the way the catalog describes them (units, size, description, bins);
the request side goes through the parser, so the words typed decide the axis, the field
(E or B) and the look direction.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xhelio.catalog.model import BinsAxis, DatasetInfo, ParameterInfo
from xhelio.language.intent import QuantityWish
from xhelio.language.spectra import (
    channel_axis,
    channel_title,
    kept_dimension,
    spectrogram_fit,
    spectrum_wishes,
)
from xhelio.render.heatmap_traces import bins_span_decade
from xhelio.render.spectrogram import BinCells
from xhelio.sources.base import ParameterData
from xhelio.sources.hapi_bins import attach_bins

FLUX = "s!E-1!Ncm!E-2!Nster!E-1!NkeV!E-1!N"


def _wish(text: str) -> QuantityWish:
    (wish,) = [w for w in spectrum_wishes(text, [], None) if w.quantity == "spectrogram"]
    return wish


def _best(text: str, params: list[ParameterInfo]) -> str | None:
    wish = _wish(text)
    scored = [(fit, p.name) for p in params if (fit := spectrogram_fit(wish, p)) is not None]
    return max(scored)[1] if scored else None


def _spectrum(name: str, description: str, units: str = "keV/(cm^2 s sr keV)") -> ParameterInfo:
    return ParameterInfo(name, units=units, size=(32,), description=description)


LOOKS = [
    _spectrum("des_energyspectr_px", 'electron energy spectrum "near" +X_DSC', ""),
    _spectrum("des_energyspectr_mz", 'electron energy spectrum "near" -Z_DSC', ""),
    _spectrum("des_energyspectr_par", "electron energy parallel spectrum", ""),
    _spectrum("des_energyspectr_anti", "electron energy anti-parallel spectrum", ""),
    _spectrum("des_energyspectr_perp", "electron energy perpendicular spectrum", ""),
    _spectrum("des_energyspectr_omni", "omni-directional electron energy spectrum"),
]

WAVES = [
    ParameterInfo("BuBu", units="nT^2/Hz", size=(65,), description="BuBu amplitude"),
    ParameterInfo("EuEu", units="V^2/m^2/Hz", size=(65,), description="EuEu amplitude"),
    ParameterInfo("SFR2A", units="(V/M)**2/Hz", size=(32,), description="Elec. Field at 32 freq."),
    ParameterInfo("SFR2B", units="nT**2/Hz", size=(32,), description="Mag. Field at 32 freq."),
]


def test_omni_directional_is_served_by_the_omni_spectrum_not_a_look_direction() -> None:
    assert _best("omni-directional electron energy spectrogram", LOOKS) == "des_energyspectr_omni"
    assert _best("electron energy spectrogram", LOOKS) == "des_energyspectr_omni"


def test_a_named_direction_is_served_by_that_direction_and_never_another() -> None:
    assert _best("anti-parallel electron energy spectrogram", LOOKS) == "des_energyspectr_anti"
    assert _best("parallel electron energy spectrogram", LOOKS) == "des_energyspectr_par"
    assert _best("perpendicular electron spectrogram", LOOKS) == "des_energyspectr_perp"
    only_others = [p for p in LOOKS if not p.name.endswith("anti")]
    assert _best("anti-parallel electron energy spectrogram", only_others) is None


def test_magnetic_and_electric_words_decide_the_spectral_density() -> None:
    assert _best("magnetic wave spectrogram", WAVES) in ("BuBu", "SFR2B")
    assert _best("electric field wave spectrogram", WAVES) in ("EuEu", "SFR2A")
    assert _best("magnetic wave spectrogram", [WAVES[0], WAVES[2]]) == "BuBu"
    assert _best("magnetic wave spectrogram", [WAVES[1], WAVES[2]]) is None


def test_the_axis_comes_from_units_bins_and_words() -> None:
    assert channel_axis(WAVES[2]) == "frequency"  # a density per Hz
    assert channel_axis(_spectrum("FEDO", "Omnidirectional flux", FLUX)) == "energy"
    assert channel_axis(ParameterInfo("SWEASpectra", units="1/cm^3", size=(48,))) == "energy"
    binned = ParameterInfo(
        "spec", size=(20,), bins_axes=(BinsAxis("frequency", units="kHz"),), description="x"
    )
    assert channel_axis(binned) == "frequency"
    pad = ParameterInfo("pad", units="s^3/km^6", size=(12, 16), description="Pitch angle distr")
    assert channel_axis(pad) == "pitch"


def test_a_particle_flux_never_serves_a_wave_spectrogram_nor_the_reverse() -> None:
    flux = _spectrum("FPDO", "Omnidirectional differential proton flux", FLUX)
    assert spectrogram_fit(_wish("wave spectrogram"), flux) is None
    assert spectrogram_fit(_wish("electron energy spectrogram"), WAVES[0]) is None


def test_bin_tables_and_variables_marked_not_for_display_are_never_the_data() -> None:
    energy = ParameterInfo("Energy", units="eV", size=(16,), description="Energy bins")
    hidden = ParameterInfo(
        "Distribution", units="cnts", size=(16, 80), description="3D counts [DO NOT USE]"
    )
    wish = _wish("electron energy spectrum")
    assert spectrogram_fit(wish, energy) is None
    assert spectrogram_fit(wish, hidden) is None


def test_omnidirectional_flux_is_a_spectrogram_request_with_its_look() -> None:
    wish = _wish("HOPE omnidirectional proton flux")
    assert (wish.component, wish.qualifiers) == ("energy", ("omni",))
    assert spectrum_wishes("ACE proton flux", [], None) == []


def test_pitch_angle_resolved_flux_is_the_directional_array_not_the_omni_flux() -> None:
    fedo = _spectrum("FEDO", "FEDO: Omnidirectional differential electron flux", FLUX)
    fedu = ParameterInfo(
        "FEDU",
        units=FLUX,
        size=(11, 72),
        description="FEDU: Unidirectional Differential Electron Flux, in 72 energy and 11 "
        "pitch angle bins",
    )
    assert _best("pitch-angle resolved electron flux", [fedo, fedu]) == "FEDU"
    assert _best("omnidirectional electron flux", [fedo, fedu]) == "FEDO"
    info = DatasetInfo("X", parameters=(fedo, fedu))
    assert kept_dimension(info, fedu, "pitch") == ("FEDU_dim1", 72)
    assert kept_dimension(info, fedu, "energy") == ("FEDU_dim2", 11)


def test_the_energy_dimension_is_found_from_a_sibling_energy_table() -> None:
    energy = ParameterInfo("Energy", units="eV", size=(16,), description="Energy bins")
    pad = ParameterInfo("pad", units="s^3/km^6", size=(12, 16), description="Pitch angle distr")
    info = DatasetInfo("X", parameters=(energy, pad))
    assert kept_dimension(info, pad, "energy") == ("pad_dim2", 12)
    assert kept_dimension(DatasetInfo("Y", parameters=(pad,)), pad, "energy") is None


def test_a_distribution_without_bins_keeps_its_shape_and_a_tensor_stays_columns() -> None:
    times = pd.date_range("2015-03-17", periods=3, freq="1min", tz="UTC")
    fedu = ParameterInfo("FEDU", units=FLUX, size=(11, 72))
    tensor = ParameterInfo("P", units="nPa", size=(3, 3))
    fetched = {
        p.name: ParameterData(p.name, pd.DataFrame(np.ones((3, p.components)), index=times))
        for p in (fedu, tensor)
    }
    attached = attach_bins([fedu, tensor], fetched, [])
    assert [d["name"] for d in attached["FEDU"].meta["dims"]] == ["FEDU_dim1", "FEDU_dim2"]
    assert "dims" not in attached["P"].meta


def test_bins_known_only_by_index_are_drawn_on_a_linear_axis() -> None:
    index = np.arange(11, dtype=np.float64)
    low, high = (index - 0.5)[None, :], (index + 0.5)[None, :]
    assert not bins_span_decade(BinCells(low, high, "FEDU_dim1", ""))
    energies = np.geomspace(10.0, 5e4, 72)[None, :]
    assert bins_span_decade(BinCells(energies * 0.9, energies * 1.1, "energy", "eV"))


def test_an_energy_spectrogram_is_never_served_by_a_spin_or_polar_angle_spectrogram() -> None:
    # Instruments that bin one flux both ways (Polar TIDE, many ion analysers): the
    # channels of a spin- or polar-angle spectrogram span angles, not energies, even with
    # more channels and the same flux units.
    units = "eV/[cm^2*s*sr*eV]"
    angle = ParameterInfo(
        "op_spin", units=units, size=(32,), description="O+ Spin Angle Spectrogram"
    )
    polar = ParameterInfo(
        "op_polar", units=units, size=(7,), description="O+ Polar Angle Spectrogram"
    )
    energy = ParameterInfo("op_en", units=units, size=(31,), description="O+ Energy Spectrogram")
    assert _best("oxygen energy spectrogram", [angle, polar, energy]) == "op_en"
    assert _best("O+ spectrogram", [angle, polar, energy]) == "op_en"
    assert channel_axis(angle) == "angle"
    assert channel_title(angle) == "angle bin"


RADIO = [
    ParameterInfo("PSD_V2", units="V^2/Hz", size=(128,), description="Power spectral density"),
    ParameterInfo("PSD_FLUX", units="W/m^2/Hz", size=(128,), description="Flux density"),
]


def test_flux_alone_is_a_particle_flux_first_and_a_radio_flux_density_else() -> None:
    """A flux with no axis word: a radio receiver's flux density serves ("TNR flux spectrogram")."""
    assert _best("TNR flux spectrogram", RADIO) == "PSD_FLUX"
    particle = _spectrum("FEDU", "electron differential flux", FLUX)
    assert _best("TNR flux spectrogram", [*RADIO, particle]) == "FEDU"
    # a species word names the energy axis: a radio spectrum never serves it
    assert _best("electron flux spectrogram", RADIO) is None
