"""Replay a cassette as an MCP server: the engine, the stdio loop and the session builder."""
