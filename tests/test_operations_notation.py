"""Operations written the way physicists write them, done on the quantity they name.

Leibniz notation ("dSYM-H/dt", "d|B|/dt", "d(Dst)/dt") is the time derivative of the
quantity between "d" and "/dt"; "FFT" and "Fourier spectrum" are the power spectral
density (never a spectrogram); "correlation of X and Y" and "correlate X with Y" are the
cross-correlation; a clock range written after the PSD is the part it is computed over;
"|B| from B_R, B_T, B_N" is the magnitude computed from the components named. The
end-to-end tests run each request through the offline assistant against the catalog-wide
loopback HAPI server and check the computed series and the answer.
"""

from __future__ import annotations

import numpy as np
import pytest

from operations_support import computations, stored_frame, with_code
from xhelio.language.operations import named_operations, operand_spans
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.tools.workspace import Workspace


@pytest.mark.parametrize(
    ("text", "operand"),
    [
        ("dSYM-H/dt from OMNI on 2015-03-17", "SYM-H"),
        ("d|B|/dt at ACE for 2015-03-17", "|B|"),
        ("dBz/dt from Wind MFI on 2019-06-01", "Bz"),
        ("d(Dst)/dt from OMNI 2015-03-15 to 2015-03-20", "Dst"),
    ],
)
def test_leibniz_notation_is_a_derivative_of_its_operand(text: str, operand: str) -> None:
    assert [key for key, _, _ in named_operations(text)] == ["derivative"]
    assert [text[o.start : o.end] for o in operand_spans(text)] == [operand]


def test_the_newell_coupling_notation_is_no_derivative() -> None:
    assert named_operations("dPhi/dt from OMNI on 2015-03-17") == []


@pytest.mark.parametrize(
    ("text", "quantity"),
    [
        ("dSYM-H/dt from OMNI on 2015-03-17", "sym_h"),
        ("d|B|/dt at ACE for 2015-03-17", "magnetic_field"),
    ],
)
def test_the_operand_is_read_as_the_quantity_with_no_word_left_over(
    vocab: Vocabulary, text: str, quantity: str
) -> None:
    intent = parse_request(text, vocab)
    assert [w.quantity for w in intent.quantities] == [quantity], intent.quantities
    assert [op.kind for op in intent.operations] == ["derivative"]
    assert intent.slots.leftover == (), intent.slots.leftover


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("FFT of ACE Bz on 2015-03-17", "psd"),
        ("Fourier spectrum of OMNI solar wind speed, 2015-03-17", "psd"),
        ("power spectrum of Wind Bz on 2019-06-01", "psd"),
        ("correlation of OMNI Bz and AE for 2015-03-17", "cross_correlation"),
        ("correlate Wind proton speed with ACE proton speed, 2019-06-01", "cross_correlation"),
    ],
)
def test_spectrum_and_correlation_words_are_operations(
    vocab: Vocabulary, text: str, kind: str
) -> None:
    intent = parse_request(text, vocab)
    assert kind in [op.kind for op in intent.operations], intent.operations
    assert "spectrogram" not in [w.quantity for w in intent.quantities], intent.quantities


def test_autocorrelation_is_no_cross_correlation() -> None:
    assert named_operations("auto-correlation of ACE Bz on 2015-03-17") == []


def test_dsymh_dt_is_the_derivative_of_sym_h(workspace: Workspace) -> None:
    answer, ops = computations(workspace, "dSYM-H/dt from OMNI on 2015-03-17")
    op = with_code(ops, "df.diff().div(dt")
    source = stored_frame(workspace, op["args"]["source_labels"][0]).iloc[:, 0].astype(float)
    result = stored_frame(workspace, op["args"]["output_label"]).iloc[:, 0]
    seconds = source.index.to_series().diff().dt.total_seconds()
    expected = source.diff() / seconds
    np.testing.assert_allclose(result.to_numpy(), expected.to_numpy(), equal_nan=True)
    assert "SYM" in op["args"]["source_labels"][0].upper(), op["args"]
    assert "time derivative" in answer and "/s" in op["args"]["units"], answer


def test_magnitude_from_named_components_is_computed_from_them(workspace: Workspace) -> None:
    answer, ops = computations(workspace, "|B| from Helios 1 B_R, B_T, B_N on 1976-04-10")
    op = with_code(ops, "b.pow(2).sum(axis=1")
    labels = op["args"]["source_labels"]
    assert [label.rsplit(".", 1)[-1] for label in labels] == ["B_R", "B_T", "B_N"], labels
    parts = [stored_frame(workspace, label).iloc[:, 0].astype(float) for label in labels]
    expected = np.sqrt(sum(p.to_numpy() ** 2 for p in parts))
    result = stored_frame(workspace, op["args"]["output_label"]).iloc[:, 0]
    np.testing.assert_allclose(result.to_numpy(), expected, rtol=1e-9)
    assert "field magnitude" in answer and "HEL1_6SEC_NESSMAG" not in answer, answer


def test_psd_over_a_part_of_the_range_is_computed_there(workspace: Workspace) -> None:
    answer, ops = computations(
        workspace, "ACE Bz on 2015-03-17 from 00:00 to 20:00, and the PSD of Bz over 06:00-12:00"
    )
    psd = [op for op in ops if op["tool"] == "power_spectrum"]
    assert len(psd) == 1, [op["tool"] for op in ops]
    assert psd[0]["args"]["time_range"] == "2015-03-17T06:00:00Z to 2015-03-17T12:00:00Z"
    assert "Time range: 2015-03-17 00:00 to 20:00 UTC" in answer, answer
    assert "over 06:00-12:00 UTC" in answer, answer


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("FFT of ACE Bz on 2015-03-17", "power_spectrum"),
        ("correlation of OMNI Bz and AE for 2015-03-17", "cross_correlation_lag"),
    ],
)
def test_fft_and_correlation_words_are_computed(workspace: Workspace, text: str, tool: str) -> None:
    answer, ops = computations(workspace, text)
    assert tool in [op["tool"] for op in ops], (answer, [op["tool"] for op in ops])
    assert "Not done" not in answer, answer
