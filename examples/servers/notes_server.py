"""A small stdio MCP server for offline demos: a notes store with typed tools.

Written with the official SDK's high-level server (``mcp.server.mcpserver.MCPServer``), so it
speaks both handshakes exactly as a real SDK server does. Run it through the recorder:

    harn mcp mock record --cassette demo.cassette.json -- python examples/servers/notes_server.py
"""

from __future__ import annotations

import os
from typing import Any, TypedDict

import anyio
import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

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


async def serve_stdio() -> None:
    """``server.run()``, except that at end of input every request already read is answered.

    The SDK's stdio loop stops at end of input and drops the requests still being handled, so a
    client that writes its requests and closes stdin (the quickstart does) would lose the last
    answer. Here the server's input stays open until each request read has its response.
    """
    async with stdio_server() as (wire_in, wire_out):
        to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        server_out, from_server = anyio.create_memory_object_stream[SessionMessage](0)
        owed: set[Any] = set()  # ids of the requests read and not yet answered
        answered = anyio.Condition()

        async def pump_in() -> None:
            async with to_server:
                async for item in wire_in:
                    message = item.message if isinstance(item, SessionMessage) else None
                    if isinstance(message, mcp_types.JSONRPCRequest):
                        owed.add(message.id)
                    elif isinstance(message, mcp_types.JSONRPCNotification) and message.method == (
                        "notifications/cancelled"
                    ):
                        owed.discard((message.params or {}).get("requestId"))
                    await to_server.send(item)
                async with answered:  # end of input: wait for the answers still owed
                    while owed:
                        await answered.wait()

        async def pump_out() -> None:
            async with from_server, wire_out:
                async for item in from_server:
                    await wire_out.send(item)
                    if isinstance(item.message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError):
                        async with answered:
                            owed.discard(item.message.id)
                            answered.notify_all()

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump_in)
            tg.start_soon(pump_out)
            low = server._lowlevel_server
            async with server_out:
                await low.run(server_in, server_out, low.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve_stdio)
