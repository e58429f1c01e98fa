"""Product words of a request and how far a dataset's own metadata covers them.

A request names a product with words beside the mission and the quantity: instrument
acronyms ("SWEPAM", "EPT", "RAD1"), look directions ("sunward"), distribution kinds
("omni-directional", "pitch angle"), modes ("burst") and cadences ("5-minute", "hourly").
Each becomes a `Term`: the metadata tokens that mean it. A dataset covers a term when its
id words, title acronyms, parameter names or cadence hold one of them; the dataset that
covers the most of what was typed is the product asked for. Look directions and kinds
come from the vocabulary files (`[[product]]`); nothing here names a dataset.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.quantity_words import SPECIES_WORDS
from xhelio.timerange import find_time
from xhelio.vocabulary import Instrument, load_vocabulary

__all__ = [
    "Term",
    "coverage_score",
    "hard",
    "id_word_instruments",
    "is_density",
    "is_support",
    "is_view",
    "main_parameter",
    "metadata_tokens",
    "named_by_id",
    "named_product",
    "product_terms",
    "refused_words",
    "request_terms",
    "says",
    "species_named",
    "species_of",
    "title_words",
    "unasked_markers",
    "uncovered",
    "unsaid_words",
    "variant_count",
    "view_primary",
]

_SECONDS = {
    "s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60,
    "h": 3600, "hr": 3600, "hour": 3600, "d": 86400, "day": 86400,
}  # fmt: skip
# "5-minute OMNI", "1 sec field", "hourly": a cadence adjective (not a window: "5-minute
# average", "10-minute bins" are operations and are read elsewhere).
_CADENCE = re.compile(
    r"(?<![\w.-])(?:(?P<n>\d+)[- ]?(?P<u>s|sec|second|m|min|minute|h|hr|hour|d|day)"
    r"|(?P<adverb>hourly|daily|one[- ]minute|one[- ]hour))(?![\w-])"
    r"(?!\s+(?:average|averages|averaged|mean|means|median|boxcar|bins?|window|running"
    r"|rolling|smooth\w*|resolution\s+(?:average|bins?)|std|standard|rms|before|after"
    r"|ago|around|of|prior|starting|from|later|earlier|long))",
    re.I,
)
# A duration right after a running statistic's words is its window, never a cadence.
_WINDOW_BEFORE = re.compile(
    r"\b(?:filter\w*|smooth\w*|boxcar|median|mean|average[sd]?|window|running|rolling|moving"
    r"|sliding|over)\s*[(\[,]?\s*(?:of\s+|an?\s+|the\s+)?$",
    re.I,
)
# A product word refused ("science data, not low latency"): no term of the request.
_NEGATED = re.compile(r"(?:\b(?:not|no|without|never|rather than|instead of)\s+|\bnon-?)$", re.I)
_ADVERBS = {"hourly": 3600, "daily": 86400, "one minute": 60, "one hour": 3600}
_FILLER = frozenset(
    [
        "with",
        "from",
        "data",
        "plot",
        "show",
        "during",
        "between",
        "then",
        "also",
        "each",
        "both",
        "into",
        "over",
        "value",
        "values",
        "time",
        "series",
        "please",
        "using",
        "what",
        "were",
        "like",
        "look",
        "them",
        "they",
        "their",
        "this",
        "that",
    ]
)
_TITLE_CADENCE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)[- ]?(s|sec|second|min|minute|h|hr|hour|d|day)s?(?![\w-])", re.I
)
_UNIT_TOKENS = {1: ("S", "SEC"), 60: ("M", "MIN"), 3600: ("H", "HR", "HOUR"), 86400: ("D", "DAY")}


@dataclass(frozen=True)
class Term:
    """One product word as typed and the metadata tokens (upper case) that mean it."""

    typed: str
    tokens: frozenset[str]
    acronym: bool = True
    """A word written like an id token ("EPT", "3DP"); a plain word matches title acronyms."""
    about_data: bool = False
    """A word about the data itself (a look direction, a distribution kind): a parameter's
    name or description may say it too."""
    soft: bool = False
    """Read from the request's own spelling, not from a word the parser kept: it ranks the
    datasets that cover it first but never rules one out."""


def _cadence_tokens(seconds: int) -> frozenset[str]:
    tokens = {f"PT{seconds}S"}
    for unit, names in _UNIT_TOKENS.items():
        if seconds % unit == 0:
            tokens.update(f"{seconds // unit}{name}" for name in names)
    return frozenset(tokens)


def refused_words(text: str) -> set[str]:
    """Words of product phrases the request refuses ("not low latency": low, latency)."""
    return {
        w.lower()
        for p in load_vocabulary().products
        for m in p.words.finditer(text)
        if _NEGATED.search(text[: m.start()])
        for w in re.findall(r"[A-Za-z0-9]+", m[0])
    }


def product_terms(text: str, timed: Iterable[tuple[int, int]] = ()) -> tuple[Term, ...]:
    """Look directions, distribution kinds, modes and cadence adjectives in `text`.

    A length inside `timed` (the spans of the time phrase: "jan 29 2020 +/- 12h") is
    part of the window, no cadence.
    """
    spans = tuple(timed)
    terms = [
        Term(m[0], p.tokens_for(m), about_data=p.about_data, soft=p.soft)
        for p in load_vocabulary().products
        for m in p.words.finditer(text)
        if not _NEGATED.search(text[: m.start()])
    ]
    for m in _CADENCE.finditer(text):
        if any(a <= m.start() and m.end() <= b for a, b in spans):
            continue  # a length inside the time phrase ("jan 29 2020 +/- 12h")
        if _WINDOW_BEFORE.search(text[: m.start()]):
            continue  # "median filter (5 min)", "boxcar filter 10 min": a window
        if m["adverb"]:
            seconds = _ADVERBS[re.sub(r"[- ]", " ", m["adverb"].lower())]
        else:
            seconds = int(m["n"]) * _SECONDS[m["u"].lower()]
        terms.append(Term(m[0], _cadence_tokens(seconds)))
    return tuple(terms)


# Words typed like ids that name no product: a mission or spacecraft, a frame, a clock.
_ID_LIKE = re.compile(r"(?<![\w-])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*(?![\w-])")


def _names_no_product(word: str) -> bool:
    vocabulary = load_vocabulary()
    squeezed = re.sub(r"[\s\-]", "", word.upper())
    if squeezed in {f.upper() for f in vocabulary.frames} or not re.search(r"[A-Z]", squeezed):
        return True
    for entry in vocabulary.missions.values():
        names = (entry.mission_id, *entry.names)
        if entry.probe_of(word) or squeezed in {re.sub(r"[\s\-]", "", n.upper()) for n in names}:
            return True
    # A date or clock ("2015-03-17T12"), "DOY", "UT", a single letter or a probe number.
    return re.fullmatch(r"(?:DOY|UTC|UT|\d{4}\w*|T?\d+[A-Z]?|[A-Z]\d?)", squeezed) is not None


def _typed_acronyms(text: str) -> list[Term]:
    """Words of `text` typed like id tokens ("MAG", "HOPE", "3DP"), soft terms.

    The parser may read "MAG" as the quantity; spelled in capitals it also names the
    product ("MAVEN MAG"), so the dataset named by it ranks above one that only borrows
    a parameter of that name.
    """
    out: list[Term] = []
    for m in _ID_LIKE.finditer(text):
        word = m[0]
        if sum(c.isupper() or c.isdigit() for c in word) < 2 or word.upper() != word:
            continue
        if _names_no_product(word):
            continue
        parts = {word.upper(), *(p.upper() for p in word.split("-") if len(p) >= 3)}
        out.append(Term(word, frozenset(parts), soft=True))
    return out


def id_word_instruments(
    datasets: Sequence[DatasetInfo], text: str
) -> list[tuple[str, list[DatasetInfo]]]:
    """Instruments `text` names by words of the datasets' own ids, grounded in the catalog.

    A word typed like an id token ("ERNE", "HED", "COSTEP", "EPHIN") names the datasets
    whose id holds it (`product_id_words`), so an instrument the vocabulary does not
    list is still one. Neighbouring words naming overlapping datasets are one product
    ("ERNE HED": the datasets both hold); words naming every dataset name none. Each
    entry is (the words typed, their datasets), in the order typed.
    """
    ids = {d.id: product_id_words(d) for d in datasets}
    groups: list[tuple[str, list[DatasetInfo]]] = []
    for term in _typed_acronyms(text):
        own = [d for d in datasets if term.tokens & ids[d.id]]
        if len(term.typed) < 3 or not own or len(own) == len(datasets):
            continue
        if groups and (shared := [d for d in groups[-1][1] if d in own]):
            groups[-1] = (f"{groups[-1][0]} {term.typed}", shared)
        else:
            groups.append((term.typed, own))
    return groups


def request_terms(text: str, hints: Iterable[str]) -> tuple[Term, ...]:
    """The product terms of a request, each word counted once.

    Its product words and the instrument words ("EPAM", "SPAN-I", "fgm", "magnetometer")
    the parser kept. A word typed like an id token is one term; plain words count one by
    one (4 letters or more, filler left out) and are matched against the words of titles.
    Other words typed in capitals ("MAG") are soft terms (`Term.soft`).
    """
    out = list(product_terms(text, find_time(text).spans))
    refused = refused_words(text)
    for hint in hints:
        if hint.lower() in refused or any(hint.lower() in t.typed.lower() for t in out):
            continue
        if sum(c.isupper() or c.isdigit() for c in hint) >= 2:
            parts = {hint.upper(), *(p.upper() for p in hint.split("-") if len(p) >= 3)}
            out.append(Term(hint, frozenset(parts | _instrument_synonyms(hint))))
            continue
        out.extend(
            Term(w, frozenset({w.upper()}), acronym=False)
            for w in re.findall(r"[A-Za-z0-9]{3,}", hint)
            if w.lower() not in _FILLER
        )
    seen = {w.upper() for t in out for w in re.split(r"\s+", t.typed)}
    out.extend(t for t in _typed_acronyms(text) if t.typed.upper() not in seen)
    return tuple(out)


def _instrument_synonyms(word: str) -> set[str]:
    """Every name of the instrument `word` names in the vocabulary ("TEAMS" -> TMS)."""
    return {
        name.upper()
        for inst in load_vocabulary().instruments
        if inst.words.fullmatch(word)
        for name in inst.names
        if " " not in name
    }


def metadata_tokens(info: DatasetInfo, cadence_s: float | None) -> tuple[set[str], set[str]]:
    """(id words, parameter names, cadence and title acronyms; title acronyms), upper case."""
    own, acronyms = _own_tokens(info, cadence_s)
    return own | _parameter_tokens(info), acronyms


def _parameter_tokens(info: DatasetInfo) -> set[str]:
    return {
        t for p in info.data_parameters for t in re.split(r"[_\-]", p.name.upper()) if len(t) >= 3
    }


def _hyphen_pairs(dataset_id: str) -> set[str]:
    """Neighbouring words of an id joined by a hyphen ("EPD-SIS", "SIS-B", "B-RATES")."""
    return {
        f"{a}-{b}"
        for part in dataset_id.split("_")[1:]
        for a, b in itertools.pairwise(part.split("-"))
        if a and b
    }


_LETTERS_THEN_CADENCE = re.compile(r"([A-Z]{2,})\d+(?:MSEC|MS|SEC|MIN|HR|S|M|H|D)")


def product_id_words(info: DatasetInfo) -> set[str]:
    """The words of the dataset's id after the spacecraft, upper case, as they name it.

    "EPD-SIS-B-RATES" also gives "SIS-B" (a sensor letter goes with its instrument);
    "MRG1HR" gives its cadence "1HR"; "AC500MS" gives "AC", the letters before a cadence.
    """
    ids = {t for t in re.split(r"[_\-]", info.id.upper())[1:] if t}
    ids.update(_hyphen_pairs(info.id.upper()))
    ids.update(m[0] for t in list(ids) if (m := re.search(r"\d+(?:SEC|MIN|HR|S|M|H|D)$", t)))
    ids.update(m[1] for t in list(ids) if (m := _LETTERS_THEN_CADENCE.fullmatch(t)))
    # "STRAHL0": the detector's name before a product number ("strahl").
    ids.update(m[1] for t in list(ids) if (m := re.fullmatch(r"([A-Z]{3,})\d", t)))
    return ids


def named_by_id(info: DatasetInfo, terms: Sequence[Term]) -> bool:
    """Whether a word the request typed is a word of the dataset's own id ("aspoc").

    Support data by its kind (MMS ASPOC is an "Engineering" instrument) is still the
    data asked for when the request names the product by its id word: then it is a
    candidate like any science dataset. Soft terms (capitals read from the spelling) and
    cadences do not name a product this way.
    """
    ids = {t for t in product_id_words(info) if len(t) >= 3 and not t.startswith("PT")}
    return any(t.tokens & ids for t in terms if not t.soft)


def _own_tokens(info: DatasetInfo, cadence_s: float | None) -> tuple[set[str], set[str]]:
    """(id words, cadence and title acronyms; title acronyms): what names the product."""
    ids = product_id_words(info)
    if cadence_s:
        ids.add(f"PT{round(cadence_s)}S")
    head = title_head(info.title)
    # "3 sec, 1 min, and hourly Definitive Data": every cadence the title names.
    ids.update(
        f"PT{round(float(m[1]) * _SECONDS[m[2].lower()])}S" for m in _TITLE_CADENCE.finditer(head)
    )
    acronyms = {t for t in re.split(r"[^A-Za-z0-9]+", head) if len(t) >= 3 and t.isupper()}
    acronyms |= {w.upper() for w in re.findall(r"[A-Za-z0-9]+(?:[-/][A-Za-z0-9]+)+", head)}
    acronyms |= {w.upper() for w in re.split(r"[/\s]+", head) if "/" not in w and w.isupper()}
    return ids | acronyms | title_words(head), acronyms


def title_head(title: str) -> str:
    """The title without its " - PI (institution)" tail; "27 keV - 520 keV" stays whole."""
    return re.split(r"\s-\s(?!\d)", title, maxsplit=1)[0]


def instrument_holds(inst: Instrument, info: DatasetInfo, by_title: bool = False) -> bool:
    """Whether `info` is data of `inst`: its id fits, or (`by_title`) its title names it.

    A filter bank "of the Search Coil Magnetometer" is search-coil data too, but a
    combined product ("ESA+SST") names it as well: titles are the wider reading.
    """
    if inst.datasets.search(info.id):
        return True
    return by_title and bool(inst.words.search(title_head(info.title)))


def title_words(title: str) -> set[str]:
    """The words of a title, upper case, split at case changes ("FastSurvey" -> FAST, SURVEY).

    A hyphenated word the vocabulary spells as one product token ("Anti-Sun") stays whole:
    its parts would say another product ("Sun"). An instrument token written with a space
    ("Search Coil Magnetometer") is said too; markers ("High Resolution") only hyphenated.
    """
    whole = _compound_tokens()
    kept = {w.upper() for w in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+", title)} & whole
    kept |= {token for token, spaced in _spaced_tokens() if spaced.search(title)}
    for word in kept:
        title = re.sub(re.escape(word), " ", title, flags=re.I)
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", title)
    return kept | {w.upper() for w in re.split(r"[^A-Za-z0-9+]+", spaced) if len(w) >= 2}


@cache
def _compound_tokens() -> frozenset[str]:
    return frozenset(t for p in load_vocabulary().products for t in p.tokens if "-" in t)


@cache
def _spaced_tokens() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Hyphenated tokens of products that are no marker, each with its spaced spelling."""
    return tuple(
        (t, re.compile(r"(?<![A-Za-z0-9])" + r"\s+".join(t.split("-")) + r"(?![A-Za-z0-9])", re.I))
        for p in load_vocabulary().products
        if not p.marker
        for t in p.tokens
        if "-" in t
    )


def hard(term: Term) -> bool:
    """Whether `term` decides between sibling products: every word but a soft one."""
    return not term.soft


def variant_count(info: DatasetInfo, terms: Sequence[Term], cadence_s: float | None) -> int:
    """How many of the request's deciding product words the dataset itself says.

    The words that tell sibling datasets apart are the catalog's own: the tokens of their
    ids ("BRST", "ASUN", "HIRES", "1MIN"), titles ("SST Foil", "Burst Mode") and
    cadences. A product word typed ("burst", "sunward", "1-minute", "EESA") counts when
    they hold one of its tokens; a plain word ("rates", "normal") only in the id. The
    count comes before any score: the sibling that says what was asked goes first.
    """
    own, _ = _own_tokens(info, cadence_s)
    ids = {t for t in re.split(r"[_\-]", info.id.upper())[1:] if t}
    return sum(bool(t.tokens & (own if t.acronym else ids)) for t in terms if hard(t))


def coverage_score(info: DatasetInfo, terms: Sequence[Term], cadence_s: float | None) -> float:
    """How well the dataset's metadata covers `terms` (5 per id-like word, 2 per plain).

    An id-like word ("EPT", "RAD1", a look direction) scores 5 in an id word or title
    acronym (it names the product) and 3 in a parameter name only (the product borrows
    it: "MAG_field" in a key-parameter file); a plain word ("fgm", "strahl") scores 2 as
    a title acronym or id word and 1 as a word of the title ("solar wind").
    """
    if not terms:
        return 0.0
    own, acronyms = _own_tokens(info, cadence_s)
    params = _parameter_tokens(info)
    score = 0.0
    for term in terms:
        if term.acronym:
            score += 5.0 if term.tokens & own else 3.0 * bool(term.tokens & params)
            # "SIS-B" said whole beats "SIS" alone: the sensor letter is the sibling's.
            score += 1.0 * ("-" in term.typed and term.typed.upper() in own)
        elif term.tokens & (acronyms | product_id_words(info)):
            score += 2.0  # a plain word: a title acronym, or a word of the id ("STRAHL0")
        elif not SPECIES_WORDS.fullmatch(term.typed.strip()):
            # a word of the title ("solar wind": "CPI/SWA ... Solar Wind Analyzer"); a
            # species ("Energetic Proton Fluxes" beside the plasma) names no product
            score += 1.0 * bool(term.tokens & title_words(title_head(info.title)))
    return score


def unasked_markers(info: DatasetInfo, terms: Sequence[Term]) -> list[str]:
    """Marker words of the dataset's own metadata the request does not say.

    A marker sets a product apart from its siblings ("burst", "auxiliary moments",
    "merged", "pitch angle"; `marker` in the vocabulary's `[[product]]` table): the
    request that does not say it means the plain sibling. An id word holding a marker
    counts ("MOMSAUX").
    """
    asked = {token for t in terms for token in t.tokens}
    ids = {t for t in re.split(r"[_\-]", info.id.upper())[1:] if t}
    own = ids | title_words(title_head(info.title))
    found: list[str] = []
    for product in load_vocabulary().products:
        if not product.marker or product.tokens & asked:
            continue
        held = product.tokens & own or {
            t for t in product.tokens if len(t) >= 3 and any(t in w for w in ids)
        }
        if held:
            found.append(min(held))
    return found


def says(term: Term, text: str) -> bool:
    """Whether `text` (a parameter's name and description) holds a word of `term`.

    Hyphenated words count whole too ("Spin-Averaged" says SPIN-AVERAGED).
    """
    upper = text.upper()
    words = set(re.split(r"[^A-Z0-9]+", upper)) | set(
        re.findall(r"[A-Z0-9]+(?:-[A-Z0-9]+)+", upper)
    )
    return bool(term.tokens & words)


def uncovered(info: DatasetInfo, terms: Sequence[Term], cadence_s: float | None) -> list[Term]:
    """The request's product words (not soft ones) the dataset's metadata does not hold."""
    ids, _ = metadata_tokens(info, cadence_s)
    described = " ".join([info.title, *(f"{p.name} {p.description}" for p in info.data_parameters)])
    return [
        t
        for t in terms
        if t.acronym and not t.soft and not t.tokens & ids and not says(t, described)
    ]


def unsaid_words(info: DatasetInfo, terms: Sequence[Term]) -> list[str]:
    """The request's plain words (not id-like) that no word of the dataset's metadata says.

    A product taken for its id-like words ("SWICS") does not honour a stray word typed
    beside them ("swics zorblax"): the answer names it as not used.
    """
    described = " ".join(
        [info.id, info.title, *(f"{p.name} {p.description}" for p in info.data_parameters)]
    ).replace("_", " ")
    return [t.typed for t in terms if not t.acronym and not _word_cover([t.typed], described)]


# Parameters that describe other data (energy and angle tables, indices, epochs, quality
# flags): never the data of a plot.
_AXIS_NAME = re.compile(
    r"^(?:energ(?:y|ies)|e_?bins?|angles?|theta|phi|pitch_?angles?|pa_?bins?|freq(?:uenc(?:y|ies))?"
    r"|channels?|bins?|mass(?:es)?|(?:energy|angle|freq)_?(?:labels?|centers?|delta|width))$",
    re.I,
)
_NOT_DATA = re.compile(
    r"energ|angle|_?bins?$|^epoch|^time|qual|flag|status|^delta|err|uncert|sigma|_sd$|^num_"
    r"|count_raw|mode|spin|version|label|^sc_?pos|position|^met$|apid|gap|valid"
    r"|^(?:year|doy|day|hour|minute|second|msec|unix_?time)$",
    re.I,
)
# What a description says of bookkeeping beside the data ("Status word", "Measurement
# accumulation time", "Quality flag"): never a product's main data.
_NOT_DATA_SAID = re.compile(
    r"\bstatus\b|\bflags?\b|accumulation time|integration time|\bsee text\b", re.I
)
# Units of an axis of other data (a look direction in degrees, an energy in eV).
_AXIS_UNITS = re.compile(r"^\s*(?:[kmg]?ev|[kmg]?hz|deg(?:rees?)?|°|rad(?:ians?)?)\s*$", re.I)
# A number density's units ("cm^-3", "#/cc", "cm!u-3!n", "1/cm3"): a species' main quantity.
_DENSITY_UNITS = re.compile(
    r"cm\s*(?:\^|\*\*|!u)?\s*\{?-\s*3|/\s*c(?:m\s*\^?\s*3|c)\b|^(?:#|n)?/?cc$", re.I
)


def is_support(p: ParameterInfo, info: DatasetInfo) -> bool:
    """Whether `p` is an axis of other data of `info` (an energy or angle table, bins).

    Structural: another parameter names it as its bins (DEPEND_1), or its name is a bare
    axis name ("ENERGY", "PITCH_ANGLE", "FREQUENCIES").
    """
    if p.is_time or _AXIS_NAME.match(p.name.split("__")[0]):
        return True
    return any(other is not p for other in info.bins_owners.get(p.name, ()))


# A statistic of the data, not a view of it ("---> Proton flux standard deviation").
_STATISTIC = re.compile(
    r"standard deviation|_sd$|\bstd\b|uncertaint|\berrors?\b(?! ?bars)|sigma", re.I
)


def is_view(p: ParameterInfo, params: Sequence[ParameterInfo]) -> bool:
    """Whether `p` is CDAWeb's plot view of another parameter among `params`.

    A view's description continues the one before ("---> Spectrograms by energy at
    sample pitch angles", "---> ... (no error bars)") and its name extends the primary's
    ("FEDU_0to180_byE_atA" of "FEDU_0to180"), same shape: the data is the primary's,
    which is what a request for the quantity means. A statistic of it (a standard
    deviation) is no view.
    """
    return view_primary(p, params) is not None


def view_primary(p: ParameterInfo, params: Sequence[ParameterInfo]) -> ParameterInfo | None:
    """The parameter `p` is a plot view of (the longest name it extends), or None."""
    if not p.description.lstrip().startswith("--->") or _STATISTIC.search(
        f"{p.name} {p.description}"
    ):
        return None
    primaries = [
        q
        for q in params
        if q is not p
        and p.name.startswith(q.name)
        and q.size == p.size
        and not q.description.lstrip().startswith("--->")
    ]
    return max(primaries, key=lambda q: len(q.name), default=None)


def _word_cover(words: Sequence[str], text: str) -> int:
    """How many of `words` are words of `text` (or begin one: "drift" in "DRIFTS")."""
    tokens = set(re.split(r"[^A-Z0-9]+", text.upper()))
    count = 0
    for w in words:
        word = w.upper()
        stem = word[:-1] if len(word) > 4 and word.endswith("S") else word  # "electrons"
        count += word in tokens or (len(stem) >= 4 and any(t.startswith(stem) for t in tokens))
    return count


def species_named(text: str) -> tuple[str, ...]:
    """The species a request names ("alphas", "O+", "He++"), vocabulary keys in text order.

    "ion" alone names no species of its own (every ion instrument's data is "ion" data).
    """
    named = load_vocabulary().species_named(text)
    return tuple(dict.fromkeys(key for key, _ in named if key != "ion"))


def species_of(p: ParameterInfo, info: DatasetInfo | None = None) -> set[str]:
    """The species a parameter's name and description name (vocabulary cues).

    A parameter that names none ("DENS", "Partial Moment Density") is of the species its
    dataset's title names ("Partial moments of the Alpha distribution"), when `info` given.
    """
    own = _species_in(f"{p.name} {p.description}")
    return own or (_species_in(title_head(info.title)) if info is not None else set())


def _species_in(text: str) -> set[str]:
    return {s.key for s in load_vocabulary().species if s.cues.search(text)} - {"ion"}


def is_density(p: ParameterInfo) -> bool:
    """Whether `p` is a number density (its units say per cubic centimetre)."""
    return bool(_DENSITY_UNITS.search(p.units))


def _listed_only(p: ParameterInfo) -> bool:
    """Bookkeeping CDAWeb lists with no units and no description but its name ("SEQN")."""
    return not p.units.strip() and p.description.strip().upper() in ("", p.name.upper())


def main_parameter(
    info: DatasetInfo, words: Sequence[str], species: Sequence[str] = ()
) -> ParameterInfo | None:
    """The data parameter a request for the whole product means; never support data.

    The one whose name and description hold most of `words`, first in the file on a tie.
    A species named ("Wind SWE alphas") must be the parameter's own (its name or
    description says it); among those its number density goes first, the main quantity
    of a species. None when no parameter holds every species named: then no other
    species is served in its place.
    """
    data = [
        p
        for p in info.data_parameters
        if p.type in ("double", "integer")
        and not is_support(p, info)
        # Cluster names carry their dataset id ("B_mag__C1_CP_FGM_SPIN"): not its "SPIN".
        and not _NOT_DATA.search(p.name.removesuffix(f"__{info.id}"))
        and not _NOT_DATA_SAID.search(p.description)
        and not _listed_only(p)
    ]
    if species:
        data = [p for p in data if set(species) <= species_of(p, info)]
    if not data:
        return None
    return max(
        data,
        key=lambda p: (
            # an angle or energy in its own units is where the data looks, not the data
            not _AXIS_UNITS.match(p.units),
            # the species in the parameter's own words beats one its dataset's title lends
            bool(species) and set(species) <= _species_in(f"{p.name} {p.description}"),
            _word_cover(words, f"{p.name} {p.description}"),
            bool(species) and is_density(p),
            not _magnitude_of_a_vector(p, data),
            -data.index(p),
        ),
    )


def channel_family(info: DatasetInfo, param: ParameterInfo) -> list[ParameterInfo]:
    """The channels of `param`'s detector in `info`, in file order (`param` among them).

    Channels are numbered siblings ("DE1" ... "DE4", "P1" ... "P8"): their names differ
    only in digits, and they share units and shape. A species named for a whole product
    ("EPAM electrons") means all of them, not the first.
    """

    def family(p: ParameterInfo) -> str:
        return re.sub(r"\d+", "#", p.name)

    if not re.search(r"\d", param.name):
        return [param]
    return [
        p
        for p in info.data_parameters
        if family(p) == family(param)
        and p.units == param.units
        and p.components == param.components
        and species_of(p) == species_of(param)  # "N_He1"/"N_He2": He+ and He++, no channels
        and not is_support(p, info)
    ]


_MAGNITUDE = re.compile(r"\bmagnitude\b|\btotal (?:magnetic )?field\b|\|B\|", re.I)


def _magnitude_of_a_vector(p: ParameterInfo, data: Sequence[ParameterInfo]) -> bool:
    """Whether `p` is the magnitude of a vector the file also holds ("btotalQ" beside "gseQ").

    The whole product's main data is the vector; its magnitude is derived from it.
    """
    unit = p.units.split(" ")[0].lower()
    return (
        p.components == 1
        and bool(unit)
        and bool(_MAGNITUDE.search(p.description))
        and any(q.components == 3 and q.units.split(" ")[0].lower() == unit for q in data)
    )


def named_product(
    datasets: Sequence[DatasetInfo],
    terms: Sequence[Term],
    unplaced: Sequence[str],
    cadence_of: Callable[[DatasetInfo], float | None],
) -> DatasetInfo | None:
    """The dataset a request names by its product words alone ("SolO EPT sun rates").

    Every id-like term and every leftover word must be covered by the dataset's own
    metadata (id words, title, parameter names and descriptions); among those the one
    covering most wins, `datasets` order (best first) breaking ties. None when no dataset
    accounts for every word: then the request is asked about.
    """
    if not any(t.acronym and not t.soft for t in terms):
        return None
    best: tuple[float, int, DatasetInfo] | None = None
    for n, info in enumerate(datasets):
        ids, _ = metadata_tokens(info, cadence_of(info))
        described = " ".join(
            [info.id, info.title, *(f"{p.name} {p.description}" for p in info.data_parameters)]
        )
        # A sub-sensor named by the parameters' own descriptions ("MICS" of CAMMICE:
        # "O+ rate MICS") is the product's too.
        named = [t for t in terms if t.acronym and not t.soft]
        if not all(t.tokens & ids or says(t, described) for t in named):
            continue
        if _word_cover(unplaced, described.replace("_", " ")) < len(unplaced):
            continue
        score = coverage_score(info, terms, cadence_of(info)) - len(unasked_markers(info, terms))
        if best is None or (score, -n) > (best[0], best[1]):
            best = (score, -n, info)
    return best[2] if best else None
