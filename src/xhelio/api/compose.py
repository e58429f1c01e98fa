"""The answer composer: how every answer reads, whichever assistant wrote it.

`compose_answer` is applied to every turn's answer (`api.turns.build_response`: the LLM
agents, the offline interpreter, the Python API, REST, MCP and the CLI): a line is said
once, so an error repeated by several layers shows once.

Time ranges are not rewritten here: each writer says them as people read them, with
`xhelio.timerange.readable_range` (offline answers and figure titles) or as its prompt
asks (the LLM agents).
"""

from __future__ import annotations

__all__ = ["compose_answer"]


def _each_line_once(text: str) -> str:
    seen: set[str] = set()
    out: list[str] = []
    for line in text.split("\n"):
        key = line.strip()
        if key and len(key) > 20 and key in seen:
            continue
        seen.add(key)
        out.append(line)
    return "\n".join(out)


def compose_answer(text: str) -> str:
    """`text` with each (long) line said once."""
    if not text:
        return text
    return _each_line_once(text)
