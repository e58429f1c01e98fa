"""Where a quantity comes from: the missions or datasets asked, and their candidates.

Each source carries the request's own words about it (its instrument and product
words), and each quantity asked of it its own part of them (`source_words`), so the
catalog ranking and the notes read only what was said of that quantity there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import cache

from xhelio.agents.offline.plan.steps import NAMED, Builder, Source, label_tag
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.binding import clause_spans
from xhelio.language.flavours import flavour_note
from xhelio.language.grounding import clause_words, honour_variants, open_request, rank_open
from xhelio.language.intent import (
    MissionRef,
    QuantityWish,
    RequestIntent,
)
from xhelio.language.parse import Vocabulary
from xhelio.language.products import Term, id_word_instruments, instrument_holds, request_terms
from xhelio.language.qualifiers import qualifier_text
from xhelio.language.quantities import QUANTITIES, Quantity, quantity
from xhelio.language.resolve import (
    Candidate,
    probe_wanted,
    resolve,
)
from xhelio.language.spectra import (
    channel_axis,
    channel_title,
    kept_dimension,
    pitch_slice,
    without_reductions,
)
from xhelio.timerange import TimeRange
from xhelio.vocabulary import DerivedQuantity, load_vocabulary, read_table

_DEFAULT_SPAN = timedelta(days=7)


def mission_source(vocab: Vocabulary, ref: MissionRef, text: str = "") -> Source:
    """A mission (maybe one probe) as a source, kept to the instrument its words name."""
    datasets = vocab.catalog.browse(ref.mission_id, include_auxiliary=True)
    probe = probe_wanted(ref.text)
    # A probe as typed, spaced once ("van allen probes a" is read as "van allen probe  a").
    name = ref.name if probe is None else " ".join(ref.text.split())
    kept = _of_instrument(ref.mission_id, datasets, text)
    return Source(ref.mission_id, label_tag(ref.text), name, kept, probe, text)


def per_instrument(source: Source) -> list[Source]:
    """The source split by the instruments its words name, when they share no dataset.

    "Wind 3DP vs SWE proton density" compares two instruments of one spacecraft: each
    gets its own source, whose words no longer name the other. One instrument named, or
    instruments with datasets in common ("Cluster CIS HIA"), keep the source whole.
    """
    named = _named_instruments(source.role, source.datasets, source.text)
    if not named:  # instruments the vocabulary does not list, by the catalog's id words
        named = id_word_instruments(source.datasets, source.text)
    ids = [{d.id for d in own} for _, own in named]
    if len(named) < 2 or any(a & b for i, a in enumerate(ids) for b in ids[i + 1 :]):
        return [source]
    out: list[Source] = []
    for word, own in named:
        text = source.text
        for other, _ in named:
            if other != word:
                text = re.sub(rf"\b{re.escape(other)}\b", " ", text)
        tag = label_tag(f"{source.tag} {word}")
        out.append(replace(source, tag=tag, name=f"{source.name} {word}", datasets=own, text=text))
    return out


def own_instruments(b: Builder, source: Source, wish: QuantityWish) -> list[Source]:
    """`source` kept to the instruments named in the words said of `wish` there.

    Each instrument serves the quantity phrase of its own clause: "RBSP-A EMFISIS |B| and
    HOPE electron density" asks the density of HOPE only, and "add the HOPE electron
    density" after EMFISIS |B| too. Several instruments with no dataset in common named
    for one quantity ("Wind 3DP vs SWE density", "LEP-e and MEP-e omni flux") give a
    source (a series) each. An input of a derived quantity keeps the source whole
    (`measuring_source` reads its words).
    """
    if not any((w.position, w.text) == (wish.position, wish.text) for w in b.intent.quantities):
        return [source]
    words, _ = source_words(b, source, wish)
    named = _named_instruments(source.role, source.datasets, words)
    ids = [{d.id for d in own} for _, own in named]
    if not named or any(a & b for i, a in enumerate(ids) for b in ids[i + 1 :]):
        return [source]
    if len(named) == 1:
        return [replace(source, datasets=named[0][1])]
    return per_instrument(replace(source, text=words))


def _named_instruments(
    mission_id: str, datasets: list[DatasetInfo], text: str, by_title: bool = False
) -> list[tuple[str, list[DatasetInfo]]]:
    """The mission's instruments `text` names, as (the words naming it, its datasets).

    Names without datasets among `datasets` are left out.
    """
    named: list[tuple[str, list[DatasetInfo]]] = []
    for inst in load_vocabulary().instruments_of(mission_id):
        said = inst.words.search(text)
        if said and (own := [d for d in datasets if instrument_holds(inst, d, by_title)]):
            named.append((said[0], own))
    return named


def _of_instrument(
    mission_id: str, datasets: list[DatasetInfo], text: str, by_title: bool = False
) -> list[DatasetInfo]:
    """Only the datasets of the instrument(s) the request names for this mission.

    An instrument's datasets are those its id pattern fits, or (`by_title`) whose title
    names it (`instrument_holds`). "Cluster C1 CIS HIA" keeps the datasets both names
    fit; "Wind SWE n and T and MFI |B|" (instruments with no dataset in common) keeps
    those of either. A named instrument is never swapped for a sibling of the same
    spacecraft. Names without datasets are ignored.
    """
    named = [own for _, own in _named_instruments(mission_id, datasets, text, by_title)]
    if not named:
        return datasets
    both = [d for d in named[0] if all(d in own for own in named[1:])]
    return both or [d for d in datasets if any(d in own for own in named)]


def measuring_source(source: Source, wish: QuantityWish) -> Source:
    """`source` kept, for one input of a derived quantity, to the instrument measuring it.

    "ion beta from MMS1 FPI DIS moments and FGM": the field comes from the named
    magnetometer (an instrument whose vocabulary `quantity` is the field), never from a
    field copy inside the plasma instrument's products; the moments come from the other
    named instruments. Instruments named that measure another quantity are left out of
    this input's words.
    """
    text = source.text
    named = [
        (inst, own)
        for inst in load_vocabulary().instruments_of(source.role)
        if text and inst.words.search(text)
        if (own := [d for d in source.datasets if inst.datasets.search(d.id)])
    ]
    measuring = [(i, own) for i, own in named if i.quantity == wish.quantity]
    if measuring:  # only the instrument's own name: the other words are about the moments
        inst, own = measuring[0]
        word = inst.words.search(text)
        return replace(source, datasets=own, text=word[0] if word else text)
    for inst, _ in named:
        if inst.quantity not in (None, wish.quantity):
            text = inst.words.sub(" ", text)
    return replace(source, text=text)


def sources_for(b: Builder, wish: QuantityWish) -> list[Source]:
    """Which missions or datasets should deliver `wish`."""
    intent, vocab = b.intent, b.vocab
    if intent.dataset_ids:
        infos = [vocab.catalog.dataset(i) for i in intent.dataset_ids]
        if wish.quantity == NAMED:  # a parameter named: the datasets that hold it
            infos = [i for i in infos if i.parameter(wish.text) is not None] or infos
        named = [Source(i.mission_id or "__data__", label_tag(i.id), i.id, [i]) for i in infos]
        held = {i.mission_id for i in infos}
        others = [m for m in intent.missions if m.mission_id not in held]
        if wish.quantity == NAMED or not others:
            return named
        return _beside_datasets(b, named, others, wish)
    q = quantity(wish.quantity)
    if q.default_mission and q.default_mission in vocab.mission_names:
        own = [m for m in intent.missions if _holds_itself(vocab, m.mission_id, q)]
        if own:  # "MAVEN Lyman-alpha": the named spacecraft's own value, not OMNI's
            return [mission_source(vocab, m, intent.text) for m in own]
        return [mission_source(vocab, MissionRef(q.default_mission, "OMNI", "OMNI", 0))]
    if intent.missions:
        binding = b.binding
        if binding is None:
            found = [mission_source(vocab, m, intent.text) for m in intent.missions]
        else:
            found = [
                mission_source(vocab, m, binding.text_of(m, intent.text))
                for m in intent.missions
                if binding.wants(m, wish)
            ]
        return [each for source in found for each in own_instruments(b, source, wish)]
    if intent.unknown_names:
        return []  # a spacecraft was named, just not one the catalog has: never OMNI instead
    default = _no_spacecraft()
    if (
        q.solar_wind
        and default.context.search(intent.text)
        and default.mission in vocab.mission_names
    ):
        b.notes.append(default.note)
        name = default.mission.upper()
        return [mission_source(vocab, MissionRef(default.mission, name, name, 0))]
    return []  # a bare "magnetic field": asked about (`source_question`)


def _beside_datasets(
    b: Builder, named: list[Source], others: list[MissionRef], wish: QuantityWish
) -> list[Source]:
    """The named datasets and the spacecraft named beside them, each read in its own words.

    "DSCOVR FC density compared with ACE SWEPAM": the dataset's words are its own, and
    the other spacecraft delivers the same quantity from its datasets, read in the request
    without the dataset's words ('SWEPAM' is ACE's instrument, not DSCOVR_H1_FC's lack).
    """
    intent = b.intent
    spans = {s.value: (s.start, s.end) for s in intent.slots.of("dataset")}
    rest = intent.slots.text
    for start, end in spans.values():
        rest = rest[:start] + " " * (end - start) + rest[end:]
    own = [
        replace(s, text=intent.slots.text[slice(*spans[s.name])] if s.name in spans else s.name)
        for s in named
    ]
    return own + [
        each for m in others for each in own_instruments(b, mission_source(b.vocab, m, rest), wish)
    ]


def _holds_itself(vocab: Vocabulary, mission_id: str, q: Quantity) -> bool:
    """Whether a parameter of the mission says it holds `q` (not one computed *for* it).

    A description naming the quantity counts ("Solar F10.7 index (daily)", "EUV
    irradiance ... Lyman-alpha bandpass"); one that sets it as a condition does not
    ("Magnetic local time for Kp=2").
    """
    if mission_id == q.default_mission:
        return False
    for info in vocab.catalog.browse(mission_id, include_auxiliary=True):
        if q.describes.search(info.title) and any(_numeric(p) for p in info.parameters):
            return True  # "Lyman Alpha Detector ... Data": the product is the quantity
        for p in info.parameters:
            said = q.describes.search(p.description or "")
            if said and not _AS_CONDITION.match(p.description or "", said.end()):
                return True
    return False


def _numeric(p: ParameterInfo) -> bool:
    """Whether a parameter holds numbers (a file of plot links holds none)."""
    return p.type in ("double", "integer")


# After a quantity's name: "Kp=2", "Kp = 6" sets it as a model's input.
_AS_CONDITION = re.compile(r"\s*=")


@dataclass(frozen=True)
class _Default:
    mission: str
    context: re.Pattern[str]
    note: str
    question: str


@cache
def _no_spacecraft() -> _Default:
    """The vocabulary's source for solar-wind quantities when no spacecraft is named."""
    row = read_table("quantities.toml")["no_spacecraft"]
    context = re.compile(str(row["context"]), re.I)
    return _Default(str(row["mission"]), context, str(row["note"]), str(row["question"]))


def source_question(intent: RequestIntent, what: str) -> str:
    """What to ask when no source was found for `what`: which spacecraft, if none named."""
    if intent.missions or intent.dataset_ids:
        return f"a mission for {what} (e.g. ACE, Wind, PSP)"
    return _no_spacecraft().question.format(what=what)


# A request that says to compute it gets it computed, even where a source holds it.
_COMPUTE = re.compile(r"\b(?:comput|calculat|deriv)\w*|\bfrom\b.+\band\b", re.I)


def held_derived(
    b: Builder, source: Source, derived: DerivedQuantity, span: TimeRange | None
) -> Candidate | None:
    """The parameter of `source` that is the derived quantity itself, if any.

    OMNI holds "Plasma beta", "Alfven mach number" and "Magnetosonic mach number": those
    are fetched as the catalog says them, not recomputed from n, T and B. Only a parameter
    whose own metadata says every word of the label counts; one in the quantity's own
    units goes first (New Horizons' "pdyn" in nPa, not its "thermal dynamic pressure"
    in pPa).
    """
    if _COMPUTE.search(b.intent.text):
        return None
    cands = rank_open(
        open_request(derived.label),
        source.datasets,
        probe=source.probe,
        time_range=span,
        wanted_cadence=b.intent.cadence_s,
        complete=True,
        units=derived.units,
        limit=3,
    )
    return next((c for c in cands if _says_label(b, c, derived)), None)


def _says_label(b: Builder, cand: Candidate, derived: DerivedQuantity) -> bool:
    """Whether the parameter's own name, description or labels name the derived quantity.

    Every word of its label, or a phrase of it or of the quantity of the same label
    ("Flow pressure" is the dynamic pressure). OMNI's "Flow pressure" is no "total
    pressure": the word that tells the quantity apart must be the catalog's.
    """
    param = b.vocab.catalog.dataset(cand.dataset_id).parameter(cand.parameter)
    if param is None or not _same_dimension(param.units or "", derived.units):
        return False
    said = " ".join([param.name, param.description, *(param.labels or ())]).lower()
    said = " ".join(re.findall(r"[a-z]+", said))
    if derived.words.search(said) or any(
        q.label == derived.label and q.phrases.search(said) for q in QUANTITIES
    ):
        return True
    words = re.findall(r"[a-z]{3,}", derived.label.lower())
    return all(re.search(rf"\b{w}", said) for w in words)


_PREFIX = re.compile(r"^(?:[kMGmnpuµ](?=[a-zA-Z]))")


def _same_dimension(units: str, wanted: str) -> bool:
    """Whether a parameter's units can be the derived quantity's ("kHz" for Hz: yes).

    A density "derived from plasma frequency recognition" (Cluster WHISPER) is no
    frequency: cm^-3 is not Hz. A dimensionless quantity ("1") or a parameter without
    units is not judged by them.
    """
    if wanted in ("", "1") or not units.strip():
        return True

    def base(u: str) -> str:
        u = u.strip().replace(" ", "").replace("sec", "s")
        return _PREFIX.sub("", u).lower()

    return base(units) == base(wanted)


def not_a_mission(vocab: Vocabulary, name: str) -> str:
    """Why `name` was not used: no such mission, its datasets, the nearest missions here."""
    named = vocab.by_prefix.get(name.upper(), [])
    where = f"; datasets named after it: {', '.join(named[:5])}" if named else ""
    return f"'{name}': no mission by that name in the CDAWeb catalog{where}{_nearest(vocab, name)}"


def _nearest(vocab: Vocabulary, name: str) -> str:
    """The catalog missions nearest a well-known absent one.

    The name as read may be part of the mission's ("Venus" of Venus Express) or carry a
    probe ("Swarm A").
    """
    typed = name.lower()
    for row in read_table("absent_missions.toml").values():
        names = [str(n).lower() for n in row["names"]]
        if not any(typed in (n, *n.split(" ")[:1]) or typed.startswith(f"{n} ") for n in names):
            continue
        here = [m for m in row["nearest"] if m in vocab.mission_names]
        if here:
            shown = ", ".join(_mission_name(m) for m in here)
            return f"; nearest in the catalog ({row['why']}): {shown}"
    return ""


def _mission_name(mission_id: str) -> str:
    entry = load_vocabulary().missions.get(mission_id)
    return entry.names[0] if entry and entry.names else mission_id.upper()


def time_window(intent: RequestIntent, first: Candidate, b: Builder) -> TimeRange:
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


def source_candidates(
    b: Builder, source: Source, wish: QuantityWish, span: TimeRange | None
) -> list[Candidate]:
    """The datasets/parameters of `source` that hold `wish`, best first."""
    if wish.quantity == NAMED:
        info = source.datasets[0]
        p = info.parameter(wish.text)
        if p is None:
            return []
        return [Candidate(info.id, p.name, p.units, p.components, 0.0, "named in the request")]
    cands = _sibling_vector_first(b, source, wish, span, resolve_source(b, source, wish, span))
    wider = None if cands else _titled_source(b, source, wish)
    if wider is not None:  # the instrument's own datasets lack it: those titled with it
        source = wider
        cands = resolve_source(b, source, wish, span)
    words = open_request(_wish_phrase(b.intent, wish), b.intent.text)
    # An index is known by its exact names: another index is never its nearest ("PCS").
    named_only = quantity(wish.quantity).default_mission is not None
    if (not cands and not named_only) or words.energy_kev is not None:
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
            terms=source_terms(b, source, wish),
            complete=True,
        )
    # Parameter-level words of the quantity's clause ("thermal", "omni") pick the sibling.
    clause = clause_words(b.intent.slots, wish.position)
    asked = open_request(clause, clause)
    cands = honour_variants(cands, source.datasets, asked, source_terms(b, source, wish))
    # A derived input naming its part ("temperature:parallel" of T⊥/T∥) asks for the part.
    part_asked = wish.text.partition(":")[2] in ("parallel", "perpendicular")
    if cands and span is not None and not part_asked and not any(c.variant for c in asked.concepts):
        # An unqualified temperature served by a part of it (no scalar held): said.
        info = b.vocab.catalog.dataset(cands[0].dataset_id)
        param = info.parameter(cands[0].parameter)
        note = flavour_note(wish.quantity, info, param) if param is not None else None
        if note is not None and note not in b.notes:
            b.notes.append(note)
    if cands and span is not None:  # product words the pick lacks, a timeless sibling: said
        b.notes.extend(n for n in cands[0].notes if n not in b.notes)
    return cands


def _titled_source(b: Builder, source: Source, wish: QuantityWish) -> Source | None:
    """`source` widened to the datasets whose title names its instrument; None if none.

    THEMIS FBK spectra "of the Search Coil Magnetometer" serve "search coil". Only the
    instruments named in `wish`'s own words count: another clause's instrument is not
    its ("EMFISIS |B| and HOPE electron density").
    """
    if source.role not in b.vocab.mission_names:
        return None
    every = b.vocab.catalog.browse(source.role, include_auxiliary=True)
    titled = _of_instrument(source.role, every, source_words(b, source, wish)[0], by_title=True)
    if {d.id for d in titled} <= {d.id for d in source.datasets}:
        return None
    return replace(source, datasets=titled)


def _wish_phrase(intent: RequestIntent, wish: QuantityWish) -> str:
    """The quantity's own words and the species named with it ("ion temperature")."""
    species = [s.text(intent.slots.text) for s in intent.slots.of("species")]
    # A derived quantity's input names its species itself (beta: the proton temperature).
    return " ".join([*(species[:1] or [wish.species]), wish.text]) if wish.species else wish.text


def resolve_source(
    b: Builder, source: Source, wish: QuantityWish, span: TimeRange | None, limit: int = 5
) -> list[Candidate]:
    """The catalog ranking for `wish` among `source`'s datasets, read with its own words."""
    text, hints = source_words(b, source, wish)
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
        asked=text,
        qualifiers=_own_qualifiers(qualifier_text(b.intent.slots, b.intent.unplaced), text),
        limit=limit,
    )


def _own_qualifiers(qualifiers: str, said: str) -> str:
    """The qualifier words said of this quantity here: another clause's "|B|" is not its."""
    lowered = said.lower()
    return " ".join(w for w in qualifiers.split() if w.lower() in lowered)


def source_words(b: Builder, source: Source, wish: QuantityWish) -> tuple[str, tuple[str, ...]]:
    """The words said of `wish` at `source`, and the instrument hints among them.

    The source's words ("Wind SWE ... MFI ...") without the clauses of the other
    quantities asked that name their own product ("MFI |B|" is not the density's), when
    the quantity's own clause (or the clause it shares words with) names one too:
    "Wind MFI |B| and SWE density" reads 'SWE' for the density and 'MFI' for |B|, while
    "density and temperature from SWE" keeps 'SWE' for both. Reductions ("averaged over
    pitch angle") name no product.
    """
    text = source.text or b.intent.text
    owner = _owning_clause(b, wish)
    if owner is not None:
        whole = b.intent.text
        others = [w.position for w in b.intent.quantities if w.position != wish.position]
        for start, end in clause_spans(whole):
            clause = whole[start:end]
            if (start, end) != owner and any(start <= at < end for at in others):
                text = text.replace(clause, " ") if _names_product(b, clause) else text
    text = without_reductions(text)
    return text, tuple(h for h in b.intent.hints if h.lower() in text.lower())


def source_terms(b: Builder, source: Source, wish: QuantityWish) -> tuple[Term, ...]:
    """The product terms said of `wish` at `source` (`source_words`): one reading for all."""
    text, hints = source_words(b, source, wish)
    return request_terms(text, hints)


def _names_product(b: Builder, clause: str) -> bool:
    hints = tuple(h for h in b.intent.hints if h.lower() in clause.lower())
    return bool(request_terms(clause, hints))


def _owning_clause(b: Builder, wish: QuantityWish) -> tuple[int, int] | None:
    """The clause whose product words are `wish`'s; None when it has none to itself.

    Its own clause when that names a product, else the nearest such clause before it
    holding a quantity ("Wind SWE density and temperature"), else the next one
    ("density and temperature from SWE").
    """
    asked = b.intent.quantities
    if not any((w.position, w.text) == (wish.position, wish.text) for w in asked):
        return None  # an input of a derived quantity: `measuring_source` reads its words
    whole = b.intent.text
    spans = [
        s
        for s in clause_spans(whole)
        if any(s[0] <= w.position < s[1] for w in asked) and _names_product(b, whole[s[0] : s[1]])
    ]
    own = next((s for s in spans if s[0] <= wish.position < s[1]), None)
    before = [s for s in spans if s[1] <= wish.position]
    after = [s for s in spans if s[0] > wish.position]
    return own or (before[-1] if before else None) or (after[0] if after else None)


def _sibling_vector_first(
    b: Builder, source: Source, wish: QuantityWish, span: TimeRange | None, cands: list[Candidate]
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
            lead = resolve_source(b, source, other, span)[:1]
            if lead and lead[0].components >= 3:
                # Any 3-vector serves every component: the siblings' vector goes first,
                # then the rest as fallbacks.
                return lead + [c for c in cands if c.dataset_id != lead[0].dataset_id]
            return cands
    return cands


_AXES = ("x", "y", "z", "r", "t", "n")


def named_axes(intent: RequestIntent, quantity: str) -> tuple[str, str, str] | None:
    """The three components of `quantity` the request names, in its order, or None."""
    axes = [w.component for w in intent.quantities if w.quantity == quantity]
    named = tuple(dict.fromkeys(a for a in axes if a in _AXES))
    return (named[0], named[1], named[2]) if len(named) == 3 else None


def vector_parts(
    b: Builder,
    source: Source,
    wish: QuantityWish,
    span: TimeRange | None,
    axes: tuple[str, ...] = ("x", "y", "z"),
) -> list[tuple[QuantityWish, list[Candidate]]] | None:
    """A vector a source only has as separate components (OMNI's BX_GSE, BY_GSM, BZ_GSM).

    `axes` are the components fetched: x, y and z, or those the request names ("B_R,
    B_T, B_N" -> r, t, n). x is the same in GSE and GSM (the frames share the Sun-Earth
    line), so it is taken in either. None when the components are not all there either.
    """
    if wish.component != "vector":
        return None
    parts: list[tuple[QuantityWish, list[Candidate]]] = []
    for axis in axes:
        frame = None if axis == "x" and wish.frame in ("GSE", "GSM") else wish.frame
        part = replace(wish, component=axis, frame=frame)
        cands = [c for c in resolve_source(b, source, part, span) if c.components == 1]
        if not cands:
            return None
        parts.append((part, cands))
    return parts


HANDFUL = 6  # more energy channels than this are read as a spectrogram, not as lines


def many_energy_channels(b: Builder, cand: Candidate) -> int:
    """The count of `cand`'s energy channels when more than a handful, else 0.

    From the catalog: a 1-D array whose bins (DEPEND_1), units or words are energies.
    A physicist reads 32 lines labelled by index as noise; a spectrogram (energy on y,
    colour on a log scale) is what such a flux is drawn as.
    """
    p = b.vocab.catalog.dataset(cand.dataset_id).parameter(cand.parameter)
    if p is None or not p.size or len(p.size) != 1 or p.size[0] <= HANDFUL:
        return 0
    return p.size[0] if channel_axis(p) == "energy" else 0


def spectrogram_dimension(b: Builder, wish: QuantityWish, cand: Candidate) -> str:
    """The spectrogram's panel-group suffix: '@dim' drawn of a 2-D array, '!title' of y.

    The other dimension of a 2-D array is averaged, and the answer says so. The y title
    is given only when the metadata holds no bins for the drawn dimension.
    """
    if wish.quantity != "spectrogram":
        return ""
    info = b.vocab.catalog.dataset(cand.dataset_id)
    p = info.parameter(cand.parameter)
    if p is None:
        return ""
    kept = kept_dimension(info, p, wish.component)
    title = channel_title(p, wish.component if kept else None)
    suffix = f"!{title}" if title else ""
    sliced = pitch_slice(wish)
    if kept is None:
        if sliced is not None:
            b.notes.append(
                f"Differs from the request: {p.name} is not resolved in pitch angle, so "
                f"the {sliced}° pitch angle asked could not be picked."
            )
        return suffix
    name, averaged = kept
    drawn, other = ("pitch angle", "energy") if wish.component == "pitch" else ("energy", "angle")
    b.notes.append(
        f"{p.name} is an array over pitch angle and energy: drawn over {drawn}, averaged "
        f"over its {averaged} {other} bins."
    )
    if sliced is not None and wish.component != "pitch":
        b.notes.append(
            f"Differs from the request: the {sliced}° pitch angle asked could not be picked "
            f"(the catalog gives no angle for {p.name}'s pitch-angle bins), so all "
            f"{averaged} were averaged."
        )
    return f"@{name}{suffix}"
