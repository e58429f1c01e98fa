"""The `xhelio` command line: one module per command group."""
