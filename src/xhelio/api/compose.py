"""The answer composer: how every answer reads, whichever assistant wrote it.

`compose_answer` is applied to every turn's answer (`api.turns.build_response`: the LLM
agents, the offline interpreter, the Python API, REST, MCP and the CLI). It keeps the
writer's words but orders them the way a scientist reads:

1. the short answer: what was shown, then the key numbers with units (`api.key_numbers`);
2. what differs from the request and why (the request-vs-data check, notes on choices);
3. the rest, each error once.

Operational detail (fetch and computation logs, which candidates were skipped, how the
layout was chosen, CLI commands and settings to try, files written) is not part of the
answer: it is returned as `details`, which the interfaces show with the turn's activity.
A sentence an earlier answer of the session already said is not said again, and a
sentence the turn's error message holds is left to the error.

Writers say time ranges as people read them (`xhelio.timerange.readable_range`); a
tool-style ISO range an LLM copied from a tool result ("2000-07-14T00:00:00Z to
2000-07-18T00:00:00Z", end-exclusive) is said readably here ("2000-07-14 to 2000-07-17").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xhelio.timerange import readable_iso_ranges

__all__ = ["ComposedAnswer", "compose_answer", "is_detail"]

_DIFFERS = re.compile(
    r"(?i)^(?:\*\*)?differs from the request|could not (?:honour|honor)|not what was asked"
)
_DETAIL = re.compile(
    r"""(?x)
    ^(?:Offline\ mode\ understood|Time\ range:|Fetched\ |Figure\ saved|Saved\ (?!pipeline))
    | ^Computed\ \S+:\ .*\(\d[\d,]*\ points
    | ^Used\ \S+\ because\ earlier\ candidates
    | \ is\ already\ a\ single\ series
    | \bnot\ fetched\ again\b
    | ^(?:Overlaid\ in\ one\ panel|Shown\ in\ \d+\ stacked\ panels)\b
    | ^Plotted\ \d+\ (?:traces?|series)\b
    | `xhelio\ [^`]*`
    | \bXHELIO_[A-Z_]+\b
    | :\ saved\ to\ \S
    """
)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`'\"*])")
_MARKUP = re.compile(r"^\s*(?:#|```|\||>)")


def is_detail(sentence: str) -> bool:
    """Whether `sentence` is operational detail (belongs in the trace, not the answer)."""
    return bool(_DETAIL.search(sentence.strip()))


@dataclass(frozen=True)
class ComposedAnswer:
    """The answer as people read it, and the operational detail taken out of it."""

    text: str
    details: tuple[str, ...] = ()


@dataclass
class _Parts:
    blocks: list[str]
    differs: list[str]
    details: list[str]


def _sentences(line: str) -> list[str]:
    """A prose line as sentences; markup, list items and tables stay whole."""
    if _MARKUP.match(line) or _LIST_ITEM.match(line) or _DIFFERS.match(line.strip()):
        return [line]
    sentences: list[str] = []
    start = 0
    for end in _SENTENCE_END.finditer(line):
        piece = line[start : end.start()]
        if piece.count("(") <= piece.count(")"):  # never inside parentheses
            sentences.append(piece)
            start = end.end()
    sentences.append(line[start:])
    return [s for s in sentences if s.strip()]


def _key(sentence: str) -> str:
    return " ".join(sentence.split()).strip(" .").lower()


def _said(texts: Iterable[str]) -> set[str]:
    """Every sentence of `texts`, as compared (case and spacing ignored)."""
    return {_key(s) for text in texts for line in text.split("\n") for s in _sentences(line)}


def _blocks(text: str) -> list[list[str]]:
    """Paragraphs (blank-line separated); in a text without blank lines, every line."""
    if "\n\n" not in text.strip():
        return [[line] for line in text.split("\n") if line.strip()]
    return [b.split("\n") for b in re.split(r"\n\s*\n", text) if b.strip()]


def _split(text: str, earlier: set[str], error: str) -> _Parts:
    parts = _Parts([], [], [])
    seen: set[str] = set()
    code = False  # inside a fenced code block: kept as written
    for block in _blocks(text):
        kept_lines: list[str] = []
        detail_list = False  # list items under a detail line ("Skipped:") are detail too
        for line in block:
            if line.lstrip().startswith("```"):
                code = not code
            if code or line.lstrip().startswith("```"):
                kept_lines.append(line.rstrip())
                continue
            line = readable_iso_ranges(line)
            if _LIST_ITEM.match(line) and detail_list:
                parts.details.append(line.strip())
                continue
            kept: list[str] = []
            for sentence in _sentences(line):
                key = _key(sentence)
                if len(key) > 20 and key in seen:
                    continue  # said twice in this answer
                seen.add(key)
                if _DIFFERS.search(sentence):
                    parts.differs.append(sentence.strip())
                elif is_detail(sentence):
                    parts.details.append(sentence.strip())
                elif len(key) > 20 and key in earlier and (parts.blocks or kept_lines):
                    # An earlier answer said it (the short answer is always said).
                    parts.details.append(sentence.strip())
                elif len(key) > 20 and error and key in error:
                    continue  # the error says it
                else:
                    kept.append(sentence.strip())
            detail_list = not kept and line.rstrip().endswith(":")
            if kept:
                whole = _LIST_ITEM.match(line) or _MARKUP.match(line)
                kept_lines.append(line.rstrip() if whole else " ".join(kept))
        if kept_lines:
            parts.blocks.append("\n".join(kept_lines))
    return parts


def compose_answer(
    text: str,
    numbers: Sequence[str] = (),
    earlier: Sequence[str] = (),
    error: str | None = None,
) -> ComposedAnswer:
    """`text` as a short answer, differences and the rest; its operational detail apart.

    Args:
        text: The answer the assistant wrote.
        numbers: Sentences with the key numbers of what was shown (`key_numbers`).
        earlier: The session's earlier answers: what they said is not said again.
        error: The turn's error message, shown apart: the answer does not repeat it.
    """
    if not text and not numbers:
        return ComposedAnswer(text)
    parts = _split(text, _said(earlier), _key(readable_iso_ranges(error or "")))
    if not parts.blocks and not numbers and parts.details and not error:
        parts.blocks.append(parts.details.pop(0))  # an answer that is all detail still answers
    short, rest = (parts.blocks[0], parts.blocks[1:]) if parts.blocks else ("", [])
    if len(numbers) == 1:
        short = f"{short} {numbers[0]}".strip()
    elif numbers:
        short = "\n".join([short, "", *(f"- {n}" for n in numbers)]).strip()
    if "\n\n" not in text.strip():  # one line per sentence: the rest reads as one paragraph
        rest = ["\n".join(rest)]
    paragraphs = [p for p in (short, "\n".join(parts.differs), *rest) if p]
    return ComposedAnswer("\n\n".join(paragraphs), tuple(dict.fromkeys(parts.details)))
