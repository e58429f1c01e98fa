"""Write a report to a file: `.html` (self-contained) or `.md` (figures in a folder beside it)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from xhelio.errors import UserError, XhelioError
from xhelio.render.export import find_browser, shared_exporter, write_html
from xhelio.report.html import to_html
from xhelio.report.markdown import to_markdown
from xhelio.report.model import Report

__all__ = ["FORMATS", "format_of", "render", "write_report"]

FORMATS = ("html", "md")


def format_of(path: Path, given: str | None = None) -> str:
    """The report format of `given` or of the file's suffix; `UserError` when neither is known."""
    fmt = (given or path.suffix.lstrip(".")).lower()
    fmt = {"markdown": "md", "htm": "html"}.get(fmt, fmt)
    if fmt not in FORMATS:
        raise UserError(
            f"A report is written as .html or .md, not {path.name!r}: name the file "
            "report.html or report.md."
        )
    return fmt


def render(report: Report, fmt: str) -> str:
    """The report's text in `fmt` ("html" or "md"; Markdown without figure files)."""
    return to_html(report) if format_of(Path(f"report.{fmt}")) == "html" else to_markdown(report)


def _figure_files(report: Report, folder: Path, png: bool) -> list[str]:
    """Write each figure as PNG (a browser is there) or interactive HTML; relative paths."""
    if not report.figures:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[str] = []
    for n, figure in enumerate(report.figures, start=1):
        target = folder / f"figure-{n}.png"
        try:
            if not png:
                raise UserError("no browser")
            shared_exporter().write(figure.figure, target)
        except XhelioError:
            target = write_html(figure.figure, folder / f"figure-{n}.html")
        paths.append(f"{folder.name}/{target.name}")
    return paths


def write_report(report: Report, path: Path, fmt: str | None = None) -> Path:
    """Write `report` to `path` atomically; a Markdown report gets `<stem>_figures/` beside it."""
    kind = format_of(path, fmt)
    path = path.expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "html":
        text = to_html(report)
    else:
        files = _figure_files(
            report, path.parent / f"{path.stem}_figures", find_browser() is not None
        )
        text = to_markdown(report, files)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".report.", suffix=path.suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(temp, path)
    finally:
        Path(temp).unlink(missing_ok=True)
    return path
