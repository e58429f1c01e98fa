"""One series from fetch to its final form: the component, then the operations in order."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from typing import Any

from xhelio.agents.offline.codegen import component_code, series_code, statistics_code
from xhelio.agents.offline.plan.rotation import rotation_code
from xhelio.agents.offline.plan.sources import time_window
from xhelio.agents.offline.plan.steps import NAMED, Builder, PlanStep, Source, ToolCall, label_tag
from xhelio.analysis.spectra import power_unit
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.intent import (
    OperationKind,
    OperationWish,
    QuantityWish,
    RequestIntent,
    describe_quantity,
)
from xhelio.language.operations import named_operations, transform
from xhelio.language.quantities import quantity
from xhelio.language.resolve import (
    Candidate,
    product_cadence,
)
from xhelio.language.spectra import is_spectral_density
from xhelio.language.wishes import format_seconds
from xhelio.timerange import TimeRange
from xhelio.vocabulary import DerivedQuantity, load_vocabulary

# Operations on two series, done once both are fetched (`two_series_operation`).
TWO_SERIES = ("difference", "ratio", "percent_difference", "cross_correlation")
# Operations giving numbers beside the series (not a new series of the chain).
_SIDE_RESULTS = ("psd", "statistics", "dynamic_power", "wavelet")
_NICE_WINDOWS = (60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 86400)
_SHORT = {
    "magnetic_field": "B", "velocity": "V", "density": "N", "temperature": "T",
    "pressure": "P", "particle_flux": "flux", "electric_field": "E", "position": "pos",
    "dst": "Dst", "sym_h": "SYMH", "kp": "Kp", "ae": "AE",
}  # fmt: skip


def fetch_step(
    source: Source, wish: QuantityWish, cands: list[Candidate], span: TimeRange, ref: str
) -> PlanStep:
    """The fetch of `wish` from `source`: one call per candidate, tried in order."""
    calls = tuple(
        ToolCall(
            "fetch_data",
            {"dataset_id": c.dataset_id, "parameter_id": c.parameter, "time_range": str(span)},
        )
        for c in cands
    )
    what = wish.text if wish.quantity == NAMED else describe_quantity(wish)
    series = f"{source.name} {what}"
    return PlanStep(
        "fetch",
        f"Fetch {series} ({', '.join(c.dataset_id for c in cands)})",
        source.role,
        calls,
        ref,
        series=series,
        candidates=tuple(cands),
    )


def add_compute(
    b: Builder,
    series: str,
    inputs: tuple[str, ...],
    label: str,
    code: str,
    description: str,
    units: str | None = None,
    only_if_vector: bool = False,
) -> str:
    """Append a `custom_operation` step computing `label` from `inputs`; returns `label`."""
    args: dict[str, Any] = {
        "source_labels": [f"{{{r}}}" for r in inputs],
        "code": code,
        "output_label": label,
        "description": description,
    }
    if units is not None:
        args["units"] = units
    b.steps.append(
        PlanStep(
            "compute",
            description,
            "__data_ops__",
            (ToolCall("custom_operation", args),),
            label,
            inputs,
            only_if_vector,
            series,
        )
    )
    return label


def total_near_earth(b: Builder, wish: QuantityWish, sources: list[Source]) -> QuantityWish:
    """The total field |B| for "Bt" of a field measured near Earth (OMNI, L1 monitors).

    Space-weather displays write it so whatever frame a product of the mission is in (an
    RTN copy of OMNI has a T axis, but nobody at Earth means it): the wish becomes the
    magnitude, so the instrument's own |B| is fetched. A "B_T" typed keeps its T axis.
    """
    q = None if wish.quantity == NAMED else quantity(wish.quantity)
    if wish.component != "t" or q is None or q.key != "magnetic_field" or "_" in wish.text:
        return wish
    missions = load_vocabulary().missions
    near = [s for s in sources if (m := missions.get(s.role)) is not None and m.near_earth]
    if not sources or len(near) < len(sources):
        return wish
    names = ", ".join(dict.fromkeys(s.name for s in near))
    b.notes.append(
        f"Read '{wish.text}' as the total field |B|, as space-weather displays write it "
        f"for {names} near Earth (say 'transverse' for sqrt(By^2 + Bz^2))."
    )
    return replace(wish, component="magnitude")


def _tangential_or_total(b: Builder, cand: Candidate, wish: QuantityWish) -> str:
    """The T component of "Bt" for a field in RTN; for any other field, the total |B|.

    Space-weather displays of near-Earth monitors (SWPC: "Bt and Bz") write Bt for the
    total field; a GSE or GSM vector has no T axis, and its second column is By.
    """
    info = b.vocab.catalog.dataset(cand.dataset_id)
    p = info.parameter(cand.parameter)
    said = f"{info.id} {cand.parameter} {p.description if p is not None else ''}"
    if "RTN" in said.upper():
        return "t"
    b.notes.append(
        f"Read '{wish.text}' as the total field |B|, as space-weather displays write it: "
        f"{cand.dataset_id}.{cand.parameter} is not in RTN, so it has no T component "
        "(say 'transverse' for sqrt(By^2 + Bz^2))."
    )
    return "magnitude"


def series_chain(
    b: Builder,
    source: Source,
    wish: QuantityWish,
    span: TimeRange,
    ref: str,
    cands: list[Candidate],
) -> tuple[str, str]:
    """Fetch, derive the component, apply the operations; returns (final ref, name)."""
    b.steps.append(fetch_step(source, wish, cands, span, ref))
    named = wish.quantity == NAMED
    name = f"{source.name} {wish.text if named else describe_quantity(wish)}"
    q = None if named else quantity(wish.quantity)
    component = wish.component or (q.default_component if q else None)
    if component == "t" and q is not None and q.key == "magnetic_field" and cands:
        component = _tangential_or_total(b, cands[0], wish)
    current = ref
    tag = f"{source.tag}_{label_tag(wish.text) if q is None else _SHORT.get(q.key, q.key)}"
    if q is not None and q.shape == "vector" and component not in (None, "vector"):
        suffix = "mag" if component == "magnitude" else component
        label = b.unique(f"{tag}{suffix}")
        code, what = component_code(component, q.key)
        units = cands[0].units if cands and cands[0].units else None  # a component keeps them
        current = add_compute(
            b, name, (current,), label, code, f"{what} of {name}", units, only_if_vector=True
        )
        tag = label
    current, tag, name = series_operations(b, (current, tag, name), span, wish, cands)
    units = cands[0].units if cands else ""
    if (psd := b.intent.operation("psd")) is not None and is_spectral_density(units or ""):
        b.notes.append(
            f"{name} is already a spectral density ({units}): shown as the catalog holds it; "
            "no power spectral density was computed from it."
        )
    elif psd is not None:
        args: dict[str, Any] = {"label": f"{{{current}}}"}
        part = part_window(b, psd, span)
        if part is not None:
            args["time_range"] = part[0]
        if psd.window_s:  # the segment length the request states
            args["segment_s"] = psd.window_s
        segments = f" in {format_seconds(psd.window_s)} segments" if psd.window_s else ""
        what = f"Welch power spectral density of {name}{part[1] if part else ''}{segments}"
        call = ToolCall("power_spectrum", args)
        out = b.unique(f"{tag}_psd")
        b.steps.append(
            PlanStep("compute", what, "__data_ops__", (call,), out, (current,), series=what)
        )
    whole_window_statistics(b, (current, tag, name), cands[0].units if cands else "")
    return current, name


_TIME_FREQUENCY: dict[OperationKind, tuple[str, str, str]] = {
    "dynamic_power": ("dynamic_spectrum", "dynamic spectrum", "spectrogram"),
    "wavelet": ("wavelet_power", "Morlet wavelet power", "wavelet"),
}


def time_frequency_power(
    b: Builder, wish: QuantityWish, series: tuple[str, str], span: TimeRange
) -> list[tuple[str, str, str]]:
    """The dynamic spectrum or wavelet power asked of one fetched series, as finals.

    Each is computed from the series (power over time and frequency, drawn as a
    spectrogram below it); a series that is already a spectral density is shown as it
    is, and said.
    """
    current, name = series
    finals: list[tuple[str, str, str]] = []
    for kind, (tool, what, suffix) in _TIME_FREQUENCY.items():
        op = b.intent.operation(kind)
        if op is None or not _applies(b.intent, op, wish):
            continue
        unit = b.units.get(current, "")
        if is_spectral_density(unit):
            b.notes.append(f"{name} is already a spectral density ({unit}): no {what} of it.")
            continue
        args: dict[str, Any] = {"label": f"{{{current}}}"}
        part = part_window(b, op, span)
        if part is not None:
            args["time_range"] = part[0]
        if op.window_s and kind == "dynamic_power":  # the segment length the request states
            args["segment_s"] = op.window_s
        said = f"{what} of {name}{part[1] if part else ''}"
        out = b.unique(f"{label_tag(name)}_{suffix}")
        b.steps.append(
            PlanStep("compute", said, "__data_ops__", (ToolCall(tool, args),), out, (current,))
        )
        b.units[out] = power_unit(unit)
        finals.append((out, f"the {said}", "spectrogram:frequency"))
    return finals


def part_window(b: Builder, op: OperationWish, span: TimeRange) -> tuple[str, str] | None:
    """(time_range argument, words) of the clock times an operation is computed over.

    "PSD over 13:00-13:10" on the day the range starts (an end before the start is on
    the next day). None when none were given; a part outside the range is said and the
    whole range used.
    """
    if op.during is None:
        return None
    day = span.start.date()
    start, end = (datetime.combine(day, time.fromisoformat(f"{c:0>5}"), UTC) for c in op.during)
    if end <= start:
        end += timedelta(days=1)
    if start < span.start or end > span.end:
        b.notes.append(
            f"Differs from the request: {op.during[0]}-{op.during[1]} is outside the time "
            f"range, so the {op.text} is over the whole range."
        )
        return None
    iso = "%Y-%m-%dT%H:%M:%SZ"
    return f"{start:{iso}} to {end:{iso}}", f" over {op.during[0]}-{op.during[1]} UTC"


def whole_window_statistics(b: Builder, series: tuple[str, str, str], unit: str) -> None:
    """The statistics asked of the whole interval ("median Bz", "peak speed"), said in words.

    A side result: the series itself stays the one plotted; the statistics are a table
    stored beside it, and each value is said with its unit (a minimum or maximum with
    its time).
    """
    op = b.intent.operation("statistics")
    if op is None:
        return
    current, tag, name = series
    code, what = statistics_code(op.detail.split(","), unit)
    label = b.unique(f"{tag}_stats")
    add_compute(
        b,
        f"{name} {what}",
        (current,),
        label,
        code,
        f"{what.split(' over ')[0]} of {name} over the whole interval",
        unit or None,
    )


def catalog_series(
    b: Builder,
    source: Source,
    derived: DerivedQuantity,
    own: tuple[DatasetInfo, ParameterInfo],
    span: TimeRange | None,
    finals: list[tuple[str, str, str]],
) -> TimeRange:
    """Fetch a derived quantity the catalog already has as a parameter, said as such.

    "OMNI alpha/proton ratio": OMNI's own ratio parameter, not one computed from two
    densities. Its operations and statistics apply as to a computed one.
    """
    info, p = own
    cand = Candidate(info.id, p.name, p.units, p.components, 0.0, f"the catalog's {derived.label}")
    span = span or time_window(b.intent, cand, b)
    ref = f"d{len(b.steps) + 1}"
    b.steps.append(fetch_step(source, QuantityWish(NAMED, p.name, 0), [cand], span, ref))
    b.notes.append(
        f"The catalog has the {derived.label} itself: used {info.id}.{p.name} "
        f"({p.description.strip() or p.name}), nothing computed."
    )
    name = f"{source.name} {derived.label}"
    final, tag, name = series_operations(
        b, (ref, b.unique(f"{source.tag}_{derived.key}"), name), span, None, [cand]
    )
    whole_window_statistics(b, (final, tag, name), p.units)
    b.units[final] = derivative_units([cand]) if b.intent.operation("derivative") else p.units
    finals.append((final, name, derived.key))
    return span


def series_operations(
    b: Builder,
    series: tuple[str, str, str],
    span: TimeRange,
    wish: QuantityWish | None,
    cands: list[Candidate],
) -> tuple[str, str, str]:
    """Apply the one-series operations (smooth, resample, detrend, derivative) in order.

    `series` is (ref, tag, name) of the series; `wish` the quantity it answers (None for
    a derived quantity, to which every operation applies). Returns the final series.
    """
    current, tag, name = series
    for op in b.intent.operations:
        if op.kind in TWO_SERIES or op.kind in _SIDE_RESULTS:
            continue
        if wish is not None and not _applies(b.intent, op, wish):
            continue
        if op.kind == "rotate":
            current, tag, name = _rotated(b, op, cands, (current, tag, name))
            continue
        if op.kind == "transform" and (refused := _unit_refused(op, cands)) is not None:
            b.notes.append(refused)
            continue
        if (already := _already_averaged(b, op, cands)) is not None:
            b.notes.append(already)
            continue
        fixed = (op.kind == "detrend" and op.detail != "running") or op.window_points is not None
        window = 0.0 if fixed else op.window_s or _default_window(span, b, op)
        code, what, suffix = series_code(op.kind, window, op.detail, op.window_points)
        label = b.unique(f"{tag}_{suffix}")
        units = None
        if op.kind == "derivative":
            units = derivative_units(cands)
        elif op.kind == "integral":
            units = integral_units(cands)
        elif op.kind == "transform":
            units = transform_units(op.detail, cands)
        elif op.kind == "scale" and cands and cands[0].units:
            units = f"({cands[0].units}) {op.detail}"  # the input's unit, scaled
        if op.kind == "integral":
            b.notes.append(
                f"Time integral of {name}: cumulative trapezoid rule from the start of the "
                f"window, in {units}; its last value is the total over the window."
            )
        if op.kind == "resample" and "," in op.detail and cands and cands[0].units:
            units = cands[0].units  # new column names ("V (max)") keep no unit themselves
        current = add_compute(b, name, (current,), label, code, f"{name} {what}", units)
        tag, name = label, f"{name} {what}"
    return current, tag, name


def _already_averaged(b: Builder, op: OperationWish, cands: list[Candidate]) -> str | None:
    """The note when a plain average asked is what the product already is, else None.

    "Daily averages" of a daily-averaged product are that product: averaging it again
    gives the same series (and an array of sectored fluxes need not be binned at all).
    """
    if op.kind != "resample" or op.detail not in ("", "mean") or not op.window_s or not cands:
        return None
    info = b.vocab.catalog.dataset(cands[0].dataset_id)
    cadence = product_cadence(info)
    if cadence is None or op.window_s > cadence * 1.05:
        return None
    return (
        f"{info.id} is already {format_seconds(cadence)} data (its catalog cadence), so "
        f"the {op.text or format_seconds(op.window_s) + ' averages'} asked are the product "
        "as it is: not averaged again."
    )


def _unit_refused(op: OperationWish, cands: list[Candidate]) -> str | None:
    """Why a unit conversion cannot apply to the series (its unit is another), or None."""
    element_wise = transform(op.detail)
    unit = (cands[0].units if cands else "") or ""
    if element_wise is None or not element_wise.needs or re.search(element_wise.needs, unit):
        return None
    return (
        f"Could not honour '{element_wise.label}': the series is in '{unit or 'no unit'}', "
        "not the unit the conversion starts from; shown as fetched."
    )


def _rotated(
    b: Builder, op: OperationWish, cands: list[Candidate], series: tuple[str, str, str]
) -> tuple[str, str, str]:
    """The series rotated into the frame `op` asks, or as it is with the reason said."""
    current, tag, name = series
    info = b.vocab.catalog.dataset(cands[0].dataset_id) if cands else None
    parameter = info.parameter(cands[0].parameter) if info is not None else None
    code, said = rotation_code(op, cands, parameter)
    b.notes.append(said)
    if code is None:
        return series
    target = op.detail.partition(">")[2]
    label = b.unique(f"{tag}_{target}")
    units = cands[0].units or None
    return (
        add_compute(b, name, (current,), label, code, f"{name} in {target}", units),
        label,
        (f"{name} in {target}"),
    )


_OPERATION_WORDS: dict[str, re.Pattern[str]] = {
    "smooth": re.compile(r"smooth|boxcar|running|moving|rolling", re.I),
    "integral": re.compile(r"integra|fluence|cumulative|running (?:sum|total)", re.I),
    "resample": re.compile(r"averag|resampl|\bbin|\bhourly\b|\bdaily\b", re.I),
}
# Where one part of a request ends and another begins ("Bz's derivative, and also Np").
_PART_BREAK = re.compile(r"\band also\b|\bas well as\b|\bplus\b|\balong with\b|;", re.I)


def _where_said(text: str, kind: str) -> tuple[int, int] | None:
    """The span of the words that asked for an operation: the vocabulary's, else ours."""
    named = next(((a, b) for key, a, b in named_operations(text) if key == kind), None)
    if named is not None:
        return named
    words = _OPERATION_WORDS.get(kind)
    said = words.search(text) if words else None
    return said.span() if said else None


def _applies(intent: RequestIntent, op: OperationWish, wish: QuantityWish) -> bool:
    """Whether an operation applies to one quantity of the request.

    An operation written after every quantity ("B and V, smoothed over 1 h") applies to
    all; written before some ("|B| and smoothed proton speed", "derivative of Bz and
    also the density") it applies to the quantities after it, up to the next part.
    """
    text = intent.slots.text
    said = _where_said(text, op.kind)
    positions = [w.position for w in intent.quantities]
    if said is None or wish.position not in positions:
        return True
    after = [p for p in positions if p >= said[0]]
    if not after:
        return True
    part = _PART_BREAK.search(text, said[1])
    return wish.position in [p for p in after if part is None or p < part.start()]


def derivative_units(cands: list[Candidate]) -> str:
    """The unit of a time derivative of the first candidate's series."""
    unit = cands[0].units if cands else ""
    return f"{unit}/s" if unit else "1/s"


# How a unit writes "per second": "/s" at its end, "s^-1", or "s" in a denominator group.
_PER_SECOND = (
    re.compile(r"\s*/\s*s(?:ec)?$"),
    re.compile(r"(?<![\w^])s(?:ec)?\s*\^?\s*-1\b\s*"),
    re.compile(r"(?<=/\()(?:s(?:ec)?[-\s*·]+)|(?<=[-\s*·])s(?:ec)?(?=[-\s*·]|\))(?=[^/]*\))"),
)


def integral_units(cands: list[Candidate]) -> str:
    """The unit of a time integral of the first candidate's series: "per second" cancelled.

    "km/s" -> "km", "1/(cm**2-s-sr)" -> "1/(cm**2-sr)", "cm^-2 s^-1 sr^-1" -> "cm^-2
    sr^-1"; a unit without "per second" gets " s" ("nT" -> "nT s").
    """
    unit = (cands[0].units if cands else "") or ""
    for pattern in _PER_SECOND:
        cancelled, count = pattern.subn("", unit, count=1)
        if count:
            tidy = re.sub(r"([-\s·])[-\s·]+", r"\1", cancelled)
            return re.sub(r"[-\s*·]+\)", ")", tidy).strip() or "1"
    if not unit:
        return "s"
    return f"({unit}) s" if "/" in unit else f"{unit} s"


def transform_units(key: str, cands: list[Candidate]) -> str | None:
    """The unit of an element-wise transform of the first candidate's series."""
    element_wise = transform(key)
    unit = (cands[0].units if cands else "") or ""
    if element_wise is None or element_wise.units == "same":
        return unit or None
    if element_wise.units == "log10":
        return f"log10({unit})" if unit else "log10"
    return element_wise.units


def _default_window(span: TimeRange, b: Builder, op: OperationWish) -> float:
    target = span.duration.total_seconds() / 50
    window = float(min(_NICE_WINDOWS, key=lambda w: abs(w - target)))
    if op.kind == "smooth" or op.detail == "running":
        what = f"{op.text} window" if op.detail else "smoothing window"
        b.notes.append(f"No {what} was given; used {format_seconds(window)}.")
    return window
