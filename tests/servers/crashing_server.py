"""A real SDK stdio MCP server that dies while handling one tool call (it never answers it).

    python crashing_server.py

Tools: ``echo(text)`` answers; ``crash()`` exits the process with code 1 before answering, as a
server that crashed mid-request does. The recorder then holds a request with no answer.
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("crashing")


@server.tool()
def echo(text: str) -> str:
    """Say ``text`` back."""
    return text


@server.tool()
def crash() -> str:
    """Exit with code 1 before answering."""
    sys.stderr.flush()
    os._exit(1)


if __name__ == "__main__":
    server.run()
