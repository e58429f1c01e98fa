"""Names of missions the catalog does not have (``absent_missions.toml``), found in a request.

A request that names one ("SuperMAG SML", "Swarm data") is told the mission is not in the
catalog wherever the name stands, even when nothing else in it is understood. A name is
matched as a whole word in any case ("sdo", "SUPERMAG"), or only as written when the row
says so (`as_written`). A mission the planetary (PDS) source answers (`planetary.toml`:
Juno, Mars Express) is not absent.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources

from xhelio.vocabulary.planetary import load_planetary

__all__ = ["absent_missions_named"]


@cache
def _names() -> re.Pattern[str] | None:
    rows = tomllib.loads(
        resources.files("xhelio.vocabulary").joinpath("absent_missions.toml").read_text("utf-8")
    )
    planetary = load_planetary()
    names = {
        str(n): str(n) in row.get("as_written", [])
        for row in rows.values()
        for n in row["names"]
        if not planetary.mission_in(str(n))
    }
    if not names:
        return None
    forms = [
        re.escape(n) if written else f"(?i:{re.escape(n)})"
        for n, written in sorted(names.items(), key=lambda item: len(item[0]), reverse=True)
    ]
    return re.compile(r"(?<![\w-])(?:" + "|".join(forms) + r")(?![\w-])")


def absent_missions_named(text: str) -> tuple[str, ...]:
    """The absent missions' names written in `text`, in order, each once."""
    pattern = _names()
    if pattern is None:
        return ()
    return tuple(dict.fromkeys(m[0] for m in pattern.finditer(text)))
