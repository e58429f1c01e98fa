"""Offline mode's planning assistant with pipeline phrases answered first.

"save this as a pipeline called ACE and Wind comparison" names two spacecraft, so the
planner's heuristics would take it for a comparison; pipeline requests are therefore
recognised before the planning decision (`xhelio.agents.offline.pipeline_requests`, no model).
"""

from __future__ import annotations

import threading

from xhelio.agents.offline.pipeline_requests import pipeline_reply
from xhelio.agents.planning.assistant import PlanningAssistant
from xhelio.agents.turn import AssistantReply

__all__ = ["OfflinePlanningAssistant"]


class OfflinePlanningAssistant(PlanningAssistant):
    """`PlanningAssistant` that first answers save/run/list/search/delete pipeline requests."""

    def respond(self, request: str, cancel: threading.Event) -> AssistantReply:
        """A pipeline request is answered at once; anything else goes to planning."""
        reply = pipeline_reply(self.workspace, request)
        if reply is not None:
            return AssistantReply(reply)
        return super().respond(request, cancel)
