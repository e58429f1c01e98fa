"""`RequestIntent` -> `OfflinePlan`.

The quantities wanted, each fetched from its sources with its operations, then
combined and presented.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from xhelio.agents.offline.derived import (
    catalog_quantity,
    derived_code,
    derived_named,
    flavoured,
    input_wishes,
    unit_problem,
)
from xhelio.agents.offline.plan.channels import channel_series, short_of_request
from xhelio.agents.offline.plan.combine import (
    one_temperature_unit,
    presentation,
    two_series_operation,
)
from xhelio.agents.offline.plan.kept import keep_shown
from xhelio.agents.offline.plan.rotation import parameter_frame
from xhelio.agents.offline.plan.series import (
    add_compute,
    catalog_series,
    derivative_units,
    fetch_step,
    series_chain,
    series_operations,
    time_frequency_power,
    total_near_earth,
    whole_window_statistics,
)
from xhelio.agents.offline.plan.sources import (
    held_derived,
    many_energy_channels,
    measuring_source,
    mission_source,
    named_axes,
    resolve_source,
    source_candidates,
    source_question,
    sources_for,
    spectrogram_dimension,
    time_window,
    vector_parts,
)
from xhelio.agents.offline.plan.steps import NAMED, Builder, OfflinePlan, Source
from xhelio.agents.offline.plan.wanted import (
    derived_first,
    nearest_held,
    not_operation_words,
    one_frame,
    wanted_quantities,
)
from xhelio.analysis.geoframes import GEOPHYSICAL_FRAMES, REFERENCE
from xhelio.language.binding import bind_missions
from xhelio.language.intent import (
    MissionRef,
    QuantityWish,
    RequestIntent,
    describe_quantity,
)
from xhelio.language.operations import declined_operations
from xhelio.language.parse import Vocabulary
from xhelio.language.probes import (
    common_product,
    kept_product,
    led_by,
    product,
    switched_datasets,
    switched_parameter,
)
from xhelio.language.resolve import (
    Candidate,
    resolve,
)
from xhelio.timerange import TimeRange
from xhelio.vocabulary import DerivedQuantity


def build_plan(
    vocab: Vocabulary, intent: RequestIntent, now: datetime | None = None
) -> OfflinePlan:
    """Turn an intent into steps; `missing` says what to ask for when none can be built."""
    b = Builder(vocab, intent, now or datetime.now(UTC), binding=bind_missions(intent))
    if intent.doubts:
        # A name close to a mission or a probe it lacks: ask, never fetch a stand-in.
        return OfflinePlan(intent, missing=tuple(f"to know {d}" for d in intent.doubts))
    if (future := _not_yet(b)) is not None:
        return OfflinePlan(intent, missing=(future,))
    intent = _probe_switched(b)
    quantities = one_frame(b, not_operation_words(intent, wanted_quantities(b)))
    for declined in declined_operations(intent.text.splitlines()[-1]):
        b.notes.append(f"Not done: {declined.label} (could not honour it: {declined.reason}).")
    finals: list[tuple[str, str, str]] = []
    span: TimeRange | None = None
    derived = derived_named(intent.text) if not intent.time_error else ()
    if derived:
        quantities = derived_first(b, derived, quantities)
        for d in derived:
            span = _derived_series(b, d, span, finals)
    for wish in quantities if not intent.time_error else []:
        span = _measured_series(b, wish, span, finals)
    if not finals and not b.missing:
        b.missing.append("a mission and quantity the catalog has data for")
    if finals:
        finals = two_series_operation(b, one_temperature_unit(b, finals), span)
        presentation(b, finals, span)
    return OfflinePlan(
        b.intent,
        tuple(b.steps),
        tuple(dict.fromkeys(b.notes)),
        tuple(dict.fromkeys(b.missing)),
        span,
    )


def _not_yet(b: Builder) -> str | None:
    """A time range wholly after now is asked about; one running past now is said."""
    span, now = b.intent.time_range, b.now
    if span is None or span.end <= now:
        return None
    said = f"{now:%Y-%m-%d %H:%M} UTC"
    if span.start < now:
        b.notes.append(f"The range asked runs past now ({said}): data can only reach now.")
        return None
    return (
        f"a time that has already happened ({span.readable()} is after now, {said}: "
        "no spacecraft has measured it yet)"
    )


def _measured_series(
    b: Builder, wish: QuantityWish, span: TimeRange | None, finals: list[tuple[str, str, str]]
) -> TimeRange | None:
    """Fetch `wish` from every source that should deliver it, with its operations."""
    what = wish.text if wish.quantity == NAMED else describe_quantity(wish)
    sources = sources_for(b, wish)
    wish = total_near_earth(b, wish, sources)
    parts = _scalar_components(b, wish, sources, span)
    if parts:
        for part in parts:
            span = _measured_series(b, part, span, finals)
        return span
    if not sources:
        if not b.intent.unknown_names:  # already asked for a mission the catalog has
            b.missing.append(source_question(b.intent, what))
        return span
    ranked: list[tuple[Source, list[Candidate]]] = []
    for source in sources:
        cands = source_candidates(b, source, wish, span)
        window = span or b.intent.time_range
        # A spectrum kept as one parameter per energy channel: when no spectrum variable
        # serves it, or the one offered falls short (product named, time asked).
        rival = short_of_request(b, cands, window)
        spectrum = wish.quantity == "spectrogram" and (not cands or rival is not None)
        if spectrum and window and channel_series(b, source, wish, window, finals, rival):
            span = window
            b.notes[:] = [n for n in b.notes if rival is None or n not in rival.notes]
            continue
        if not cands:
            b.notes.append(f"No {source.name} dataset in the catalog holds {what}.")
            if (held := nearest_held(b, source, wish)) is not None:
                b.missing.append(f"to know whether the {source.name} {held} would do instead")
            continue
        if span is None:
            span = time_window(b.intent, cands[0], b)
            cands = source_candidates(b, source, wish, span)
        ranked.append((source, keep_shown(b.vocab.catalog, wish, span, cands, _shown(b))))
    if span is None:  # no source holds it
        return span
    for source, cands in _one_product(b, wish, span, ranked):
        ref = f"s{len(finals) + 1}"
        final, name = series_chain(b, source, wish, span, ref, cands)
        derivative = b.intent.operation("derivative") is not None
        b.units[final] = derivative_units(cands) if derivative else cands[0].units
        group = f"{wish.quantity}:{wish.component or ''}" if wish.quantity != NAMED else ""
        group += spectrogram_dimension(b, wish, cands[0])
        if final == ref and not group.startswith("spectrogram"):
            group = _channels_as_spectrogram(b, wish, cands[0]) or group
        finals.append((final, name, group or cands[0].units))
        finals += time_frequency_power(b, wish, (final, name), span)
    return span


def _scalar_components(
    b: Builder, wish: QuantityWish, sources: list[Source], span: TimeRange | None
) -> list[QuantityWish]:
    """The components a vector asked as such ("components", "vector") is fetched as.

    Where the best dataset of the (one) source holds no 3-vector, only scalar parameters
    for each component (Helios NESS "Bx (SSE)", Voyager "BR in RTN", OMNI "Bx (nT), GSE"),
    a scalar such as the magnitude never stands for the vector: its x, y, z (else r, t, n)
    components are fetched. Empty when a 3-vector serves, or the components are not there.
    """
    if wish.component != "vector" or len(sources) != 1:
        return []
    source = sources[0]
    cands = source_candidates(b, source, wish, span)
    if not cands or cands[0].components >= 3:
        return []
    for axes in (("x", "y", "z"), ("r", "t", "n")):
        parts = vector_parts(b, source, wish, span, axes)
        if parts is not None and len({c[0].dataset_id for _, c in parts}) == 1:
            return [part for part, _ in parts]
    return []


def _channels_as_spectrogram(b: Builder, wish: QuantityWish, cand: Candidate) -> str:
    """The spectrogram panel group of a flux with more energy channels than a handful.

    Drawn as what it is (energy on y, log colour), not as a line per channel index;
    said. Empty when the product is not such an array or a component was asked.
    """
    count = many_energy_channels(b, cand)
    if not count or wish.component is not None:
        return ""
    b.notes.append(
        f"{cand.dataset_id}.{cand.parameter} has {count} energy channels: drawn as a "
        "spectrogram (energy on the y axis, colour on a log scale) rather than "
        f"{count} lines."
    )
    return "spectrogram:" + spectrogram_dimension(b, replace(wish, quantity="spectrogram"), cand)


def _one_product(
    b: Builder,
    wish: QuantityWish,
    span: TimeRange | None,
    ranked: list[tuple[Source, list[Candidate]]],
) -> list[tuple[Source, list[Candidate]]]:
    """Probes of one constellation served one product.

    The product shown before ("now MMS3" after MMS1), else the one all the probes named
    have data of ("MMS1 through MMS4"); said when there is none.
    """
    catalog = b.vocab.catalog
    earlier = [
        d
        for d in _earlier_datasets(b)
        if wish.quantity != NAMED and resolve(catalog, wish, [catalog.dataset(d)], limit=1)
    ]  # a parameter named by its id is its dataset's already
    out: list[tuple[Source, list[Candidate]]] = []
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
            lead = _kept_parameter(b, wish, span, own[0], cands)
            cands = led_by([lead, *cands], product(own[0].dataset_id) or "")
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
        deep = [resolve_source(b, out[i][0], wish, span, limit=30) for i in group]
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


def _probe_switched(b: Builder) -> RequestIntent:
    """The datasets named by id before, for the probes a follow-up names ("same for MMS2")."""
    intent, earlier = b.intent, b.intent.product_of
    if intent.dataset_ids or intent.quantities or earlier is None or not earlier.dataset_ids:
        return intent
    probes = [(m.mission_id, m.text) for m in intent.missions]
    catalog = b.vocab.catalog
    pairs, notes = switched_datasets(catalog, earlier.dataset_ids, probes, intent.time_range)
    b.notes.extend(notes)
    if pairs:
        held = {p.name for _, d in pairs for p in catalog.dataset(d).parameters}
        names = [switched_parameter(n, a, d) for n in intent.parameter_names for a, d in pairs]
        b.intent = replace(
            intent,
            dataset_ids=tuple(dict.fromkeys(d for _, d in pairs)),
            parameter_names=tuple(dict.fromkeys(n for n in names if n in held))
            or intent.parameter_names,
            product_of=None,
        )
    return b.intent


def _earlier_shown(b: Builder) -> list[tuple[str, str]]:
    """What the request a probe switch follows showed ("now MMS3" after MMS1)."""
    if b.earlier is None:
        earlier = b.intent.product_of
        plan = build_plan(b.vocab, earlier, b.now) if earlier is not None else None
        b.earlier = [
            (s.calls[0].args["dataset_id"], str(s.calls[0].args.get("parameter_id", "")))
            for s in (plan.steps if plan else ())
            if s.kind == "fetch"
        ]
    return b.earlier


def _earlier_datasets(b: Builder) -> list[str]:
    """The datasets the request a probe switch follows showed, in order."""
    return list(dict.fromkeys(d for d, _ in _earlier_shown(b)))


def _kept_parameter(
    b: Builder, wish: QuantityWish, span: TimeRange | None, own: Candidate, cands: list[Candidate]
) -> Candidate:
    """The candidate of the kept product `own` to show: the parameter shown before.

    "switch to NOAA-18" after NOAA-19's mep_ele_flux_stackt0 shows NOAA-18's
    mep_ele_flux_stackt0 (the same parameter of the same product), else the parameter the
    request's words chose in it ("total" after "now F16"), else `own`.
    """
    names = [p for d, p in _earlier_shown(b) if p and product(d) == product(own.dataset_id)]
    catalog = b.vocab.catalog
    info = catalog.dataset(own.dataset_id)
    for name in names:
        if info.parameter(name) is None:
            continue
        at = (own.dataset_id, name)
        held = next((c for c in cands if (c.dataset_id, c.parameter) == at), None)
        if held is not None:
            return held
        found = resolve(catalog, wish, [info], time_range=span, parameter_names=(name,), limit=30)
        if (same := next((c for c in found if c.parameter == name), None)) is not None:
            return same
    return next((c for c in cands if c.dataset_id == own.dataset_id), own)


def _shown(b: Builder) -> list[tuple[str, str]]:
    """What the request a follow-up only re-times showed: its (dataset, parameter)s."""
    if b.shown is None:
        before = b.intent.shown_before
        plan = build_plan(b.vocab, before, b.now) if before is not None else None
        b.shown = [
            (s.calls[0].args["dataset_id"], s.calls[0].args["parameter_id"])
            for s in (plan.steps if plan else ())
            if s.kind == "fetch" and "parameter_id" in s.calls[0].args
        ]
    return b.shown


def _input_or_quasi_neutral(
    b: Builder, source: Source, wish: QuantityWish, span: TimeRange | None, d: DerivedQuantity
) -> tuple[QuantityWish, list[Candidate]]:
    """The input's candidates; an electron density the source lacks is its proton density.

    Quasi-neutrality (n_e ≈ n_p) lets a solar wind monitor's proton density give the
    electron plasma frequency; the answer says so.
    """
    cands = _input_candidates(b, source, wish, span)
    if cands or wish.quantity != "density" or wish.species != "electron":
        return wish, cands
    ion = replace(wish, species="proton")
    cands = _input_candidates(b, source, ion, span)
    if not cands:
        return wish, cands
    b.notes.append(
        f"No {source.name} dataset holds the electron density, so the {d.label} uses "
        "the proton density (n_e ≈ n_p, quasi-neutrality)."
    )
    return ion, cands


def _input_candidates(
    b: Builder, source: Source, wish: QuantityWish, span: TimeRange | None
) -> list[Candidate]:
    """The candidates for one input of a derived quantity, of its flavour if it has one."""
    cands = flavoured(wish.text, source_candidates(b, source, wish, span), b.vocab.catalog)
    return cands if span is None else keep_shown(b.vocab.catalog, wish, span, cands, _shown(b))


def _vector_split(
    b: Builder,
    source: Source,
    wish: QuantityWish,
    span: TimeRange | None,
    cands: list[Candidate],
    d: DerivedQuantity,
) -> list[tuple[QuantityWish, list[Candidate]]] | None:
    """A vector input fetched as components: the ones the request names, else x, y, z.

    Named components ("|B| from B_R, B_T, B_N") are fetched as named when the source
    has them; otherwise a 3-vector serves as it is, and a source without one gives x, y, z
    (only y and z for an input that needs no more, "magnetic_field:yz": a clock angle).
    """
    axes = named_axes(b.intent, wish.quantity) if d.named_inputs else None
    named = vector_parts(b, source, wish, span, axes) if axes else None
    if named is not None or cands[0].components >= 3:
        return named
    if wish.text.endswith(":yz"):
        return vector_parts(b, source, wish, span, ("y", "z"))
    return vector_parts(b, source, wish, span)


def _vector_in_other_frame(
    b: Builder, source: Source, wish: QuantityWish, span: TimeRange | None
) -> tuple[list[Candidate], str] | None:
    """A 3-vector of the source in another geophysical frame, to rotate into `wish.frame`.

    DSCOVR gives its field in GSE and RTN, no GSM: a clock angle is computed from the
    GSE vector rotated into GSM. None when the source has no such vector.
    """
    if wish.frame not in GEOPHYSICAL_FRAMES:
        return None
    for frame in sorted(GEOPHYSICAL_FRAMES, key=lambda f: f != "GSE"):
        other = replace(wish, frame=frame)
        cands = [
            c
            for c in _input_candidates(b, source, other, span)
            if c.components >= 3
            and (p := b.vocab.catalog.dataset(c.dataset_id).parameter(c.parameter)) is not None
            and parameter_frame(p) == frame
        ]
        if cands and frame != wish.frame:
            return cands, frame
    return None


def _input_fetches(
    b: Builder,
    source: Source,
    wish: QuantityWish,
    span: TimeRange | None,
    cands: list[Candidate],
    d: DerivedQuantity,
) -> tuple[list[tuple[QuantityWish, list[Candidate]]], str | None] | None:
    """The fetches one input takes, and the frame its vector is rotated from (None: none).

    None when a vector input has neither a vector, its components, nor a vector in another
    geophysical frame: a magnitude is never taken for it.
    """
    split = _vector_split(b, source, wish, span, cands, d)
    if split is not None:
        return split, None
    if wish.component == "vector" and cands[0].components < 3:
        other = _vector_in_other_frame(b, source, wish, span)
        if other is None:
            return None
        return [(replace(wish, frame=other[1]), other[0])], other[1]
    return [(wish, cands)], None


def _rotated(
    b: Builder, source: Source, wish: QuantityWish, cand: Candidate, frame: str, ref: str
) -> str:
    """The label of the fetched vector `ref` rotated from `frame` into `wish.frame`."""
    target = str(wish.frame)
    label = b.unique(f"{source.tag}_{wish.quantity}_{target}")
    what = f"{source.name} {describe_quantity(wish)} rotated from {frame}"
    code = (
        f"# {frame} -> {target}: Hapgood (1992) rotation, IGRF-13 dipole axis\n"
        f"result = analysis.rotate_frame(df, {frame!r}, {target!r})"
    )
    add_compute(b, what, (ref,), label, code, what, cand.units)
    b.notes.append(
        f"{source.name} has no {describe_quantity(wish)}: {cand.dataset_id}.{cand.parameter} "
        f"was rotated from {frame} into {target} (method: {REFERENCE})."
    )
    return label


def _deriving_missions(b: Builder) -> list[MissionRef]:
    """The missions a derived quantity is computed at: those named, else a named dataset's.

    "clock angle from dscovr mag" names the dataset DSCOVR_H0_MAG, not the mission: its
    mission computes the quantity (kept to the instrument the words name), never OMNI.
    """
    if b.intent.missions:
        return list(b.intent.missions)
    refs: dict[str, MissionRef] = {}
    for dataset_id in b.intent.dataset_ids:
        info = b.vocab.catalog.dataset(dataset_id)
        name = b.vocab.mission_names.get(info.mission_id or "")
        if info.mission_id and name:
            refs.setdefault(info.mission_id, MissionRef(info.mission_id, name, name, 0))
    return list(refs.values())


def _derived_series(
    b: Builder, d: DerivedQuantity, span: TimeRange | None, finals: list[tuple[str, str, str]]
) -> TimeRange | None:
    """Fetch the inputs of derived quantity `d` at each mission and compute it there."""
    intent = b.intent
    sources = [mission_source(b.vocab, m, intent.text) for m in _deriving_missions(b)]
    if not sources and "omni" in b.vocab.mission_names:
        b.notes.append(f"No mission was named, so the {d.label} comes from OMNI data.")
        sources = [mission_source(b.vocab, MissionRef("omni", "OMNI", "OMNI", 0))]
    frame = next((w.frame for w in intent.quantities if w.frame), None)
    species = next((str(s.value) for s in intent.slots.of("species")), None)
    for mission in sources:
        own = (
            None
            if d.named_inputs
            else catalog_quantity(d, mission.datasets, span or intent.time_range)
        )
        if own is not None:  # the catalog has the quantity itself: fetched, not computed
            span = catalog_series(b, mission, d, own, span or intent.time_range, finals)
            continue
        # a row with its own catalog pattern is decided by it; others by the label's words
        asked = d.catalog is not None or d.named_inputs
        held = None if asked else held_derived(b, mission, d, span)
        if held is not None:  # the source holds it: fetched as the catalog says it
            span = span or time_window(intent, held, b)
            b.notes.append(f"{mission.name} holds the {d.label} as {held.parameter}: fetched.")
            wish = QuantityWish(NAMED, held.parameter, 0)
            final, name = series_chain(b, mission, wish, span, f"s{len(finals) + 1}", [held])
            b.units[final] = held.units
            finals.append((final, name, d.key))
            continue
        if d.catalog is not None:
            b.notes.append(
                f"No {mission.name} parameter in the catalog is the {d.label} itself, "
                f"so it is computed from its inputs ({d.formula or ', '.join(d.needs)})."
            )
        source = mission
        refs: list[str] = []
        units: list[str] = []
        parts: list[int] = []
        for wish in input_wishes(d, frame, species):
            source = measuring_source(mission, wish)
            wish, cands = _input_or_quasi_neutral(b, source, wish, span, d)
            if not cands:
                b.notes.append(
                    f"No {source.name} dataset holds {describe_quantity(wish)}, so the "
                    f"{d.label} could not be computed there."
                )
                break
            if span is None:
                span = time_window(intent, cands[0], b)
                cands = _input_candidates(b, source, wish, span)
            fetches = _input_fetches(b, source, wish, span, cands, d)
            if fetches is None:
                b.notes.append(
                    f"No {source.name} dataset holds {describe_quantity(wish)} as a "
                    f"vector (or one in a frame rotatable into it), so the {d.label} "
                    "could not be computed there."
                )
                break
            split, turned = fetches
            parts.append(len(split))
            for part, part_cands in split:
                ref = f"d{len(b.steps) + 1}"
                b.steps.append(fetch_step(source, part, part_cands, span, ref))
                if turned is not None:
                    ref = _rotated(b, source, wish, part_cands[0], turned, ref)
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
            add_compute(b, what, tuple(refs), label, code, f"{what}{formula}", d.units)
            b.units[label] = d.units
            assert span is not None
            final, tag, what = series_operations(b, (label, label, what), span, None, [])
            whole_window_statistics(b, (final, tag, what), d.units)
            if b.intent.operation("derivative") is None:
                b.units[final] = d.units  # statistics and smoothing keep the unit
            finals.append((final, what, d.key))
    return span
