"""`RequestIntent` -> `OfflinePlan`: plain, inspectable steps and the tool calls they make.

The planner issue's plan-execute loop can run these same records. Imports `catalog`,
`language`, `timerange` and this package; never the tools or the funnel.
"""

from xhelio.agents.offline.plan.build import build_plan
from xhelio.agents.offline.plan.combine import presentation_steps
from xhelio.agents.offline.plan.steps import OfflinePlan, PlanStep, ToolCall

__all__ = ["OfflinePlan", "PlanStep", "ToolCall", "build_plan", "presentation_steps"]
