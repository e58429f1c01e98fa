"""The DataStore: labelled data in memory, with units and provenance."""
