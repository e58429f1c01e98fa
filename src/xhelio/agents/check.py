"""The request-vs-data check, run on every turn of both modes before the answer is shown.

`check_turn` reads the request into slots with the offline parser (the one vocabulary)
and compares what it names (spacecraft and probes, instruments, quantities, species,
frames, the time window) with what the turn's `fetch_data` calls actually delivered; a
series that holds a quantity no phrase asked for is named with the phrases that were.
Every mismatch becomes one plain sentence; `run_turn` appends them under "Differs from
the request:" and a planner record that said `completed` becomes
`completed_with_warnings`. Arithmetic across frames (a difference of a GSM and a GSE
series) is named too. The check never fetches anything.
Imports `agents.offline`, `catalog` and `vocabulary`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from xhelio.agents.offline.derived import derived_named
from xhelio.catalog.index import Catalog
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.binding import MissionBinding, bind_missions
from xhelio.language.frames import name_frames, parameter_frames
from xhelio.language.grounding import variants_unsaid
from xhelio.language.intent import QuantityWish, RequestIntent
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.products import instrument_holds
from xhelio.language.quantities import QUANTITIES, Quantity, quantity
from xhelio.language.resolve import probe_of_dataset, probe_wanted
from xhelio.operations import Operation
from xhelio.timerange import TimeRange
from xhelio.vocabulary import Instrument, load_vocabulary

__all__ = ["HEADING", "Fetched", "check_turn", "fetched_in"]

HEADING = "Differs from the request:"
_VOCABS: dict[int, Vocabulary] = {}


@dataclass(frozen=True)
class Fetched:
    """One successful fetch of the turn: what was asked of the server."""

    dataset: str
    parameter: str
    window: str
    label: str


def fetched_in(operations: Sequence[Operation | dict[str, Any]]) -> list[Fetched]:
    """The fetches of a turn that delivered data points."""
    found: list[Fetched] = []
    for op in map(Operation.of, operations):
        if op.phase != "fetch" or not op.ok or not op.result.get("points"):
            continue
        if "dataset_id" not in op.args:  # a web API answer: no catalog dataset to check
            continue
        args = op.args
        found.append(
            Fetched(
                str(args.get("dataset_id", "")),
                str(args.get("parameter_id", "")),
                next(iter(op.time_ranges.values()), ""),
                op.produced[0] if op.produced else "",
            )
        )
    return found


def _vocab(catalog: Catalog) -> Vocabulary:
    key = id(catalog)
    known = _VOCABS.get(key)
    if known is None or known.catalog is not catalog:
        if len(_VOCABS) > 8:
            _VOCABS.clear()  # workspaces come and go; a few live catalogs at most
        known = _VOCABS[key] = Vocabulary.from_catalog(catalog)
    return known


def _window(text: str) -> TimeRange | None:
    from xhelio.timerange import parse_time_range

    try:
        return parse_time_range(text)
    except Exception:  # a window the server took but this grammar cannot read: no verdict
        return None


def _mission_notes(intent: RequestIntent, catalog: Catalog, fetched: list[Fetched]) -> list[str]:
    notes: list[str] = []
    asked = {m.mission_id for m in intent.missions}
    if asked:  # a dataset named beside a spacecraft ("DSCOVR FC ... compared with ACE")
        asked |= {_mission_of(catalog, d) for d in intent.dataset_ids}
    defaults = {q for w in intent.quantities if (q := quantity(w.quantity).default_mission)}
    for f in fetched:
        mission = _mission_of(catalog, f.dataset)
        if asked and mission not in asked and mission not in defaults:
            names = ", ".join(m.text for m in intent.missions)
            notes.append(f"{f.dataset} is {mission or 'another'} data, but {names} was asked.")
    probes = {m.mission_id: _probes_asked(intent, m.mission_id) for m in intent.missions}
    for ref in intent.missions:
        probe = probe_wanted(ref.text)
        mine = [f for f in fetched if _mission_of(catalog, f.dataset) == ref.mission_id]
        if probe is not None:
            for f in mine:
                have = probe_of_dataset(f.dataset)
                if have is not None and have not in probes[ref.mission_id]:
                    notes.append(
                        f"{f.dataset} is from spacecraft {have}, but {ref.text} was asked."
                    )
            # "STEREO A and B": each probe named is served by its own data
            mine = [f for f in mine if probe_of_dataset(f.dataset) in (probe, None)]
        if fetched and not mine and ref.mission_id not in defaults:
            notes.append(f"No {ref.text} data was fetched.")
    for name in intent.unknown_names:
        if fetched:
            notes.append(f"'{name}' is not a mission the catalog has; nothing of it is shown.")
    return notes


def _probes_asked(intent: RequestIntent, mission_id: str) -> set[str]:
    """The probes of one mission the request names ("STEREO Ahead and Behind": A, B)."""
    return {
        p for m in intent.missions if m.mission_id == mission_id and (p := probe_wanted(m.text))
    }


def _mission_of(catalog: Catalog, dataset: str) -> str | None:
    try:
        return catalog.dataset(dataset).mission_id
    except Exception:  # a dataset id the catalog does not list: no mission to compare
        return None


def _of_instrument(catalog: Catalog, inst: Instrument, dataset: str) -> bool:
    try:
        return instrument_holds(inst, catalog.dataset(dataset), by_title=True)
    except Exception:  # a dataset id the catalog does not list: its id alone decides
        return bool(inst.datasets.search(dataset))


def _holds_wish(catalog: Catalog, f: Fetched, wish: QuantityWish) -> bool | None:
    """Whether the series holds `wish`'s quantity; None when that cannot be read.

    A parameter whose words say the quantity in units the table does not read
    ("cm!u-3!n") may hold it (None).
    """
    p = _parameter(catalog, f)
    if p is None or wish.quantity not in _KEYS:
        return None
    q = quantity(wish.quantity)
    if _holds(q, p):
        return True
    return None if q.names.search(p.name) or q.describes.search(p.description) else False


def _new_series(intent: RequestIntent, catalog: Catalog, fetched: list[Fetched]) -> list[Fetched]:
    """The series of a follow-up that serve what it asks; the earlier ones redrawn are not.

    "add the HOPE electron density" after EMFISIS |B|: the field drawn again is no HOPE
    data asked for. All of them when none can be told apart.
    """
    if not intent.quantities:
        return fetched
    new = [
        f
        for f in fetched
        if any(_holds_wish(catalog, f, w) is not False for w in intent.quantities)
    ]
    return new or fetched


def _serves_another(
    catalog: Catalog, f: Fetched, wish: QuantityWish, asked: Sequence[QuantityWish]
) -> bool:
    """Whether the series holds another quantity asked, not `wish`'s ("|B| and Ne")."""
    if _holds_wish(catalog, f, wish) is not False:
        return False
    return any(_holds_wish(catalog, f, w) for w in asked if w is not wish)


def _detail_notes(
    intent: RequestIntent, catalog: Catalog, fetched: list[Fetched], follow_up: bool = False
) -> list[str]:
    vocab = load_vocabulary()
    notes: list[str] = []
    if follow_up:
        fetched = _new_series(intent, catalog, fetched)
    binding = bind_missions(intent)
    for ref in intent.missions:
        said = binding.text_of(ref, intent.text) if binding else intent.text
        named = [i for i in vocab.instruments_of(ref.mission_id) if i.words.search(said)]
        mine = [f for f in fetched if _mission_of(catalog, f.dataset) == ref.mission_id]
        others = [i for i in vocab.instruments_of(ref.mission_id) if i not in named]
        for inst in named[-1:]:
            for f in mine:
                if not any(_of_instrument(catalog, i, f.dataset) for i in named):  # FPI + FGM
                    notes.append(f"{f.dataset} is not from {inst.names[0]}, which was asked.")
                    continue
                # A dataset shared by instruments (CIS: HIA and CODIF): the parameter's
                # own description says whose it is.
                text = _parameter_text(catalog, f, with_dataset=False)
                sibling = next((o for o in others if o.words.search(text)), None)
                if sibling is not None and not inst.words.search(text):
                    notes.append(
                        f"{f.dataset}.{f.parameter} is {sibling.names[0]} data, "
                        f"but {inst.names[0]} was asked."
                    )
    for f in fetched:
        text = _parameter_text(catalog, f)
        asked = _asked_of(intent, binding, _mission_of(catalog, f.dataset))
        # "Te and Ti": a series that says it holds one species asked serves that wish
        serves = any(
            (cue := vocab.species_cue(w.species)) is not None and cue.search(text)
            for w in asked
            if w.species
        )
        for wish in asked:
            if _serves_another(catalog, f, wish, asked):
                continue  # "EMFISIS |B| and HOPE electron density": |B| holds no species
            if wish.species and wish.species not in ("ion",) and not serves:
                cue = vocab.species_cue(wish.species)
                others = [
                    s.key
                    for s in vocab.species
                    if s.key not in (wish.species, "ion") and s.cues.search(text)
                ]
                if cue is not None and not cue.search(text) and others:
                    notes.append(
                        f"{f.dataset}.{f.parameter} holds {others[0]} data, "
                        f"but {wish.species}s were asked."
                    )
                elif cue is not None and not cue.search(text) and wish.species != "proton":
                    notes.append(
                        f"{f.dataset}.{f.parameter} does not say it holds {wish.species}s, "
                        "which were asked; it may be the bulk (proton) plasma."
                    )
            frame = wish.frame or _frame_typed(intent)
            if frame:
                # A frame typed with no quantity word is weighed against the name only.
                frames = _frames_of(catalog, f, words=bool(wish.frame))
                if frames and frame not in frames:
                    notes.append(
                        f"{f.dataset}.{f.parameter} is in {'/'.join(sorted(frames))}, "
                        f"not {frame} as asked."
                    )
    return notes


def _variant_notes(intent: RequestIntent, catalog: Catalog, fetched: list[Fetched]) -> list[str]:
    """Parameter-level words ("thermal speed", "omni") no fetched parameter says."""
    if intent.parameter_names:
        return []
    drawn = [
        (info, p)
        for f in fetched
        if (info := _dataset(catalog, f.dataset)) and (p := info.parameter(f.parameter))
    ]
    return variants_unsaid(intent.slots, drawn)


def _frameless_notes(intent: RequestIntent, catalog: Catalog, fetched: list[Fetched]) -> list[str]:
    """A frame asked of a dataset that has none in it: its frameless |B| is no answer."""
    frames = {w.frame for w in intent.quantities if w.frame} or set(
        filter(None, [_frame_typed(intent)])
    )
    notes: list[str] = []
    for frame in frames:
        for f in fetched:
            info = _dataset(catalog, f.dataset)
            if info is None or _frames_of(catalog, f):
                continue
            held = {fr for p in info.data_parameters for fr in parameter_frames(p)}
            if held and frame not in held:
                notes.append(
                    f"{f.dataset} has no parameter in {frame} (its frames: "
                    f"{'/'.join(sorted(held))}); shown: {f.parameter}, which is in no frame."
                )
    return notes


def _dataset(catalog: Catalog, dataset: str) -> DatasetInfo | None:
    try:
        return catalog.dataset(dataset)
    except Exception:  # a dataset the catalog does not list: nothing to compare
        return None


def _frames_of(catalog: Catalog, f: Fetched, *, words: bool = True) -> frozenset[str]:
    """The fetched parameter's frames: its name says them ("BGSE"), else its description.

    With `words` false, or for a parameter the catalog does not list, the name alone.
    """
    info = _dataset(catalog, f.dataset)
    p = info.parameter(f.parameter) if info is not None else None
    if p is None or not words:
        return name_frames(f.parameter)
    return parameter_frames(p)


def _frame_typed(intent: RequestIntent) -> str | None:
    """The one frame a request names with no quantity word ("MGF data in GSM")."""
    typed = {s.value.upper() for s in intent.slots.of("frame")}
    return typed.pop() if len(typed) == 1 and not any(w.frame for w in intent.quantities) else None


def _asked_of(
    intent: RequestIntent, binding: MissionBinding | None, mission: str | None
) -> list[QuantityWish]:
    """The quantities asked of `mission`'s spacecraft ("ACE Bz GSM and Wind Bz GSE")."""
    refs = [r for r in intent.missions if r.mission_id == mission]
    if binding is None or not refs:
        return list(intent.quantities)
    return [w for w in intent.quantities if any(binding.wants(r, w) for r in refs)]


def _quantity_notes(intent: RequestIntent, catalog: Catalog, fetched: list[Fetched]) -> list[str]:
    """Fetched series holding a quantity no phrase of the request asked for.

    The quantity slots of the request ("proton density") against what each fetched
    parameter's own units, name and description say it holds. A request for a derived
    quantity fetches its inputs, and spectra are judged by shape, so neither is judged.
    """
    wishes = [w for w in intent.quantities if w.quantity in _KEYS]
    asked = [quantity(w.quantity) for w in wishes]
    if not asked or any(q.shape in ("spectrum", "spectrogram") for q in asked):
        return []
    if intent.dataset_ids or derived_named(intent.text):
        return []
    said = ", ".join(dict.fromkeys(f"'{_phrase(intent, w)}'" for w in wishes))
    notes: list[str] = []
    for f in fetched:
        p = _parameter(catalog, f)
        if p is None or any(_holds(q, p) for q in asked):
            continue
        held = next((q for q in QUANTITIES if _holds(q, p)), None)
        if held is not None:
            notes.append(
                f"{f.dataset}.{f.parameter} holds {held.label}, which no phrase of the request "
                f"asked for (asked: {said})."
            )
    return notes


_KEYS = frozenset(q.key for q in QUANTITIES)


def _phrase(intent: RequestIntent, wish: QuantityWish) -> str:
    """The request's own words for a quantity, with its species ("proton density")."""
    said = intent.slots.phrase("quantity", wish.quantity) or quantity(wish.quantity).label
    if wish.species and wish.species.lower() not in said.lower():
        return f"{wish.species} {said}"
    return said


def _holds(q: Quantity, p: ParameterInfo) -> bool:
    """Whether a parameter's units and its name or description say it holds `q`."""
    if q.units is not None and not q.units.search(p.units.strip()):
        return False
    return bool(q.names.search(p.name) or q.describes.search(p.description))


def _parameter(catalog: Catalog, f: Fetched) -> ParameterInfo | None:
    try:
        return catalog.dataset(f.dataset).parameter(f.parameter)
    except Exception:  # a dataset the catalog does not list: no quantity to compare
        return None


def _parameter_text(catalog: Catalog, f: Fetched, *, with_dataset: bool = True) -> str:
    try:
        info = catalog.dataset(f.dataset)
    except Exception:  # unknown to the catalog: judge by the names alone
        return f"{f.dataset} {f.parameter}" if with_dataset else f.parameter
    p = info.parameter(f.parameter)
    described = f"{p.name} {p.description}" if p is not None else f.parameter
    return f"{f.dataset} {info.title} {described}" if with_dataset else described


def _time_notes(intent: RequestIntent, fetched: list[Fetched]) -> list[str]:
    if intent.time_error and fetched:
        return [f"The time asked is not valid ({intent.time_error}), yet data was fetched."]
    if intent.time_unread and fetched:
        # A time of day the grammar could not place: the window cannot be vouched for.
        words = ", ".join(f"'{w}'" for w in intent.time_unread)
        windows = ", ".join(dict.fromkeys(f.window for f in fetched))
        return [
            f"I could not read {words} as part of the time range, so the data covers "
            f"{windows}; write times as e.g. 2015-03-17T22:00 to 2015-03-18T02:00."
        ]
    if intent.time_range is None:
        return []
    asked = intent.time_range
    # Relative phrases ("last week") are read again here, seconds or minutes after the
    # fetch read them: edges within a small share of the span are the same request.
    slack = max(timedelta(minutes=1), (asked.end - asked.start) / 200)
    notes: list[str] = []
    for f in fetched:
        got = _window(f.window)
        if got is not None and (
            abs(got.start - asked.start) > slack or abs(got.end - asked.end) > slack
        ):
            notes.append(
                f"{f.dataset} was fetched for {got.readable()}, but {asked.readable()} was asked."
            )
    return notes


def check_turn(
    request: str,
    operations: Sequence[Operation | dict[str, Any]],
    catalog: Catalog,
    *,
    follow_up: bool = False,
) -> list[str]:
    """Sentences naming what the turn's data does not honour of the request (none: fine).

    Args:
        request: What the person typed.
        operations: The turn's funnel records (tool, args, status, result).
        catalog: The catalog, for dataset missions, titles and parameters.
        follow_up: The request builds on earlier turns (missions and times may come
            from the session, so only what it names itself is checked).
    """
    fetched = fetched_in(operations)
    if not fetched:
        return []
    intent = parse_request(request, _vocab(catalog))
    notes: list[str] = []
    if not follow_up or intent.missions:
        notes += _mission_notes(intent, catalog, fetched)
    notes += _detail_notes(intent, catalog, fetched, follow_up)
    if not follow_up:  # a follow-up redraws earlier series beside the new one
        notes += _quantity_notes(intent, catalog, fetched)
        notes += _variant_notes(intent, catalog, fetched)
        notes += _frameless_notes(intent, catalog, fetched)
    if not follow_up or intent.time_range is not None:
        notes += _time_notes(intent, fetched)
    notes += frame_arithmetic(operations, catalog)
    return list(dict.fromkeys(notes))


def frame_arithmetic(
    operations: Sequence[Operation | dict[str, Any]], catalog: Catalog
) -> list[str]:
    """Notes on computations that combined series of different coordinate frames."""
    frames_of: dict[str, frozenset[str]] = {}
    for f in fetched_in(operations):
        frames_of[f.label] = _frames_of(catalog, f)
    notes: list[str] = []
    for op in map(Operation.of, operations):
        if op.phase != "compute" or not op.ok or not op.read:
            continue
        sources = op.read
        for label in list(frames_of):
            for s in sources:
                if s != label and s.startswith(label):
                    frames_of.setdefault(s, frames_of[label])
        result_label = op.produced[0] if op.produced else ""
        sets = [frames_of.get(s, frozenset()) for s in sources]
        if len(sources) == 2 and all(sets) and not (sets[0] & sets[1]):
            notes.append(
                f"{result_label} combines {sources[0]} ({'/'.join(sorted(sets[0]))}) with "
                f"{sources[1]} ({'/'.join(sorted(sets[1]))}): different coordinate frames, "
                "so the result mixes frames and is not physically meaningful as it stands."
            )
        if result_label and len(sources) == 1:
            frames_of[result_label] = frames_of.get(sources[0], frozenset())
    return notes
