"""A plugin whose import fails, as one with a missing dependency does."""

raise ImportError("xhelio_broken_source needs the library 'libnothing', which is not installed")
