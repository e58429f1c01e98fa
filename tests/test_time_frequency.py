"""A dynamic spectrum or wavelet power of a series named, or the spectrum the catalog holds.

"spectrogram of the MFI Bz" computes the power over time and frequency of the fetched
series and draws it below the series; "TNR dynamic spectrum" and "electron spectrogram"
stay spectra the catalog holds; a series written in another clause beside a spectrogram
("|B| and the EPAM electron spectrogram") is still fetched. Turns run offline against
the catalog-wide loopback HAPI server.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from conftest import OfflineSession
from xhelio.analysis.spectra import dynamic_spectrum, power_unit
from xhelio.language.parse import Vocabulary, parse_request


def _read(vocab: Vocabulary, text: str) -> tuple[list[tuple[str, str | None]], list[str]]:
    intent = parse_request(text, vocab)
    wishes = [(w.quantity, w.component) for w in intent.quantities]
    return wishes, [op.kind for op in intent.operations]


@pytest.mark.parametrize(
    ("text", "wish", "operation"),
    [
        ("spectrogram of the Wind MFI Bz, 7 Nov 2004", ("magnetic_field", "z"), "dynamic_power"),
        (
            "THEMIS-E FGM Bx dynamic spectrum 2008-02-26",
            ("magnetic_field", "x"),
            "dynamic_power",
        ),
        (
            "dynamic power spectrum of ACE |B| 2003-10-29",
            ("magnetic_field", "magnitude"),
            "dynamic_power",
        ),
        (
            "sliding FFT of the OMNI proton density, 2003-10-29",
            ("density", None),
            "dynamic_power",
        ),
        ("Morlet wavelet power of Wind By on 2004-11-07", ("magnetic_field", "y"), "wavelet"),
    ],
)
def test_the_time_frequency_power_of_a_named_series_is_an_operation_on_it(
    vocab: Vocabulary, text: str, wish: tuple[str, str | None], operation: str
) -> None:
    wishes, operations = _read(vocab, text)
    assert wishes == [wish] and operation in operations, (wishes, operations)
    assert "psd" not in operations  # "power spectrum" inside "dynamic power spectrum"


@pytest.mark.parametrize(
    "text",
    [
        "Wind TNR dynamic spectrum 2012-03-07",
        "spectrogram of the HOPE electron flux on 2013-03-17",
        "RBSP-A EMFISIS magnetic wave spectrogram 2013-03-17",
        "MMS1 FPI ion energy spectrogram 2017-07-11",
        "MMS2 electric field spectral density spectrogram 2017-07-11",
    ],
)
def test_spectrum_words_about_no_series_name_the_spectrum_the_catalog_holds(
    vocab: Vocabulary, text: str
) -> None:
    wishes, operations = _read(vocab, text)
    assert wishes[0][0] == "spectrogram", wishes
    assert not {"dynamic_power", "wavelet"} & set(operations), operations


@pytest.mark.parametrize(
    ("text", "series"),
    [
        ("ACE |B| and the EPAM electron spectrogram 2003-10-29", ("magnetic_field", "magnitude")),
        ("Bz and the proton spectrogram from MMS1 on 2017-07-11", ("magnetic_field", "z")),
    ],
)
def test_a_field_in_another_clause_than_a_spectrogram_is_still_fetched(
    vocab: Vocabulary, text: str, series: tuple[str, str | None]
) -> None:
    wishes, operations = _read(vocab, text)
    assert series in wishes and "spectrogram" in [q for q, _ in wishes], wishes
    assert "dynamic_power" not in operations


def test_the_unit_of_a_power_squares_a_compound_unit_whole() -> None:
    assert power_unit("nT") == "nT²/Hz"
    assert power_unit("km/s") == "(km/s)²/Hz"
    assert power_unit("") == "1/Hz"


def test_a_dynamic_spectrum_is_computed_from_the_series_and_drawn_below_it(
    session: OfflineSession,
) -> None:
    result = session.ask("spectrogram of the ACE MFI Bz on 2003-10-29")
    assert result.error is None, result.answer
    computed = [
        op["tool"]
        for op in session.workspace.session.operations
        if op.get("phase") == "compute" and op.get("status") == "ok"
    ]
    assert "dynamic_spectrum" in computed, result.answer
    current = session.workspace.session.plot.current
    assert current is not None, result.answer
    traces: list[dict[str, Any]] = current.figure["data"]
    assert [t.get("type") for t in traces][-1] == "heatmap", traces
    assert any(t.get("type") == "scatter" for t in traces)  # the series itself, above
    assert "the dynamic spectrum of ACE magnetic field (z)" in result.answer, result.answer


def test_a_dynamic_spectrum_peaks_at_the_sine_period_and_starts_above_0_hz() -> None:
    seconds = np.arange(0.0, 86400.0, 60.0)
    _, freqs, power, result = dynamic_spectrum(seconds, np.sin(2 * np.pi * seconds / 600.0))
    assert freqs[0] > 0  # the 0 Hz bin is no frequency a log axis can draw
    peak = freqs[int(np.argmax(power.mean(axis=0)))]
    assert abs(peak - 1 / 600.0) <= freqs[1] - freqs[0], peak
    assert result.columns == power.shape[0]
