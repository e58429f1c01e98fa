"""The insight agent: a vision-capable model reads the current figure and its data context.

No tools: one request carrying the user's question, a compact data context (the figure's
traces with labels, units and points, and each entry's span and source) and the figure
rendered as PNG at scale 2 so axis labels stay legible. The PNG comes from the kaleido
exporter by default; `render_png` is replaceable. Runs on the `insight` tier through the
same router (fallback after a 429) and guarded loop (cancellation). Imports
`agents.subagent`, `agents.prompts` and `render.export`; never the orchestrator.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from pydantic_ai.messages import BinaryContent, UserContent

from xhelio.agents.guard import GuardLimits
from xhelio.agents.models import Tier
from xhelio.agents.prompts import INSIGHT_PROMPT
from xhelio.agents.subagent import AgentEnv, DelegationResult, SubAgent
from xhelio.errors import XhelioError
from xhelio.render.export import shared_exporter
from xhelio.tools.data_tools import entry_summary

__all__ = ["InsightAgent", "PngRenderer", "figure_png"]

PngRenderer = Callable[[Mapping[str, Any]], bytes]
_NO_TOOLS = GuardLimits(max_calls=1, max_iterations=1)


def figure_png(figure: Mapping[str, Any]) -> bytes:
    """Render a resolved figure to PNG at scale 2 with the shared headless browser."""
    return shared_exporter().to_bytes(figure, "png", scale=2.0)


class InsightAgent(SubAgent):
    """Interpret the current figure with a vision model."""

    tier: Tier = "insight"

    def __init__(self, env: AgentEnv, render_png: PngRenderer | None = None) -> None:
        super().__init__(env, "insight", INSIGHT_PROMPT, [])
        self.render_png = render_png or figure_png

    def data_context(self) -> dict[str, Any]:
        """The figure's traces and the stored entries behind them, without arrays."""
        plot = self.env.workspace.session.plot
        current = plot.current
        if current is None:
            return {}
        summary = current.summary()
        labels = {str(t["data_label"]).split(".")[0] for t in summary["traces"]}
        entries: list[dict[str, Any]] = []
        for entry in self.env.workspace.session.store:
            if entry.label in labels or any(entry.label.startswith(f"{lb}.") for lb in labels):
                info = entry_summary(entry)
                entries.append({k: info[k] for k in ("label", "units", "points") if k in info})
                entries[-1].update({k: info.get(k) for k in ("start", "stop", "dataset")})
        return {
            "figure": {k: summary[k] for k in ("panels", "time_range", "traces")},
            "data": entries,
        }

    async def analyze(self, request: str, cancel: threading.Event) -> DelegationResult:
        """Send the figure (PNG) and its data context to the vision model; return its reading."""
        current = self.env.workspace.session.plot.current
        if current is None:
            message = "There is no figure to analyse yet; plot something first."
            return DelegationResult(self.name, message, failed=True, errors=[message])
        try:
            png = self.render_png(current.figure)
        except XhelioError as exc:
            return DelegationResult(self.name, exc.message, failed=True, errors=[exc.message])
        context = json.dumps(self.data_context(), separators=(",", ":"), default=str)
        prompt: list[UserContent] = [
            f"{request.strip()}\n\nData context: {context}",
            BinaryContent(png, media_type="image/png"),
        ]
        return await self.arun(prompt, cancel, limits=_NO_TOOLS)
