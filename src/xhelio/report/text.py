"""Wording both report formats share: numbers, quantity rows, methods and citations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xhelio.report.model import Method, Quantity

__all__ = ["citation_line", "number", "quantity_rows", "reference_lines"]


def number(value: float | None) -> str:
    """A number to four significant digits ('—' when there is none)."""
    if value is None:
        return "—"
    return f"{value:.4g}"


def quantity_rows(quantities: Sequence[Quantity]) -> list[list[str]]:
    """One row per column: data, quantity, unit, min, mean, max, points."""
    return [
        [
            q.source,
            q.name,
            q.unit or "—",
            number(q.minimum),
            number(q.mean),
            number(q.maximum),
            f"{q.points:,}",
        ]
        for q in quantities
    ]


def reference_lines(methods: Sequence[Method]) -> list[str]:
    """One line per method: what was applied, by which tool, and its references."""
    lines: list[str] = []
    for method in methods:
        line = f"{method.method} ({method.tool})"
        if method.references:
            line += ": " + "; ".join(method.references)
        if line not in lines:
            lines.append(line)
    return lines


def citation_line(citation: Mapping[str, str]) -> str:
    """A dataset citation as one line: dataset, DOI, PI, acknowledgement."""
    parts = [citation.get("dataset", "")]
    if citation.get("title"):
        parts.append(citation["title"])
    if citation.get("doi"):
        doi = citation["doi"]
        parts.append(doi if doi.startswith("http") else f"https://doi.org/{doi}")
    if citation.get("pi"):
        parts.append(f"PI: {citation['pi']}")
    if citation.get("provider"):
        parts.append(f"served by {citation['provider']}")
    if citation.get("acknowledgement"):
        parts.append(citation["acknowledgement"])
    return " · ".join(p for p in parts if p)
