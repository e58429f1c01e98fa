"""How a figure's point budget is shared among its traces.

Heatmaps take their share first, floored at `MIN_HEATMAP_COLUMNS` time columns so a
spectrogram stays readable in a crowded figure; lines share what is left, small ones
getting all their points and big ones an equal share of the rest, each line at least
`_MIN_LINE_POINTS`. Traces the model wrote with its own data take nothing.

Imports only the `render` siblings `heatmap_traces` and `line_traces` from xhelio.
"""

from __future__ import annotations

from collections.abc import Sequence

from xhelio.render.heatmap_traces import HeatmapPlan
from xhelio.render.line_traces import LinePlan

__all__ = ["MIN_HEATMAP_COLUMNS", "point_budgets"]

# A spectrogram keeps at least this many time columns (one per two pixels of a default
# 1,100 px figure) even when many traces share the point budget.
MIN_HEATMAP_COLUMNS = 500
# Even a crowded figure draws each line with at least this many points.
_MIN_LINE_POINTS = 200


def _wanted_points(plan: object) -> int:
    if isinstance(plan, LinePlan):
        return int(plan.y.size)
    if isinstance(plan, HeatmapPlan):
        return int(plan.values.size)
    return 0


def point_budgets(plans: Sequence[object], point_budget: int) -> list[int]:
    """Points each trace may send: heatmaps take their (floored) share, lines the rest.

    Plans other than lines and heatmaps (literal traces) get 0.
    """
    first = _allocate([_wanted_points(p) for p in plans], point_budget)
    budgets = [0] * len(plans)
    for i, plan in enumerate(plans):
        if isinstance(plan, HeatmapPlan):
            n_time, n_bins = plan.values.shape
            columns = min(n_time, max(first[i] // max(n_bins, 1), MIN_HEATMAP_COLUMNS))
            budgets[i] = columns * n_bins
    line_budget = max(point_budget - sum(budgets), _MIN_LINE_POINTS)
    line_indices = [i for i, p in enumerate(plans) if isinstance(p, LinePlan)]
    shares = _allocate([_wanted_points(plans[i]) for i in line_indices], line_budget)
    for i, share in zip(line_indices, shares, strict=True):
        budgets[i] = max(share, min(_MIN_LINE_POINTS, _wanted_points(plans[i])))
    return budgets


def _allocate(wanted: list[int], budget: int) -> list[int]:
    """Split `budget` across traces: small ones get all they need, big ones share the rest."""
    shares = [0] * len(wanted)
    pending = [i for i, w in enumerate(wanted) if w > 0]
    remaining = budget
    while pending:
        fair = remaining // len(pending)
        satisfied = [i for i in pending if wanted[i] <= fair]
        if not satisfied:
            for i in pending:
                shares[i] = max(fair, 1)
            break
        for i in satisfied:
            shares[i] = wanted[i]
            remaining -= wanted[i]
        pending = [i for i in pending if i not in satisfied]
    return shares
