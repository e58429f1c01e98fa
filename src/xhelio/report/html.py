"""A report as one self-contained HTML file: text, tables, interactive Plotly figures.

Plotly.js is embedded once (from the `plotly` package), so the file opens offline and can be
attached to an email. Every text from the session is escaped; figure JSON is embedded so
that no `</script>` inside it can end the script early.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from plotly.offline import get_plotlyjs

from xhelio.render.export import PLOT_CONFIG
from xhelio.report.model import Quantity, Report
from xhelio.report.text import citation_line, number, quantity_rows, reference_lines

__all__ = ["to_html"]

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2430;
background:#f6f7f9;line-height:1.45}
main{max-width:1080px;margin:0 auto;padding:24px 32px 48px;background:#fff;min-height:100vh}
h1{font-size:1.6em;margin:0 0 4px}h2{font-size:1.2em;margin:28px 0 8px;padding-bottom:4px;
border-bottom:1px solid #dde1e6}.meta{color:#5b6573;font-size:.9em}
.question{background:#eef4fb;border-left:4px solid #2f6fb5;padding:10px 14px;margin:14px 0}
.answer{white-space:pre-wrap}table{border-collapse:collapse;width:100%;font-size:.9em;
margin:6px 0}th,td{border:1px solid #dde1e6;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#1a7f37}.bad{color:#b42318}.figure{width:100%;margin:8px 0 2px}
.caption{color:#5b6573;font-size:.85em;margin-bottom:14px}pre{background:#f6f8fa;padding:10px;
overflow:auto;font-size:.82em;border:1px solid #dde1e6}
summary{cursor:pointer;color:#2f6fb5;margin:6px 0}ul{padding-left:22px}
"""


def _table(headers: list[str], rows: list[list[str]], numeric: set[int] | None = None) -> str:
    numeric = numeric or set()
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{escape(c)}</td>' if i in numeric else f"<td>{escape(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in items) + "</ul>"


def _script_json(value: Any) -> str:
    return json.dumps(value, default=str).replace("</", "<\\/")


def _height(value: Any) -> int:
    """The figure's own height (the layout's), else a default; bounded to a page."""
    try:
        return max(200, min(int(value), 2400))
    except (TypeError, ValueError):
        return 460


def _figures(report: Report) -> str:
    parts: list[str] = []
    config = {**PLOT_CONFIG, "responsive": True}
    for n, figure in enumerate(report.figures, start=1):
        layout = dict(figure.figure.get("layout") or {})
        layout.pop("width", None)
        layout["autosize"] = True
        height = _height(layout.get("height"))
        parts.append(
            f'<div id="figure-{n}" class="figure" style="height:{height}px"></div>'
            f'<div class="caption">Figure {n}. {escape(figure.title)}'
            + (f" (asked: {escape(figure.request)})" if figure.request else "")
            + "</div>"
            f"<script>Plotly.newPlot('figure-{n}', {_script_json(figure.figure.get('data') or [])},"
            f" {_script_json(layout)}, {_script_json(config)});</script>"
        )
    return "".join(parts) or "<p>No figures were made.</p>"


def _results(results: list[Quantity]) -> str:
    rows = [[r.source, r.name, number(r.value), r.unit or "—"] for r in results]
    return _table(["tool", "result", "value", "unit"], rows, {2}) if rows else ""


def to_html(report: Report) -> str:
    """The report as one HTML document (Plotly.js included)."""
    out: list[str] = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{escape(report.title)}</title><style>{_STYLE}</style>",
        f"<script>{get_plotlyjs()}</script></head><body><main>",
        f"<h1>{escape(report.title)}</h1>",
        f"<div class='meta'>xhelio session {escape(report.session_id)} · "
        f"{escape(report.created)}</div>",
        "<h2>Question</h2>",
        f"<div class='question'>{escape(report.question or '(no question recorded)')}</div>",
    ]
    if report.answer:
        out += ["<h2>Answer</h2>", f"<div class='answer'>{escape(report.answer)}</div>"]
    if report.stages:
        rows = [
            [
                s.description,
                s.status,
                ", ".join(s.labels),
                "; ".join(
                    f"{'✔' if c.get('met') else '✘'} {c.get('criterion')}" for c in s.criteria
                ),
            ]
            for s in report.stages
        ]
        out += ["<h2>Stages</h2>", _table(["stage", "status", "data", "criteria"], rows)]
    if report.criteria:
        rows = [
            [
                str(c.get("criterion", "")),
                "met" if c.get("met") else "not met",
                str(c.get("evidence", "")),
            ]
            for c in report.criteria
        ]
        out += ["<h2>Success criteria</h2>", _table(["criterion", "verdict", "evidence"], rows)]
    out += ["<h2>Figures</h2>", _figures(report)]
    out.append("<h2>Numbers</h2>")
    rows = quantity_rows(report.quantities)
    out.append(
        _table(["data", "quantity", "unit", "min", "mean", "max", "points"], rows, {3, 4, 5, 6})
        if rows
        else "<p>No data in memory.</p>"
    )
    out.append(_results(report.results))
    out.append("<h2>What was done</h2>")
    step_rows = [
        [str(s.seq), s.tool, s.caller, "ok" if s.ok else "failed", ", ".join(s.produced), s.note]
        for s in report.steps
    ]
    out.append(
        _table(["#", "tool", "by", "status", "produced", "note"], step_rows, {0})
        if step_rows
        else "<p>No tool was called.</p>"
    )
    if report.methods:
        out += ["<h2>Methods</h2>", _list(reference_lines(report.methods))]
    out.append("<h2>Data citations</h2>")
    out.append(
        _list([citation_line(c) for c in report.citations])
        if report.citations
        else "<p>No dataset citation is recorded for the data used.</p>"
    )
    out.append("<h2>Limitations</h2>")
    out.append(_list(report.limitations) if report.limitations else "<p>None recorded.</p>")
    out.append("<h2>Rerun this analysis</h2>")
    if report.script:
        out.append(
            "<p>Save the script below as <code>rerun.py</code> and run "
            "<code>python rerun.py</code> (it fetches the same data and redraws the figure), "
            "or save the session's pipeline with <code>xhelio tool save_pipeline "
            f'\'{{"name": "my analysis"}}\' --session {escape(report.session_id)}</code> and '
            "replay it for another time range with <code>xhelio pipeline run</code>.</p>"
            f"<details><summary>rerun.py ({report.script.count(chr(10)) + 1} lines)</summary>"
            f"<pre>{escape(report.script)}</pre></details>"
        )
    else:
        out.append("<p>Nothing in this session can be replayed.</p>")
    if report.pipeline:
        out.append(
            "<details><summary>Pipeline (JSON)</summary>"
            f"<pre>{escape(json.dumps(report.pipeline, indent=2, default=str))}</pre></details>"
        )
    out.append("</main></body></html>")
    return "\n".join(out)
