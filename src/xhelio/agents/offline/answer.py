"""Words for the scientist: discovery answers, clarifications and the turn summary lines.

Each function turns tool results (plain dicts from the funnel) or an intent into text.
Nothing here calls a tool. Times read as people write them (`timerange.readable`).
Imports this package, `render.figure_text` and `timerange`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xhelio.language.intent import RequestIntent
from xhelio.render.figure_text import axis_unit, plain_unit
from xhelio.timerange import readable_iso_span

__all__ = [
    "EXAMPLES",
    "clarification",
    "describe_fetch",
    "describe_render",
    "discovery_text",
    "said_unit",
]

EXAMPLES = (
    "'Show ACE magnetic field magnitude for 2024-01-15 to 2024-01-20', "
    "'Compare Wind and ACE solar wind speed last week, smoothed over 1 hour', "
    "'OMNI Dst and Kp during March 2015 in separate panels', "
    "'What datasets does PSP have?'"
)
_LISTED = 25
_NAMED = 8  # series named per panel


def clarification(
    intent: RequestIntent, missing: tuple[str, ...], notes: tuple[str, ...] = ()
) -> str:
    """Say what was understood, what was found missing and is still needed, with examples."""
    understood = intent.understood()
    head = (
        f"I understood: {'; '.join(understood)}."
        if understood
        else "I could not find a mission, quantity, dataset or time range in that request."
    )
    if notes:
        head = f"{head} {' '.join(notes)}"
    need = f" To fetch and plot data I still need {' and '.join(missing)}." if missing else ""
    return (
        f"{head}{need} (Offline mode understands missions, quantities, time ranges, "
        f"operations such as smoothing, averaging, derivatives, differences and ratios, "
        f"and plot wishes.) For example: {EXAMPLES}."
    )


def describe_fetch(series: str, result: dict[str, Any]) -> str:
    """One sentence on a successful fetch: label, dataset, points, span, units, cadence."""
    columns = result.get("columns") or []
    shape = f", {len(columns)} components" if len(columns) > 1 else ""
    cadence = f", cadence {result['cadence']}" if result.get("cadence") else ""
    units = said_unit(str(result.get("units") or "")) or "no units"
    return (
        f"Fetched {series} as {result.get('label')} (dataset {result.get('dataset')}, "
        f"parameter {result.get('parameter')}, {units}{shape}): {result.get('points')} points "
        f"{_over(result)}{cadence}."
    )


def said_unit(raw: str) -> str:
    """A unit as a sentence writes it: decoded, plain text, no cadence aside ("nT")."""
    return plain_unit(axis_unit(raw))


def _over(result: dict[str, Any]) -> str:
    start, stop = result.get("start"), result.get("stop")
    if start is None and stop is None:
        return "with no time span"
    return f"over {readable_iso_span(start, stop)}"


def _with_unit(names: list[str], unit: str) -> str:
    shown = ", ".join(names[:_NAMED]) + (
        f" and {len(names) - _NAMED} more" if len(names) > _NAMED else ""
    )
    return f"{shown} ({unit})" if unit else shown


def _panel_words(traces: list[dict[str, Any]], series: Mapping[str, str]) -> str:
    """What one panel shows: lines grouped by unit, each spectrogram named as one.

    The component lines of one vector are named under their series ("ACE magnetic field
    (Bx GSE, By GSE, Bz GSE)"), so the answer still says whose field it is.
    """
    lines: dict[str, dict[str, list[str]]] = {}
    spectrograms: list[str] = []
    for trace in traces:
        label = str(trace.get("data_label") or "")
        name = str(trace.get("name") or label)
        unit = said_unit(str(trace.get("unit") or ""))
        if trace.get("type") == "heatmap":
            computed = name.startswith(("the dynamic spectrum of", "the Morlet wavelet power of"))
            said = "" if computed else "a spectrogram of "
            spectrograms.append(said + _with_unit([name], unit))
        else:
            lines.setdefault(unit, {}).setdefault(label, []).append(name)
    parts = [
        _with_unit([_series_words(label, names, series) for label, names in groups.items()], unit)
        for unit, groups in lines.items()
    ] + spectrograms
    return " and ".join(parts) if len(parts) <= 2 else ", ".join(parts[:-1]) + f" and {parts[-1]}"


def _series_words(label: str, names: list[str], series: Mapping[str, str]) -> str:
    if len(names) > 1 and label in series:
        return f"{series[label]} ({', '.join(names)})"
    return ", ".join(names)


def describe_render(result: dict[str, Any], series: Mapping[str, str] | None = None) -> str:
    """One sentence on what a rendered figure shows: each panel's series with units.

    `series` names a stored label's whole series (its components are named by the renderer).
    """
    traces: list[dict[str, Any]] = result.get("traces") or []
    if not traces:
        return "Plotted an empty figure."
    by_panel: dict[int, list[dict[str, Any]]] = {}
    for trace in traces:
        by_panel.setdefault(int(trace.get("panel") or 1), []).append(trace)
    shown = [_panel_words(by_panel[panel], series or {}) for panel in sorted(by_panel)]
    if len(shown) == 1:
        text = f"Plotted {shown[0]} in one panel"
    else:
        text = f"Plotted {len(shown)} stacked panels, top to bottom: " + "; ".join(shown)
    thinned = sum(1 for t in traces if t.get("downsampled"))
    if thinned:
        text += (
            f" ({thinned} series downsampled for display, extrema kept)"
            if thinned > 1
            else " (downsampled for display, extrema kept)"
        )
    return f"{text}."


def _dataset_lines(rows: list[dict[str, Any]], key: str = "id") -> list[str]:
    lines: list[str] = []
    for row in rows[:_LISTED]:
        span = ""
        if row.get("start") or row.get("stop"):
            span = f" [{str(row.get('start'))[:10]} to {str(row.get('stop'))[:10]}]"
        lines.append(f"- {row.get(key)}: {str(row.get('title', ''))[:90]}{span}")
    if len(rows) > _LISTED:
        others = ", ".join(str(row.get(key)) for row in rows[_LISTED:])
        lines.append(f"Also: {others}.")
    return lines


def discovery_text(kind: str, subject: str, result: dict[str, Any]) -> str:
    """The answer to a catalog question from the discovery tool's result."""
    if result.get("status") == "error":
        return f"I could not answer that from the catalog: {result.get('message')}"
    if kind == "missions":
        missions: list[dict[str, Any]] = result.get("missions") or []
        shown = [
            f"{m['name']} ({m['id']}, {m['datasets']} datasets)"
            for m in missions
            if m.get("datasets")
        ]
        return f"The catalog has {len(shown)} missions with data: " + "; ".join(shown) + "."
    if kind == "browse":
        rows: list[dict[str, Any]] = result.get("datasets") or []
        head = f"{subject} has {len(rows)} science datasets in the catalog:"
        return "\n".join([head, *_dataset_lines(rows)])
    if kind == "search":
        hits: list[dict[str, Any]] = result.get("results") or []
        if not hits:
            return f"No dataset matches '{subject}'. Try other words or a mission name."
        lines = [
            f"- {h['dataset_id']}: {str(h.get('title', ''))[:90]}"
            + (f" (parameters: {', '.join(h['parameters'][:5])})" if h.get("parameters") else "")
            for h in hits
        ]
        return "\n".join([f"Datasets matching '{subject}', best first:", *lines])
    if kind == "parameters":
        params: list[dict[str, Any]] = result.get("parameters") or []
        lines = [
            f"- {p['name']} [{p.get('units') or 'no units'}]"
            + (f" size {p['size']}" if p.get("size") else "")
            + (f": {str(p.get('description'))[:80]}" if p.get("description") else "")
            for p in params[:60]
        ]
        head = f"{result.get('id')} ({result.get('title', '')[:80]}) has {len(params)} parameters:"
        return "\n".join([head, *lines])
    return (
        f"{result.get('dataset_id')} covers "
        f"{readable_iso_span(result.get('start'), result.get('stop'))}"
        + (f" at a cadence of {result['cadence']}" if result.get("cadence") else "")
        + "."
    )
