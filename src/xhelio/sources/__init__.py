"""Data sources: HAPI servers and CDAWeb CDF files behind one `DataSource` interface."""
