"""An operation's meaning from its tool's spec, for records written without it.

The funnel records every call with its phase, the labels it produced and read and its
time ranges. Operations logs saved by older versions (and hand-written records) lack
these fields; `backfill_meaning` adds them from the specs of the registry, so every
consumer can read them.
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import Any

from xhelio.operations import Operation
from xhelio.tools.registry import ToolRegistry

__all__ = ["backfill_meaning", "operation_of"]


def operation_of(
    record: dict[str, Any], registry: ToolRegistry, known: list[str] | None = None
) -> Operation:
    """`record` as an `Operation`, its meaning taken from its tool's spec.

    Args:
        record: A log record (at least `tool`; `args`, `status` and `result` if known).
        registry: The tools whose specs give the meaning.
        known: Labels that existed before the call (for `read`); default none.
    """
    op = Operation.model_validate(record)
    spec = registry.get(op.tool)
    if spec is None:
        return op
    refs = spec.read_labels(op.args, known or [])
    return op.model_copy(
        update={
            "phase": spec.phase,
            "produced": spec.produced(op.args, op.result) if op.ok else [],
            "read": refs,
            "time_ranges": spec.time_ranges(op.args),
            "edits_figure": spec.edits_figure,
        }
    )


def backfill_meaning(records: MutableSequence[dict[str, Any]], registry: ToolRegistry) -> None:
    """Add the meaning to each record of an operations log that was saved without it."""
    known: list[str] = []
    for i, record in enumerate(records):
        if "phase" not in record:
            records[i] = operation_of(record, registry, known).record()
        known.extend(label for label in records[i].get("produced") or [] if label not in known)
