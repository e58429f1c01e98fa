"""`AnswerView`: an `AskResponse` as Jupyter rich output (text, figure, table, citations)."""

from __future__ import annotations

import html
from typing import Any

from xhelio.api.models import AskResponse

__all__ = ["AnswerView"]

PLOTLY_MIME = "application/vnd.plotly.v1+json"


class AnswerView:
    """Shows one answer in a notebook; the response itself is `.response`."""

    def __init__(self, response: AskResponse) -> None:
        self.response = response

    def citations(self) -> list[str]:
        """One line per dataset the answer's data came from, in order, each once."""
        seen: list[str] = []
        for item in self.response.data:
            if item.dataset and item.dataset not in seen:
                seen.append(item.dataset)
        return [f"{d}: NASA CDAWeb dataset {d} (cdaweb.gsfc.nasa.gov)" for d in seen]

    def _table_html(self) -> str:
        table = self.response.table
        if table is None:
            return ""
        head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
        rows = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape(str(r.get(c, '')))}</td>" for c in table.columns)
            + "</tr>"
            for r in table.rows
        )
        caption = f"{html.escape(table.label)}: first {len(table.rows)} of {table.row_count} rows"
        return f"<table><caption>{caption}</caption><tr>{head}</tr>{rows}</table>"

    def _html(self) -> str:
        r = self.response
        parts = [f"<div class='xhelio-answer'><p>{html.escape(r.answer)}</p>"]
        if r.error is not None:
            kind, message = html.escape(r.error.type), html.escape(r.error.message)
            parts.append(f"<p><b>{kind}</b>: {message}</p>")
        parts.append(self._table_html())
        cites = self.citations()
        if cites:
            items = "".join(f"<li>{html.escape(c)}</li>" for c in cites)
            parts.append(f"<p>Data to cite:</p><ul class='xhelio-citations'>{items}</ul>")
        parts.append("</div>")
        return "".join(parts)

    def figure_bundle(self) -> dict[str, Any] | None:
        """The figure as its own output, in Plotly's MIME type.

        JupyterLab and VS Code draw it interactive with the Plotly.js they ship (nothing
        is loaded from the network).
        """
        figure = self.response.figure
        if figure is None:
            return None
        layout = figure.get("layout") or {}
        title = layout.get("title") if isinstance(layout, dict) else None
        text = title.get("text") if isinstance(title, dict) else title
        plain = f"Figure: {text or 'untitled'} ({len(figure.get('data') or [])} traces)"
        return {PLOTLY_MIME: figure, "text/plain": plain}

    def _text(self) -> str:
        lines = [self.response.answer]
        if self.response.error is not None:
            lines.append(f"{self.response.error.type}: {self.response.error.message}")
        lines += [f"Cite: {c}" for c in self.citations()]
        return "\n".join(lines)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self._text(), "text/html": self._html()}

    def __repr__(self) -> str:
        return self._text()
