"""Session state (DataStore, figure, operations log, events) and its persistence."""
