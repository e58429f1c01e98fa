"""Which requests need a plan, which time range every task must use, and who may run them.

`is_complex_request` applies the seed's indicator families (conjunction chains,
comparisons, multi-step operations, several spacecraft, pipeline phrases) and says which
fired. Spacecraft are spotted with the catalog's `AliasTable` when one is given (so "solar
wind" never counts as Wind), else with a small list of common names. `resolve_plan_time`
finds the time range once, before planning, so no task re-reads "last week" at another
moment; it uses the offline parser's time finder (clock ranges on a day, days of year,
weeks), so both modes read a sentence's time the same way. `AgentPreferences` and
`decide_agents` are seed 003's prefer/disable constraints and the heuristic agent choice
with a rationale and a confidence. Imports `catalog.aliases`, `timerange` and
`vocabulary` from xhelio.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from xhelio.catalog.aliases import AliasTable
from xhelio.errors import UserError
from xhelio.timerange import TimeRange, find_time
from xhelio.vocabulary import load_vocabulary

__all__ = [
    "AGENT_NAMES",
    "AgentName",
    "AgentPreferences",
    "Complexity",
    "PlannerDecision",
    "decide_agents",
    "is_complex_request",
    "resolve_plan_time",
]

AgentName = Literal[
    "mission", "data_ops", "data_extraction", "sql", "visualization", "insight", "web_api"
]
AGENT_NAMES: tuple[AgentName, ...] = (
    "mission",
    "data_ops",
    "data_extraction",
    "sql",
    "visualization",
    "insight",
    "web_api",
)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_FETCH = r"(?:fetch|get|load|download|retrieve|pull|show|plot|display|graph)"
_COMPUTE = (
    r"(?:comput\w*|calculat\w*|deriv\w*|magnitude|smooth\w*|averag\w*|resampl\w*|filter\w*"
    r"|differen\w*|ratio|integrat\w*|fft|spectr\w*|detrend\w*|normali[sz]\w*|correlat\w*)"
)
_INDICATORS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("conjunction chain", _rx(r"\band\b.+\band\b")),
    ("sequence", _rx(r"\bthen\b|\bafter(?:wards?)?\b|\bfinally\b|\bfirst\b.+\bthen\b")),
    ("comparison", _rx(r"\bcompar\w*|\bdifference between\b|\bvs\.?\b|\bversus\b|\bagainst\b")),
    ("fetch and compute", _rx(rf"\b{_FETCH}\b.+\band\b.+\b{_COMPUTE}")),
    ("compute and plot", _rx(rf"\b{_COMPUTE}.+\band\b.+\b(?:plot|show|display|graph)\b")),
    ("plot and plot", _rx(r"\bplot\b.+\band\b.+\bplot\b")),
    ("pipeline", _rx(r"\b(?:smooth|average|resample|magnitude)\w*\b.+\band\b")),
    ("correlation", _rx(r"\bcorrelat\w*|\bcross[- ]?correlat\w*|\blag\b")),
)
# Used only without a catalog: the vocabulary's mission names and probe shorthands.
_COMMON_CRAFT = _rx(
    r"\b(?:"
    + "|".join(
        sorted(
            (
                re.escape(name).replace(r"\ ", r"\s+")
                for m in load_vocabulary().missions.values()
                for name in (*m.names, *(s for p in m.probes.values() for s in p))
                if name not in m.exact and name.lower() not in ("wind speed",)
            ),
            key=len,
            reverse=True,
        )
    )
    + r")\b"
)
_SOLAR_WIND = _rx(r"\bsolar[- ]wind\b")


@dataclass(frozen=True)
class Complexity:
    """The routing verdict: does the request need a plan, and why."""

    complex: bool
    reasons: tuple[str, ...]
    spacecraft: tuple[str, ...] = ()


def _spacecraft(text: str, aliases: AliasTable | None) -> tuple[str, ...]:
    if aliases is not None:
        found = [m.mission_id for m in aliases.find_mentions(text)]
    else:
        masked = _SOLAR_WIND.sub(" ", text)
        found = [m.group(0).lower() for m in _COMMON_CRAFT.finditer(masked)]
    return tuple(dict.fromkeys(found))


def is_complex_request(text: str, aliases: AliasTable | None = None) -> Complexity:
    """Whether `text` needs the plan-execute-replan loop, and which indicators fired."""
    reasons = [name for name, pattern in _INDICATORS if pattern.search(text)]
    craft = _spacecraft(text, aliases)
    if len(craft) >= 2:
        reasons.append(f"several spacecraft ({', '.join(craft)})")
    return Complexity(bool(reasons), tuple(reasons), craft)


def resolve_plan_time(text: str, now: datetime | None = None) -> tuple[TimeRange, str] | None:
    """The time range a request names, resolved once: (range, the words that named it)."""
    found = find_time(text, now)
    return (found.range, found.text) if found.range is not None and found.text else None


def _names(names: Iterable[str]) -> tuple[AgentName, ...]:
    return tuple(a for name in names for a in AGENT_NAMES if a == name)


@dataclass(frozen=True)
class AgentPreferences:
    """Seed 003's request constraints: agents to prefer (in order) and agents to disable."""

    prefer: tuple[AgentName, ...] = ()
    disable: tuple[AgentName, ...] = ()

    @classmethod
    def of(cls, prefer: Iterable[str] = (), disable: Iterable[str] = ()) -> AgentPreferences:
        """Validated preferences; an unknown agent name is a clear error."""
        known = set(AGENT_NAMES)
        for name in (*prefer, *disable):
            if name not in known:
                raise UserError(
                    f"Unknown agent '{name}' in prefer/disable; known: {', '.join(AGENT_NAMES)}."
                )
        return cls(_names(prefer), _names(disable))

    def allows(self, agent: AgentName) -> bool:
        """Whether `agent` may run."""
        return agent not in self.disable


@dataclass(frozen=True)
class PlannerDecision:
    """Which agents a request needs, why, and how sure the choice is (0-1)."""

    chosen_agents: tuple[AgentName, ...]
    rationale: str
    confidence: float
    guardrails: dict[str, Any] = field(default_factory=dict[str, Any])

    def to_dict(self) -> dict[str, Any]:
        """JSON form, kept with the plan."""
        return {
            "chosen_agents": list(self.chosen_agents),
            "rationale": self.rationale,
            "confidence": self.confidence,
            "guardrails": self.guardrails,
        }


_AGENT_CUES: tuple[tuple[AgentName, re.Pattern[str]], ...] = (
    ("mission", _rx(rf"\b{_FETCH}\b|\bdata\b|\bfield\b|\bspeed\b|\bdensity\b|\bflux\b")),
    ("data_ops", _rx(_COMPUTE)),
    ("data_extraction", _rx(r"\b(?:pdf|table|document|paper|event list|extract|csv text)\b")),
    (
        "sql",
        _rx(
            r"\bsql\b|\bselect\b|\bas a table\b|\bwhich (?:days|hours|months)\b"
            r"|\b(?:days|hours) (?:when|where|with)\b"
        ),
    ),
    ("visualization", _rx(r"\b(?:plot|show|display|graph|visuali[sz]e|chart|figure|panel)\w*")),
    ("insight", _rx(r"\b(?:interpret|explain|insight|what (?:does|do) .* (?:show|mean))\b")),
    (
        "web_api",
        _rx(
            r"\b(?:swpc|donki|noaa|forecast\w*|alerts?|cmes?|flares?|kp index|papers?|"
            r"literature|publications?|search the web|web search)\b"
        ),
    ),
)


def decide_agents(
    text: str, preferences: AgentPreferences = AgentPreferences(), spacecraft: Sequence[str] = ()
) -> PlannerDecision:
    """Heuristic agent choice: keyword cues, then preferences, with a rationale."""
    cued: list[AgentName] = [a for a, cue in _AGENT_CUES if cue.search(text)]
    if spacecraft and "mission" not in cued:
        cued.insert(0, "mission")
    ordered: list[AgentName] = [*preferences.prefer]
    ordered.extend(a for a in cued if a not in preferences.prefer)
    chosen: tuple[AgentName, ...] = tuple(a for a in ordered if preferences.allows(a))
    dropped = [a for a in ordered if not preferences.allows(a)]
    why = [f"keyword cues for {', '.join(cued) or 'no agent'}"]
    if spacecraft:
        why.append(f"spacecraft named: {', '.join(spacecraft)}")
    if preferences.prefer:
        why.append(f"preferred first: {', '.join(preferences.prefer)}")
    if dropped:
        why.append(f"disabled by request: {', '.join(dropped)}")
    # Heuristics alone are moderately sure; sure-er when several independent cues agree.
    confidence = 0.4 if not cued else min(0.9, 0.5 + 0.1 * len(cued))
    return PlannerDecision(
        chosen_agents=chosen,
        rationale="; ".join(why),
        confidence=round(confidence, 2),
        guardrails={"disabled": list(preferences.disable), "preferred": list(preferences.prefer)},
    )
