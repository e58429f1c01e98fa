"""Which quantities a request wants.

Named ones, a named product, one found in the catalog's own metadata, or an
overview; what cannot be placed is said.
"""

from __future__ import annotations

import re
from dataclasses import replace

from xhelio.agents.offline.derived import derived_named
from xhelio.agents.offline.plan.named_vectors import named_vectors
from xhelio.agents.offline.plan.rotation import source_frames
from xhelio.agents.offline.plan.series import TWO_SERIES
from xhelio.agents.offline.plan.sources import (
    mission_source,
    not_a_mission,
    per_instrument,
    source_candidates,
)
from xhelio.agents.offline.plan.steps import NAMED, Builder, Source
from xhelio.catalog.index import is_auxiliary
from xhelio.catalog.model import DatasetInfo
from xhelio.language.frames import frames_named
from xhelio.language.grounding import OpenRequest, open_request, rank_open, what_phrase
from xhelio.language.intent import (
    MissionRef,
    QuantityWish,
    RequestIntent,
    describe_quantity,
)
from xhelio.language.operations import named_operations, operand_spans
from xhelio.language.products import (
    channel_family,
    is_density,
    main_parameter,
    named_by_id,
    named_product,
    refused_words,
    request_terms,
    species_named,
    species_of,
    unsaid_words,
)
from xhelio.language.quantities import GROUP_WORDS, quantity
from xhelio.language.ratios import IonRatio, parameter_ratio, requested_ratios
from xhelio.language.resolve import (
    cadence_of,
    level_rank,
    probe_of_dataset,
)
from xhelio.language.time_frequency import held_spectrum_spans
from xhelio.timerange import TimeRange
from xhelio.vocabulary import DerivedQuantity, load_vocabulary

_NO_QUANTITY = "a quantity (e.g. magnetic field, solar wind speed, density, Dst)"


def wanted_quantities(b: Builder) -> list[QuantityWish]:
    """The quantities to fetch, and what is missing or left out (names, a valid time)."""
    intent = b.intent
    quantities = named_vectors(b, list(intent.quantities))
    intent = b.intent
    if intent.dataset_ids and len(intent.parameter_names) > len(quantities):
        # "Gillam magnetometer H and Z components": each named parameter is fetched, not
        # the one the quantity word would pick.
        quantities = [QuantityWish(NAMED, p, 0) for p in intent.parameter_names]
    computed = bool(derived_named(intent.text))  # its inputs are fetched for it
    ratios = requested_ratios(intent.text)
    if not quantities and ratios and intent.missions and not intent.dataset_ids:
        quantities = _ion_ratios(b, ratios)
    elif not quantities and not computed and len(intent.missions) == 1 and not intent.dataset_ids:
        words = open_request(what_phrase(intent.slots), intent.text)
        ref = intent.missions[0]
        # A parameter that says every word, or a species or channel named, decides first.
        quantities = _open_quantity(b, ref, words, complete=not words.strict)
        if not quantities and not b.missing:
            quantities = (
                _each_instrument(b, ref) or _named_product(b, ref) or _open_quantity(b, ref, words)
            )
    elif not quantities and not computed and intent.missions and not intent.dataset_ids:
        quantities = _open_quantity_each(b, open_request(what_phrase(intent.slots), intent.text))
    if not quantities and not computed and intent.dataset_ids and not intent.parameter_names:
        quantities = _main_data(b)
    if not quantities and not computed:
        quantities = _overview(b)
    if not quantities and not computed:
        b.missing.append(_NO_QUANTITY)
    if intent.time_error:
        b.missing.append(f"a valid time range ({intent.time_error})")
    quantities = source_frames(intent, quantities)
    served = bool(intent.missions or intent.dataset_ids)
    served = served or all(quantity(w.quantity).default_mission for w in quantities)
    for name in intent.unknown_names:
        unknown = not_a_mission(b.vocab, name)
        if served:
            b.notes.append(f"Left out {unknown}.")
        else:
            b.missing.append(f"a mission the catalog has ({unknown})")
    for typed, read in intent.spellings:
        b.notes.append(f"Read '{typed}' as '{read}' (taken as a slip of the keys).")
    if unused := _unused_words(intent):
        b.notes.append(
            f"Not used from the request: {', '.join(repr(w) for w in unused)} (nothing I can "
            f"place); the answer does not take {'them' if len(unused) > 1 else 'it'} into account."
        )
    return quantities


def nearest_held(b: Builder, source: Source, wish: QuantityWish) -> str | None:
    """What `source` holds nearest to `wish`, which none of its datasets holds.

    The details a request adds to a quantity are let go one at a time (the frame, the
    species, the component, then all three) and the first such quantity the source has
    is named with its dataset and parameter, for the question the answer asks
    ("DSCOVR Bz GSM": it holds the field in GSE). None when it holds none of them.
    """
    if wish.quantity == NAMED:
        return None
    tries = [
        replace(wish, frame=None),
        replace(wish, species=None),
        replace(wish, component=None),
        replace(wish, frame=None, species=None, component=None),
    ]
    notes = list(b.notes)
    try:
        for relaxed in dict.fromkeys(t for t in tries if t != wish):
            # A quantity of its own shape: no distribution stands in for a moment.
            cands = [c for c in source_candidates(b, source, relaxed, None) if c.components <= 3]
            if cands:
                top = cands[0]
                param = b.vocab.catalog.dataset(top.dataset_id).parameter(top.parameter)
                said = f": {param.description.strip()}" if param and param.description else ""
                return f"{describe_quantity(relaxed)} ({top.dataset_id} {top.parameter}{said})"
    finally:
        b.notes[:] = notes
    return None


def not_operation_words(intent: RequestIntent, wishes: list[QuantityWish]) -> list[QuantityWish]:
    """Quantity words that are part of an operation's name ("spectral density") left out.

    The operand an operation's notation names ("Bz" of "dBz/dt") is a quantity, and so
    is a spectrum the catalog holds named by dynamic-spectrum words ("RPI dynamic
    spectrogram").
    """
    held = held_spectrum_spans(intent.text, intent.quantities)  # "TNR dynamic spectrum"
    spans = [(s, e) for _, s, e in named_operations(intent.text) if (s, e) not in held]
    operands = [(o.start, o.end) for o in operand_spans(intent.text)]
    return [
        w
        for w in wishes
        if any(s <= w.position < e for s, e in operands)
        or not any(s <= w.position < e and w.text in intent.text[s:e] for s, e in spans)
    ]


def _unused_words(intent: RequestIntent) -> list[str]:
    """Left-over words of the request no question or note names already."""
    said = " ".join([*intent.unknown_names, *intent.unplaced, *intent.doubts]).lower()
    words = [w.text for w in intent.slots.leftover if len(w.text) > 1]
    return [w for w in dict.fromkeys(words) if w.lower() not in said]


def derived_first(
    b: Builder, derived: tuple[DerivedQuantity, ...], quantities: list[QuantityWish]
) -> list[QuantityWish]:
    """The quantities left once derived ones take their inputs ("pressure from n and V")."""
    inputs = {need.partition(":")[0] for d in derived for need in d.needs} | {"pressure"}
    inputs |= {d.key for d in derived}  # "motional electric field" is computed, not fetched
    if any(need.endswith(":thermal_speed") for d in derived for need in d.needs):
        # "temperature from the thermal speed": the speed is the temperature's input
        said = [m.span() for m in _THERMAL_SPEED.finditer(b.intent.text)]
        quantities = [w for w in quantities if not any(a <= w.position < e for a, e in said)]
    # "thermal pressure of the solar wind": the group word names the medium, not a bundle.
    grouped = [w for w in quantities if any(p.fullmatch(w.text) for p, _ in GROUP_WORDS)]
    quantities = [
        w
        for w in quantities
        if w not in grouped
        and (w.quantity not in inputs or _listed_beside(b.intent.text, w, derived))
    ]
    if not quantities and b.missing[:1] == [_NO_QUANTITY]:
        b.missing.pop(0)
    if any(d.key == "alpha_proton_ratio" for d in derived):
        # "ratio" named the derived quantity, not a ratio of two plotted series.
        kept_ops = tuple(op for op in b.intent.operations if op.kind != "ratio")
        b.intent = replace(b.intent, operations=kept_ops)
    return quantities


_THERMAL_SPEED = re.compile(r"\bthermal (?:speeds?|velocit(?:y|ies))\b|\b[vw]_?th\b", re.I)
# Words saying a quantity is an input of the derived one: "P_dyn from n and V",
# "use n and V to get P_dyn".
_INPUT_AFTER = re.compile(r"\b(?:from|using|with|out of|via|given|based on|of)\b", re.I)
_INPUT_BEFORE = re.compile(
    r"\b(?:to (?:compute|calculate|get|derive|make)|into|for)\b|->|→|=", re.I
)


def _listed_beside(text: str, wish: QuantityWish, derived: tuple[DerivedQuantity, ...]) -> bool:
    """Whether an input quantity is asked for itself, listed beside the derived one.

    "proton density and dynamic pressure" asks for both; "dynamic pressure from density
    and speed" and "IMF clock angle" name the density and the field only as inputs.
    """
    spans = [m.span() for d in derived for m in d.words.finditer(text)]
    for start, end in spans:
        if start <= wish.position < end:
            return False
        if wish.position >= end and _INPUT_AFTER.search(text[end : wish.position]):
            return False
        if wish.position < start and _INPUT_BEFORE.search(text[wish.position : start]):
            return False
        if wish.position < start and not text[wish.position + len(wish.text) : start].strip():
            return False  # "IMF clock angle": the word right before names its subject
    return bool(spans)


def _named_product(b: Builder, ref: MissionRef) -> list[QuantityWish]:
    """A product named by its own words and no quantity ("SolO EPT sunward rates").

    The mission's datasets are ranked as the catalog search ranks them (those covering
    the requested time first); the one whose metadata accounts for every word typed is
    taken, with its main data parameter (never a support variable). Said in the answer.
    """
    intent = b.intent
    terms = request_terms(intent.text, intent.hints)
    typed = " ".join(t.typed for t in terms).lower()
    species = species_named(intent.text)
    # A species word is the species' data, matched on the parameters ("O+", "alphas").
    refused = refused_words(intent.text)  # "not low latency" asks nothing to be said
    leftover = [
        w
        for w in intent.unplaced
        if w.lower() not in typed and w.lower() not in refused and not species_named(w)
    ]
    datasets = _ranked_datasets(b, ref)
    # A species named ("SWE alphas") is the product's own data or nothing of it; the
    # products holding its density (its main quantity) first.
    holding = sorted(
        (d for d in datasets if any(set(species) <= species_of(p, d) for p in d.data_parameters)),
        key=lambda d: (
            not any(set(species) <= species_of(p, d) and is_density(p) for p in d.data_parameters)
        ),
    )
    info = named_product(holding if species else datasets, terms, leftover, cadence_of)
    if info is None:
        if species and (other := named_product(datasets, terms, leftover, cadence_of)):
            b.missing.append(
                f"which {ref.name} data you mean: no parameter of {other.id} "
                f"({other.title.split(' - ')[0].strip()}) or of a sibling product holds "
                f"{' and '.join(_typed_species(intent) or species)}"
            )
        return []
    words = [w for w in [*leftover, *(t.typed for t in terms)] if not species_named(w)]
    param = main_parameter(info, words, species)
    if param is None:
        return []
    # "EPAM electrons": every channel of the species' detector, not its first one.
    channels = channel_family(info, param) if species else [param]
    shown = ", ".join(p.name for p in channels)
    b.intent = replace(intent, dataset_ids=(info.id,), unplaced=())
    unsaid = unsaid_words(info, terms)
    b.notes.append(
        f"Read '{' '.join(t.typed for t in terms if t.typed not in unsaid)}' as the product "
        f"{info.id} ({info.title.split(' - ')[0]}); shown: {shown}, its main data."
    )
    if unsaid:
        b.notes.append(
            f"Not used from the request: {', '.join(repr(w) for w in unsaid)} (no word of "
            f"{info.id}'s metadata says {'them' if len(unsaid) > 1 else 'it'}); the answer "
            f"does not take {'them' if len(unsaid) > 1 else 'it'} into account."
        )
    return [QuantityWish(NAMED, p.name, 0) for p in channels]


def _each_instrument(b: Builder, ref: MissionRef) -> list[QuantityWish]:
    """The main data of each instrument named and no quantity ("EMFISIS vs EFW").

    Each instrument's product is the one its own words name among its datasets (as for
    one product named); nothing when one of them has none. Said in the answer.
    """
    intent = b.intent
    sources = per_instrument(mission_source(b.vocab, ref, intent.text))
    if len(sources) < 2:
        return []
    ranked = _ranked_datasets(b, ref)
    chosen: list[str] = []
    wishes: list[QuantityWish] = []
    for source in sources:
        own = [d for d in ranked if d in source.datasets]
        hints = tuple(h for h in intent.hints if h.lower() in source.text.lower())
        terms = request_terms(source.text, hints)
        info = named_product(own, terms, [], cadence_of)
        if info is None:
            return []
        # "ERNE HED protons vs EPHIN protons": each product's own data of the species named.
        words = [w.text for w in intent.slots.leftover] + [t.typed for t in terms]
        param = main_parameter(info, words, species_named(source.text))
        if param is None:
            return []
        typed = [t.typed for t in terms if t.acronym] or [t.typed for t in terms]
        b.notes.append(
            f"Read '{' '.join(typed)}' as the product {info.id} "
            f"({info.title.split(' - ')[0]}); shown: {param.name}, its main data."
        )
        chosen.append(info.id)
        wishes.append(QuantityWish(NAMED, param.name, 0))
    b.intent = replace(intent, dataset_ids=tuple(chosen), unplaced=())
    return wishes


def _ranked_datasets(b: Builder, ref: MissionRef) -> list[DatasetInfo]:
    """The mission's data products as the catalog search ranks them.

    Those covering the requested time first, then by level (science before quick-look).
    """
    intent, catalog = b.intent, b.vocab.catalog
    source = mission_source(b.vocab, ref, intent.text)
    rank = {h.dataset_id: n for n, h in enumerate(catalog.search(intent.text, 60, ref.mission_id))}
    span = intent.time_range
    terms = request_terms(intent.text, intent.hints)
    return sorted(
        (
            d
            for d in source.datasets
            if not (is_auxiliary(d) and not named_by_id(d, terms))
            and (source.probe is None or probe_of_dataset(d.id) in (source.probe, None))
        ),
        key=lambda d: (
            span is not None and d.stop is not None and d.stop < span.start,
            span is not None and d.start is not None and d.start > span.end,
            level_rank(d),
            _too_coarse(d, span),
            rank.get(d.id, len(rank)),
        ),
    )


def _too_coarse(info: DatasetInfo, span: TimeRange | None) -> bool:
    """Whether `info` gives fewer than 24 points over the span asked (daily data for a day)."""
    cadence = cadence_of(info)
    return span is not None and cadence is not None and cadence * 24 > span.duration.total_seconds()


def _ion_ratios(b: Builder, ratios: list[IonRatio]) -> list[QuantityWish]:
    """Abundance or charge-state ratios named by two ions ("O7/O6", "Fe/O"), each mission's.

    The parameter whose own name or description holds the same two ions (element and
    charge) is fetched, never a sibling ratio; none held is asked about. The request's
    "ratio" names these series, not a ratio of two fetched ones.
    """
    intent = b.intent
    wishes: list[QuantityWish] = []
    datasets: list[str] = []
    for ref in intent.missions:
        b.intent = intent
        for ratio in ratios:
            held = next(
                (
                    (info, p)
                    for info in _ranked_datasets(b, ref)
                    for p in info.data_parameters
                    if parameter_ratio(p) == ratio
                ),
                None,
            )
            if held is None:
                b.intent = intent
                b.missing.append(
                    f"which {ref.name} data you mean: no parameter of its datasets in the "
                    f"catalog holds the {ratio} ratio"
                )
                return []
            info, p = held
            b.notes.append(
                f"Read '{ratio}' as {info.id} {p.name} ({p.description.strip() or p.name})."
            )
            datasets.append(info.id)
            wishes.append(QuantityWish(NAMED, p.name, 0))
    kept_ops = tuple(op for op in intent.operations if op.kind != "ratio")
    b.intent = replace(
        intent,
        dataset_ids=tuple(dict.fromkeys(datasets)),
        unplaced=(),
        operations=kept_ops,
        slots=replace(intent.slots, leftover=()),
    )
    return list(dict.fromkeys(wishes))


def _typed_species(intent: RequestIntent) -> list[str]:
    """The species words as the request wrote them ("alphas", "He++")."""
    return [s.text(intent.slots.text) for s in intent.slots.of("species")]


def _open_quantity(
    b: Builder, ref: MissionRef, words: OpenRequest, complete: bool = False
) -> list[QuantityWish]:
    """A quantity the table does not know, found in the mission's parameter metadata.

    The parameter whose name, description, labels and units cover the request's words
    (a species or energy channel named must match) is fetched as named; the words it
    does not cover are said. Nothing found for a species or channel named is asked.
    """
    intent = b.intent
    if not words.concepts:
        return []
    source = mission_source(b.vocab, ref, intent.text)
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
    return [QuantityWish(NAMED, pick.parameter, 0)]


def _open_quantity_each(b: Builder, words: OpenRequest) -> list[QuantityWish]:
    """One open quantity from several spacecraft ("EFW spacecraft potential for C1 and C4").

    Each spacecraft's own parameter whose metadata covers the words, or the product its
    words name, read as for one spacecraft; each fetched from its own dataset. Nothing
    when one of them has none: then the request is asked about, as for one spacecraft.
    """
    intent = b.intent
    wishes: list[QuantityWish] = []
    datasets: list[str] = []
    for ref in intent.missions:
        b.intent = intent
        found = (
            _open_quantity(b, ref, words, complete=not words.strict)
            or _named_product(b, ref)
            or _open_quantity(b, ref, words)
        )
        if not found:
            b.intent = intent
            return []
        datasets.extend(b.intent.dataset_ids)
        wishes.extend(w for w in found if w not in wishes)
    b.intent = replace(b.intent, dataset_ids=tuple(dict.fromkeys(datasets)))
    return wishes


def _main_data(b: Builder) -> list[QuantityWish]:
    """The main data of each dataset named by its id alone ("C1_CP_EFW_L3_P and ..."), said."""
    words = [w.text for w in b.intent.slots.leftover]
    # a frame named ("thd fgs GSM") picks the vector in that frame over the magnitude
    words += [m[0] for m in load_vocabulary().frame_words.finditer(b.intent.text)]
    wishes: list[QuantityWish] = []
    for dataset_id in b.intent.dataset_ids:
        param = main_parameter(b.vocab.catalog.dataset(dataset_id), words)
        if param is None:
            continue
        b.notes.append(f"No quantity was named: shown {param.name}, the main data of {dataset_id}.")
        wishes.append(QuantityWish(NAMED, param.name, 0))
    return wishes


def _overview(b: Builder) -> list[QuantityWish]:
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


def one_frame(b: Builder, quantities: list[QuantityWish]) -> list[QuantityWish]:
    """Arithmetic across frames ("Bz in GSM minus Bz in GSE") is done in one frame, said."""
    op = next((o for o in b.intent.operations if o.kind in TWO_SERIES), None)
    frames = list(frames_named(b.intent.text))
    if op is None or len(frames) < 2:
        return quantities
    first = frames[0]
    b.notes.append(
        f"The request names {' and '.join(frames)}: a {op.text} across coordinate frames "
        f"mixes frames, and converting {', '.join(frames[1:])} to {first} needs a rotation "
        f"offline mode does not do, so every series is taken in {first}."
    )
    framed = [replace(w, frame=first) if w.quantity != NAMED else w for w in quantities]
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
