"""harn-mcp-mock: deterministic MCP tool servers for testing and evaluation."""

__version__ = "0.1.0"
