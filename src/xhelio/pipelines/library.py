"""The ops library as the data-ops agent sees it: the most used proven operations.

`library_note` lists the top entries (20 by default) with their code, and says how to mark
reuse: a `custom_operation` whose description contains `[from <id>]` bumps that entry's
use count (`OpsLibrary.record` reads the mark), which keeps useful code from eviction.
"""

from __future__ import annotations

from xhelio.sandbox.ops_library import OpsLibrary

__all__ = ["TOP_ENTRIES", "library_note"]

TOP_ENTRIES = 20
_CODE_CHARS = 800


def library_note(library: OpsLibrary, n: int = TOP_ENTRIES) -> str:
    """Text for the data-ops prompt: proven operations to reuse, or '' when there are none."""
    entries = library.top(n)
    if not entries:
        return ""
    lines = [
        "Proven operations from the library (reuse or adapt one when it fits; then put "
        "[from <id>] in custom_operation's description):"
    ]
    for e in entries:
        code = e.code if len(e.code) <= _CODE_CHARS else e.code[:_CODE_CHARS] + "\n# ..."
        lines.append(f"- [{e.id}] {e.description} (used {e.use_count}x)\n{code}")
    return "\n".join(lines)
