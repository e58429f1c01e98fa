"""Request language shared by both modes: what a request says, and which data covers it.

`slots` accounts for every word of a request (each consumed by a slot or known filler),
`parse` reads a request into a `RequestIntent` (missions, quantities, products, frames,
operations in `wishes`/`operations`/`spectra`, time through `timerange`), `doubts` finds
names no vocabulary knows, `products` scores a dataset's own metadata against the
request's words, `resolve` picks datasets and parameters for (mission, quantity) by that
score (`measured`: the measured value before a model, flag or raw copy of it), and
`nearest` answers a made-up id with the nearest real ones. The words are data in
`vocabulary/` (`quantities.toml`, `domain.toml`, `request_words.toml`).

Below `agents/` and beside `catalog/`: imports `catalog`, `timerange` and `vocabulary`
only, so the catalog search the LLM agents use and the offline planner rank by the same
rules.
"""
