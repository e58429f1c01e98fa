"""Spectrum requests become one `spectrogram` wish, drawn as a heatmap.

"spectrogram", "energy spectrum", "pitch angle", "radio" and "wave spectrogram" become one
wish whose component names the axis asked for (energy, pitch angle, radio or frequency).

Imports only this package.
"""

from __future__ import annotations

import re

from xhelio.language.intent import QuantityWish

__all__ = ["AXIS_CUES", "axis_dataset_score", "spectrum_wishes"]

_SPECTRUM = re.compile(
    r"\b(?:energy[- ]time|dynamic)\s+spectr\w*|\bspectrograms?\b|\benergy\s+spectr\w*"
    r"|\bpitch[- ]angles?(?:\s+distributions?)?\b|\bPADs?\b|\bradio\b|\bwave\s+spectr\w*"
    r"|\bfrequency\s+spectr\w*|\b(?:electron|ion|proton|particle)\s+spectr\w*|\bspectr(?:um|a)\b",
    re.I,
)
_AXIS = (
    ("pitch", re.compile(r"pitch|\bPADs?\b", re.I)),
    ("radio", re.compile(r"radio", re.I)),
    ("frequency", re.compile(r"wave|frequenc|electric|plasma wave", re.I)),
    ("energy", re.compile(r".", re.S)),
)
# How a parameter's name or description shows the axis it spans.
AXIS_CUES = {
    "pitch": re.compile(r"pitch|(?:^|_)pa(?:_|$|d)|\bpad\b", re.I),
    "radio": re.compile(r"radio|freq|spec|power|intens|psd|flux|auto", re.I),
    "frequency": re.compile(r"freq|spec|power|radio|wave|intens|psd|v\^?2|nt\^?2", re.I),
    "energy": re.compile(r"energ|flux|spec|count|rate|psd|intens|ef|omni", re.I),
}


def spectrum_wishes(
    text: str, wishes: list[QuantityWish], species: str | None
) -> list[QuantityWish]:
    """The wishes with spectrum words turned into one spectrogram wish.

    Unchanged when the request names no spectrum.
    """
    match = _SPECTRUM.search(text)
    if match is None:
        return wishes
    axis = next(name for name, cue in _AXIS if cue.search(text))
    species = next((w.species for w in wishes if w.species), species)
    kept = [
        w for w in wishes if w.quantity not in ("particle_flux", "magnetic_field", "electric_field")
    ]
    spectrum = QuantityWish("spectrogram", match[0], match.start(), axis, None, species)
    return sorted([*kept, spectrum], key=lambda w: w.position)


_RADIO_DATASET = re.compile(r"radio|RFS|TNR|HFR|_WAV|WAVES", re.I)
_MOMENTS_DATASET = re.compile(r"MOM|moments", re.I)


def axis_dataset_score(dataset_text: str, axis: str | None) -> float:
    """Dataset-level fit for a spectrogram: radio receivers for radio, never moments."""
    score = -2.0 if _MOMENTS_DATASET.search(dataset_text) else 0.0
    if axis == "radio":
        score += 3.0 if _RADIO_DATASET.search(dataset_text) else -1.0
    return score
