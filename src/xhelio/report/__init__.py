"""Reports of a session: what was asked and done, figures, numbers, citations, how to rerun.

* `model`: `build_report(session)` gathers a `Report` from the session (no LLM).
* `html` / `markdown`: lay it out (one self-contained HTML file, or Markdown).
* `files`: `write_report(report, path)` by the file's suffix.

Sits between the tools (the `session_report` tool) and the pipelines it extracts.
"""

from xhelio.report.files import FORMATS, format_of, render, write_report
from xhelio.report.model import DEEP_PLANS_KEY, Report, build_report, gallery_folder

__all__ = [
    "DEEP_PLANS_KEY",
    "FORMATS",
    "Report",
    "build_report",
    "format_of",
    "gallery_folder",
    "render",
    "write_report",
]
