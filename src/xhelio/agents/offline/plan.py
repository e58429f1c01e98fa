"""`RequestIntent` -> `OfflinePlan`: plain, inspectable steps and the tool calls they make.

A step names its role (a mission id, "__data_ops__", "__visualization__" or
"__discovery__"), says in words what it does, and lists its tool calls. A fetch step
lists one `fetch_data` call per candidate, tried in order until one gives usable data.
Labels not known before running (the fetched `DATASET.PARAM`) appear in arguments as
`{ref}` placeholders that the executor fills in; computed labels are fixed here. The
planner issue's plan-execute loop can run these same records. Imports `catalog`,
`timerange` and this package; never the tools or the funnel.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from xhelio.agents.offline.codegen import binary_code, component_code, series_code
from xhelio.agents.offline.derived import derived_code, derived_named, input_wishes, unit_problem
from xhelio.agents.offline.figure import figure_spec
from xhelio.catalog.index import is_auxiliary
from xhelio.catalog.model import DatasetInfo
from xhelio.language.binding import MissionBinding, bind_missions
from xhelio.language.grounding import OpenRequest, open_request, rank_open, what_phrase
from xhelio.language.intent import (
    MissionRef,
    OperationWish,
    QuantityWish,
    RequestIntent,
    describe_quantity,
)
from xhelio.language.operations import declined_operations, named_operations
from xhelio.language.parse import Vocabulary
from xhelio.language.probes import common_product, kept_product, led_by, product
from xhelio.language.products import main_parameter, named_product, request_terms
from xhelio.language.quantities import GROUP_WORDS, quantity
from xhelio.language.resolve import (
    Candidate,
    cadence_of,
    level_rank,
    probe_of_dataset,
    probe_wanted,
    resolve,
)
from xhelio.language.spectra import kept_dimension
from xhelio.language.wishes import format_seconds
from xhelio.timerange import TimeRange
from xhelio.vocabulary import DerivedQuantity, load_vocabulary

__all__ = ["OfflinePlan", "PlanStep", "ToolCall", "build_plan", "presentation_steps"]

_NAMED = "__named__"  # a parameter the user named in a dataset they named
_NO_QUANTITY = "a quantity (e.g. magnetic field, solar wind speed, density, Dst)"
StepKind = Literal["fetch", "compute", "plot", "export", "save", "discover"]
_DEFAULT_SPAN = timedelta(days=7)
# Operations on two series, done once both are fetched (`_binary`).
_TWO_SERIES = ("difference", "ratio", "percent_difference", "cross_correlation")
# Operations giving numbers beside the series (not a new series of the chain).
_SIDE_RESULTS = ("psd",)
_NICE_WINDOWS = (60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 86400)
_SHORT = {
    "magnetic_field": "B", "velocity": "V", "density": "N", "temperature": "T",
    "pressure": "P", "particle_flux": "flux", "electric_field": "E", "position": "pos",
    "dst": "Dst", "sym_h": "SYMH", "kp": "Kp", "ae": "AE",
}  # fmt: skip


@dataclass(frozen=True)
class ToolCall:
    """One call through the funnel; string arguments may hold `{ref}` placeholders."""

    tool: str
    args: dict[str, Any]


@dataclass(frozen=True)
class PlanStep:
    """One step: what it does, who does it, the calls it makes, and what it produces."""

    kind: StepKind
    description: str
    role: str
    calls: tuple[ToolCall, ...]
    output: str | None = None
    inputs: tuple[str, ...] = ()
    only_if_vector: bool = False
    series: str = ""
    candidates: tuple[Candidate, ...] = ()


@dataclass(frozen=True)
class OfflinePlan:
    """The steps for one request, notes worth telling, and what is missing if anything."""

    intent: RequestIntent
    steps: tuple[PlanStep, ...] = ()
    notes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    time_range: TimeRange | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able record of the plan (for `AssistantReply.plan`)."""
        return {
            "mode": "offline",
            "understood": self.intent.understood(),
            "time_range": str(self.time_range) if self.time_range else None,
            "notes": list(self.notes),
            "missing": list(self.missing),
            "steps": [
                {
                    "kind": s.kind,
                    "description": s.description,
                    "role": s.role,
                    "output": s.output,
                    "inputs": list(s.inputs),
                    "only_if_vector": s.only_if_vector,
                    "calls": [asdict(c) for c in s.calls],
                }
                for s in self.steps
            ],
        }


@dataclass
class _Source:
    """Where a series comes from: a mission (maybe one spacecraft) or named datasets."""

    role: str
    tag: str
    name: str
    datasets: list[DatasetInfo]
    probe: str | None = None
    text: str = ""  # the request's words about this source (its instrument, product words)


@dataclass
class _Builder:
    vocab: Vocabulary
    intent: RequestIntent
    now: datetime
    steps: list[PlanStep] = field(default_factory=list[PlanStep])
    notes: list[str] = field(default_factory=list[str])
    missing: list[str] = field(default_factory=list[str])
    labels: set[str] = field(default_factory=set[str])
    units: dict[str, str] = field(default_factory=dict[str, str])
    earlier: list[str] | None = None  # the datasets a probe switch keeps the product of
    binding: MissionBinding | None = None  # each spacecraft's own words, read once per plan

    def unique(self, label: str) -> str:
        base, n = label, 2
        while label in self.labels:
            label, n = f"{base}_{n}", n + 1
        self.labels.add(label)
        return label


def _tag(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper() or "DATA"


def _mission_source(vocab: Vocabulary, ref: MissionRef, text: str = "") -> _Source:
    datasets = vocab.catalog.browse(ref.mission_id, include_auxiliary=True)
    probe = probe_wanted(ref.text)
    name = ref.name if probe is None else ref.text
    kept = _of_instrument(ref, datasets, text)
    return _Source(ref.mission_id, _tag(ref.text), name, kept, probe, text)


def _of_instrument(ref: MissionRef, datasets: list[DatasetInfo], text: str) -> list[DatasetInfo]:
    """Only the datasets of the instrument(s) the request names for this mission.

    "Cluster C1 CIS HIA" keeps the datasets both names fit; "Wind SWE n and T and MFI
    |B|" (instruments with no dataset in common) keeps those of either. A named
    instrument is never swapped for a sibling of the same spacecraft. Names without
    datasets are ignored.
    """
    named = [
        [d for d in datasets if inst.datasets.search(d.id)]
        for inst in load_vocabulary().instruments_of(ref.mission_id)
        if inst.words.search(text)
    ]
    named = [own for own in named if own]
    if not named:
        return datasets
    both = [d for d in named[0] if all(d in own for own in named[1:])]
    return both or [d for d in datasets if any(d in own for own in named)]


def _sources_for(b: _Builder, wish: QuantityWish) -> list[_Source]:
    """Which missions or datasets should deliver `wish`."""
    intent, vocab = b.intent, b.vocab
    if intent.dataset_ids:
        infos = [vocab.catalog.dataset(i) for i in intent.dataset_ids]
        return [_Source(i.mission_id or "__data__", _tag(i.id), i.id, [i]) for i in infos]
    q = quantity(wish.quantity)
    if q.default_mission and q.default_mission in vocab.mission_names:
        return [_mission_source(vocab, MissionRef(q.default_mission, "OMNI", "OMNI", 0))]
    if intent.missions:
        binding = b.binding
        if binding is None:
            return [_mission_source(vocab, m, intent.text) for m in intent.missions]
        return [
            _mission_source(vocab, m, binding.text_of(m, intent.text))
            for m in intent.missions
            if binding.wants(m, wish)
        ]
    if intent.unknown_names:
        return []  # a spacecraft was named, just not one the catalog has: never OMNI instead
    if (q.solar_wind or intent.at_earth) and "omni" in vocab.mission_names:
        b.notes.append(
            f"No mission was named, so {q.label} comes from OMNI (near-Earth solar wind)."
        )
        return [_mission_source(vocab, MissionRef("omni", "OMNI", "OMNI", 0))]
    return []


def _not_a_mission(vocab: Vocabulary, name: str) -> str:
    """Why `name` was not used: no such mission, and which datasets carry its name."""
    named = vocab.by_prefix.get(name.upper(), [])
    where = f"; datasets named after it: {', '.join(named[:5])}" if named else ""
    return f"'{name}': no mission by that name in the CDAWeb catalog{where}"


def _window(intent: RequestIntent, first: Candidate, b: _Builder) -> TimeRange:
    """The requested time range, or the last week of data of the best candidate."""
    if intent.time_range is not None:
        return intent.time_range
    info = b.vocab.catalog.dataset(first.dataset_id)
    end = b.now.replace(minute=0, second=0, microsecond=0)
    if info.stop is not None and info.stop < b.now - timedelta(days=400):
        end = info.stop.replace(hour=0, minute=0, second=0, microsecond=0)
    window = TimeRange(end - _DEFAULT_SPAN, end)
    b.notes.append(
        f"No time range was given, so I used the last 7 days of {first.dataset_id} data "
        f"({window.readable()}). Add one, e.g. 'for 2024-01-15 to 2024-01-20'."
    )
    return window


def _fetch_step(
    source: _Source, wish: QuantityWish, cands: list[Candidate], span: TimeRange, ref: str
) -> PlanStep:
    calls = tuple(
        ToolCall(
            "fetch_data",
            {"dataset_id": c.dataset_id, "parameter_id": c.parameter, "time_range": str(span)},
        )
        for c in cands
    )
    what = wish.text if wish.quantity == _NAMED else describe_quantity(wish)
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


def _compute(
    b: _Builder,
    series: str,
    inputs: tuple[str, ...],
    label: str,
    code: str,
    description: str,
    units: str | None = None,
    only_if_vector: bool = False,
) -> str:
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


def _series_chain(
    b: _Builder,
    source: _Source,
    wish: QuantityWish,
    span: TimeRange,
    ref: str,
    cands: list[Candidate],
) -> tuple[str, str]:
    """Fetch, derive the component, apply the operations; returns (final ref, name)."""
    b.steps.append(_fetch_step(source, wish, cands, span, ref))
    named = wish.quantity == _NAMED
    name = f"{source.name} {wish.text if named else describe_quantity(wish)}"
    q = None if named else quantity(wish.quantity)
    component = wish.component or (q.default_component if q else None)
    current = ref
    tag = f"{source.tag}_{_tag(wish.text) if q is None else _SHORT.get(q.key, q.key)}"
    if q is not None and q.shape == "vector" and component not in (None, "vector"):
        suffix = "mag" if component == "magnitude" else component
        label = b.unique(f"{tag}{suffix}")
        code, what = component_code(component, q.key)
        units = cands[0].units if cands and cands[0].units else None  # a component keeps them
        current = _compute(
            b, name, (current,), label, code, f"{what} of {name}", units, only_if_vector=True
        )
        tag = label
    current, tag, name = _series_operations(b, (current, tag, name), span, wish, cands)
    if b.intent.operation("psd") is not None:
        what = f"Welch power spectral density of {name}"
        call = ToolCall("power_spectrum", {"label": f"{{{current}}}"})
        out = b.unique(f"{tag}_psd")
        b.steps.append(
            PlanStep("compute", what, "__data_ops__", (call,), out, (current,), series=what)
        )
    return current, name


def _series_operations(
    b: _Builder,
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
        if op.kind in _TWO_SERIES or op.kind in _SIDE_RESULTS:
            continue
        if wish is not None and not _applies(b.intent, op, wish):
            continue
        fixed = op.kind == "detrend" or op.window_points is not None
        window = 0.0 if fixed else op.window_s or _default_window(span, b, op)
        code, what, suffix = series_code(op.kind, window, op.detail, op.window_points)
        label = b.unique(f"{tag}_{suffix}")
        units = None if op.kind != "derivative" else _derivative_units(cands)
        current = _compute(b, name, (current,), label, code, f"{name} {what}", units)
        tag, name = label, f"{name} {what}"
    return current, tag, name


_OPERATION_WORDS: dict[str, re.Pattern[str]] = {
    "smooth": re.compile(r"smooth|boxcar|running|moving|rolling", re.I),
    "derivative": re.compile(r"derivativ|differentiat|rate of change|d/dt", re.I),
    "resample": re.compile(r"averag|resampl|\bbin|\bhourly\b|\bdaily\b", re.I),
}
# Where one part of a request ends and another begins ("Bz's derivative, and also Np").
_PART_BREAK = re.compile(r"\band also\b|\bas well as\b|\bplus\b|\balong with\b|;", re.I)


def _applies(intent: RequestIntent, op: OperationWish, wish: QuantityWish) -> bool:
    """Whether an operation applies to one quantity of the request.

    An operation written after every quantity ("B and V, smoothed over 1 h") applies to
    all; written before some ("|B| and smoothed proton speed", "derivative of Bz and
    also the density") it applies to the quantities after it, up to the next part.
    """
    text = intent.slots.text
    words = _OPERATION_WORDS.get(op.kind)
    said = words.search(text) if words else None
    positions = [w.position for w in intent.quantities]
    if said is None or wish.position not in positions:
        return True
    after = [p for p in positions if p >= said.start()]
    if not after:
        return True
    part = _PART_BREAK.search(text, said.end())
    return wish.position in [p for p in after if part is None or p < part.start()]


def _derivative_units(cands: list[Candidate]) -> str:
    unit = cands[0].units if cands else ""
    return f"{unit}/s" if unit else "1/s"


def _default_window(span: TimeRange, b: _Builder, op: OperationWish) -> float:
    target = span.duration.total_seconds() / 50
    window = float(min(_NICE_WINDOWS, key=lambda w: abs(w - target)))
    if op.kind == "smooth":
        what = f"{op.text} window" if op.detail else "smoothing window"
        b.notes.append(f"No {what} was given; used {format_seconds(window)}.")
    return window


def build_plan(
    vocab: Vocabulary, intent: RequestIntent, now: datetime | None = None
) -> OfflinePlan:
    """Turn an intent into steps; `missing` says what to ask for when none can be built."""
    b = _Builder(vocab, intent, now or datetime.now(UTC), binding=bind_missions(intent))
    if intent.doubts:
        # A name close to a mission or a probe it lacks: ask, never fetch a stand-in.
        return OfflinePlan(intent, missing=tuple(f"to know {d}" for d in intent.doubts))
    quantities = _one_frame(b, _not_operation_words(intent, _wanted(b)))
    for declined in declined_operations(intent.text.splitlines()[-1]):
        b.notes.append(f"Not done: {declined.label} ({declined.reason}).")
    finals: list[tuple[str, str, str]] = []
    span: TimeRange | None = None
    derived = derived_named(intent.text) if not intent.time_error else ()
    if derived:
        quantities = _derived_first(b, derived, quantities)
        for d in derived:
            span = _derived_series(b, d, span, finals)
    for wish in quantities if not intent.time_error else []:
        span = _measured_series(b, wish, span, finals)
    if not finals and not b.missing:
        b.missing.append("a mission and quantity the catalog has data for")
    if finals:
        finals = _binary(b, _one_temperature_unit(b, finals))
        _presentation(b, finals, span)
    return OfflinePlan(
        b.intent,
        tuple(b.steps),
        tuple(dict.fromkeys(b.notes)),
        tuple(dict.fromkeys(b.missing)),
        span,
    )


def _wanted(b: _Builder) -> list[QuantityWish]:
    """The quantities to fetch, and what is missing or left out (names, a valid time)."""
    intent = b.intent
    quantities = list(intent.quantities)
    if intent.dataset_ids and not quantities and intent.parameter_names:
        quantities = [QuantityWish(_NAMED, p, 0) for p in intent.parameter_names]
    computed = bool(derived_named(intent.text))  # its inputs are fetched for it
    if not quantities and not computed and len(intent.missions) == 1 and not intent.dataset_ids:
        words = open_request(what_phrase(intent.slots), intent.text)
        ref = intent.missions[0]
        # A parameter that says every word, or a species or channel named, decides first.
        quantities = _open_quantity(b, ref, words, complete=not words.strict)
        if not quantities and not b.missing:
            quantities = _named_product(b, ref) or _open_quantity(b, ref, words)
    if not quantities and not computed:
        quantities = _overview(b)
    if not quantities and not computed:
        b.missing.append(_NO_QUANTITY)
    if intent.time_error:
        b.missing.append(f"a valid time range ({intent.time_error})")
    served = bool(intent.missions or intent.dataset_ids)
    served = served or all(quantity(w.quantity).default_mission for w in quantities)
    for name in intent.unknown_names:
        unknown = _not_a_mission(b.vocab, name)
        if served:
            b.notes.append(f"Left out {unknown}.")
        else:
            b.missing.append(f"a mission the catalog has ({unknown})")
    if unused := _unused_words(intent):
        b.notes.append(
            f"Not used from the request: {', '.join(repr(w) for w in unused)} (nothing I can "
            f"place); the answer does not take {'them' if len(unused) > 1 else 'it'} into account."
        )
    return quantities


def _not_operation_words(intent: RequestIntent, wishes: list[QuantityWish]) -> list[QuantityWish]:
    """Quantity words that are part of an operation's name ("spectral density") left out."""
    spans = [(s, e) for _, s, e in named_operations(intent.text)]
    return [
        w
        for w in wishes
        if not any(s <= w.position < e and w.text in intent.text[s:e] for s, e in spans)
    ]


def _unused_words(intent: RequestIntent) -> list[str]:
    """Left-over words of the request no question or note names already."""
    said = " ".join([*intent.unknown_names, *intent.unplaced, *intent.doubts]).lower()
    words = [w.text for w in intent.slots.leftover if len(w.text) > 1]
    return [w for w in dict.fromkeys(words) if w.lower() not in said]


def _derived_first(
    b: _Builder, derived: tuple[DerivedQuantity, ...], quantities: list[QuantityWish]
) -> list[QuantityWish]:
    """The quantities left once derived ones take their inputs ("pressure from n and V")."""
    inputs = {need.partition(":")[0] for d in derived for need in d.needs} | {"pressure"}
    inputs |= {d.key for d in derived}  # "motional electric field" is computed, not fetched
    # "thermal pressure of the solar wind": the group word names the medium, not a bundle.
    grouped = [w for w in quantities if any(p.fullmatch(w.text) for p, _ in GROUP_WORDS)]
    quantities = [w for w in quantities if w.quantity not in inputs and w not in grouped]
    if not quantities and b.missing[:1] == [_NO_QUANTITY]:
        b.missing.pop(0)
    if any(d.key == "alpha_proton_ratio" for d in derived):
        # "ratio" named the derived quantity, not a ratio of two plotted series.
        kept_ops = tuple(op for op in b.intent.operations if op.kind != "ratio")
        b.intent = replace(b.intent, operations=kept_ops)
    return quantities


def _measured_series(
    b: _Builder, wish: QuantityWish, span: TimeRange | None, finals: list[tuple[str, str, str]]
) -> TimeRange | None:
    """Fetch `wish` from every source that should deliver it, with its operations."""
    what = wish.text if wish.quantity == _NAMED else describe_quantity(wish)
    sources = _sources_for(b, wish)
    if not sources:
        if not b.intent.unknown_names:  # already asked for a mission the catalog has
            b.missing.append(f"a mission for {what} (e.g. ACE, Wind, PSP)")
        return span
    ranked: list[tuple[_Source, list[Candidate]]] = []
    for source in sources:
        cands = _candidates(b, source, wish, span)
        if not cands:
            b.notes.append(f"No {source.name} dataset in the catalog holds {what}.")
            continue
        if span is None:
            span = _window(b.intent, cands[0], b)
            cands = _candidates(b, source, wish, span)
        ranked.append((source, cands))
    if span is None:  # no source holds it
        return span
    for source, cands in _one_product(b, wish, span, ranked):
        final, name = _series_chain(b, source, wish, span, f"s{len(finals) + 1}", cands)
        derivative = b.intent.operation("derivative") is not None
        b.units[final] = _derivative_units(cands) if derivative else cands[0].units
        group = f"{wish.quantity}:{wish.component or ''}" if wish.quantity != _NAMED else ""
        group += _kept_dimension(b, wish, cands[0])
        finals.append((final, name, group or cands[0].units))
    return span


def _kept_dimension(b: _Builder, wish: QuantityWish, cand: Candidate) -> str:
    """'@dim' for a spectrogram of a 2-D array: the dimension drawn; the other is averaged."""
    if wish.quantity != "spectrogram":
        return ""
    info = b.vocab.catalog.dataset(cand.dataset_id)
    p = info.parameter(cand.parameter)
    kept = kept_dimension(info, p, wish.component) if p else None
    if p is None or kept is None:
        return ""
    name, averaged = kept
    drawn, other = ("pitch angle", "energy") if wish.component == "pitch" else ("energy", "angle")
    b.notes.append(
        f"{p.name} is an array over pitch angle and energy: drawn over {drawn}, averaged "
        f"over its {averaged} {other} bins."
    )
    return f"@{name}"


def _one_product(
    b: _Builder,
    wish: QuantityWish,
    span: TimeRange | None,
    ranked: list[tuple[_Source, list[Candidate]]],
) -> list[tuple[_Source, list[Candidate]]]:
    """Probes of one constellation served one product.

    The product shown before ("now MMS3" after MMS1), else the one all the probes named
    have data of ("MMS1 through MMS4"); said when there is none.
    """
    catalog = b.vocab.catalog
    earlier = [
        d for d in _earlier_datasets(b) if resolve(catalog, wish, [catalog.dataset(d)], limit=1)
    ]
    out: list[tuple[_Source, list[Candidate]]] = []
    switched = False
    for source, cands in ranked:
        kept = (
            kept_product(catalog, earlier, source.role, source.probe, source.name, span)
            if source.probe is not None
            else []
        )
        usable = [k.dataset for k in kept if k.dataset is not None]
        own = resolve(catalog, wish, usable, probe=source.probe, time_range=span) if usable else []
        if own:
            cands = led_by([own[0], *cands], product(own[0].dataset_id) or "")
            b.notes.append(f"Kept the product shown before: {own[0].dataset_id} for {source.name}.")
        elif kept:
            b.notes.extend(f"{k.note}; used {cands[0].dataset_id}." for k in kept if k.note)
        switched = switched or bool(kept)
        out.append((source, cands))
    if switched:
        return out
    for role in dict.fromkeys(s.role for s, _ in out if s.probe is not None):
        group = [i for i, (s, _) in enumerate(out) if s.role == role and s.probe is not None]
        if len(group) < 2:
            continue
        deep = [_resolve(b, out[i][0], wish, span, limit=30) for i in group]
        key = common_product(catalog, deep, span)
        if key is None:
            names = ", ".join(out[i][0].name for i in group)
            b.notes.append(
                f"No one product of {names} holds {describe_quantity(wish)} for the time "
                "asked: each shows its own best dataset."
            )
            continue
        for i, more in zip(group, deep, strict=True):
            out[i] = (out[i][0], led_by([*out[i][1], *more], key))
    return out


def _earlier_datasets(b: _Builder) -> list[str]:
    """What the request a probe switch follows showed ("now MMS3" after MMS1): its datasets."""
    if b.earlier is None:
        earlier = b.intent.product_of
        plan = build_plan(b.vocab, earlier, b.now) if earlier is not None else None
        b.earlier = [
            s.calls[0].args["dataset_id"] for s in (plan.steps if plan else ()) if s.kind == "fetch"
        ]
    return b.earlier


def _named_product(b: _Builder, ref: MissionRef) -> list[QuantityWish]:
    """A product named by its own words and no quantity ("SolO EPT sunward rates").

    The mission's datasets are ranked as the catalog search ranks them (those covering
    the requested time first); the one whose metadata accounts for every word typed is
    taken, with its main data parameter (never a support variable). Said in the answer.
    """
    intent, catalog = b.intent, b.vocab.catalog
    terms = request_terms(intent.text, intent.hints)
    typed = " ".join(t.typed for t in terms).lower()
    leftover = [w for w in intent.unplaced if w.lower() not in typed]
    source = _mission_source(b.vocab, ref, intent.text)
    rank = {h.dataset_id: n for n, h in enumerate(catalog.search(intent.text, 60, ref.mission_id))}
    span = intent.time_range
    datasets = sorted(
        (
            d
            for d in source.datasets
            if not is_auxiliary(d)
            and (source.probe is None or probe_of_dataset(d.id) in (source.probe, None))
        ),
        key=lambda d: (
            span is not None and d.stop is not None and d.stop < span.start,
            span is not None and d.start is not None and d.start > span.end,
            level_rank(d),
            rank.get(d.id, len(rank)),
        ),
    )
    info = named_product(datasets, terms, leftover, cadence_of)
    if info is None:
        return []
    param = main_parameter(info, [*leftover, *(t.typed for t in terms)])
    if param is None:
        return []
    b.intent = replace(intent, dataset_ids=(info.id,), unplaced=())
    b.notes.append(
        f"Read '{' '.join(t.typed for t in terms)}' as the product {info.id} "
        f"({info.title.split(' - ')[0]}); shown: {param.name}, its main data."
    )
    return [QuantityWish(_NAMED, param.name, 0)]


def _open_quantity(
    b: _Builder, ref: MissionRef, words: OpenRequest, complete: bool = False
) -> list[QuantityWish]:
    """A quantity the table does not know, found in the mission's parameter metadata.

    The parameter whose name, description, labels and units cover the request's words
    (a species or energy channel named must match) is fetched as named; the words it
    does not cover are said. Nothing found for a species or channel named is asked.
    """
    intent = b.intent
    if not words.concepts:
        return []
    source = _mission_source(b.vocab, ref, intent.text)
    picks = rank_open(
        words,
        source.datasets,
        probe=source.probe,
        time_range=intent.time_range,
        wanted_cadence=intent.cadence_s,
        terms=request_terms(intent.text, intent.hints),
        complete=complete,
    )
    if not picks:
        if words.strict and not complete:
            b.missing.append(
                f"which {ref.name} data you mean: no parameter of its datasets in the catalog "
                f"holds '{words.phrase()}'"
            )
        return []
    pick = picks[0]
    b.intent = replace(
        intent,
        dataset_ids=(pick.dataset_id,),
        unplaced=(),
        slots=replace(intent.slots, leftover=()),
    )
    info = b.vocab.catalog.dataset(pick.dataset_id)
    param = info.parameter(pick.parameter)
    described = param.description.strip() if param and param.description else pick.parameter
    b.notes.append(
        f"Read '{words.phrase()}' as the product {pick.dataset_id} "
        f"({info.title.split(' - ')[0].strip()}); shown: {pick.parameter} ({described}), "
        "the parameter whose own metadata says it."
    )
    b.notes.extend(pick.notes)
    return [QuantityWish(_NAMED, pick.parameter, 0)]


def _overview(b: _Builder) -> list[QuantityWish]:
    """Solar wind monitors named with no quantity: |B|, speed and density, said so."""
    intent = b.intent
    monitors = load_vocabulary().solar_wind_missions
    if intent.unplaced and intent.missions and not intent.dataset_ids:
        # "ACE neutron monitor counts": something was named, just nothing offline mode
        # can place; an overview would be data other than asked.
        b.missing.append(
            f"a quantity I know ('{' '.join(intent.unplaced)}' is nothing I can place)"
        )
        return []
    if (
        not intent.missions
        or intent.dataset_ids
        or derived_named(intent.text)
        or not all(m.mission_id in monitors for m in intent.missions)
    ):
        return []
    b.notes.append(
        "No quantity was named, so this shows the solar wind overview: |B|, speed and density."
    )
    return [
        QuantityWish(k, "solar wind overview", n, c) for n, (k, c) in enumerate(GROUP_WORDS[0][1])
    ]


_FRAME_WORDS = load_vocabulary().frame_words


def _one_frame(b: _Builder, quantities: list[QuantityWish]) -> list[QuantityWish]:
    """Arithmetic across frames ("Bz in GSM minus Bz in GSE") is done in one frame, said."""
    op = next((o for o in b.intent.operations if o.kind in _TWO_SERIES), None)
    frames = list(dict.fromkeys(f.upper() for f in _FRAME_WORDS.findall(b.intent.text)))
    if op is None or len(frames) < 2:
        return quantities
    first = frames[0]
    b.notes.append(
        f"The request names {' and '.join(frames)}: a {op.text} across coordinate frames "
        f"mixes frames, and converting {', '.join(frames[1:])} to {first} needs a rotation "
        f"offline mode does not do, so every series is taken in {first}."
    )
    framed = [replace(w, frame=first) if w.quantity != _NAMED else w for w in quantities]
    if b.binding is not None:
        return framed  # "ACE Bz GSM minus Wind Bz GSE": each spacecraft its own Bz
    # "Bz GSM minus Bz GSE of ACE" names one quantity twice: once in one frame.
    seen: set[tuple[object, ...]] = set()
    kept: list[QuantityWish] = []
    for w in framed:
        key = (w.quantity, w.component, w.frame, w.species)
        if key not in seen:
            seen.add(key)
            kept.append(w)
    return kept


def _derived_series(
    b: _Builder, d: DerivedQuantity, span: TimeRange | None, finals: list[tuple[str, str, str]]
) -> TimeRange | None:
    """Fetch the inputs of derived quantity `d` at each mission and compute it there."""
    intent = b.intent
    sources = [_mission_source(b.vocab, m, intent.text) for m in intent.missions]
    if not sources and "omni" in b.vocab.mission_names:
        b.notes.append(f"No mission was named, so the {d.label} is computed from OMNI data.")
        sources = [_mission_source(b.vocab, MissionRef("omni", "OMNI", "OMNI", 0))]
    frame = next((w.frame for w in intent.quantities if w.frame), None)
    for source in sources:
        refs: list[str] = []
        units: list[str] = []
        parts: list[int] = []
        for wish in input_wishes(d, frame):
            cands = _candidates(b, source, wish, span)
            if not cands:
                b.notes.append(
                    f"No {source.name} dataset holds {describe_quantity(wish)}, so the "
                    f"{d.label} could not be computed there."
                )
                break
            if span is None:
                span = _window(intent, cands[0], b)
                cands = _candidates(b, source, wish, span)
            split = _vector_parts(b, source, wish, span) if cands[0].components < 3 else None
            parts.append(len(split or [wish]))
            for part, part_cands in split or [(wish, cands)]:
                ref = f"d{len(b.steps) + 1}"
                b.steps.append(_fetch_step(source, part, part_cands, span, ref))
                refs.append(ref)
                units.append(part_cands[0].units)
        else:
            problem = unit_problem(d, units)
            if problem is not None:
                b.notes.append(f"Not computed at {source.name}: {problem}.")
                continue
            label = b.unique(f"{source.tag}_{d.key}")
            formula = f" ({d.formula})" if d.formula else ""
            what = f"{source.name} {d.label}"
            code, converted = derived_code(d, units, parts)
            if converted:
                b.notes.append(f"Units for the {source.name} {d.label}: {converted}.")
            _compute(b, what, tuple(refs), label, code, f"{what}{formula}", d.units)
            b.units[label] = d.units
            assert span is not None
            final, _, what = _series_operations(b, (label, label, what), span, None, [])
            if b.intent.operation("derivative") is None:
                b.units[final] = d.units  # statistics and smoothing keep the unit
            finals.append((final, what, d.key))
    return span


def _vector_parts(
    b: _Builder, source: _Source, wish: QuantityWish, span: TimeRange | None
) -> list[tuple[QuantityWish, list[Candidate]]] | None:
    """A vector a source only has as separate components (OMNI's BX_GSE, BY_GSM, BZ_GSM).

    x is the same in GSE and GSM (the frames share the Sun-Earth line), so it is taken
    in either. None when the components are not all there either.
    """
    if wish.component != "vector":
        return None
    parts: list[tuple[QuantityWish, list[Candidate]]] = []
    for axis in ("x", "y", "z"):
        frame = None if axis == "x" and wish.frame in ("GSE", "GSM") else wish.frame
        part = replace(wish, component=axis, frame=frame)
        cands = [c for c in _resolve(b, source, part, span) if c.components == 1]
        if not cands:
            return None
        parts.append((part, cands))
    return parts


def _candidates(
    b: _Builder, source: _Source, wish: QuantityWish, span: TimeRange | None
) -> list[Candidate]:
    if wish.quantity == _NAMED:
        info = source.datasets[0]
        p = info.parameter(wish.text)
        if p is None:
            return []
        return [Candidate(info.id, p.name, p.units, p.components, 0.0, "named in the request")]
    cands = _sibling_vector_first(b, source, wish, span, _resolve(b, source, wish, span))
    words = open_request(_wish_phrase(b.intent, wish), b.intent.text)
    if not cands or words.energy_kev is not None:
        # A quantity the table's cues miss in this mission's metadata (a temperature in
        # two columns), or an energy channel named: the catalog's own words decide.
        # Only a parameter that itself says every word (another mission's nearest
        # quantity is no fallback: OMNI has no electron flux).
        cands = rank_open(
            words,
            source.datasets,
            probe=source.probe,
            time_range=span,
            wanted_cadence=b.intent.cadence_s,
            terms=request_terms(b.intent.text, b.intent.hints),
            complete=True,
        )
    if cands and span is not None:  # product words the pick lacks, a timeless sibling: said
        b.notes.extend(n for n in cands[0].notes if n not in b.notes)
    return cands


def _wish_phrase(intent: RequestIntent, wish: QuantityWish) -> str:
    """The quantity's own words and the species named with it ("ion temperature")."""
    species = [s.text(intent.slots.text) for s in intent.slots.of("species")]
    return " ".join([*species[:1], wish.text]) if wish.species else wish.text


def _resolve(
    b: _Builder, source: _Source, wish: QuantityWish, span: TimeRange | None, limit: int = 5
) -> list[Candidate]:
    text = source.text or b.intent.text  # only this source's words name its product
    hints = tuple(h for h in b.intent.hints if h.lower() in text.lower())
    return resolve(
        b.vocab.catalog,
        wish,
        source.datasets,
        mission_id=source.role if source.role in b.vocab.mission_names else None,
        probe=source.probe,
        time_range=span,
        wanted_cadence=b.intent.cadence_s,
        parameter_names=b.intent.parameter_names,
        hints=hints,
        terms=request_terms(text, hints),
        keep_support=bool(b.intent.dataset_ids),
        limit=limit,
    )


def _sibling_vector_first(
    b: _Builder, source: _Source, wish: QuantityWish, span: TimeRange | None, cands: list[Candidate]
) -> list[Candidate]:
    """Components asked together come from one vector, so they share one frame.

    Without a frame, By and Bz lean to GSM and Bx to GSE: "Bx, By, Bz" would mix frames.
    When a y/z sibling's best pick is a 3-vector, it goes first for this component too.
    Scalar components (OMNI's BY_GSM) are left alone.
    """
    if wish.frame or wish.component not in ("x", "y", "z"):
        return cands
    for other in b.intent.quantities:
        if other is wish or other.quantity != wish.quantity or other.frame:
            continue
        if other.component in ("y", "z"):
            lead = _resolve(b, source, other, span)[:1]
            if lead and lead[0].components >= 3:
                # Any 3-vector serves every component: the siblings' vector goes first,
                # then the rest as fallbacks.
                return lead + [c for c in cands if c.dataset_id != lead[0].dataset_id]
            return cands
    return cands


def _binary(b: _Builder, finals: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The operation on two series (difference, percent difference, ratio, correlation).

    Never done silently on something else: with other than two series, or a difference
    of series in different units, it is said as not done.
    """
    op = next((o for o in b.intent.operations if o.kind in _TWO_SERIES), None)
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
        _cross_correlation(b, finals)
        return finals
    if op.kind != "ratio" and not _same_units(u1, u2, g1, g2):
        b.notes.append(
            f"Not done: the {op.text}: {n1} is in {u1 or 'no unit'} and {n2} in "
            f"{u2 or 'no unit'}; series in different units cannot be subtracted."
        )
        return finals
    label = b.unique(f"{op.kind}_{_tag(n1)[:20]}_{_tag(n2)[:20]}")
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
    out = _compute(b, what, (r1, r2), label, binary_code(op.kind), what, units)
    return [*finals, (out, what, op.kind)]


def _cross_correlation(b: _Builder, finals: list[tuple[str, str, str]]) -> None:
    """The lag of the second series behind the first at their correlation peak."""
    (r1, n1, _), (r2, n2, _) = finals
    what = f"cross-correlation of {n1} and {n2} (lag of the second behind the first)"
    args = {"label_a": f"{{{r1}}}", "label_b": f"{{{r2}}}"}
    call = ToolCall("cross_correlation_lag", args)
    label = b.unique(f"xcorr_{_tag(n1)[:20]}_{_tag(n2)[:20]}")
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


def _one_temperature_unit(
    b: _Builder, finals: list[tuple[str, str, str]]
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
        label = b.unique(f"{_tag(name)[:30]}_K")
        what = f"{name} converted from eV to K (1 eV = {_EV_IN_K} K)"
        code = f"result = df * {_EV_IN_K}"
        converted = _compute(b, name, (ref,), label, code, what, "K")
        b.units[converted] = "K"
        b.notes.append(f"Converted {name} from eV to K (1 eV = {_EV_IN_K} K) to compare it.")
        out.append((converted, name, group))
    return out


def _presentation(b: _Builder, finals: list[tuple[str, str, str]], span: TimeRange | None) -> None:
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
