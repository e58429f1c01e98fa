"""Text from the sandbox is text to be shown, never terminal control.

Everything a sandboxed call hands back (error messages, printed output, warnings,
string results, attribute values) may have been written by hostile code. `display_text`
is the one sanitiser applied where that text enters the system (the executor) and again
where the CLI prints it: it removes

* ESC sequences: CSI (`ESC [ ... final`, cursor movement, colours, erase), OSC
  (`ESC ] ... BEL` or `ESC ] ... ST`, e.g. OSC 52 writing the clipboard or OSC 8
  links), DCS/SOS/PM/APC strings, and two-character escapes;
* every other C0 and C1 control character except newline and tab (carriage return and
  backspace included: they overwrite what the reader sees);
* Unicode bidirectional overrides, embeddings, isolates and marks, which reorder what
  is shown (the "Trojan Source" class).

Linear in the length of the text (regular expressions without backtracking over
nested groups). Imports nothing from xhelio.
"""

from __future__ import annotations

import re

__all__ = ["display_text"]

_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI, possibly cut short
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]?"  # two-character escapes (with intermediates)
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def display_text(text: str) -> str:
    """`text` without terminal control sequences, control characters or bidi overrides."""
    if text.isprintable():  # the common case: nothing to strip (newline/tab aren't printable)
        return text
    return _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text))
