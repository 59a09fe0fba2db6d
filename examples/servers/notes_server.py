"""A small stdio MCP server for offline demos: a notes store with typed tools.

Written with the official SDK's high-level server (``mcp.server.mcpserver.MCPServer``), so it
speaks both handshakes exactly as a real SDK server does. Run it through the recorder:

    harn mcp mock record --cassette demo.cassette.json -- python examples/servers/notes_server.py
"""

from __future__ import annotations

import os
from typing import TypedDict

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes", instructions="A tiny notes store for harn-mcp-mock demos.")

_NOTES: dict[str, str] = {"welcome": "Notes live in memory; nothing is written to disk."}
_API_KEY = os.environ.get("NOTES_API_KEY", "")


class Note(TypedDict):
    name: str
    text: str
    words: int


@server.tool(annotations={"readOnlyHint": True})
def list_notes() -> list[str]:
    """Names of every note, sorted."""
    return sorted(_NOTES)


@server.tool(annotations={"readOnlyHint": True})
def read_note(name: str) -> Note:
    """One note with its word count."""
    if name not in _NOTES:
        raise ValueError(f"no note named {name!r}")
    text = _NOTES[name]
    return {"name": name, "text": text, "words": len(text.split())}


@server.tool(annotations={"destructiveHint": False, "idempotentHint": True})
def write_note(name: str, text: str) -> Note:
    """Create or replace a note."""
    _NOTES[name] = text
    return {"name": name, "text": text, "words": len(text.split())}


@server.tool()
def whoami() -> str:
    """Which API key the server was started with (the recorder must redact it)."""
    return f"authenticated with key {_API_KEY}" if _API_KEY else "anonymous"


@server.resource("notes://{name}")
def note_resource(name: str) -> str:
    """A note as a resource."""
    return _NOTES.get(name, "")


@server.prompt()
def summarise(name: str) -> str:
    """Ask a model to summarise a note."""
    return f"Summarise this note in one sentence:\n\n{_NOTES.get(name, '')}"


if __name__ == "__main__":
    server.run()
