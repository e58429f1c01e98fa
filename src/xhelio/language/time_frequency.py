"""A dynamic spectrum of a series the request names, or a spectrum the catalog holds.

"spectrogram of the MFI Bz", "Bz dynamic spectrum" and "Dst wavelet power" ask for the
time-frequency power of a series: computed from it (`dynamic_spectrum`,
`wavelet_power`). The same words alone ("TNR dynamic spectrum"), or beside a particle
flux or a field spectrum ("electron spectrogram", "spectrogram of the HOPE flux",
"magnetic spectrogram"), name a spectrum the catalog holds: a spectrogram wish, served
by its own products. The words bind to the quantity written right after "of", else
right before them, never across "and" or a comma.

Imports this package only.
"""

from __future__ import annotations

from collections.abc import Sequence

from xhelio.language.intent import QuantityWish
from xhelio.language.operations import named_operations
from xhelio.language.spectra import apart

__all__ = ["held_spectrum_spans", "outside_spectrum_words", "spectrum_words"]

# Quantities whose "spectrogram" is a spectrum the catalog holds, unless a component of
# the field is named ("spectrogram of Bz" is computed from the series).
_SPECTRA_HELD = frozenset({"particle_flux", "spectrogram", "magnetic_field", "electric_field"})
# How far the words may stand from their quantity: articles and names (mission,
# instrument) between them, never another clause.
_NEAR_AFTER = 40
# The operations whose words name a spectrum ("power spectral density", "spectrogram").
_SPECTRUM_KEYS = frozenset({"psd", "dynamic_power", "wavelet"})
_NEAR_BEFORE = 16


def outside_spectrum_words(text: str, wishes: Sequence[QuantityWish]) -> list[QuantityWish]:
    """`wishes` without the quantity words of a spectrum's own name.

    The "density" of "power spectral density" is the spectrum's, never a density asked:
    "magnetic power spectral density" asks no density.
    """
    spans = [(a, b) for key, a, b in named_operations(text) if key in _SPECTRUM_KEYS]
    return [
        w
        for w in wishes
        if not any(a <= w.position and w.position + len(w.text) <= b for a, b in spans)
    ]


def _series(wish: QuantityWish) -> bool:
    """Whether `wish` is a series whose dynamic spectrum is computed.

    A component or the magnitude of a field ("Bz", "|B|"), or a quantity that is no
    particle flux or field spectrum (density, speed, an index).
    """
    if wish.quantity == "particle_flux":
        return False
    return wish.quantity not in _SPECTRA_HELD or wish.component is not None


def _bound(text: str, span: tuple[int, int], wishes: Sequence[QuantityWish]) -> QuantityWish | None:
    """The quantity the dynamic-spectrum words at `span` are about, if any."""
    start, end = span
    after = [
        w
        for w in wishes
        if end <= w.position <= end + _NEAR_AFTER and not apart(text, end, w.position)
    ]
    if after:
        return min(after, key=lambda w: w.position)
    before = [
        w
        for w in wishes
        if start - _NEAR_BEFORE <= w.position + len(w.text) <= start
        and not apart(text, w.position + len(w.text), start)
    ]
    return max(before, key=lambda w: w.position) if before else None


def _spans_and_series(
    text: str, wishes: Sequence[QuantityWish]
) -> list[tuple[tuple[int, int], bool]]:
    """Each dynamic-spectrum span, and whether it is about a series of `wishes`.

    A quantity word inside another operation's words ("density" of "spectral density")
    is that operation's, never the series.
    """
    named = named_operations(text)
    others = [(a, b) for key, a, b in named if key != "dynamic_power"]
    quantities = [w for w in wishes if not any(a <= w.position < b for a, b in others)]
    return [
        ((a, b), (w := _bound(text, (a, b), quantities)) is not None and _series(w))
        for key, a, b in named
        if key == "dynamic_power"
    ]


def spectrum_words(text: str, wishes: Sequence[QuantityWish]) -> tuple[list[tuple[int, int]], bool]:
    """The dynamic-spectrum words held, and whether the operation is asked.

    Held: the spans naming a spectrum the catalog holds, not an operation. Asked: some
    others are about a series of `wishes`.
    """
    found = _spans_and_series(text, wishes)
    return [span for span, series in found if not series], any(s for _, s in found)


def held_spectrum_spans(text: str, wishes: Sequence[QuantityWish]) -> list[tuple[int, int]]:
    """The dynamic-spectrum words that name a spectrum the catalog holds, not an operation."""
    return spectrum_words(text, wishes)[0]
