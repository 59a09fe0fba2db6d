"""A hand-made cassette of an echo server, for tests. Its own module with light imports: the
claim tests' holder processes import it (importing a test module would cost them the MCP SDK,
about a second of CPU each)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harn_mcp_mock.cassette.model import Cassette, Message, save_cassette

ECHO_TOOL = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}


def echo_cassette(path: Path, *texts: str) -> Path:
    """A hand-made cassette of an echo server: handshake, tools/list, one tools/call per text."""
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    answer = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "echo", "version": "1.0"},
    }
    wire: list[tuple[str, dict[str, Any]]] = [
        ("client", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        ("server", {"jsonrpc": "2.0", "id": 0, "result": answer}),
        ("client", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ("client", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("server", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [ECHO_TOOL]}}),
    ]
    for n, text in enumerate(texts, start=2):
        call = {"name": "echo", "arguments": {"text": text}}
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        wire += [
            ("client", {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call}),
            ("server", {"jsonrpc": "2.0", "id": n, "result": result}),
        ]
    return save_wire(path, wire)


def save_wire(path: Path, wire: list[tuple[str, dict[str, Any]]]) -> Path:
    """A cassette at ``path`` of ``wire`` (direction, message), each server message the answer to
    the one before it (1 ms later)."""
    messages = []
    for seq, (direction, message) in enumerate(wire):
        entry = Message(seq, direction, message)
        if direction == "server":
            entry.reply_to, entry.latency_ms = seq - 1, 1.0
        messages.append(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_cassette(Cassette(messages, {"server": {"handshake": "initialize"}}), path)
    return path
