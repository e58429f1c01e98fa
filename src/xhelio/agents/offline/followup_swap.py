"""Follow-ups that swap one spacecraft for another: "replace ACE with DSCOVR".

"swap Wind for ACE", "use DSCOVR instead of ACE", "switch from C1 to C3": the spacecraft
named right after a word of the `[followup_swap]` table of `vocabulary/request_words.toml`
leaves what is shown and the other spacecraft named takes its place; the rest is kept.
Imports only `language` and `vocabulary`.
"""

from __future__ import annotations

import re
from functools import cache

from xhelio.language.intent import MissionRef
from xhelio.timerange.words import alternatives
from xhelio.vocabulary import read_table

__all__ = ["swapped"]


@cache
def _out_before() -> re.Pattern[str]:
    words: list[str] = read_table("request_words.toml")["followup_swap"]["out_before"]
    return re.compile(rf"\b(?:{alternatives(words)})\s+(?:the\s+)?$", re.I)


def _leaving(text: str, missions: tuple[MissionRef, ...]) -> set[str]:
    """The missions named right after a swap word ("replace ACE", "instead of ACE")."""
    flat = " ".join(text.split())
    return {
        m.mission_id
        for m in missions
        if _out_before().search(flat[: m.position]) or _out_before().search(text[: m.position])
    }


def swapped(
    shown: tuple[MissionRef, ...], text: str, named: tuple[MissionRef, ...]
) -> tuple[MissionRef, ...] | None:
    """The missions `shown` with those a swap takes out replaced by those it brings in.

    None when the request swaps nothing: no mission follows a swap word, or every mission
    named does (nothing comes in).
    """
    leaving = _leaving(text, named)
    coming = tuple(m for m in named if m.mission_id not in leaving)
    if not leaving or not coming:
        return None
    kept: list[MissionRef] = []
    for ref in shown:
        if ref.mission_id not in leaving:
            kept.append(ref)
        elif coming[0] not in kept:
            kept.extend(coming)
    return tuple(kept) if any(c in kept for c in coming) else (*coming, *kept)
