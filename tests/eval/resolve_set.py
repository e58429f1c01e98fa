"""Requests generated from the catalog itself, each with the set of acceptable datasets.

For every science dataset of the shipped catalog, requests are built from its own
metadata in several phrasing styles:

- ``instrument``: the spacecraft and the product words of the dataset id
  ("SOLO EPD EPT SUN RATES");
- ``quantity``: words of its main parameter's description, then the spacecraft
  ("electron flux from SOLO EPT");
- ``qualifier``: the spacecraft, an instrument word and the species / frame / look
  direction / cadence words its metadata carries ("MMS2 FPI ion GSE");
- ``time``: an ``instrument`` request with a time expression inside the coverage.

A dataset is an acceptable answer to a request when it belongs to the same spacecraft and
its metadata (id words, title, parameter names and descriptions) holds every content word
of the request: the request cannot tell it from the one it was built from. Nothing here
knows a dataset id; the rules are the same for the whole catalog.

Used by `benchmarks/bench_resolve.py` and `tests/test_bench_resolve.py`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, timedelta

from xhelio.agents.offline.plan import build_plan
from xhelio.catalog.index import Catalog, is_auxiliary
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.parse import Vocabulary, parse_request

STYLES = ("instrument", "quantity", "qualifier", "time")
# Id words that name a processing level, release or product class, not what was measured.
_LEVEL = re.compile(r"^(?:L\d[A-Z0-9]*|LEV|K\d|H\d|M\d|R0|E\d|REL\d+|V\d+|LEVEL\d?|CP|PP|UP|JP)$")
_SUPPORT = re.compile(
    r"qual|flag|status|epoch|time|^delta|err|uncert|sigma|mode|spin|count|cnts|gap|valid"
    r"|energy|angle|_bins?$|label|^sc_|pos|dist|mask|version|num_|^met$|apid",
    re.I,
)
_FILLER = frozenset(
    [
        "a",
        "an",
        "and",
        "the",
        "of",
        "for",
        "from",
        "in",
        "on",
        "at",
        "to",
        "by",
        "with",
        "data",
        "set",
        "dataset",
        "parameter",
        "parameters",
        "value",
        "values",
        "level",
        "key",
        "variable",
    ]
)
# Words a request may carry to pick one sibling product: species, frames, look directions,
# distribution kinds, cadence words.
_QUALIFIERS = re.compile(
    r"^(?:protons?|electrons?|ions?|alphas?|oxygen|helium|h\+|he\+\+|o\+|gse|gsm|rtn|sm|srf"
    r"|gei|geo|sun|asun|north|south|omni|omnidirectional|pad|pitch|moms|moments|dist"
    r"|\d+(?:sec|min|hr|s|m|h))$",
    re.I,
)
_WORD = re.compile(r"[A-Za-z0-9+]+")
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


@dataclass(frozen=True)
class ResolveCase:
    """One generated request, the dataset it was built from and every acceptable answer."""

    text: str
    style: str
    source: str
    acceptable: frozenset[str]


def words(text: str) -> list[str]:
    """Lower-case content words of `text` (a plural `s` dropped)."""
    out: list[str] = []
    for w in _WORD.findall(text.lower()):
        if w in _FILLER or len(w) < 2:
            continue
        out.append(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def _metadata_words(info: DatasetInfo) -> set[str]:
    text = " ".join(
        [
            re.sub(r"[_\-]", " ", info.id),
            info.title,
            " ".join(re.sub(r"[_\-]", " ", p.name) for p in info.data_parameters),
            " ".join(p.description for p in info.data_parameters),
        ]
    )
    return set(words(text))


def _prefix(dataset_id: str) -> str:
    return dataset_id.split("_", 1)[0]


def _product_words(info: DatasetInfo) -> list[str]:
    parts = re.split(r"[_\-]", info.id)
    prefix_len = len(re.split(r"[_\-]", _prefix(info.id)))
    return [
        p
        for p in parts[prefix_len:]
        if p and not _LEVEL.match(p.upper()) and re.search(r"[A-Za-z]", p)
    ]


def _main_parameter(info: DatasetInfo) -> ParameterInfo | None:
    for p in info.data_parameters:
        if p.type in ("double", "integer") and not _SUPPORT.search(p.name) and p.description:
            return p
    return None


def _spacecraft(info: DatasetInfo) -> str:
    return _prefix(info.id).replace("-", " ")


def _description_words(p: ParameterInfo, info: DatasetInfo) -> list[str]:
    text = re.sub(re.escape(info.id), " ", p.description, flags=re.I)
    return [w for w in words(text) if not w.isdigit()][:5]


def _time_phrase(info: DatasetInfo, rng: random.Random) -> str | None:
    if info.start is None or info.stop is None:
        return None
    start = info.start if info.start.tzinfo else info.start.replace(tzinfo=UTC)
    stop = info.stop if info.stop.tzinfo else info.stop.replace(tzinfo=UTC)
    if stop - start < timedelta(days=3):
        return None
    day = (start + (stop - start) * rng.uniform(0.2, 0.8)).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    forms = (
        f"on {day:%Y-%m-%d}",
        f"on {_MONTHS[day.month - 1]} {day.day}, {day.year}",
        f"for day {day.timetuple().tm_yday} of {day.year}",
        f"{day:%Y-%m-%d} 06:00 to 12:00",
        f"{day.day} {_MONTHS[day.month - 1][:3]} {day.year}",
    )
    return rng.choice(forms)


def _requests(info: DatasetInfo, rng: random.Random) -> list[tuple[str, str, str]]:
    """(style, request, the part of it that names the data)."""
    sc = _spacecraft(info)
    product = _product_words(info)
    out: list[tuple[str, str, str]] = []
    if product:
        text = f"{sc} {' '.join(product)}"
        out.append(("instrument", text, text))
    main = _main_parameter(info)
    if main is not None and (desc := _description_words(main, info)):
        instrument = f" {product[0]}" if product else ""
        text = f"{' '.join(desc)} from {sc}{instrument}"
        out.append(("quantity", text, text))
    qualifiers = sorted(
        {w.lower() for w in _WORD.findall(f"{info.id} {info.title}") if _QUALIFIERS.match(w)}
    )
    if product and qualifiers:
        text = f"{sc} {product[0]} {' '.join(qualifiers[:3])}"
        out.append(("qualifier", text, text))
    if product and (when := _time_phrase(info, rng)):
        text = f"{sc} {' '.join(product)}"
        out.append(("time", f"{text} {when}", text))
    return out


def science_datasets(catalog: Catalog) -> list[DatasetInfo]:
    """Datasets a request could be about: not support data, with a numeric parameter."""
    infos = (catalog.dataset(i) for i in catalog.dataset_ids())
    return [
        info
        for info in infos
        if not is_auxiliary(info)
        and any(p.type in ("double", "integer") for p in info.data_parameters)
    ]


def build_cases(infos: Iterable[DatasetInfo], seed: int = 20) -> list[ResolveCase]:
    """Every request of every style for `infos`, with its acceptable datasets."""
    rng = random.Random(seed)
    infos = list(infos)
    vocab = {info.id: _metadata_words(info) for info in infos}
    by_prefix: dict[str, list[str]] = {}
    for info in infos:
        by_prefix.setdefault(_prefix(info.id), []).append(info.id)
    cases: list[ResolveCase] = []
    for info in infos:
        for style, text, naming in _requests(info, rng):
            needed = set(words(naming)) - set(words(_spacecraft(info)))
            acceptable = frozenset(d for d in by_prefix[_prefix(info.id)] if needed <= vocab[d]) | {
                info.id
            }
            cases.append(ResolveCase(text, style, info.id, acceptable))
    return cases


def sample(cases: list[ResolveCase], size: int, seed: int = 20) -> list[ResolveCase]:
    """A fixed sample of `size` cases (the same for the same cases and seed)."""
    if size >= len(cases):
        return cases
    return random.Random(seed).sample(cases, size)


def reciprocal_rank(ranked: list[str], acceptable: frozenset[str]) -> float:
    """1/rank of the first acceptable dataset in `ranked` (0 when none is)."""
    for n, dataset_id in enumerate(ranked, start=1):
        if dataset_id in acceptable:
            return 1.0 / n
    return 0.0


@dataclass
class Tally:
    """Counts for one style (or all)."""

    n: int = 0
    top1: int = 0
    recall5: int = 0
    rr: float = 0.0
    offline_n: int = 0
    offline_top1: int = 0
    offline_wrong: int = 0
    misses: list[str] = field(default_factory=list[str])


def search_scores(catalog: Catalog, case: ResolveCase) -> tuple[bool, bool, float, str]:
    """(top-1 right, any of top 5 right, reciprocal rank in the top 10, first id)."""
    ranked = [h.dataset_id for h in catalog.search(case.text, limit=10)]
    top = ranked[0] if ranked else ""
    return (
        top in case.acceptable,
        any(d in case.acceptable for d in ranked[:5]),
        reciprocal_rank(ranked, case.acceptable),
        top,
    )


def offline_choice(vocab: Vocabulary, case: ResolveCase) -> str | None:
    """The dataset the offline resolver would fetch first, or None when it would ask."""
    plan = build_plan(vocab, parse_request(case.text, vocab))
    for step in plan.steps:
        if step.kind == "fetch" and step.candidates:
            return step.candidates[0].dataset_id
    return None


def evaluate(
    cases: list[ResolveCase], catalog: Catalog, offline: list[ResolveCase]
) -> dict[str, Tally]:
    """Tallies per style and under "all"."""
    tallies = {style: Tally() for style in (*STYLES, "all")}
    vocab = Vocabulary.from_catalog(catalog)
    offline_texts = {id(c) for c in offline}
    for case in cases:
        right, recalled, rr, top = search_scores(catalog, case)
        for key in (case.style, "all"):
            t = tallies[key]
            t.n += 1
            t.top1 += right
            t.recall5 += recalled
            t.rr += rr
        if not right:
            tallies["all"].misses.append(f"search  {case.text!r}: {top} (from {case.source})")
        if id(case) not in offline_texts:
            continue
        chosen = offline_choice(vocab, case)
        for key in (case.style, "all"):
            t = tallies[key]
            t.offline_n += 1
            t.offline_top1 += chosen in case.acceptable
            t.offline_wrong += chosen is not None and chosen not in case.acceptable
        if chosen is not None and chosen not in case.acceptable:
            tallies["all"].misses.append(f"offline {case.text!r}: {chosen} (from {case.source})")
    return tallies
