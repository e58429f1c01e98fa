"""`OfflineAssistant`: answers requests without a language model, through the one funnel.

It parses the request, answers catalog questions with the discovery tools, or builds an
`OfflinePlan` and runs its steps in order: fetches try their candidates until one gives
usable data (not an error, not empty, not all-NaN), computations run in the sandbox via
`custom_operation`, and the figure is rendered and exported. Every tool call goes through
`workspace.funnel.call(..., caller="offline")`; `cancel` is checked between steps.
Imports `tools.workspace`, `agents.turn` and this package; never the LLM layer.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, cast

from xhelio.agents.offline.answer import (
    clarification,
    describe_fetch,
    describe_render,
    discovery_text,
    said_unit,
)
from xhelio.agents.offline.derived import understood_with_derived
from xhelio.agents.offline.elsewhere import plan_elsewhere
from xhelio.agents.offline.followup import (
    export_only,
    following,
    is_follow_up,
    is_undo,
    merge,
    probes_not_listed,
    replay,
    without_last_instrument,
)
from xhelio.agents.offline.pipeline_requests import pipeline_reply
from xhelio.agents.offline.plan import OfflinePlan, PlanStep, build_plan
from xhelio.agents.offline.skills import FetchedSeries, skill_reply
from xhelio.agents.turn import AssistantReply
from xhelio.errors import UnknownDatasetError
from xhelio.language.intent import RequestIntent, describe_quantity
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.operations import ToolResult
from xhelio.tools.result import no_usable_result
from xhelio.tools.workspace import Workspace

_SAME_TURN_S = 10.0  # an interpretation is reused within a turn, never across turns
# A request read against the session: its intent, its plan, whether it follows up.
Interpretation = tuple[RequestIntent, OfflinePlan, bool]

__all__ = ["OfflineAssistant", "StepRun"]

_CALLER = "offline"
_PLACEHOLDER = re.compile(r"^\{(\w+)\}$")
_UNREACHABLE = "ServerUnreachableError"


@dataclass
class StepRun:
    """What executing a plan has produced so far."""

    refs: dict[str, str] = field(default_factory=dict[str, str])
    vector: dict[str, bool] = field(default_factory=dict[str, bool])
    lines: list[str] = field(default_factory=list[str])
    shown: list[str] = field(default_factory=list[str])
    """What the figure shows: said first, it is the answer's short answer."""
    problems: list[str] = field(default_factory=list[str])
    fetched: int = 0
    unreachable: str | None = None

    def fill(self, value: Any) -> Any:
        """Replace `{ref}` placeholders (whole strings only) with the labels they stand for."""
        if isinstance(value, str):
            match = _PLACEHOLDER.match(value)
            return self.refs.get(match[1], value) if match else value
        if isinstance(value, list):
            return [self.fill(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
        return value


def _ref_of(trace: dict[str, Any]) -> str:
    match = _PLACEHOLDER.match(str(trace.get("data_label", "")))
    return match[1] if match else ""


def _names(traces: list[dict[str, Any]]) -> str:
    return ", ".join(dict.fromkeys(str(t.get("name", "")) for t in traces))


def _retitled(
    layout: dict[str, Any], planned: list[dict[str, Any]], drawn: list[dict[str, Any]]
) -> dict[str, Any]:
    """A plan-made title names only the series drawn, never one that could not be fetched."""
    title: dict[str, Any] = layout.get("title") or {}
    text = title.get("text")
    planned_names = _names(planned)
    if not isinstance(text, str) or not text.startswith(planned_names):
        return layout  # the user's own title stays as written
    return {**layout, "title": {**title, "text": _names(drawn) + text[len(planned_names) :]}}


def _unreachable(result: ToolResult) -> str | None:
    """The message of a fetch that could not reach the data server at all, else None."""
    if not result.ok and result.error_type == _UNREACHABLE:
        return result.error or "the data server could not be reached"
    return None


def _unusable(result: ToolResult) -> str | None:
    """Why a fetch result cannot be used, or None when it can."""
    if not result.ok:
        return f"{result.error_type}: {result.error}"
    return no_usable_result(result)


def _label(result: ToolResult) -> str:
    """The label a fetch or computation stored its result under."""
    return str(result.payload.get("label") or (result.labels[0] if result.labels else ""))


def _columns(result: ToolResult) -> int:
    """How many columns (components) a stored series has.

    An analysis method's count of time columns (a dynamic spectrum's) is no components.
    """
    columns = result.payload.get("columns")
    return len(cast("list[Any]", columns)) if isinstance(columns, list) else 1


class OfflineAssistant:
    """The no-API-key assistant: a deterministic interpreter driving the same tools."""

    name = "offline"

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._vocab: Vocabulary | None = None
        # The last interpretation, keyed by request and history length: a turn reads its
        # request twice (the planner asks whether it is multi-step, then it is answered).
        self._last: tuple[tuple[str, int, float], Interpretation] | None = None
        # Each user message of the history read once, keyed by its position and text: a
        # long session does not re-read every earlier request on every turn.
        self._read: dict[tuple[int, str], RequestIntent] = {}

    @property
    def vocab(self) -> Vocabulary:
        """The catalog vocabulary (built on first use)."""
        if self._vocab is None:
            self._vocab = Vocabulary.from_catalog(self.workspace.context.catalog)
        return self._vocab

    def call_tool(self, tool: str, args: dict[str, Any]) -> ToolResult:
        """Run `tool` through the session's funnel as offline mode (traced and logged)."""
        return self.workspace.funnel.call(tool, args, caller=_CALLER)

    def fetch_for(self, text: str) -> FetchedSeries:
        """Fetch the series `text` names, as the ordinary reading plans them; no plot.

        For skills: "Wind magnetic field 2015-03-17 10:15 to 10:25" fetches that field
        and gives its label. Follow-ups are completed from the session like any request.
        """
        _, plan, _ = self.interpret(text)
        run = StepRun()
        fetches = [s for s in plan.steps if s.kind == "fetch"]
        for step in fetches:
            self.execute_step(step, run)
        labels = [run.refs[s.output] for s in fetches if s.output in run.refs]
        problems = [*run.problems]
        if not fetches:
            needed = " and ".join(plan.missing or ("a mission and a quantity",))
            problems.append(f"Not fetched: still need {needed}.")
        return FetchedSeries(labels, run.lines, problems, str(plan.time_range or ""))

    def respond(self, request: str, cancel: threading.Event) -> AssistantReply:
        """Answer `request`: discovery, or plan and run fetch/compute/plot steps."""
        if (said := pipeline_reply(self.workspace, request)) is not None:
            return AssistantReply(said)
        if (reply := skill_reply(self, request)) is not None:
            return reply
        intent = probes_not_listed(self.parse(request), self.session_base() is not None)
        if intent.discovery is not None:
            return self._discover(intent)
        if is_undo(request) and not (undo := self.interpret(request))[1].steps:
            return AssistantReply(" ".join(undo[1].notes), follow_up=True)
        if export_only(intent) and self.workspace.session.plot.current is not None:
            return self._export(intent)
        intent, plan, follow = self.interpret(request, intent)
        if not plan.steps:
            return AssistantReply(
                clarification(intent, plan.missing or ("a mission and a quantity",), plan.notes),
                clarification=True,
                follow_up=follow,
            )
        run = StepRun()
        for number, step in enumerate(plan.steps, start=1):
            if cancel.is_set():
                run.problems.append(
                    f"Cancelled after {number - 1} of {len(plan.steps)} steps; "
                    "what is listed above was done."
                )
                break
            self.execute_step(step, run)
        # `plan` stays None: the interpretation is in the answer; only the planner's
        # records go into `plan` (ask --json).
        return AssistantReply(
            self._summary(intent, plan, run), error=_failure(plan, run), follow_up=follow
        )

    def interpret(self, request: str, intent: RequestIntent | None = None) -> Interpretation:
        """The request read against the session, its plan, and whether it follows up.

        A follow-up is completed from the last request. The offline planner uses this
        too, so planned and direct answers read a request the same way. `intent`, when
        given, is `request` parsed.
        """
        key = (request, len(self.workspace.session.history), time.monotonic() // _SAME_TURN_S)
        if self._last is not None and self._last[0] == key:
            return self._last[1]  # the same turn: the same reading ("last week" included)
        if is_undo(request):
            self._last = (key, self._undo(request))
            return self._last[1]
        intent = intent or self.parse(request)
        base = self.session_base()
        if base is not None:
            intent = following(base, intent, self.vocab.probes)
        follow = base is not None and is_follow_up(intent, True)
        kept: list[str] = []
        if base is not None and follow:
            intent, kept = merge(base, intent)
        plan = build_plan(self.vocab, intent)
        if base is not None and follow and not plan.steps:
            # The earlier text read afresh: a replayed state's slots are its last turn's.
            loose = without_last_instrument(intent, self.parse(base.text))
            if loose is not None and (wider := build_plan(self.vocab, loose[0])).steps:
                intent, plan, kept = loose[0], wider, [*kept, loose[1]]
        if not plan.steps and not intent.discovery:
            plan = plan_elsewhere(intent, self.call_tool, self._in_catalog) or plan
        interpretation = (intent, replace(plan, notes=(*kept, *plan.notes)), follow)
        self._last = (key, interpretation)
        return interpretation

    def _in_catalog(self, dataset_id: str) -> bool:
        try:
            self.vocab.catalog.dataset(dataset_id)
        except UnknownDatasetError:
            return False
        return True

    def _export(self, intent: RequestIntent) -> AssistantReply:
        """Export the figure on screen as it is (nothing fetched or drawn again)."""
        args: dict[str, Any] = {"action": "export", "format": intent.plot.export_format}
        if intent.plot.export_filename:
            args["filename"] = intent.plot.export_filename
        result = self.call_tool("manage_plot", args)
        if not result.ok:
            message = f"The export failed: {result.error}"
            return AssistantReply(message, error=message, follow_up=True)
        return AssistantReply(
            f"Exported the current figure as {intent.plot.export_format}: "
            f"{result.payload.get('path')}.",
            follow_up=True,
        )

    def session_base(self) -> RequestIntent | None:
        """The request behind the session's current data, or None."""
        states = self.session_states()
        return states[-1][1] if states else None

    def session_states(self) -> list[tuple[str, RequestIntent]]:
        """The states the session's requests built, oldest first (undos taken off).

        Earlier user requests are replayed (follow-ups folded in), from memory in the REPL
        or the history a resumed session loaded. The last history entry is the request
        being answered, so it is left out.
        """
        history = self.workspace.session.history
        users = [
            (position, str(m.get("content", "")))
            for position, m in enumerate(history[:-1])
            if m.get("role") == "user"
        ]
        said = [(text, self._message_intent(position, text)) for position, text in users]
        return replay(said, self.vocab.probes)

    def parse(self, request: str) -> RequestIntent:
        """`request` read into an intent; a message of the session is read only once.

        The request being answered keeps its reading with its place in the history, so
        later turns replay it as it was understood ("last week" stays the week it meant)
        without reading it again: a turn costs the same on the 30th request as on the 1st.
        """
        history = self.workspace.session.history
        last = history[-1] if history else {}
        if last.get("role") == "user" and last.get("content") == request:
            return self._message_intent(len(history) - 1, request)
        return parse_request(request, self.vocab)  # not a message of this session

    def _message_intent(self, position: int, text: str) -> RequestIntent:
        key = (position, text)
        if key not in self._read:
            history = self.workspace.session.history
            # Readings of messages no longer in the history (a new or loaded one) go.
            self._read = {
                (p, t): intent
                for (p, t), intent in self._read.items()
                if p < len(history) and history[p].get("content") == t
            }
            self._read[key] = parse_request(text, self.vocab)
        return self._read[key]

    def _undo(self, request: str) -> Interpretation:
        """The state before the last change, its plan, and a note saying what was undone."""
        states = self.session_states()
        if len(states) < 2:
            last = f": '{states[-1][0]}' is the first request shown" if states else ""
            intent = self.parse(request)
            return intent, OfflinePlan(intent, notes=(f"Nothing to undo{last}.",)), True
        (undone, _), (shown, intent) = states[-1], states[-2]
        plan = build_plan(self.vocab, intent)
        note = f"Undid '{undone}': back to what '{shown}' showed."
        return intent, replace(plan, notes=(note, *plan.notes)), True

    # steps ---------------------------------------------------------------------------

    def execute_step(self, step: PlanStep, run: StepRun) -> None:
        """Run one plan step, recording labels, lines and problems in `run`."""
        missing = [r for r in step.inputs if r not in run.refs]
        if step.kind != "plot" and missing:
            run.problems.append(f"Skipped: {step.description} (its input is not available).")
            return
        if step.kind == "fetch":
            self._fetch(step, run)
        elif step.kind == "compute":
            self._compute(step, run)
        elif step.kind == "plot":
            self._plot(step, run)
        else:
            self._simple(step, run)

    def _fetch(self, step: PlanStep, run: StepRun) -> None:
        if run.unreachable is not None:
            run.problems.append(f"Not fetched: {step.series} (the data server is unreachable).")
            return
        skipped: list[str] = []
        for call in step.calls:
            result = self.call_tool(call.tool, call.args)
            down = _unreachable(result)
            if down is not None:
                # Another candidate on the same server cannot do better: stop at once.
                run.unreachable = down
                run.problems.append(f"Could not get {step.series}: {down}")
                return
            why = _unusable(result)
            dataset = call.args["dataset_id"]
            if why is not None:
                skipped.append(f"{dataset}.{call.args['parameter_id']} ({why})")
                continue
            assert step.output is not None
            run.refs[step.output] = _label(result)
            run.vector[step.output] = _columns(result) > 1
            run.fetched += 1
            run.lines.append(describe_fetch(step.series, result.payload))
            if skipped:
                run.lines.append(
                    f"Used {dataset} because earlier candidates were skipped: {'; '.join(skipped)}."
                )
            run.lines.extend(str(n) for n in result.payload.get("notes") or [])
            return
        run.problems.append(
            f"Could not get {step.series}: every candidate failed: {'; '.join(skipped)}."
        )

    def _compute(self, step: PlanStep, run: StepRun) -> None:
        assert step.output is not None
        source = step.inputs[0]
        if step.only_if_vector and not run.vector.get(source, False):
            run.refs[step.output] = run.refs[source]
            run.vector[step.output] = False
            run.lines.append(f"{run.refs[source]} is already a single series; used it as it is.")
            return
        call = step.calls[0]
        result = self.call_tool(call.tool, run.fill(call.args))
        if not result.ok:
            run.problems.append(f"{step.description} failed: {result.error}")
            return
        label = _label(result)
        run.refs[step.output] = label
        run.vector[step.output] = _columns(result) > 1
        if result.payload.get("method"):  # an analysis method: its numbers (a lag, a PSD)
            stored = ", ".join(str(s) for s in result.payload.get("stored") or [])
            run.lines.append(
                f"Computed the {step.description}: {result.payload.get('answer')}"
                + (f" Stored as {stored}." if stored else "")
            )
            return
        said = " ".join(str(result.payload.get("stdout") or "").split())
        if said:  # what the code says of its result (the values of statistics)
            run.lines.append(f"Computed {label}, the {step.description}: {said}")
            return
        units = result.payload.get("units") or {}
        unit = said_unit(str(next(iter(units.values()), ""))) if isinstance(units, dict) else ""
        run.lines.append(
            f"Computed {label}: {step.description} ({result.payload.get('points')} points"
            + (f", {unit}" if unit else "")
            + ")."
        )
        run.lines.extend(str(n) for n in result.payload.get("notes") or [])

    def _plot(self, step: PlanStep, run: StepRun) -> None:
        figure: dict[str, Any] = dict(step.calls[0].args["figure"])
        traces = [t for t in figure["data"] if _ref_of(t) in run.refs]
        if not traces:
            run.problems.append("Nothing to plot: no series could be fetched.")
            return
        if len(traces) < len(figure["data"]):
            figure["layout"] = _retitled(figure["layout"], figure["data"], traces)
        # A vector expands into one trace per component, named by the renderer after
        # its columns; one shared name would hide which line is which. The answer still
        # names the series the components belong to.
        series = {
            str(run.fill(t["data_label"])): str(t["name"])
            for t in traces
            if run.vector.get(_ref_of(t)) and t.get("name")
        }
        traces = [
            {k: v for k, v in t.items() if k != "name" or not run.vector.get(_ref_of(t))}
            for t in traces
        ]
        figure = {**figure, "data": run.fill(traces)}
        result = self.call_tool("render_plotly_json", {"figure": figure})
        if not result.ok:
            run.problems.append(f"The plot failed: {result.error}")
            return
        run.shown.append(describe_render(result.payload, series))
        run.lines.extend(str(n) for n in result.payload.get("notes") or [])

    def _simple(self, step: PlanStep, run: StepRun) -> None:
        call = step.calls[0]
        result = self.call_tool(call.tool, run.fill(call.args))
        if not result.ok:
            run.problems.append(f"{step.description} failed: {result.error}")
        else:
            run.lines.append(f"{step.description}: saved to {result.payload.get('path')}.")

    # answers -------------------------------------------------------------------------

    def _summary(self, intent: RequestIntent, plan: OfflinePlan, run: StepRun) -> str:
        parts = [f"Offline mode understood: {'; '.join(understood_with_derived(intent))}."]
        if plan.time_range is not None:
            parts.append(f"Time range: {plan.time_range.readable()}.")
        parts.extend(run.shown)
        parts.extend(run.lines)
        parts.extend(plan.notes)
        parts.extend(run.problems)
        if plan.missing:
            parts.append(f"Not done: still need {' and '.join(plan.missing)}.")
        return "\n".join(parts)

    def _discover(self, intent: RequestIntent) -> AssistantReply:
        wish = intent.discovery
        assert wish is not None
        mission = intent.missions[0] if intent.missions else None
        if wish.kind == "missions":
            subject, result = "missions", self.call_tool("list_missions", {})
        elif wish.kind in ("parameters", "availability") and intent.dataset_ids:
            tool = "list_parameters" if wish.kind == "parameters" else "get_data_availability"
            subject = intent.dataset_ids[0]
            result = self.call_tool(tool, {"dataset_id": subject})
        elif wish.kind == "browse" and mission is not None:
            subject = mission.name
            result = self.call_tool("browse_datasets", {"mission": mission.mission_id})
        else:
            words = [describe_quantity(q) for q in intent.quantities] or [
                _search_words(intent.text)
            ]
            subject = " ".join(words)
            args: dict[str, Any] = {"query": subject, "limit": 10}
            if mission is not None:
                args["mission"] = mission.mission_id
                subject = f"{subject} ({mission.name})"
            result = self.call_tool("search_datasets", args)
        return AssistantReply(discovery_text(wish.kind, subject, result.to_dict()))


def _failure(plan: OfflinePlan, run: StepRun) -> str | None:
    """The error of a request that produced nothing: no fetch succeeded (None otherwise)."""
    fetches = sum(1 for s in plan.steps if s.kind == "fetch")
    if not fetches or run.fetched:
        return None
    if run.unreachable is not None:
        return f"The data server could not be reached, so nothing was fetched: {run.unreachable}"
    return "Nothing could be fetched: " + " ".join(run.problems[:2])


_FILLER = re.compile(
    r"\b(?:search|find|look(?:ing)? for|look up|locate|list|show|me|for|the|a|an|all|any|"
    r"datasets?|data sets?|data|please|what|which|are|there|with|about|of|on|is|do|you|have|"
    r"missions?|spacecraft)\b",
    re.I,
)


def _search_words(text: str) -> str:
    """The content words of a search request ("search for ion composition datasets")."""
    words = " ".join(_FILLER.sub(" ", text).split()).strip(" ?.!,")
    return words or text
