"""Request language shared by both modes: which words of a request a dataset covers.

Below `agents/` and beside `catalog/`: imports `catalog.model` and `vocabulary` only, so
the catalog search the LLM agents use and the offline resolver rank by the same rules.
"""
