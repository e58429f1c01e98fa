"""Which spacecraft each phrase of a request is about.

"Wind SWE proton density and ACE |B|" asks two things of two spacecraft, not four: the
density and the instrument SWE belong to Wind, |B| to ACE. "ACE and Wind speed" asks
one thing of both. The request is cut into clauses at the words that join them ("and",
commas, "vs", "with", "compared to", ...); a clause naming a spacecraft owns the
quantities and instrument words inside it. A clause naming none lends its words to the
clause that names one: the next when its spacecraft is named after the words ("density
and temperature from Wind"), else the one before ("ACE |B| and speed, and Wind density");
and a spacecraft's clause with no quantity of its own takes those of the next clause
with one (else the one before: "ACE and Wind speed", "speed at ACE and Wind").

Nothing is bound when every spacecraft is named in one clause: each then gets every
quantity, as before. Imports only this package.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from xhelio.language.intent import MissionRef, QuantityWish, RequestIntent

__all__ = ["MissionBinding", "bind_missions", "clause_spans"]

_JOINS = re.compile(
    r"\s*(?:[,;&\n]|\band\b|\bvs\b\.?|\bversus\b|\bwith\b|\bcompared (?:to|with)\b|\bagainst\b"
    r"|\bplus\b|\balongside\b|\bas well as\b)\s*",
    re.I,
)


@dataclass
class _Clause:
    start: int
    end: int
    text: str
    refs: list[MissionRef] = field(default_factory=list[MissionRef])
    wishes: list[QuantityWish] = field(default_factory=list[QuantityWish])
    lent: list[str] = field(default_factory=list[str])  # words of clauses naming no spacecraft


@dataclass(frozen=True)
class MissionBinding:
    """The quantities and the words of the request that belong to each spacecraft named."""

    quantities: Mapping[MissionRef, frozenset[QuantityWish]]
    texts: Mapping[MissionRef, str]

    def wants(self, ref: MissionRef, wish: QuantityWish) -> bool:
        """Whether `wish` was asked of the spacecraft `ref`.

        The phrase decides (its place and words), so a wish the planner re-framed
        ("ACE Bz GSM minus Wind Bz GSE" is done in GSM) stays with its spacecraft.
        """
        mine = self.quantities.get(ref)
        if mine is None:
            return True
        return any((w.position, w.text) == (wish.position, wish.text) for w in mine)

    def text_of(self, ref: MissionRef, whole: str) -> str:
        """The words about `ref` (its instrument and product words are read there)."""
        return self.texts.get(ref, whole)


def clause_spans(text: str) -> list[tuple[int, int]]:
    """Where each clause of `text` starts and ends (cut at "and", commas, "vs", "with")."""
    return [(c.start, c.end) for c in _clauses(text)]


def _clauses(text: str) -> list[_Clause]:
    cuts = [0]
    for join in _JOINS.finditer(text):
        cuts.extend((join.start(), join.end()))
    cuts.append(len(text))
    pairs = zip(cuts[::2], cuts[1::2], strict=True)
    return [_Clause(a, b, text[a:b]) for a, b in pairs if text[a:b].strip()]


def _inside(wish: QuantityWish, clause: _Clause) -> bool:
    return clause.start <= wish.position < clause.end


def _said_in(wish: QuantityWish, clause: _Clause, wishes: tuple[QuantityWish, ...]) -> bool:
    """Said in the clause, or said again there ("ACE Bz and Wind Bz" keeps one wish)."""
    if _inside(wish, clause):
        return True
    if any(_inside(w, clause) and w.text.lower() == wish.text.lower() for w in wishes):
        return False  # "ACE Bz GSM and Wind Bz GSE": that clause has its own Bz
    return re.search(rf"(?<!\w){re.escape(wish.text)}(?!\w)", clause.text, re.I) is not None


def _donor(clauses: list[_Clause], i: int) -> _Clause | None:
    """The next clause naming a spacecraft and quantities, else the one before."""
    named = [c for c in clauses if c.refs and c.wishes]
    after = next((c for c in named if c.start > clauses[i].start), None)
    return after or next((c for c in reversed(named) if c.start < clauses[i].start), None)


_NAMED_AFTER = re.compile(r"\b(?:from|at|of|by|on|in|for)\s+(?:the\s+)?$", re.I)


def _borrower(clauses: list[_Clause], i: int, text: str) -> _Clause | None:
    """Whose words a clause naming no spacecraft holds.

    The next clause's when that one names its spacecraft after them ("density and
    temperature from Wind"), else the previous clause's ("ACE |B| and speed, and Wind
    density"), else the next one's.
    """
    after = next((c for c in clauses[i + 1 :] if c.refs), None)
    if after is not None and _NAMED_AFTER.search(text[after.start : after.refs[0].position]):
        return after
    return next((c for c in reversed(clauses[:i]) if c.refs), after)


def bind_missions(intent: RequestIntent) -> MissionBinding | None:
    """Each named spacecraft's own quantities and words, or None when all share them."""
    if len(intent.missions) < 2 or not intent.quantities:
        return None
    clauses = _clauses(intent.text)
    for ref in intent.missions:
        owner = next((c for c in clauses if c.start <= ref.position < c.end), None)
        if owner is None:
            return None
        owner.refs.append(ref)
    named = [c for c in clauses if c.refs]
    if len(named) < 2:
        return None
    for clause in clauses:
        clause.wishes = [w for w in intent.quantities if _said_in(w, clause, intent.quantities)]
    for i, clause in enumerate(clauses):
        if not clause.refs and (target := _borrower(clauses, i, intent.text)) is not None:
            target.wishes.extend(w for w in clause.wishes if w not in target.wishes)
            target.lent.append(clause.text)
    for i, clause in enumerate(clauses):
        if clause.refs and not clause.wishes and (donor := _donor(clauses, i)):
            clause.wishes = list(donor.wishes)
            # Another mission's instrument words are not this one's ("Wind 3DP and MMS1
            # FPI ion temperature"); spacecraft of one mission share them ("C1 and C3 EFW").
            same = {r.mission_id for r in clause.refs} == {r.mission_id for r in donor.refs}
            clause.lent.append(donor.text if same else " ".join(w.text for w in donor.wishes))
    bound = {w for c in named for w in c.wishes}
    unbound = frozenset(w for w in intent.quantities if w not in bound)  # asked of everyone
    quantities = {r: frozenset(c.wishes) | unbound for c in named for r in c.refs}
    texts = {r: " ".join([c.text, *c.lent]) for c in named for r in c.refs}
    return MissionBinding(quantities, texts)
