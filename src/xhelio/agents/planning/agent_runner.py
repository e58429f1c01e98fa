"""`AgentTaskRunner`: plan tasks run on the LLM sub-agents, in task mode.

A task's `mission` picks the agent (`agent_of`): a mission agent inspects the task's
candidate datasets, data-ops thinks then computes, visualization plots or exports,
extraction stores tables; a task with no mission goes to the orchestrator itself. Each
runs with task-mode limits (12 calls / 5 rounds, first request forced to call a tool)
through the one funnel. Imports the orchestrator and the planning loop records.
"""

from __future__ import annotations

import threading

from xhelio.agents.orchestrator import AgentAssistant
from xhelio.agents.planning.loop import TaskOutcome, agent_of
from xhelio.agents.planning.tasks import Task, TaskPlan
from xhelio.errors import XhelioError

__all__ = ["AgentTaskRunner"]


class AgentTaskRunner:
    """Routes each plan task to the LLM sub-agent its `mission` names."""

    def __init__(self, assistant: AgentAssistant) -> None:
        self.assistant = assistant

    def run(
        self, plan: TaskPlan, task: Task, instruction: str, cancel: threading.Event
    ) -> TaskOutcome:
        """Run `task` on its agent and report text, failure and errors."""
        kind = agent_of(task.mission)
        if kind is None:
            try:
                reply = self.assistant.respond(instruction, cancel)
            except XhelioError as exc:
                return TaskOutcome(exc.message, True, [exc.message])
            return TaskOutcome(reply.text)
        result = self.assistant.run_task(
            kind, instruction, cancel, task.mission, task.candidate_datasets
        )
        return TaskOutcome(result.text, result.failed, list(result.errors))
