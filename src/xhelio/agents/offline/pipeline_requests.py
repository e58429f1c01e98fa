"""Pipeline requests in plain words, for offline mode (no model).

`pipeline_reply(workspace, text)` answers "save this as a pipeline called NAME" (or "make
this a pipeline named NAME"), "run NAME for March 2001" (or "between A and B"), "list my
pipelines", "search pipelines for X" / "find my ACE pipelines", "delete NAME" and "show the
pipeline" (this session's DAG) through the pipeline tools (so they are recorded like any
call); "export NAME as a notebook" (into the session's export folder) and "show the NAME
pipeline" read the store. It returns None for anything else, so the offline assistant can
try it first at no cost. "run"/"delete"/"export" only claim a request when NAME is a
saved pipeline or the word "pipeline" is said: "delete the plot" and "export the plot as
PNG" stay with the offline interpreter.
"""

from __future__ import annotations

import re
from typing import Any

from xhelio.errors import UserError, XhelioError
from xhelio.pipelines.export import Format, export_file_name, write_export
from xhelio.pipelines.store import PipelineStore
from xhelio.timerange import readable_text
from xhelio.tools.workspace import Workspace

__all__ = ["pipeline_reply"]

_CALLER = "offline"
_QUOTES = " \"'\u201c\u201d\u2018\u2019.!?"
_POLITE = r"^(?:please\s+|now\s+|and\s+|then\s+|can\s+you\s+|could\s+you\s+)*"
_WHAT = r"(?:(?:this|it|that|the|my)\s+)?(?:\w+\s+)?"  # "this", "the plan", "my analysis"
_SAVE = re.compile(
    # "save this (analysis) as a pipeline called NAME", "save as pipeline NAME"
    _POLITE + r"(?:save|store|keep)\s+" + _WHAT + r"as\s+(?:a\s+|my\s+|the\s+)?(?:new\s+)?"
    r"pipeline\s*(?:called|named|:)?\s+(?P<name>.+)$"
    # "save this pipeline as NAME", "save the plan pipeline as NAME"
    r"|" + _POLITE + r"(?:save|store|keep)\s+" + _WHAT + r"pipeline\s+as\s+(?P<name2>.+)$"
    # "make this a pipeline called NAME", "turn the plan into a pipeline named NAME",
    # "create a pipeline called NAME (from this)", "save a pipeline called NAME"
    r"|"
    + _POLITE
    + r"(?:make|turn|create|build|save|convert)\s+"
    + _WHAT
    + r"(?:into\s+)?(?:a|a\s+new|new)\s+pipeline\s+(?:called|named|:)\s*(?P<name3>.+?)"
    r"(?:\s+(?:from|of|out\s+of)\s+(?:this|it|that|the\s+\w+))?$",
    re.IGNORECASE,
)
_LIST = re.compile(
    _POLITE + r"(?:list|show|display|what\s+are)(?:\s+me)?(?:\s+all)?(?:\s+(?:my|the|of\s+my))?"
    r"(?:\s+saved)?\s+pipelines\W*$"
    r"|^(?:what|which)\s+pipelines\s+(?:do\s+i\s+have|are\s+there|are\s+saved|have\s+i\s+"
    r"(?:saved|got|made))\W*$|^(?:my\s+)?(?:saved\s+)?pipelines\W*$|^my\s+pipelines\W*$",
    re.IGNORECASE,
)
_SEARCH = re.compile(
    _POLITE + r"(?:search|find|look\s+for)\s+(?:for\s+)?(?:my\s+|the\s+|saved\s+)*pipelines?\s+"
    r"(?:for|about|with|on|using|mentioning|that\s+use)\s+(?P<q>.+)$"
    r"|" + _POLITE + r"(?:search|find|look\s+for|show(?:\s+me)?|list)\s+(?:for\s+)?"
    r"(?:my\s+|all\s+|the\s+|saved\s+)*"
    r"(?P<q2>.+?)\s+pipelines\W*$",
    re.IGNORECASE,
)
_RUN = re.compile(
    _POLITE + r"(?:run|replay|re-?run|execute|apply|redo)\s+(?P<rest>.+)$", re.IGNORECASE
)
_DELETE = re.compile(_POLITE + r"(?:delete|remove|forget)\s+(?P<rest>.+)$", re.IGNORECASE)
_EXPORT = re.compile(
    _POLITE + r"(?:export|write|save)\s+(?P<rest>.+?)\s+(?:as|to|into)\s+(?:an?\s+)?"
    r"(?P<fmt>(?:python\s+|standalone\s+)?script|\.?py|python|(?:jupyter\s+)?notebook|\.?ipynb)"
    r"(?:\s+file)?\W*$",
    re.IGNORECASE,
)
_SHOW = re.compile(
    _POLITE + r"(?:show|describe|explain|display|what\s+(?:is\s+in|does))\s+(?:me\s+)?"
    r"(?P<rest>.*\bpipeline\b.*?)(?:\s+do)?$",
    re.IGNORECASE,
)
_LEAD = re.compile(r"^(?:my|the)\s+(?:saved\s+)?(?:pipeline\s+)?|^pipeline\s+", re.IGNORECASE)
_TRAIL = re.compile(r"\s+pipeline$", re.IGNORECASE)
# "between" and "from" stay with the time ("between A and B" is a range); the others go
_CONNECTOR = re.compile(
    r"\s+(?:(?:for|over|on|in|to|during|covering|with\s+(?:the\s+)?time\s+range)\s+"
    r"|(?=(?:from|between)\s+))",
    re.IGNORECASE,
)
_CHANGE = re.compile(r"\b(?:instead|but\s+with|but\s+use|with\s+red|swap)\b", re.IGNORECASE)


def _name(text: str) -> str:
    text = _LEAD.sub("", text.strip().strip(_QUOTES))
    return _TRAIL.sub("", text).strip().strip(_QUOTES)


def _call(workspace: Workspace, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return workspace.funnel.call(tool, args, caller=_CALLER).to_dict()


def _failed(result: dict[str, Any]) -> str | None:
    if result.get("status") == "error":
        return str(result.get("message"))
    return None


def _known(store: PipelineStore, name: str) -> bool:
    try:
        store.resolve(name)
    except UserError:
        return False
    return True


def _split_run(store: PipelineStore, rest: str) -> tuple[str, str | None] | None:
    """(name, time) for the first reading whose name is a saved pipeline."""
    readings: list[tuple[str, str | None]] = [(_name(rest), None)]
    for m in _CONNECTOR.finditer(rest):
        readings.append((_name(rest[: m.start()]), rest[m.end() :].strip().strip(_QUOTES)))
    for name, when in readings:
        if name and _known(store, name):
            return name, when
    return None


def _save(workspace: Workspace, name: str, scope: str = "session") -> str:
    result = _call(workspace, "save_pipeline", {"name": name, "scope": scope})
    if (problem := _failed(result)) is not None:
        return f"Could not save the pipeline: {problem}"
    steps = "\n".join(f"- {s}" for s in result.get("step_list", []))
    default = (result.get("variables") or {}).get("$TIME_RANGE", {}).get("default")
    when = (
        f"\n\nSaved time range {readable_text(default)} is its $TIME_RANGE; run it for "
        f'another range with "run {name} for March 2001".'
        if default
        else ""
    )
    family = result.get("family_size", 1)
    same = (
        f"\n\nIt joins a family of {family} variants with the same data steps."
        if family > 1
        else ""
    )
    note = f"\n\n{result['note']}" if result.get("note") else ""
    count = len(result.get("step_list", []))
    head = f"Saved pipeline '{result['name']}' ({result['id']}) with {count} steps:"
    return f"{head}\n{steps}{when}{same}{note}"


def _list(workspace: Workspace) -> str:
    result = _call(workspace, "list_pipelines", {})
    rows = result.get("pipelines") or []
    if not rows:
        return (
            "You have no saved pipelines yet. Make a figure, then say "
            '"save this as a pipeline called NAME".'
        )
    lines = [f"- {r['name']} ({r['id']}): {r['description']}" for r in rows]
    return f"Saved pipelines ({len(rows)}):\n" + "\n".join(lines)


def _search(workspace: Workspace, query: str) -> str:
    result = _call(workspace, "search_pipelines", {"query": query})
    families = result.get("families") or []
    if not families:
        return f"No saved pipeline matches '{query}'."
    lines: list[str] = []
    for fam in families:
        lines.append(
            f"- {fam['name']}: {len(fam['variant_ids'])} variant(s) {', '.join(fam['variant_ids'])}"
        )
    return "Matching pipeline families:\n" + "\n".join(lines)


def _run(workspace: Workspace, name: str, when: str | None, text: str) -> str:
    if _CHANGE.search(text):
        return (
            f"Changing the steps of '{name}' (another spacecraft, other styling) needs a language "
            "model; offline mode replays pipelines exactly as saved. Configure a model, or ask "
            f'"run {name} for <time range>".'
        )
    args: dict[str, Any] = {"pipeline": name}
    if when:
        args["time_range"] = when
    result = _call(workspace, "run_pipeline", args)
    if result.get("summary"):
        return str(result["summary"])
    return f"Could not run the pipeline: {_failed(result)}"


def _delete(workspace: Workspace, name: str) -> str:
    result = _call(workspace, "delete_pipeline", {"pipeline": name})
    if (problem := _failed(result)) is not None:
        return f"Could not delete: {problem}"
    return f"Deleted pipeline '{result['name']}' ({result['deleted']})."


def _export(workspace: Workspace, name: str, fmt_word: str) -> str:
    fmt: Format = "ipynb" if re.search(r"notebook|ipynb", fmt_word, re.IGNORECASE) else "py"
    settings = workspace.context.settings
    try:
        saved = PipelineStore(settings).load(name)
        # only into this session's export folder: a phrase never picks a path on disk
        folder = workspace.session.folder / "exports"
        path, citations = write_export(saved, fmt, folder / export_file_name(saved, fmt), settings)
    except XhelioError as exc:
        return f"Could not export: {exc.message}"
    kind = "notebook" if fmt == "ipynb" else "script"
    run = (
        f'python {path.name} --time-range "March 2001" --out results'
        if fmt == "py"
        else "open it in Jupyter and change TIME_RANGE in the first code cell"
    )
    cites = "\n".join(f"- {c.line()}" for c in citations)
    return (
        f"Exported '{saved.name}' as a {kind}: {path}\nIt needs only xhelio installed; {run}."
        f"\n\nData citations in its header:\n{cites}"
    )


def _live(workspace: Workspace) -> str:
    result = _call(workspace, "get_pipeline_info", {})
    if (problem := _failed(result)) is not None:
        return problem
    lines = ["This session's pipeline:", ""]
    for n in result.get("nodes") or []:
        deps = f" after {', '.join(n['depends_on'])}" if n.get("depends_on") else ""
        lines.append(f"- {n['node_id']} {n['tool']}{deps} [{n['status']}]: {n['intent']}")
    lines += ["", 'Keep it with "save this as a pipeline called NAME".']
    return "\n".join(lines)


def _show(store: PipelineStore, name: str) -> str:
    try:
        saved = store.load(name)
    except XhelioError as exc:
        return exc.message
    lines = [f"Pipeline '{saved.name}' ({saved.id}): {saved.description}", ""]
    for var_name, var in saved.variables.items():
        lines += [
            f"{var_name} = {readable_text(var.default)} (give another range when you run it)",
            "",
        ]
    for s in saved.steps:
        deps = f" after {', '.join(s.depends_on)}" if s.depends_on else ""
        flag = "" if s.critical else " (non-critical)"
        lines.append(f"- {s.step_id} {s.tool}{deps}{flag}: {s.intent}")
    family = store.family(store.row(saved.id).family_id)
    if len(family) > 1:
        names = ", ".join(f"{r.name} ({r.id})" for r in family)
        lines += ["", f"Variants with the same data steps: {names}"]
    return "\n".join(lines)


def _save_scope(text: str, m: re.Match[str]) -> str:
    """'last_request' when the words before the name speak of the plan, else 'session'."""
    name_at = min(m.start(g) for g in ("name", "name2", "name3") if m.group(g) is not None)
    # "save the plan as a pipeline": only what the last request (the plan) did
    return "last_request" if re.search(r"\bplan\b", text[:name_at], re.IGNORECASE) else "session"


def pipeline_reply(workspace: Workspace, text: str) -> str | None:
    """Answer a pipeline request in plain words, or None when `text` is not one."""
    text = " ".join(text.split()).rstrip(" .!?")
    if m := _SAVE.match(text):
        name = m.group("name") or m.group("name2") or m.group("name3") or ""
        return _save(workspace, _name(name), _save_scope(text, m))
    if _LIST.match(text):
        return _list(workspace)
    if m := _SEARCH.match(text):
        return _search(workspace, (m.group("q") or m.group("q2") or "").strip(_QUOTES))
    store = PipelineStore(workspace.context.settings)
    said_pipeline = re.search(r"\bpipeline\b", text, re.IGNORECASE) is not None
    if m := _EXPORT.match(text):
        name = _name(m.group("rest"))
        if _known(store, name) or said_pipeline:
            return _export(workspace, name, m.group("fmt"))
        return None
    if m := _SHOW.match(text):
        name = _name(m.group("rest"))
        if re.fullmatch(r"(?:(?:this|current|session|the)\s*)*(?:pipeline)?", name, re.I):
            return _live(workspace)  # "show the pipeline": this session's DAG
        return _show(store, name)
    if m := _RUN.match(text):
        found = _split_run(store, m.group("rest"))
        if found is not None:
            return _run(workspace, found[0], found[1], text)
        if said_pipeline:
            return _run(workspace, _name(_CONNECTOR.split(m.group("rest"))[0]), None, text)
        return None
    if m := _DELETE.match(text):
        name = _name(m.group("rest"))
        if _known(store, name) or said_pipeline:
            return _delete(workspace, name)
    return None
