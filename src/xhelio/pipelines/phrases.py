"""Pipeline requests in plain words, for offline mode (no model).

`pipeline_reply(workspace, text)` answers "save this as a pipeline called NAME", "run NAME
for March 2001", "list my pipelines", "search pipelines for X" and "delete NAME" through
the pipeline tools (so they are recorded like any call), and returns None for anything
else, so the offline assistant can try it first at no cost. "run"/"delete" only claim a
request when NAME is a saved pipeline or the word "pipeline" is said: "delete the plot"
stays with the offline interpreter.
"""

from __future__ import annotations

import re
from typing import Any

from xhelio.errors import UserError
from xhelio.pipelines.store import PipelineStore
from xhelio.tools.workspace import Workspace

__all__ = ["pipeline_reply"]

_CALLER = "offline"
_QUOTES = " \"'\u201c\u201d\u2018\u2019.!?"
_SAVE = re.compile(
    r"^(?:please\s+|now\s+|and\s+|can\s+you\s+|could\s+you\s+)*(?:save|store|keep)\s+"
    r"(?:this|it|that|the\s+\w+)?\s*(?:analysis\s+|plot\s+|plan\s+|figure\s+|workflow\s+)?"
    r"as\s+(?:a\s+|my\s+|the\s+)?(?:new\s+)?pipeline\s*(?:called|named|:)?\s+(?P<name>.+)$"
    r"|^(?:please\s+)?save\s+(?:this|it|that)\s+pipeline\s+as\s+(?P<name2>.+)$",
    re.IGNORECASE,
)
_LIST = re.compile(
    r"^(?:please\s+|can\s+you\s+)?(?:list|show|what\s+are)(?:\s+me)?(?:\s+all)?"
    r"(?:\s+(?:my|the))?(?:\s+saved)?\s+"
    r"pipelines\W*$|^what\s+pipelines\s+(?:do\s+i\s+have|are\s+there)\W*$",
    re.IGNORECASE,
)
_SEARCH = re.compile(
    r"^(?:search|find)\s+(?:my\s+)?pipelines\s+(?:for|about|with)\s+(?P<q>.+)$", re.IGNORECASE
)
_RUN = re.compile(r"^(?:please\s+)?(?:run|replay|re-?run)\s+(?P<rest>.+)$", re.IGNORECASE)
_DELETE = re.compile(r"^(?:please\s+)?(?:delete|remove|forget)\s+(?P<rest>.+)$", re.IGNORECASE)
_LEAD = re.compile(r"^(?:my|the)\s+(?:saved\s+)?(?:pipeline\s+)?|^pipeline\s+", re.IGNORECASE)
_TRAIL = re.compile(r"\s+pipeline$", re.IGNORECASE)
_CONNECTOR = re.compile(
    r"\s+(?:for|over|on|in|during|from|covering|with\s+(?:the\s+)?time\s+range)\s+",
    re.IGNORECASE,
)
_CHANGE = re.compile(r"\b(?:instead|but\s+with|but\s+use|with\s+red|swap)\b", re.IGNORECASE)


def _name(text: str) -> str:
    text = _LEAD.sub("", text.strip().strip(_QUOTES))
    return _TRAIL.sub("", text).strip().strip(_QUOTES)


def _call(workspace: Workspace, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return workspace.funnel.call(tool, args, caller=_CALLER)


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
        f"\n\nSaved time range {default} is its $TIME_RANGE; run it for another range with "
        f'"run {name} for March 2001".'
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


def pipeline_reply(workspace: Workspace, text: str) -> str | None:
    """Answer a pipeline request in plain words, or None when `text` is not one."""
    text = " ".join(text.split())
    if m := _SAVE.match(text):
        # "save the plan as a pipeline": only what the last request (the plan) did
        scope = (
            "last_request"
            if re.search(
                r"\bplan\b",
                text[: m.start("name") if m.group("name") else m.start("name2")],
                re.IGNORECASE,
            )
            else "session"
        )
        return _save(workspace, _name(m.group("name") or m.group("name2")), scope)
    if _LIST.match(text):
        return _list(workspace)
    if m := _SEARCH.match(text):
        return _search(workspace, m.group("q").strip(_QUOTES))
    store = PipelineStore(workspace.context.settings)
    said_pipeline = re.search(r"\bpipeline\b", text, re.IGNORECASE) is not None
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
