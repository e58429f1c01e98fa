"""The HTTP-API specialist: described web APIs and search, its answer composed with sources.

It is offered `list_apis`, `describe_api`, `call_api`, `search_literature`,
`search_web`, `list_fetched_data` and `compose_answer`; every call goes through the
funnel (validated, traced) and `xhelio.webapis` (allowlisted hosts only). Whatever the
model writes, the composer step (`tools.compose_tools.compose`) ends the reply with the
sources of the entries the run stored, so an API or literature answer is never uncited.
Imports `agents.subagent`, `agents.prompts` and `tools.compose_tools`.
"""

from __future__ import annotations

import dataclasses
import threading

from xhelio.agents.prompts import API_PROMPT
from xhelio.agents.subagent import AgentEnv, AgentMode, DelegationResult, SubAgent, memory_note
from xhelio.tools.compose_tools import compose

__all__ = ["API_AGENT_TOOLS", "ApiAgent"]

API_AGENT_TOOLS = (
    "list_apis",
    "describe_api",
    "call_api",
    "search_literature",
    "search_web",
    "list_fetched_data",
    "compose_answer",
)


class ApiAgent(SubAgent):
    """Calls documented web APIs and search providers; cites what it used."""

    def __init__(self, env: AgentEnv) -> None:
        super().__init__(env, "web_api", API_PROMPT, [env.tool(n) for n in API_AGENT_TOOLS])

    async def answer(
        self, request: str, cancel: threading.Event, mode: AgentMode = "conversational"
    ) -> DelegationResult:
        """Run the request, then compose the reply with the sources of what it stored."""
        prompt = f"{request.strip()}\n\n{memory_note(self.env.workspace)}"
        result = await self.arun(prompt, cancel, mode)
        if result.failed or "Sources:" in result.text:
            return result
        text = compose(result.text, self.env.workspace.session.store, result.labels)
        return dataclasses.replace(result, text=text)
