"""The live DAG of the current session: inspect, modify, re-run only what changed.

Built on demand from the session's operations log (the same extraction as saved
pipelines, without `$TIME_RANGE`) and cached as JSON in `session.meta`, so it survives a
restart. Nodes are data artifacts and figure steps. A modification marks the node `dirty`
and every descendant `stale`; nothing recomputes until `execute` (lazy staleness). During
`execute` a node runs when it is dirty or a parent's output changed; a node whose output
hash is unchanged does not make its descendants run (backdating), and stale nodes none
of whose parents changed are marked done without running. Calls go through the funnel
with caller "pipeline"; new data or figure calls by other callers (a new request)
rebuild the DAG from the log, keeping the stale marks of nodes that still exist (their
pending argument edits are dropped: the new request superseded them).
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, cast

import pandas as pd
from pandas.util import hash_pandas_object

from xhelio.errors import UserError
from xhelio.operations import Operation, ToolCaller
from xhelio.pipelines.extract import extract_pipeline
from xhelio.pipelines.model import PipelineStep
from xhelio.pipelines.replay import CALLER
from xhelio.sandbox.ops_library import OpsLibrary, normalize_description, served_form
from xhelio.session.state import Session

__all__ = ["META_KEY", "LiveDag", "load_dag", "save_dag"]

META_KEY = "pipeline_dag"
_DAG_PHASES = frozenset({"fetch", "compute", "render", "export"})


def _canonical(code: str) -> str:
    """Code without comments or layout: the library keeps reviewed code in this form."""
    try:
        return ast.unparse(ast.parse(code))
    except SyntaxError:
        return " ".join(code.split())


def _output_hash(session: Session, step: PipelineStep, result: dict[str, Any]) -> str:
    """A fingerprint of what a step made: its labels' data, else its result summary."""
    digest = hashlib.sha256()
    for label in step.produces:
        if not session.store.has(label):
            continue
        data = session.store.get(label).data
        if isinstance(data, pd.DataFrame):
            hashed = cast(pd.Series, hash_pandas_object(data, index=True))  # pyright: ignore[reportCallIssue]
            digest.update(hashed.to_numpy().tobytes())
            digest.update(json.dumps([str(c) for c in data.columns]).encode())
        else:
            digest.update(data.to_numpy().tobytes())
    if not step.produces:
        digest.update(json.dumps(result, sort_keys=True, default=str).encode())
    return digest.hexdigest()


@dataclass
class LiveDag:
    """The session's DAG: nodes in dependency order, their state and output hashes."""

    nodes: list[PipelineStep]
    status: dict[str, str] = field(default_factory=dict[str, str])
    hashes: dict[str, str] = field(default_factory=dict[str, str])
    ops_seen: int = 0

    def node(self, node_id: str) -> PipelineStep:
        """The node with this id.

        Raises:
            UserError: no such node.
        """
        for n in self.nodes:
            if n.step_id == node_id:
                return n
        known = ", ".join(n.step_id for n in self.nodes) or "none"
        raise UserError(f"The session pipeline has no node {node_id!r}; its nodes are {known}.")

    def children(self, node_id: str) -> list[PipelineStep]:
        """Nodes that depend directly on `node_id`."""
        return [n for n in self.nodes if node_id in n.depends_on]

    def descendants(self, node_id: str) -> list[str]:
        """Ids of every node downstream of `node_id`, in order."""
        found: set[str] = {node_id}
        out: list[str] = []
        for n in self.nodes:
            if any(d in found for d in n.depends_on):
                found.add(n.step_id)
                out.append(n.step_id)
        return out

    def _dirty(self, node_id: str) -> list[str]:
        self.status[node_id] = "dirty"
        stale = self.descendants(node_id)
        for d in stale:
            if self.status.get(d) != "dirty":
                self.status[d] = "stale"
        return stale

    # -- inspection ----------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """Compact view: one line per node."""
        return {
            "nodes": [
                {
                    "node_id": n.step_id,
                    "tool": n.tool,
                    "phase": n.phase,
                    "produces": n.produces,
                    "depends_on": n.depends_on,
                    "status": self.status.get(n.step_id, "done"),
                    "intent": n.intent,
                }
                for n in self.nodes
            ]
        }

    def detail(self, node_id: str, library: OpsLibrary | None) -> dict[str, Any]:
        """One node in full (arguments with code), plus matching ops-library entries."""
        n = self.node(node_id)
        info: dict[str, Any] = {
            **n.to_dict(),
            "node_id": n.step_id,
            "status": self.status.get(n.step_id, "done"),
            "children": [c.step_id for c in self.children(node_id)],
        }
        if library is not None and "code" in n.args:
            code = _canonical(served_form(str(n.args.get("code", ""))))
            wanted = normalize_description(str(n.args.get("description", "")))
            info["library_matches"] = [
                {
                    "id": e.id,
                    "description": e.description,
                    "use_count": e.use_count,
                    "same_code": _canonical(e.code) == code,
                }
                for e in library.top(200)
                if _canonical(e.code) == code
                or (wanted and normalize_description(e.description) == wanted)
            ]
        return info

    # -- modification --------------------------------------------------------------------

    def update_params(self, node_id: str, params: dict[str, Any]) -> list[str]:
        """Change some arguments of a node; return the ids now stale."""
        n = self.node(node_id)
        if not params:
            raise UserError('update_params needs params, e.g. {"code": "..."}.')
        if "output_label" in params and n.produces:
            raise UserError("Renaming a node's output is not supported; insert a node instead.")
        n.args = {**n.args, **params}
        if params.get("description"):  # "smoothed over 10 min" must not keep saying 30
            n.intent = str(params["description"])
        return self._dirty(node_id)

    def remove(self, node_id: str) -> None:
        """Delete a node nothing depends on."""
        n = self.node(node_id)
        children = self.children(node_id)
        if children:
            ids = ", ".join(c.step_id for c in children)
            raise UserError(f"Cannot remove {node_id}: {ids} use its output. Remove those first.")
        self.nodes.remove(n)
        self.status.pop(node_id, None)
        self.hashes.pop(node_id, None)

    def insert_after(
        self, node_id: str, code: str, output_label: str | None = None, description: str = ""
    ) -> PipelineStep:
        """Insert a computation on `node_id`'s output; its consumers now read the new label."""
        n = self.node(node_id)
        if not n.produces:
            raise UserError(f"{node_id} ({n.tool}) makes no data to compute on.")
        source = n.produces[0]
        used = {p for m in self.nodes for p in m.produces}
        number = len(self.nodes) + 1
        label = output_label or f"{source.replace('.', '_')}_step{number}"
        if label in used:
            raise UserError(f"Label {label!r} already exists; choose another output_label.")
        new_id = f"s{number:03d}"
        while any(m.step_id == new_id for m in self.nodes):
            number += 1
            new_id = f"s{number:03d}"
        step = PipelineStep(
            new_id,
            "custom_operation",
            {
                "source_labels": [source],
                "code": code,
                "output_label": label,
                "description": description or f"Inserted after {node_id}",
            },
            description or f"Inserted computation on {source}",
            [label],
            [node_id],
            tool_phase="compute",
        )
        for child in self.children(node_id):
            child.args = _relabel(child.args, source, label)
            child.depends_on = sorted({*(d for d in child.depends_on if d != node_id), new_id})
        self.nodes.insert(self.nodes.index(n) + 1, step)
        self._dirty(new_id)
        return step

    # -- execution -----------------------------------------------------------------------

    def execute(
        self, session: Session, funnel: ToolCaller, use_cache: bool = True
    ) -> dict[str, Any]:
        """Re-run dirty nodes and those whose inputs changed; backdate the rest."""
        changed: set[str] = set()
        failed: set[str] = set()
        ran: list[str] = []
        backdated: list[str] = []
        errors: list[str] = []
        for n in self.nodes:
            state = self.status.get(n.step_id, "done")
            if any(d in failed for d in n.depends_on):
                failed.add(n.step_id)
                continue
            must = (
                not use_cache
                or state in {"dirty", "failed"}
                or any(d in changed for d in n.depends_on)
            )
            if not must:
                if state == "stale":
                    backdated.append(n.step_id)
                self.status[n.step_id] = "done"
                continue
            result = funnel.call(n.tool, n.args, caller=CALLER)
            ran.append(n.step_id)
            if not result.ok:
                self.status[n.step_id] = "failed"
                failed.add(n.step_id)
                errors.append(f"{n.step_id} {n.tool}: {result.error}")
                continue
            new_hash = _output_hash(session, n, result.to_dict())
            if new_hash != self.hashes.get(n.step_id) or n.tool_phase == "render":
                changed.add(n.step_id)
            self.hashes[n.step_id] = new_hash
            self.status[n.step_id] = "done"
        self.ops_seen = len(session.operations)
        return {
            "status": "error" if errors and not ran else "ok",
            "ran": ran,
            "backdated": backdated,
            "errors": errors,
            "still_stale": [n.step_id for n in self.nodes if self.status.get(n.step_id) != "done"],
        }

    # -- persistence ---------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON for `session.meta`."""
        return {
            "nodes": [n.to_dict() for n in self.nodes],
            "status": self.status,
            "hashes": self.hashes,
            "ops_seen": self.ops_seen,
        }


def _relabel(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        if value == old:
            return new
        return new + value[len(old) :] if value.startswith(old + ".") else value
    if isinstance(value, list):
        return [_relabel(v, old, new) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return {k: v if k == "code" else _relabel(v, old, new) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    return value


def _from_ops(session: Session) -> LiveDag:
    try:
        pipeline = extract_pipeline(
            session.operations,
            "session",
            source_session=session.id,
            parameterise=False,
            pipeline_id="pl_session",
        )
    except UserError as exc:
        raise UserError(
            "This session has no pipeline yet: nothing was fetched or computed successfully."
        ) from exc
    dag = LiveDag(pipeline.steps, ops_seen=len(session.operations))
    for n in dag.nodes:
        dag.status[n.step_id] = "done"
        dag.hashes[n.step_id] = _output_hash(session, n, {})
    return dag


def _changes_data(record: dict[str, Any]) -> bool:
    """Whether an operation since the DAG was built makes it out of date.

    The DAG's own re-runs (caller "pipeline"), failures, downloads for the user and calls
    that make no data or figure (listing, inspecting the DAG itself) leave it as it is.
    """
    op = Operation.of(record)
    return op.caller != CALLER and op.ok and op.in_analysis and op.phase in _DAG_PHASES


def load_dag(session: Session) -> LiveDag:
    """The session's DAG: cached, or rebuilt when other callers added operations since."""
    cached = session.meta.get(META_KEY)
    if isinstance(cached, dict):
        dag = LiveDag(
            [PipelineStep.from_dict(n) for n in cached.get("nodes") or []],  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
            dict(cached.get("status") or {}),  # pyright: ignore[reportUnknownArgumentType]
            dict(cached.get("hashes") or {}),  # pyright: ignore[reportUnknownArgumentType]
            int(cached.get("ops_seen", 0)),  # pyright: ignore[reportUnknownArgumentType]
        )
        newer = session.operations[dag.ops_seen :]
        if not any(_changes_data(op) for op in newer):
            return dag
        fresh = _from_ops(session)
        pending = {(n.tool, tuple(n.produces)): dag.status.get(n.step_id) for n in dag.nodes}
        for n in fresh.nodes:
            if pending.get((n.tool, tuple(n.produces))) in {"dirty", "stale"}:
                fresh.status[n.step_id] = "stale"
        return fresh
    return _from_ops(session)


def save_dag(session: Session, dag: LiveDag) -> None:
    """Keep the DAG with the session (it is persisted with `session.meta`)."""
    session.meta[META_KEY] = dag.to_dict()
