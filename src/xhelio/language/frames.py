"""The coordinate frames a request names and the frames a parameter is in.

Both read the frames of the vocabulary (`vocabulary/domain.toml` [frames]): a request
names one as a word ("fgl gsm", "B in RTN"; "SM" and "SC" only in capitals); a
parameter is in one its own name spells ("thc_fgl_gsm", "BGSE", "tha_fgs_gsmQ",
"mag_8sec_sm"), else the one its description or labels write in capitals ("B in GSM
coordinates"). A magnitude is in no frame.
Imports `vocabulary` and `catalog.model` only.
"""

from __future__ import annotations

import re
from functools import cache

from xhelio.catalog.model import ParameterInfo
from xhelio.vocabulary import load_vocabulary

__all__ = ["frames_named", "name_frames", "parameter_frames"]

# A frame token in a name may carry a vector letter before it ("BGSE", "Vgsm") and a
# quality or corrected mark after it ("gsmQ", "BGSEc").
_LETTER_BEFORE = "BVE"
_MARK_AFTER = "QC"


@cache
def _frames() -> frozenset[str]:
    return frozenset(load_vocabulary().frames)


def frames_named(text: str) -> tuple[str, ...]:
    """The frames `text` names, upper case, in order ("fgl gsm" -> ("GSM",))."""
    return tuple(dict.fromkeys(m[0].upper() for m in load_vocabulary().frame_words.finditer(text)))


def _token_frame(token: str) -> str | None:
    upper = token.upper()
    shapes = [upper]
    if upper[-1:] in _MARK_AFTER:
        shapes.append(upper[:-1])
    if upper[:1] in _LETTER_BEFORE:
        shapes += [s[1:] for s in list(shapes)]
    return next((s for s in shapes if len(s) >= 2 and s in _frames()), None)


def name_frames(name: str) -> frozenset[str]:
    """The frames a parameter's name spells ("thc_fgl_gsm", "BGSEc" -> GSM, GSE)."""
    tokens = re.split(r"[^A-Za-z0-9]+|(?<=\d)(?=[A-Za-z])", name)
    return frozenset(f for t in tokens if (f := _token_frame(t)))


def parameter_frames(p: ParameterInfo) -> frozenset[str]:
    """The frames `p` is in, as its name spells them, else as its own words write them."""
    if named := name_frames(p.name):
        return named
    words = " ".join([p.description, *(p.labels or ())])
    return frozenset(w for w in re.findall(r"[A-Z][A-Z0-9]+", words) if w in _frames())
