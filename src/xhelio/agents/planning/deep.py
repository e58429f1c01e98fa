"""Deep-analysis mode: a reviewed plan of stages with criteria, reflection, a final report.

`DeepAnalysis` answers one request through the session's `PlanningAssistant` (the same
plan-execute-replan loop as any plan), with three differences: the planner is asked for
the whole analysis as ordered stages, each with its own success criteria, and told which
files are in the session's working folder; the plan is always reviewed (the LLM reviewer,
when the mode has one); and a `Reflector` judges every stage as soon as it ends and may
add, change or drop the stages still to run. The finished plan is kept in
`session.meta["deep_plans"]` and the session's report is written as HTML and Markdown into
its `exports/` folder; the reply names both files and the plan record carries them.
Imports the planning package, `report`, and the tools layer.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from xhelio.agents.planning.assistant import DeepHooks, PlanningAssistant
from xhelio.agents.planning.routing import Complexity
from xhelio.agents.turn import Assistant, AssistantReply
from xhelio.errors import UserError
from xhelio.report import DEEP_PLANS_KEY, build_report, write_report
from xhelio.tools.extraction_tools import work_folder

__all__ = ["DEEP_NOTE", "DeepAnalysis", "deep_analysis"]

DEEP_NOTE = """\
DEEP ANALYSIS: plan the whole analysis now, as ordered stages (one task per stage; \
fetches, then computations and analysis, then the figures), and give every task 1-3 \
checkable `criteria` its result must meet (labels made, units, point counts, a figure \
with given panels, a value found). Each stage is checked as soon as it ends and the \
remaining stages may be revised. Also give the overall success_criteria."""


def _files_note(folder: Path) -> str | None:
    files = sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        return None
    return (
        "Files the user uploaded to the working folder (a __data_extraction__ task loads "
        f"them with load_work_file, or reads a PDF with read_document): {', '.join(files)}."
    )


class DeepAnalysis:
    """An assistant that runs every request as a deep analysis ending in a report."""

    def __init__(self, planning: PlanningAssistant, hooks: DeepHooks) -> None:
        self.planning = planning
        self.hooks = hooks
        self.name = planning.name

    def respond(self, request: str, cancel: threading.Event) -> AssistantReply:
        """Plan, run and reflect on the request's stages, then write the report."""
        workspace = self.planning.workspace
        notes = [DEEP_NOTE]
        files = _files_note(work_folder(workspace.session))
        if files:
            notes.append(files)
        saved = (self.planning.reflector, self.planning.reviewer)
        self.planning.reflector = self.hooks.make_reflector()
        self.planning.reviewer = self.hooks.reviewer or self.planning.reviewer
        try:
            verdict = Complexity(True, ("deep analysis",), ())
            reply = self.planning.plan_request(request, cancel, verdict, note="\n".join(notes))
        finally:
            self.planning.reflector, self.planning.reviewer = saved
        plan = self.planning.latest_plan()
        if plan is not None:
            session = workspace.session
            session.meta[DEEP_PLANS_KEY] = [*session.meta.get(DEEP_PLANS_KEY, []), plan.to_dict()]
        report = build_report(workspace.session, question=request, answer=reply.text)
        stem = f"report-{plan.id}" if plan is not None else "report"
        exports = workspace.session.folder / "exports"
        files_written = {
            fmt: str(write_report(report, exports / f"{stem}.{fmt}")) for fmt in ("html", "md")
        }
        reply.text = (
            f"{reply.text}\n\nReport: {files_written['html']} (Markdown: {files_written['md']})"
        )
        plan_record: dict[str, Any] = dict(reply.plan or {})
        plan_record["report"] = files_written
        reply.plan = plan_record
        return reply


def deep_analysis(assistant: Assistant) -> DeepAnalysis:
    """The deep-analysis mode of a session's assistant.

    Raises:
        UserError: the assistant cannot plan (deep analysis needs the planner).
    """
    if not isinstance(assistant, PlanningAssistant) or assistant.deep is None:
        raise UserError("Deep analysis needs the planner, which this assistant does not have.")
    return DeepAnalysis(assistant, assistant.deep)
