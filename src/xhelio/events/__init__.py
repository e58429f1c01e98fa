"""Event lists as data: import, shipped lists, a per-user store, detection, epochs.

An `EventList` is a table of events (start, end and attributes) with its name, origin,
citation and method. Formats read and write it (CSV, AMDA time tables, HAPI CSV,
VOTable); the store keeps a user's lists; the detectors make lists from data by
published definitions; `epoch` stacks data around events (superposed-epoch analysis).
Imports `xhelio.data`, `xhelio.migrations`, `xhelio.errors` and pandas/numpy/plotly.
"""
