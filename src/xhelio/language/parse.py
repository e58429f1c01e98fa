"""Request text -> `RequestIntent`: missions, datasets, quantities, time range and wishes.

Missions are spotted with the catalog's own alias table (ids, names, common names such
as "PSP", "SolO", "STEREO-A"), dataset ids are checked against the catalog, the time
range is the longest piece of the sentence that `parse_time_range` accepts, and the
physics words come from `quantities.py`. Pieces already claimed (a title, dataset ids,
durations, the time phrase) are masked before the next pass reads the text, so "2000
seconds" never becomes the year 2000 and a quoted title never names a mission.
Imports `catalog`, `timerange`, `errors` and this package; never the tools.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta

from xhelio.language.acronyms import instrument_capitals
from xhelio.language.carriers import carrier_missions
from xhelio.language.catalog_view import Vocabulary
from xhelio.language.channel_names import channel_names_not_missions, named_channels
from xhelio.language.doubts import find_doubts
from xhelio.language.idwords import an_id_part, id_parts_not_missions, spaced_dataset_ids
from xhelio.language.intent import (
    MissionRef,
    OperationWish,
    PlotWish,
    QuantityWish,
    RequestIntent,
)
from xhelio.language.operations import (
    operand_spans,
    operation_spans,
    operation_windows,
    ratio_slashes,
)
from xhelio.language.probes import probe_doubts
from xhelio.language.products import product_terms
from xhelio.language.quantities import (
    SYNONYM_WORDS,
    quantity,
)
from xhelio.language.quantity_words import (
    COMPONENT_TOKEN,
    COMPONENT_WORD,
    FRAME_WORDS,
    MAGNITUDE_TOKEN,
    MAGNITUDE_WORD,
    SPACECRAFT_FRAME,
    SPECIES_WORDS,
    VECTOR_WORD,
    quantity_wishes,
)
from xhelio.language.ratios import ratio_spans
from xhelio.language.slots import (
    Slot,
    SlotKind,
    SlotReading,
    account,
    find_designations,
    find_formulas,
    find_places,
    masked,
    name_runs,
)
from xhelio.language.spacecraft_words import (
    detached_probes,
    omni_looks,
    plurals_read,
    read_missions,
)
from xhelio.language.spectra import spectrum_wishes
from xhelio.language.spelling import respelt, spelling_fixes
from xhelio.language.stations import lettered_components, named_stations
from xhelio.language.time_frequency import outside_spectrum_words, spectrum_words
from xhelio.language.wishes import (
    Duration,
    find_colours,
    find_discovery,
    find_durations,
    find_export,
    find_hints,
    find_layout,
    find_operations,
    find_title,
    find_unplaced,
    wants_log,
    wants_plot,
)
from xhelio.timerange import TimeFound, find_time, stray_clocks, unread_time_words
from xhelio.vocabulary import load_vocabulary
from xhelio.vocabulary.absent import absent_missions_named

__all__ = ["Vocabulary", "parse_request"]

_DATASET_SHAPE = re.compile(r"[A-Za-z0-9]+(?:[_\-][A-Za-z0-9]+)+")
_COMPARE = re.compile(r"\bcompar\w*|\bvs\.?(?!\w)|\bversus\b|\bagainst\b", re.I)
# "(see Fig. 2)", "as in Figure 3b", "(cf. Eq. 4)": a remark citing a paper, never a probe.
_CITED = re.compile(
    r"(?:\(\s*)?(?:(?:see|cf\.?|as in|compare)\s+)?\b(?:fig(?:ure)?s?|eqs?|equations?|tables?)"
    r"\.?\s*\d+[a-z]?(?:\s*(?:,|and|&|-)\s*\d+[a-z]?)*(?:\s*\))?",
    re.I,
)
_AT_EARTH = re.compile(r"\b(?:at|near)[- ]earth\b|\bupstream\b|\bnear-earth\b|\bat l1\b", re.I)


def _parameter_names(vocab: Vocabulary, dataset_ids: list[str], text: str) -> tuple[str, ...]:
    names: list[str] = []
    for dataset_id in dataset_ids:
        params = {p.name.lower(): p.name for p in vocab.catalog.dataset(dataset_id).data_parameters}
        for word in re.findall(r"[\w\-]+", text):
            found = params.get(word.lower())
            if found and (len(found) > 2 or word == found) and found not in names:
                names.append(found)
    return tuple(names)


# A capitalised name just before a quantity ("Juno magnetic field", "Foobar's |B|") or
# after "from"/"by" ("|B| from Juno") stands where a spacecraft goes.
_NAME_BEFORE = re.compile(r"(?<![\w-])(?P<n>[A-Z][A-Za-z0-9]{2,})(?:'s)?\s+$")
_NAME_AFTER = re.compile(r"\b(?:from|by)\s+(?P<n>[A-Z][A-Za-z0-9]{2,})\b")
# Verbs and places that open a sentence before a quantity ("Plot magnetic field").
_NOT_NAMES = re.compile(
    r"(?:show|plot|get|fetch|give|display|draw|graph|chart|overlay|compare|smooth|average"
    r"|download|load|find|see|visuali[sz]e|what|which|how|the|earth|sun)",
    re.I,
)


def _unknown_names(vocab: Vocabulary, physics: str, wishes: list[QuantityWish]) -> tuple[str, ...]:
    """Names standing where a spacecraft goes that the catalog has no mission for.

    `physics` has the missions the alias table knows masked already. A word counts only
    when the catalog cannot place it: no dataset, title or parameter mentions it, or it
    is just the prefix of dataset ids of no mission of its own (JUNO_HELIO1HR_POSITION).
    Physics words ("Plasma", "Energetic") are all over the catalog, so they never count.
    """
    found = [m["n"] for w in wishes if (m := _NAME_BEFORE.search(physics[: w.position]))]
    found += [m["n"] for m in _NAME_AFTER.finditer(physics)]
    unknown: list[str] = []
    for name in dict.fromkeys(found):
        if _NOT_NAMES.fullmatch(name) or SPECIES_WORDS.search(name) or FRAME_WORDS.fullmatch(name):
            continue
        if name.upper() in vocab.by_prefix or not vocab.catalog.search(name, limit=1):
            unknown.append(name)
    return tuple(unknown)


def _product_word(wish: QuantityWish, text: str, missions: tuple[MissionRef, ...]) -> bool:
    """Whether an index's word names the product of a mission named instead.

    "Polar MFE KP": "KP" after the instrument is its key-parameter product (a product
    word of the vocabulary spans it), not the Kp index, which no spacecraft measures.
    """
    if not missions or quantity(wish.quantity).default_mission is None:
        return False
    span = (wish.position, wish.position + len(wish.text))
    return any(m.span() == span for t in product_terms(text) for m in _phrase(t.typed, text))


def _instrument_quantity(text: str, missions: tuple[MissionRef, ...]) -> list[QuantityWish]:
    """What named instruments measure, when the request names nothing else ("C1 FGM").

    Each quantity once, in the order named ("EMFISIS vs EFW": each instrument's own).
    """
    frame = FRAME_WORDS.search(text)  # "MGF data in GSM": the frame is the data's
    typed = frame[1].upper() if frame else None
    wishes: dict[str, QuantityWish] = {}
    for ref in missions:
        for inst in load_vocabulary().instruments_of(ref.mission_id):
            match = inst.words.search(text)
            if match and inst.quantity and inst.quantity not in wishes:
                wishes[inst.quantity] = QuantityWish(
                    inst.quantity, match[0], match.start(), frame=typed
                )
    return sorted(wishes.values(), key=lambda w: w.position)


def _instrument_words(missions: tuple[MissionRef, ...]) -> re.Pattern[str] | None:
    """Every name of the instruments of the missions named, as one pattern."""
    words = [
        inst.words.pattern
        for ref in missions
        for inst in load_vocabulary().instruments_of(ref.mission_id)
    ]
    return re.compile("|".join(f"(?:{w})" for w in words), re.I) if words else None


def _without_product_words(text: str) -> str:
    """`text` with its product phrases ("west-facing telescope", "pitch angle") blanked.

    They are read as product terms (`products.product_terms`), so they are placed: the
    words left over are only those nothing reads.
    """
    for product in load_vocabulary().products:
        for m in product.words.finditer(text):
            text = masked(text, m.start(), m.end())
    return text


def _not_placed(text: str) -> tuple[str, ...]:
    """What the request names that no quantity here stands for ("neutron flux")."""
    pattern = load_vocabulary().not_placed
    match = pattern.search(text) if pattern else None
    if match is None:
        return ()
    return (f"what data you mean by '{match[0]}' (offline mode has no quantity for it)",)


_SLOT_WORDS: tuple[tuple[SlotKind, re.Pattern[str]], ...] = (
    ("component", COMPONENT_TOKEN),
    ("component", MAGNITUDE_TOKEN),
    ("component", COMPONENT_WORD),
    ("component", MAGNITUDE_WORD),
    ("component", VECTOR_WORD),
    ("species", SPECIES_WORDS),
    ("frame", FRAME_WORDS),
    ("frame", SPACECRAFT_FRAME),
    ("place", _AT_EARTH),
)


def _physics_spans(
    physics: str, quantities: list[QuantityWish], missions: tuple[MissionRef, ...]
) -> list[Slot]:
    """Spans of the quantity, component, species, frame, instrument and product words."""
    found: list[Slot] = [
        Slot("quantity", w.quantity, w.position, w.position + len(w.text))
        for w in quantities
        if physics[w.position : w.position + len(w.text)] == w.text
    ]
    found += [Slot(kind, m[0], *m.span()) for kind, rx in _SLOT_WORDS for m in rx.finditer(physics)]
    # "spacecraft potential": a filler word inside a quantity's phrase is the quantity's.
    found += [
        Slot("quantity", m[0], *m.span()) for rx in SYNONYM_WORDS for m in rx.finditer(physics)
    ]
    instruments = _instrument_words(missions)
    if instruments is not None:
        found += [Slot("instrument", m[0], *m.span()) for m in instruments.finditer(physics)]
    for term in product_terms(physics):
        found += [Slot("product", term.typed, *m.span()) for m in _phrase(term.typed, physics)]
    return found


def _phrase(piece: str, text: str) -> list[re.Match[str]]:
    return list(re.finditer(rf"(?<!\w){re.escape(piece)}(?!\w)", text, re.I)) if piece else []


def _quoted_spans(text: str, sayings: list[str]) -> list[Slot]:
    """Words already spoken for: a quoted piece of a question, an operation's own words."""
    pieces = [q for s in sayings for q in re.findall(r"'([^']+)'", s) or [s]]
    return [Slot("operation", p, *m.span()) for p in pieces for m in _phrase(p, text)]


def _account(vocab: Vocabulary, text: str, claimed: list[Slot]) -> SlotReading:
    """The slot reading of a request: what each parser claimed, and the rest.

    A word the catalog's metadata holds is a product word for the resolver (it ranks
    datasets by such words), so only the rest is left over.
    """
    first = account(text, claimed)
    placed = [w for w in first.leftover if _catalog_places(vocab, w.text)]
    if not placed:
        return first
    return account(text, [*claimed, *(Slot("product", w.text, w.start, w.end) for w in placed)])


def _catalog_places(vocab: Vocabulary, word: str) -> bool:
    parts = re.findall(r"[A-Za-z]{3,}", word)
    return bool(parts) and all(
        p.upper() not in vocab.by_prefix and vocab.catalog.search(p, limit=1) for p in parts
    )


# Words after which a name is a spacecraft ("seen by the Halcyon orbiter").
_CRAFT_BEFORE = re.compile(r"\b(?:from|by|of|at|on|aboard|with|for)\s+(?:the\s+)?$", re.I)
_QUALIFIED: frozenset[SlotKind] = frozenset({"mission", "instrument", "product", "dataset"})
_BESIDE: frozenset[SlotKind] = frozenset(
    {"quantity", "species", "component", "instrument", "product", "frame"}
)


def _names_left(reading: SlotReading) -> tuple[str, ...]:
    """Left-over names standing where a spacecraft goes.

    Before what it measured, or after "from"/"by"/"at" ("Demo Observatory probe
    temperature", "by the Halcyon orbiter").
    """
    names: list[str] = []
    for start, end in name_runs(reading):
        before = next((s for s in reversed(reading.slots) if s.end <= start), None)
        if before and before.kind in _QUALIFIED and not reading.text[before.end : start].strip():
            continue  # a qualifier of what was named ("ARTEMIS P1", "EPAM LEMS120")
        after = next((s for s in reading.slots if s.start >= end), None)
        between = reading.text[end : after.start] if after else ""
        beside = after is not None and after.kind in _BESIDE and not account(between, []).leftover
        if beside or _CRAFT_BEFORE.search(reading.text[:start]):
            names.append(reading.text[start:end])
    return tuple(names)


def _merged(names: tuple[str, ...], more: tuple[str, ...]) -> tuple[str, ...]:
    """`names` and those of `more` that neither hold nor are part of one already there."""
    out = list(names)
    for name in more:
        if not any(name in n or n in name for n in out):
            out.append(name)
    return tuple(out)


# A range this long may be only the year written beside a time that was not read.
_COARSE = timedelta(days=27)


def _inside(d: Duration, spans: tuple[tuple[int, int], ...]) -> bool:
    return any(a <= d.start and d.end <= b and (a, b) != (d.start, d.end) for a, b in spans)


def _time_with_durations(
    work: str, timeless: str, durations: list[Duration], now: datetime | None
) -> TimeFound:
    """The time range of the request, with the durations that belong to it.

    A duration may be part of it ("6 hours starting 14:00", "10 days ago", "12h to 06h",
    "plus or minus 2 hours") but never the whole of it ("2000 s").
    """
    raw = find_time(work, now)
    if raw.range is not None and any(_inside(d, raw.spans) for d in durations):
        return raw
    return find_time(timeless, now)


_Windows = list[tuple[str, tuple[str, str], int, int]]


def _part_windows(
    work: str, timeless: str, durations: list[Duration], now: datetime | None
) -> tuple[_Windows, str, str]:
    """Clock times an operation is computed over, masked from the texts the time is read in.

    "ACE Bz 06:00-18:00 on 2015-03-17, PSD over 09:00-10:00": the PSD's clocks are a part
    of the plotted range. Only when the rest still names a range with clock times; a
    request whose only clocks are the operation's ("on 2017-07-11: PSD of Bz over
    13:00-13:10") keeps them as its time range, as before.
    """
    windows = operation_windows(work)
    if not windows:
        return [], work, timeless
    rest, rest_timeless = work, timeless
    for _, _, start, end in windows:
        rest, rest_timeless = masked(rest, start, end), masked(rest_timeless, start, end)
    found = _time_with_durations(rest, rest_timeless, durations, now)
    if found.range is None or all(
        t.time() == datetime.min.time() for t in (found.range.start, found.range.end)
    ):
        return [], work, timeless
    return windows, rest, rest_timeless


def _computed_over(operations: list[OperationWish], windows: _Windows) -> list[OperationWish]:
    """The operations with the clock times each is computed over, if the request gave them."""
    during = {key: clocks for key, clocks, _, _ in windows}
    return [replace(op, during=during[op.kind]) if op.kind in during else op for op in operations]


def _without_operations(work: str) -> str:
    """The text with its operation words masked ("5th percentile", "time below -10 nT")."""
    for span in operation_spans(work):
        work = masked(work, *span)
    return work


def _without_notation(physics: str, work: str) -> str:
    """`physics` without the marks operations write around quantities.

    The slash of a ratio ("Te/Ti": two quantities, their ratio an operation) and the
    "d" and "/dt" of a derivative ("dSYM-H/dt": SYM-H is a quantity to read).
    """
    for slash in ratio_slashes(work):
        physics = masked(physics, slash, slash + 1)
    for operand in operand_spans(work):
        for span in operand.affixes():
            physics = masked(physics, *span)
    return physics


def _without_citations(work: str) -> str:
    """`work` without the numbers that name no time nor probe.

    A designation ("LANL 1994-084": a name, not a day of 1994) and a remark citing a
    paper ("(see Fig. 2)").
    """
    for span in find_designations(work):
        work = masked(work, *span)
    for cited in _CITED.finditer(work):
        work = masked(work, *cited.span())
    return work


def _named_datasets(vocab: Vocabulary, work: str) -> tuple[list[tuple[str, tuple[int, int]]], str]:
    """The datasets `work` names, with their spans, and `work` without them.

    An id, an id written as words, or a ground station's place or code.
    """
    named: list[tuple[str, tuple[int, int]]] = []
    for match in _DATASET_SHAPE.finditer(work):
        known = vocab.dataset_ids.get(match[0].upper())
        if known:
            named.append((known, match.span()))
            work = masked(work, *match.span())
    for found in [
        *spaced_dataset_ids(vocab.by_prefix, work),
        *((s, span) for s, span in named_stations(vocab.catalog, work)),
    ]:
        named.append(found)
        work = masked(work, *found[1])
    return named, work


def parse_request(text: str, vocab: Vocabulary, now: datetime | None = None) -> RequestIntent:
    """Read one request into a `RequestIntent` (never raises for odd text).

    A left-over word one slip from one vocabulary word ("desnity") is read as that word
    when the request so respelt leaves it over no more; `spellings` says so.
    """
    intent = _read(text, vocab, now)
    # A word only the catalog's search placed ("electon": a slip some descriptions hold
    # too) is no id part, so it may be a slip as well.
    typed = [w.text for w in intent.slots.leftover]
    typed += [s.text(intent.slots.text) for s in intent.slots.of("product")]
    fixes = tuple(f for f in spelling_fixes(typed) if not an_id_part(vocab.catalog, f[0]))
    if not fixes:
        return intent
    again = _read(respelt(text, fixes), vocab, now)
    left = {w.text.lower() for w in again.slots.leftover}
    kept = tuple((typed, read) for typed, read in fixes if read not in left)
    if not kept:
        return intent
    if len(kept) < len(fixes):
        again = _read(respelt(text, kept), vocab, now)
    return replace(again, spellings=kept)


def _read(text: str, vocab: Vocabulary, now: datetime | None) -> RequestIntent:
    """One request read into its slots, as written."""
    text = instrument_capitals(text)  # "wind mfi": the instrument, as "Wind MFI" is
    work = " ".join(text.split())
    title, title_span = find_title(work)
    if title_span:
        work = masked(work, *title_span)
    dataset_spans, work = _named_datasets(vocab, work)
    dataset_ids = [d for d, _ in dataset_spans]
    work = _without_citations(work)
    components = lettered_components(vocab.catalog, dataset_ids, work)
    time_range, time_text, time_error = None, None, None
    time_spans: list[tuple[int, int]] = []
    durations = find_durations(work)
    timeless = work
    for d in durations:
        timeless = masked(timeless, d.start, d.end)
    windows, work, timeless = _part_windows(work, timeless, durations, now)
    if time_range is None:
        found = _time_with_durations(work, timeless, durations, now)
        durations = [d for d in durations if not _inside(d, found.spans)]
        time_range, time_text, time_error = found.range, found.text, found.error
        time_spans = list(found.spans)
        for span in found.spans:
            work = masked(work, *span)
    coarse = time_range is None or time_range.duration > _COARSE
    if coarse and time_error is None and (unread := unread_time_words(work)):
        # Never "the last 7 days", nor the year written beside it, for a request that
        # wrote a time this could not read.
        time_error = (
            f"I could not read the time around '{unread}'; "
            "please write it like 2015-03-17 or 2015-03-17 to 2015-03-19"
        )
        time_range, time_text = None, None
    time_unread = stray_clocks(_without_operations(work)) if time_error is None else ()
    # A formula's symbols ("n v^2") name no spacecraft; a place ("in lunar orbit") says
    # where, and asks for no position.
    formulas, places = find_formulas(work), find_places(work)
    # A derived quantity's words ("plasma beta", "-V x B") name what is computed from
    # its inputs: no mission, no quantity to fetch (agents/offline/derived.py).
    derived = [m.span() for d in load_vocabulary().derived for m in d.words.finditer(work)]
    work, plurals = plurals_read(vocab, work)
    named = work
    for span in [*formulas, *derived]:
        named = masked(named, *span)
    missions, spans, counts = read_missions(vocab, named, plurals)
    missions, spans = id_parts_not_missions(vocab.catalog, named, missions, spans)
    missions, spans = channel_names_not_missions(vocab.catalog, named, missions, spans)
    missions, spans = omni_looks(vocab, named, missions, spans)
    if not missions and not dataset_ids:
        missions, spans = carrier_missions(named, vocab.mission_names)
    missions, spans = detached_probes(named, missions, spans)
    physics = work
    for span in [*spans, *places, *derived, *((d.start, d.end) for d in durations)]:
        physics = masked(physics, *span)
    physics = _without_notation(physics, work)
    for _, span in components:
        physics = masked(physics, *span)
    worded = physics
    for span in formulas:
        worded = masked(worded, *span)
    species = SPECIES_WORDS.search(physics)
    # "power spectrum", "Fourier spectrum": an operation's words, never a spectrogram
    computing = operation_spans(work)
    # "TNR dynamic spectrum", "electron spectrogram": a spectrum the catalog holds, not
    # the dynamic spectrum of a series ("spectrogram of Bz")
    read = outside_spectrum_words(work, quantity_wishes(worded))
    held, series = spectrum_words(work, read)
    computing = [span for span in computing if span not in held]
    quantities = spectrum_wishes(
        worded, read, species.lastgroup if species else None, computing
    ) or spectrum_wishes(
        physics,
        outside_spectrum_words(work, quantity_wishes(physics)),
        species.lastgroup if species else None,
        computing,
    )
    quantities = [w for w in quantities if not _product_word(w, physics, missions)]
    if not quantities:
        quantities = _instrument_quantity(physics, missions)
    channels = None if dataset_ids else named_channels(vocab.catalog, missions, physics, time_range)
    operations = [
        op
        for op in _computed_over(find_operations(work, durations), windows)
        if series or op.kind != "dynamic_power"
    ]
    hinted = physics
    for span in computing:
        hinted = masked(hinted, *span)
    figure_format, figure_file, data_format = find_export(work)
    resample = next((op for op in operations if op.kind == "resample"), None)
    doubts = (
        counts
        or probe_doubts(vocab.probes, " ".join(text.split()), missions, bool(dataset_ids))
        or find_doubts(named, vocab.aliases, spans)
    ) + _not_placed(physics)
    claimed: list[Slot] = [
        *(Slot("figure", "title", *title_span) for _ in [1] if title_span),
        *(Slot("dataset", d, *span) for d, span in dataset_spans),
        *(Slot("component", name, *span) for name, span in components),
        *(Slot("time", time_text or "", *span) for span in time_spans),
        *(Slot("mission", work[a:b], a, b) for a, b in spans),
        *(Slot("formula", work[a:b], a, b) for a, b in formulas),
        *(Slot("place", work[a:b], a, b) for a, b in places),
        *(Slot("operation", d.text, d.start, d.end) for d in durations),
        *(Slot("operation", work[a:b], a, b) for a, b in computing),
        *(Slot("quantity", work[a:b], a, b) for a, b in derived),
        *(Slot("quantity", work[a:b], a, b) for a, b in ratio_spans(work)),
        *_physics_spans(physics, quantities, missions),
        *_quoted_spans(
            work, [*doubts, *time_unread, *(op.text for op in operations), time_error or ""]
        ),
    ]
    slots = _account(vocab, work, claimed)
    return RequestIntent(
        text=text,
        missions=missions,
        quantities=tuple(quantities),
        time_range=time_range,
        time_text=time_text,
        time_error=time_error,
        time_unread=time_unread,
        cadence_s=resample.window_s if resample else None,
        cadence_text=resample.text if resample else None,
        operations=tuple(operations),
        plot=PlotWish(
            wanted=wants_plot(work),
            layout=find_layout(_without_operations(work)),
            log_y=wants_log(work),
            title=title,
            colours=find_colours(physics),
            export_format=figure_format,
            export_filename=figure_file,
        ),
        compare=_COMPARE.search(work) is not None or len(missions) > 1,
        at_earth=_AT_EARTH.search(work) is not None,
        dataset_ids=tuple(dict.fromkeys(dataset_ids))
        or ((channels.dataset_id,) if channels else ()),
        parameter_names=tuple(dict.fromkeys([name for name, _ in components]))
        or _parameter_names(vocab, dataset_ids, work)
        or (channels.parameters + channels.missing if channels else ()),
        save_data_format=data_format,
        hints=find_hints(hinted, [(q.position, q.text) for q in quantities]),
        unknown_names=_merged(
            _merged(_unknown_names(vocab, worded, quantities), _names_left(slots)),
            absent_missions_named(worded),
        ),
        unplaced=()
        if quantities
        else find_unplaced(_without_product_words(hinted), _instrument_words(missions)),
        doubts=doubts,
        slots=slots,
        discovery=find_discovery(
            work, bool(missions), bool(dataset_ids), bool(quantities), time_range is not None
        ),
    )
