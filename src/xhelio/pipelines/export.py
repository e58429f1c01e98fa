"""Export a saved pipeline as a standalone Python script or Jupyter notebook.

The script needs only xhelio installed: it calls the tools through
`xhelio.api.script.ToolSession` (the same funnel as replay), resolves the time range
with `xhelio.timerange.parse_time_range` exactly as replay does, and writes the data
(parquet), the figure (JSON, PNG) into an output folder. Its header cites every dataset
(title, PI, DOI, and the provider that serves it, from its source's `cite`). The
notebook has the same cells, one per step, written as nbformat-4 JSON by hand (no
nbformat dependency).
"""

from __future__ import annotations

import json
import pprint
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from xhelio.config import Settings
from xhelio.errors import UserError, XhelioError
from xhelio.pipelines.model import TIME_RANGE_VAR, Pipeline
from xhelio.sources.base import DataSource
from xhelio.sources.registry import make_source

__all__ = [
    "Citation",
    "dataset_citations",
    "export_file_name",
    "export_notebook",
    "export_script",
    "export_text",
    "write_export",
]

Format = Literal["py", "ipynb"]


@dataclass(frozen=True)
class Citation:
    """How to cite one dataset."""

    dataset: str
    title: str = ""
    pi_name: str = ""
    doi: str = ""
    source: str = ""
    """The provider that serves it, with its address."""
    acknowledgement: str = ""
    """The provider's request to its users, when it makes one."""

    def line(self) -> str:
        """One line: id, title, PI, DOI and where it came from."""
        parts = [self.dataset]
        if self.title:
            parts.append(self.title)
        if self.pi_name:
            parts.append(f"PI: {self.pi_name}")
        parts.append(f"DOI: {self.doi}" if self.doi else "no DOI in the catalog")
        if self.source:
            parts.append(f"served by {self.source}")
        return " — ".join(parts)


def dataset_citations(pipeline: Pipeline, settings: Settings) -> list[Citation]:
    """A citation for each dataset the pipeline fetches, from the source that serves it.

    A dataset's source is the one its fetch step names (the default source otherwise);
    a source that cannot be built or cannot cite still leaves the dataset cited by id.
    """
    opened: dict[str, DataSource | None] = {}
    out: list[Citation] = []
    try:
        for dataset in pipeline.datasets:
            name = _source_of(pipeline, dataset) or settings.default_source
            if name not in opened:
                try:
                    opened[name] = make_source(name, settings, cached=False)
                except XhelioError:
                    opened[name] = None
            out.append(_cite(opened[name], dataset))
    finally:
        for source in opened.values():
            if source is not None:
                source.close()
    return out


def _source_of(pipeline: Pipeline, dataset: str) -> str | None:
    for step in pipeline.steps:
        named = step.args.get("source")
        if step.args.get("dataset_id") == dataset and isinstance(named, str) and named:
            return named
    return None


def _cite(source: DataSource | None, dataset: str) -> Citation:
    if source is None:
        return Citation(dataset)
    try:
        c = source.cite(dataset)
    except XhelioError:
        return Citation(dataset)
    served = f"{c.provider} ({c.url})" if c.url else c.provider
    return Citation(
        c.dataset or dataset, c.title, c.pi or "", c.doi or "", served, c.acknowledgement
    )


def _header(pipeline: Pipeline, citations: Sequence[Citation]) -> list[str]:
    lines = [
        f"{pipeline.name} — exported xhelio pipeline {pipeline.id}",
        "",
        pipeline.description,
        f"Exported {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}; "
        f"default time range {_default_range(pipeline) or 'n/a'}.",
        "",
        "Data citations (please acknowledge the data providers when you publish):",
        *(f"  - {c.line()}" for c in citations),
        *(
            f"  - {a}"
            for a in dict.fromkeys(c.acknowledgement for c in citations if c.acknowledgement)
        ),
    ]
    return lines


def _call_source(tool: str, args: dict[str, Any], critical: bool = True) -> str:
    body = pprint.pformat(args, width=88, sort_dicts=False)
    # a non-critical step (styling, a file export) that fails is reported and skipped,
    # as replay does, instead of stopping the script
    method = "call" if critical else "call_optional"
    return f"xh.{method}({tool!r}, **fill({body}))"


def _default_range(pipeline: Pipeline) -> str:
    var = pipeline.variables.get(TIME_RANGE_VAR)
    return var.default if var else ""


_SETUP = """\
from xhelio.errors import XhelioError
from xhelio.pipelines.model import substitute
from xhelio.api.script import ToolSession
from xhelio.timerange import parse_time_range


def fill(args):
    \"\"\"Put the run's variable values into a step's arguments.\"\"\"
    return substitute(args, VARIABLES)
"""


def export_script(pipeline: Pipeline, citations: Sequence[Citation] = ()) -> str:
    """The pipeline as a runnable Python script (`--time-range`, `--out`)."""
    header = "\n".join(_header(pipeline, citations)).replace('"""', "'''")
    steps: list[str] = []
    for s in pipeline.steps:
        steps.append(f"            # {s.step_id}: {s.intent}")
        call = _call_source(s.tool, s.args, s.critical).replace("\n", "\n            ")
        steps.append(f"            {call}")
    return f'''"""{header}

Usage: python this_script.py [--time-range "2001-03-01 to 2001-04-01"] [--out FOLDER]
"""

import argparse
import sys

{_SETUP}
DEFAULT_TIME_RANGE = {_default_range(pipeline)!r}
VARIABLES = {{}}


def main():
    parser = argparse.ArgumentParser(description={pipeline.name!r})
    parser.add_argument("--time-range", default=DEFAULT_TIME_RANGE)
    parser.add_argument("--out", default="pipeline_output")
    parser.add_argument("--no-png", action="store_true", help="skip the PNG (needs Chromium)")
    options = parser.parse_args()
    # Resolved once, exactly as replay does, so relative ranges mean one window.
    try:
        VARIABLES[{TIME_RANGE_VAR!r}] = str(parse_time_range(options.time_range))
        with ToolSession() as xh:
{chr(10).join(steps)}
            for path in xh.write_outputs(options.out, png=not options.no_png):
                print(path)
    except XhelioError as exc:  # a clear message and exit status 1, not a traceback
        sys.exit(f"error: {{exc.message}}")


if __name__ == "__main__":
    main()
'''


def _cell(kind: str, text: str) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind, "metadata": {}, "source": text.splitlines(True)}
    if kind == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return cell


def export_notebook(pipeline: Pipeline, citations: Sequence[Citation] = ()) -> str:
    """The pipeline as a Jupyter notebook (nbformat 4 JSON), one cell per step."""
    header = _header(pipeline, citations)
    cells = [
        _cell("markdown", f"# {header[0]}\n\n" + "\n".join(header[2:])),
        _cell(
            "code",
            f"TIME_RANGE = {_default_range(pipeline)!r}  # change me\nOUT = 'pipeline_output'",
        ),
        _cell(
            "code",
            _SETUP + f"\nVARIABLES = {{{TIME_RANGE_VAR!r}: str(parse_time_range(TIME_RANGE))}}"
            "\nxh = ToolSession()",
        ),
    ]
    for s in pipeline.steps:
        cells.append(_cell("markdown", f"**{s.step_id}** ({s.phase}): {s.intent}"))
        cells.append(_cell("code", _call_source(s.tool, s.args, s.critical)))
    cells.append(
        _cell(
            "code",
            "import plotly.graph_objects as go\n\n"
            "xh.write_outputs(OUT, png=False)\ngo.Figure(xh.figure())",
        )
    )
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "xhelio": {"pipeline_id": pipeline.id},
        },
        "nbformat": 4,
        "nbformat_minor": 4,
    }
    return json.dumps(notebook, indent=1)


def export_text(pipeline: Pipeline, fmt: Format, citations: Sequence[Citation] = ()) -> str:
    """The export in `fmt` ('py' or 'ipynb')."""
    return (
        export_script(pipeline, citations) if fmt == "py" else export_notebook(pipeline, citations)
    )


def export_file_name(pipeline: Pipeline, fmt: Format) -> str:
    """A safe file name from the pipeline's name: 'ACE |B| / week' -> 'ACE_B_week.py'."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", pipeline.name).strip("._") or pipeline.id
    return f"{stem}.{fmt}"


def write_export(
    pipeline: Pipeline, fmt: str, target: Path, settings: Settings
) -> tuple[Path, list[Citation]]:
    """Write the script or notebook to `target` (folders created); return it and the citations.

    Raises:
        UserError: an unknown format, or a file that cannot be written.
    """
    if fmt not in ("py", "ipynb"):
        raise UserError(f"Unknown format {fmt!r}; use py or ipynb.")
    citations = dataset_citations(pipeline, settings)
    text = export_text(pipeline, "py" if fmt == "py" else "ipynb", citations)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"Cannot write {target}: {exc.strerror or exc}.") from None
    return target.resolve(), citations
