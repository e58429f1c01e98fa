"""Offline mode's planning assistant with pipeline phrases answered first.

"save this as a pipeline called ACE and Wind comparison" names two spacecraft, so the
planner's heuristics would take it for a comparison; pipeline requests are therefore
recognised before the planning decision (`xhelio.agents.offline.pipeline_requests`, no model).
"""

from __future__ import annotations

import threading

from xhelio.agents.offline.memory_skill import remember_reply, with_preferences
from xhelio.agents.offline.pipeline_requests import pipeline_reply
from xhelio.agents.planning.assistant import PlanningAssistant
from xhelio.agents.turn import AssistantReply

__all__ = ["OfflinePlanningAssistant"]


class OfflinePlanningAssistant(PlanningAssistant):
    """`PlanningAssistant` that first answers save/run/list/search/delete pipeline requests."""

    def respond(self, request: str, cancel: threading.Event) -> AssistantReply:
        """Answer pipeline and "remember" requests at once; plan or run anything else.

        What saved preferences settle is added to the request first (long-term memory).
        """
        reply = pipeline_reply(self.workspace, request)
        if reply is not None:
            return AssistantReply(reply)
        stored = remember_reply(self.workspace, request)
        if stored is not None:
            return stored
        request, applied = with_preferences(self.workspace, request)
        answer = super().respond(request, cancel)
        if applied:
            answer.text = f"{applied}\n\n{answer.text}"
        return answer
