"""Offline mode: answer common requests without a language model, through the same tools.

`xhelio.language` reads a request into a `RequestIntent` and finds datasets and
parameters for it in the catalog; here `plan` turns the intent into plain steps and
tool calls, and `OfflineAssistant` runs them through the workspace's funnel. Imports
nothing from the LLM layer.
"""

from xhelio.agents.offline.assistant import OfflineAssistant

__all__ = ["OfflineAssistant"]
