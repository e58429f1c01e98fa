"""A report as Markdown, with its figures as files beside it (PNG, else interactive HTML)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from xhelio.report.model import Report
from xhelio.report.text import citation_line, number, quantity_rows, reference_lines

__all__ = ["to_markdown"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def to_markdown(report: Report, figure_files: Sequence[str] = ()) -> str:
    """The report as Markdown; `figure_files` are the figures' paths relative to it."""
    out = [
        f"# {report.title}",
        "",
        f"xhelio session `{report.session_id}` · {report.created}",
        "",
        "## Question",
        "",
        f"> {report.question or '(no question recorded)'}",
        "",
    ]
    if report.answer:
        out += ["## Answer", "", report.answer, ""]
    if report.stages:
        out += ["## Stages", ""]
        rows = [
            [
                s.description,
                s.status,
                ", ".join(s.labels),
                "; ".join(
                    f"{'met' if c.get('met') else 'NOT met'}: {c.get('criterion')}"
                    for c in s.criteria
                ),
            ]
            for s in report.stages
        ]
        out += _table(["stage", "status", "data", "criteria"], rows)
    if report.criteria:
        out += ["## Success criteria", ""]
        rows = [
            [
                str(c.get("criterion", "")),
                "met" if c.get("met") else "not met",
                str(c.get("evidence", "")),
            ]
            for c in report.criteria
        ]
        out += _table(["criterion", "verdict", "evidence"], rows)
    out += ["## Figures", ""]
    for n, figure in enumerate(report.figures, start=1):
        path = figure_files[n - 1] if n <= len(figure_files) else ""
        caption = f"Figure {n}. {figure.title}"
        if path.endswith(".png"):
            out += [f"![{caption}]({path})", ""]
        elif path:
            out += [f"[{caption} (interactive)]({path})", ""]
        else:
            out += [caption, ""]
    if not report.figures:
        out += ["No figures were made.", ""]
    out += ["## Numbers", ""]
    rows = quantity_rows(report.quantities)
    out += (
        _table(["data", "quantity", "unit", "min", "mean", "max", "points"], rows)
        if rows
        else ["No data in memory.", ""]
    )
    if report.results:
        rows = [[r.source, r.name, number(r.value), r.unit or "—"] for r in report.results]
        out += _table(["tool", "result", "value", "unit"], rows)
    out += ["## What was done", ""]
    rows = [
        [str(s.seq), s.tool, s.caller, "ok" if s.ok else "failed", ", ".join(s.produced), s.note]
        for s in report.steps
    ]
    out += (
        _table(["#", "tool", "by", "status", "produced", "note"], rows)
        if rows
        else ["No tool was called.", ""]
    )
    if report.methods:
        out += ["## Methods", "", *[f"- {line}" for line in reference_lines(report.methods)], ""]
    out += ["## Data citations", ""]
    out += [f"- {citation_line(c)}" for c in report.citations] or [
        "No dataset citation is recorded for the data used."
    ]
    out += ["", "## Limitations", ""]
    out += [f"- {line}" for line in report.limitations] or ["None recorded."]
    out += ["", "## Rerun this analysis", ""]
    if report.script:
        out += [
            "Save this script as `rerun.py` and run `python rerun.py`, or save the session's "
            'pipeline with `xhelio tool save_pipeline \'{"name": "my analysis"}\' --session '
            f"{report.session_id}` and replay it with `xhelio pipeline run`.",
            "",
            "```python",
            report.script.rstrip(),
            "```",
            "",
        ]
    else:
        out += ["Nothing in this session can be replayed.", ""]
    if report.pipeline:
        out += ["<details><summary>Pipeline (JSON)</summary>", "", "```json"]
        out += [json.dumps(report.pipeline, indent=2, default=str), "```", "", "</details>", ""]
    return "\n".join(out)
