"""Tools: typed functions agents and people call, all through one `ToolFunnel`."""
