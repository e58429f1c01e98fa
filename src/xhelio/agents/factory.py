"""Pick the assistant for a workspace: the LLM orchestrator, or offline mode without a model.

Every interface (REPL, `xhelio ask`, web, MCP) gets its assistant here, so the choice
between `AgentAssistant` and `OfflineAssistant` is made in one place from the same model
configuration (`resolve_models`). Both implementations are imported lazily: offline mode
never loads the LLM machinery, and importing this module stays cheap. Imports nothing from
the interfaces layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic_ai.models import Model

from xhelio.agents.models import ModelConfig, resolve_models
from xhelio.agents.turn import Assistant
from xhelio.agents.usage import UsageTracker
from xhelio.tools.workspace import Workspace

if TYPE_CHECKING:
    from xhelio.agents.orchestrator import AgentAssistant
    from xhelio.agents.planning.assistant import PlanningAssistant

__all__ = ["make_assistant", "with_llm_planning"]


def make_assistant(
    workspace: Workspace,
    model_override: str | None = None,
    usage: UsageTracker | None = None,
    build_model: Callable[[str], Model] | None = None,
) -> tuple[Assistant, ModelConfig]:
    """Build the assistant that answers requests in `workspace`, with the model config used.

    `build_model` turns model strings into pydantic-ai models (tests script them here).

    Raises:
        ConfigError: `model_override` or the configured models are not usable model strings.
    """
    config = resolve_models(workspace.context.settings, model_override)
    if config.offline:
        from xhelio.agents.offline import OfflineAssistant
        from xhelio.agents.pipeline_phrases import OfflinePlanningAssistant
        from xhelio.agents.planning.assistant import DeepHooks
        from xhelio.agents.planning.offline_planner import OfflinePlanning
        from xhelio.agents.planning.reflector import RuleReflector

        offline = OfflineAssistant(workspace)
        planning = OfflinePlanning(offline)
        assistant = OfflinePlanningAssistant(
            offline, workspace, lambda cancel: planning, planning, wants_plan=planning.needs_plan
        )
        assistant.deep = DeepHooks(lambda: RuleReflector(workspace))
        return assistant, config
    from xhelio.agents.orchestrator import AgentAssistant

    agent = AgentAssistant(workspace, config, usage, build_model=build_model)
    return with_llm_planning(agent, workspace), config


def with_llm_planning(agent: AgentAssistant, workspace: Workspace) -> PlanningAssistant:
    """Wrap the LLM orchestrator for planning; its `request_planning` uses the same loop."""
    from xhelio.agents.planning.agent_runner import AgentTaskRunner
    from xhelio.agents.planning.assistant import DeepHooks, PlanningAssistant
    from xhelio.agents.planning.llm_planner import LLMPlanner, LLMReviewer
    from xhelio.agents.planning.reflector import LLMReflector

    settings = workspace.context.settings
    reviewer = LLMReviewer(agent.router, agent.env.record_usage) if settings.plan_review else None
    planning = PlanningAssistant(
        agent,
        workspace,
        lambda cancel: LLMPlanner(workspace, agent.router, agent.env.record_usage, cancel),
        AgentTaskRunner(agent),
        reviewer=reviewer,
        review_iterations=settings.plan_review_iterations,
    )
    agent.planner = planning.plan_request
    deep_reviewer = reviewer or LLMReviewer(agent.router, agent.env.record_usage)
    planning.deep = DeepHooks(
        lambda: LLMReflector(workspace, agent.router, agent.env.record_usage), deep_reviewer
    )
    return planning
