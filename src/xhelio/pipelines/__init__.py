"""Pipelines: saved, replayable analyses extracted from the operations log, and the live DAG.

Between tools and agents: `model` (the versioned document), `extract` (operations log ->
pipeline), `store` (SQLite index + one JSON document each, families, vanilla filter),
`replay` (deterministic, through the tool funnel), `modify` (LLM-mediated replay), `dag`
(the session's live DAG with staleness and backdating), `export` (standalone .py/.ipynb),
`script` (the small public entry point exported scripts use) and `phrases` (offline
requests about pipelines). Nothing here is imported eagerly.
"""
