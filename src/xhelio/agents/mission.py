"""Mission agents: one fetch-only specialist per spacecraft, cached for the session.

A mission agent sees the discovery tools, `fetch_data`, `list_fetched_data` and the
ephemeris tools (position, separation, connectivity, frame changes), and a prompt
listing the mission's recommended datasets from the catalog. It works in two modes:
candidate inspection (the request names "Candidate datasets to inspect", or the planner
passes candidates: inspect them, pick, fetch) and direct execution (do exactly what the
request says). A fetch that fails, has no samples or is all NaN comes back to the model
as an error (`toolbridge` judges fetch results), so it moves on to the next
candidate. Imports `agents.subagent` and `agents.prompts`; never the orchestrator.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

from xhelio.agents.prompts import MISSION_CANDIDATES, mission_prompt, mission_task_prompt
from xhelio.agents.subagent import AgentEnv, AgentMode, DelegationResult, SubAgent, memory_note
from xhelio.catalog.model import DatasetInfo, Mission
from xhelio.errors import UserError, XhelioError

__all__ = ["CANDIDATE_MARKER", "MissionAgent", "MissionAgents", "candidates_in"]

CANDIDATE_MARKER = "Candidate datasets to inspect:"
_MISSION_TOOLS = (
    "search_datasets",
    "list_parameters",
    "get_data_availability",
    "browse_datasets",
    "fetch_data",
    "list_fetched_data",
    # Where the spacecraft was, and its geometry with others (SPICE or archive positions).
    "get_ephemeris",
    "spacecraft_separation",
    "magnetic_connectivity",
    "transform_frame",
)
# CDAWeb ids (AC_H2_MFI), and PDS ids (pds3:JNO-J-3-FGM-CAL-V1.0:DATA, urn:nasa:pds:...).
_DATASET_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-:./]*[A-Za-z0-9]")


def candidates_in(request: str) -> list[str]:
    """The dataset ids after a 'Candidate datasets to inspect:' marker, if any."""
    _, marker, rest = request.partition(CANDIDATE_MARKER)
    if not marker:
        return []
    return _DATASET_ID.findall(rest.splitlines()[0] if rest.strip() else "")


class MissionAgent(SubAgent):
    """The fetch specialist of one spacecraft."""

    def __init__(
        self, env: AgentEnv, mission: Mission, datasets: Sequence[DatasetInfo] | None = None
    ) -> None:
        if datasets is None:
            datasets = env.workspace.context.catalog.browse(mission.id)
        tools = [env.tool(name) for name in _MISSION_TOOLS]
        super().__init__(
            env, f"mission:{mission.id}", mission_prompt(mission.name, datasets), tools
        )
        self.mission = mission

    def prompt_for(self, request: str, mode: AgentMode, candidates: Sequence[str] = ()) -> str:
        """The user prompt of one request: the request, candidates or mode rules, memory."""
        wanted = list(candidates) or candidates_in(request)
        if mode == "task":
            text = mission_task_prompt(request, wanted)
        elif wanted and CANDIDATE_MARKER not in request:
            text = f"{request.strip()}\n\n{MISSION_CANDIDATES.format(candidates=', '.join(wanted))}"
        elif wanted:
            rules = MISSION_CANDIDATES.split("\n", 1)[1]
            text = f"{request.strip()}\n\n{rules}"
        else:
            text = request.strip()
        return f"{text}\n\n{memory_note(self.env.workspace)}"

    async def fetch(
        self,
        request: str,
        cancel: threading.Event,
        mode: AgentMode = "conversational",
        candidates: Sequence[str] = (),
    ) -> DelegationResult:
        """Fetch what `request` asks for; with candidates, inspect them first."""
        return await self.arun(self.prompt_for(request, mode, candidates), cancel, mode)


class MissionAgents:
    """The session's mission agents, created on first use and kept for later requests."""

    def __init__(self, env: AgentEnv) -> None:
        self.env = env
        self._agents: dict[str, MissionAgent] = {}
        self._lock = threading.Lock()

    def get(self, mission_id: str) -> MissionAgent:
        """The agent of `mission_id` (a name or alias the catalog knows, or a PDS-only mission).

        Raises:
            UserError: the catalog knows no such mission (the message suggests close names).
        """
        try:
            mission = self.env.workspace.context.catalog.mission(mission_id)
            planetary = None
        except UserError:
            planetary = _pds_mission(mission_id)
            if planetary is None:
                raise
            mission = planetary[0]
        with self._lock:
            if mission.id not in self._agents:
                datasets = planetary[1] if planetary is not None else None
                self._agents[mission.id] = MissionAgent(self.env, mission, datasets)
            return self._agents[mission.id]

    def __len__(self) -> int:
        return len(self._agents)


def _pds_mission(name: str) -> tuple[Mission, list[DatasetInfo]] | None:
    """A mission only PDS has (Juno, Galileo...) by id or name, with its PDS datasets."""
    from xhelio.sources.pds.catalog import load_catalog
    from xhelio.vocabulary.planetary import load_planetary

    named = load_planetary().mission_in(name)
    mission_id = named[0].mission_id if named is not None else name.strip().upper()
    try:
        datasets = load_catalog().mission_datasets(mission_id)
    except XhelioError:  # the planetary extra is not installed
        return None
    if not datasets:
        return None
    label = named[0].names[0] if named is not None else mission_id
    ids = tuple(d.id for d in datasets)
    name = f"{label} (NASA PDS PPI; fetch with source='pds')"
    return Mission(mission_id, name, (), ids), datasets
