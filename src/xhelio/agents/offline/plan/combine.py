"""What is done across the final series.

Two-series operations, one temperature unit, and the plot, export and save steps.
"""

from __future__ import annotations

from typing import Any

from xhelio.agents.offline.codegen import binary_code
from xhelio.agents.offline.figure import figure_spec
from xhelio.agents.offline.plan.series import TWO_SERIES, add_compute, part_window
from xhelio.agents.offline.plan.steps import Builder, PlanStep, ToolCall, label_tag
from xhelio.language.intent import (
    RequestIntent,
)
from xhelio.timerange import TimeRange


def two_series_operation(
    b: Builder, finals: list[tuple[str, str, str]], span: TimeRange | None = None
) -> list[tuple[str, str, str]]:
    """The operation on two series (difference, percent difference, ratio, correlation).

    Never done silently on something else: with other than two series, or a difference
    of series in different units, it is said as not done.
    """
    op = next((o for o in b.intent.operations if o.kind in TWO_SERIES), None)
    if op is None:
        return finals
    if len(finals) != 2:
        b.notes.append(
            f"Not done: the {op.text} needs exactly two series; this request has {len(finals)}."
        )
        return finals
    (r1, n1, g1), (r2, n2, g2) = finals
    u1, u2 = b.units.get(r1, ""), b.units.get(r2, "")
    if op.kind == "cross_correlation":
        _cross_correlation(b, finals, span)
        return finals
    if op.kind != "ratio" and not _same_units(u1, u2, g1, g2):
        b.notes.append(
            f"Not done: the {op.text}: {n1} is in {u1 or 'no unit'} and {n2} in "
            f"{u2 or 'no unit'}; series in different units cannot be subtracted."
        )
        return finals
    label = b.unique(f"{op.kind}_{label_tag(n1)[:20]}_{label_tag(n2)[:20]}")
    if op.kind == "difference":
        units = u1 or None
    elif op.kind == "percent_difference":
        units = "%"
    else:
        # The same quantity twice ("#/cc" and "cm^-3" alike) gives a pure number.
        same = u1 == u2 or (g1 == g2 and ":" in g1)
        units = "1" if same else (f"({u1})/({u2})" if u1 and u2 else "")
    sign = {"ratio": "/", "difference": "-"}.get(op.kind, "vs")
    what = f"{op.kind.replace('_', ' ')} {n1} {sign} {n2}"
    if op.kind == "percent_difference":
        what += " (100 * (a - b) / mean of |a| and |b|)"
    out = add_compute(b, what, (r1, r2), label, binary_code(op.kind), what, units)
    return [*finals, (out, what, op.kind)]


def _cross_correlation(
    b: Builder, finals: list[tuple[str, str, str]], span: TimeRange | None
) -> None:
    """The lag of the second series behind the first at their correlation peak."""
    (r1, n1, _), (r2, n2, _) = finals
    args = {"label_a": f"{{{r1}}}", "label_b": f"{{{r2}}}"}
    op = b.intent.operation("cross_correlation")
    part = part_window(b, op, span) if op is not None and span is not None else None
    if part is not None:
        args["time_range"] = part[0]
    what = (
        f"cross-correlation of {n1} and {n2}{part[1] if part else ''} "
        "(lag of the second behind the first)"
    )
    call = ToolCall("cross_correlation_lag", args)
    label = b.unique(f"xcorr_{label_tag(n1)[:20]}_{label_tag(n2)[:20]}")
    b.steps.append(PlanStep("compute", what, "__data_ops__", (call,), label, (r1, r2), series=what))


_UNIT_SPELLINGS = (("sec", "s"), ("kms^-1", "km/s"), ("kms-1", "km/s"), ("deg", "°"))


_KELVIN = ("k", "kelvin", "°k")


def _unit_key(unit: str) -> str:
    key = unit.replace(" ", "").lower()
    for spelled, canonical in _UNIT_SPELLINGS:
        key = key.replace(spelled, canonical)
    return "k" if key in _KELVIN else key


def _same_units(u1: str, u2: str, g1: str, g2: str) -> bool:
    """Whether two series can be subtracted: one quantity kind, or the same unit."""
    kind1, kind2 = g1.partition(":")[0], g2.partition(":")[0]
    if ":" in g1 and ":" in g2 and kind1 == kind2 and kind1 != "temperature":
        return True
    return _unit_key(u1) == _unit_key(u2)


_EV_IN_K = 11604.518


def one_temperature_unit(
    b: Builder, finals: list[tuple[str, str, str]]
) -> list[tuple[str, str, str]]:
    """Series in eV put in K when others are in K, so no axis or difference mixes them."""
    units = {ref: _unit_key(b.units.get(ref, "")) for ref, _, _ in finals}
    if "k" not in units.values() or "ev" not in units.values():
        return finals
    out: list[tuple[str, str, str]] = []
    for ref, name, group in finals:
        if units[ref] != "ev":
            out.append((ref, name, group))
            continue
        label = b.unique(f"{label_tag(name)[:30]}_K")
        what = f"{name} converted from eV to K (1 eV = {_EV_IN_K} K)"
        code = f"result = df * {_EV_IN_K}"
        converted = add_compute(b, name, (ref,), label, code, what, "K")
        b.units[converted] = "K"
        b.notes.append(f"Converted {name} from eV to K (1 eV = {_EV_IN_K} K) to compare it.")
        out.append((converted, name, group))
    return out


def presentation(b: Builder, finals: list[tuple[str, str, str]], span: TimeRange | None) -> None:
    """Plot, export and save steps for the final series."""
    steps, notes = presentation_steps(b.intent, finals, span)
    b.steps.extend(steps)
    b.notes.extend(notes)


def presentation_steps(
    intent: RequestIntent, finals: list[tuple[str, str, str]], span: TimeRange | None
) -> tuple[list[PlanStep], list[str]]:
    """The plot, export and save steps for the final series (ref, name, group), and notes."""
    steps: list[PlanStep] = []
    notes: list[str] = []
    if intent.plot.wanted:
        figure, layout_note = figure_spec(intent, finals, span)
        if layout_note:
            notes.append(layout_note)
        refs = tuple(r for r, _, _ in finals)
        steps.append(
            PlanStep(
                "plot",
                f"Plot {', '.join(n for _, n, _ in finals)}",
                "__visualization__",
                (ToolCall("render_plotly_json", {"figure": figure}),),
                inputs=refs,
            )
        )
        if intent.plot.export_format:
            args: dict[str, Any] = {"action": "export", "format": intent.plot.export_format}
            if intent.plot.export_filename:
                args["filename"] = intent.plot.export_filename
            steps.append(
                PlanStep(
                    "export",
                    f"Export the figure as {intent.plot.export_format}",
                    "__visualization__",
                    (ToolCall("manage_plot", args),),
                )
            )
    if intent.save_data_format:
        for ref, name, _ in finals:
            steps.append(
                PlanStep(
                    "save",
                    f"Save {name} as {intent.save_data_format}",
                    "__data_ops__",
                    (
                        ToolCall(
                            "save_data", {"label": f"{{{ref}}}", "format": intent.save_data_format}
                        ),
                    ),
                    inputs=(ref,),
                )
            )
    return steps, notes
