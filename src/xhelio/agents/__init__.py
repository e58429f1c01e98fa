"""The agents layer: model choice per tier, the loop guard, token accounting, and agents.

Foundation modules, importable on their own:

* `models`: which LLM serves each tier (orchestrator, sub_agent, planner, insight, inline,
  fallback), from `--model`, `XHELIO_*_MODEL`, `config.toml` or the provider keys present;
  thinking levels per tier; the session-wide switch to the fallback model after a 429.
* `guard`: `LoopGuard`, the limits that stop runaway tool loops.
* `usage`: `UsageTracker`, token usage per agent.
* `toolbridge`: registry tools as pydantic-ai tools through the funnel; the guarded run.

The LLM assistant: `orchestrator` (`AgentAssistant`, routing via the tools of `routing`)
and its sub-agents, built on `subagent`: `mission`, `data_ops`, `specialists` (extraction,
visualization, exports without a model) and `insight`. `factory` picks it or offline mode.

This package sits above `tools`, `data`, `sources` and `catalog`; nothing below imports it.
The package itself imports nothing, so `xhelio.agents.guard` stays cheap to import.
"""
