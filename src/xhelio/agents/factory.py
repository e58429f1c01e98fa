"""Pick the assistant for a workspace: the LLM orchestrator, or offline mode without a model.

Every interface (REPL, `xhelio ask`, web, MCP) gets its assistant here, so the choice
between `AgentAssistant` and `OfflineAssistant` is made in one place from the same model
configuration (`resolve_models`). Both implementations are imported lazily: offline mode
never loads the LLM machinery, and importing this module stays cheap. Imports nothing from
the interfaces layer.
"""

from __future__ import annotations

from xhelio.agents.models import ModelConfig, resolve_models
from xhelio.agents.turn import Assistant
from xhelio.agents.usage import UsageTracker
from xhelio.tools.workspace import Workspace

__all__ = ["make_assistant"]


def make_assistant(
    workspace: Workspace,
    model_override: str | None = None,
    usage: UsageTracker | None = None,
) -> tuple[Assistant, ModelConfig]:
    """Build the assistant that answers requests in `workspace`, with the model config used.

    Raises:
        ConfigError: `model_override` or the configured models are not usable model strings.
    """
    config = resolve_models(workspace.context.settings, model_override)
    if config.offline:
        from xhelio.agents.offline import OfflineAssistant
        from xhelio.agents.planning.assistant import PlanningAssistant
        from xhelio.agents.planning.offline_planner import OfflinePlanning

        offline = OfflineAssistant(workspace)
        planning = OfflinePlanning(offline)
        return PlanningAssistant(offline, workspace, lambda cancel: planning, planning), config
    from xhelio.agents.orchestrator import AgentAssistant

    return AgentAssistant(workspace, config, usage), config
