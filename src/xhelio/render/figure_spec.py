"""The model's figure JSON as a spec: parsed, panels flattened, data labels resolved.

`normalize_figure_spec` checks the top-level shape and turns the convenience ``panels``
list into ``data`` traces tagged with their panel number; `resolve_data_label` splits a
``data_label`` (``"AC_H2_MFI.BGSEc"`` or ``"AC_H2_MFI.BGSEc.BGSEc_0"``) into the stored
entry and the column; `match_column` finds a column by name, case or position.
Every mistake is a `UserError` that says what to send instead.

Imports only `data` and `errors` from xhelio.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore, UnknownLabelError
from xhelio.errors import UserError

__all__ = ["match_column", "normalize_figure_spec", "resolve_data_label"]


def normalize_figure_spec(figure: Mapping[str, Any] | str) -> dict[str, Any]:
    """Return a deep copy of the model's figure with ``panels`` flattened into ``data``."""
    if isinstance(figure, str):
        try:
            figure = json.loads(figure)
        except json.JSONDecodeError as exc:
            raise UserError(f"The figure is not valid JSON: {exc}. Send a JSON object.") from exc
    if not isinstance(figure, Mapping):
        raise UserError("The figure must be a JSON object with 'data' and 'layout'.")
    spec: dict[str, Any] = copy.deepcopy(dict(figure))
    unknown = sorted(set(spec) - {"data", "layout", "panels"})
    if unknown:
        raise UserError(
            f"Unknown top-level figure key(s): {', '.join(unknown)}. "
            "Use 'data' (list of traces), 'layout' and optionally 'panels'."
        )
    data = spec.get("data", [])
    layout = spec.get("layout", {})
    if not isinstance(data, list) or not isinstance(layout, dict):
        raise UserError("'data' must be a list of trace objects and 'layout' an object.")
    for number, panel in enumerate(spec.pop("panels", None) or [], start=1):
        data.extend(_flatten_panel(panel, number, layout))
    for index, trace in enumerate(data):
        if not isinstance(trace, dict):
            raise UserError(f"Trace {index} must be an object, got {type(trace).__name__}.")
    spec["data"] = data
    spec["layout"] = layout
    return spec


def _flatten_panel(panel: Any, number: int, layout: dict[str, Any]) -> list[dict[str, Any]]:
    """Turn one convenience panel into traces tagged with their panel number."""
    if isinstance(panel, list):
        panel = {"traces": panel}
    if not isinstance(panel, dict) or not isinstance(panel.get("traces"), list):
        raise UserError(
            f"Panel {number} must be an object with a 'traces' list (and optional 'yaxis')."
        )
    axis_key = "yaxis" if number == 1 else f"yaxis{number}"
    if isinstance(panel.get("yaxis"), dict):
        layout[axis_key] = {**panel["yaxis"], **layout.get(axis_key, {})}
    traces: list[dict[str, Any]] = []
    for trace in panel["traces"]:
        if not isinstance(trace, dict):
            raise UserError(f"Panel {number} holds a trace that is not an object: {trace!r}.")
        traces.append({**trace, "panel": trace.get("panel", number)})
    return traces


def resolve_data_label(store: DataStore, data_label: str) -> tuple[DataEntry, str | None]:
    """Split ``label`` or ``label.column`` into the stored entry and the column, if any.

    Labels contain dots themselves, so the longest stored label that prefixes
    `data_label` wins.
    """
    if store.has(data_label):
        return store.get(data_label), None
    labels = store.labels()
    prefixes = [label for label in labels if data_label.startswith(label + ".")]
    if not prefixes:
        raise UnknownLabelError(data_label, labels)
    label = max(prefixes, key=len)
    entry = store.get(label)
    return entry, match_column(entry, data_label[len(label) + 1 :])


def match_column(entry: DataEntry, wanted: str) -> str:
    """Find `wanted` among the entry's columns (exact, case-insensitive, or position)."""
    columns = entry.columns
    if wanted in columns:
        return wanted
    folded = [c for c in columns if c.lower() == wanted.lower()]
    if folded:
        return folded[0]
    if wanted.isdigit() and int(wanted) < len(columns):
        return columns[int(wanted)]
    raise UserError(
        f"'{entry.label}' has no column '{wanted}'. Its columns: {', '.join(columns)}. "
        f"Use '{entry.label}' for all of them or '{entry.label}.<column>' for one."
    )
