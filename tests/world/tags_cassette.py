"""A hand-made cassette of a small stateful "tags" server, for the ``world init`` tests.

The server (simulated here, in plain Python) keeps tags keyed by name, each with a colour:
``add_tags`` adds a batch (those already there are skipped and not returned), ``remove_tags``
removes a batch of names, ``list_tags`` and ``find_tags`` (a case-insensitive query) read, and
``roll_dice`` answers something no recording can explain (a model cannot be inferred for it).

A second server, "notes", keeps documents at paths: ``write_note`` stores, ``read_note`` answers
one back (or ``no note at PATH``), ``move_note`` moves one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harn_mcp_mock.cassette.model import Cassette, Message, save_cassette

TAG = {"type": "object", "properties": {"name": {"type": "string"}, "color": {"type": "string"}}}
TOOLS = [
    {
        "name": "add_tags",
        "description": "Add tags.",
        "inputSchema": {"type": "object", "properties": {"tags": {"type": "array", "items": TAG}}},
        "outputSchema": {"type": "object", "properties": {"tags": {"type": "array", "items": TAG}}},
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False},
    },
    {
        "name": "remove_tags",
        "description": "Remove tags by name.",
        "inputSchema": {
            "type": "object",
            "properties": {"names": {"type": "array", "items": {"type": "string"}}},
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True},
    },
    {
        "name": "list_tags",
        "description": "Every tag.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "find_tags",
        "description": "Tags whose name or colour contains the query.",
        "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    },
    {"name": "roll_dice", "description": "A number.", "inputSchema": {"type": "object", "properties": {}}},
]

SESSION_A: list[tuple[str, dict[str, Any]]] = [
    ("list_tags", {}),
    ("add_tags", {"tags": [{"name": "bug", "color": "red"}, {"name": "docs", "color": "blue"}]}),
    ("list_tags", {}),
    ("add_tags", {"tags": [{"name": "bug", "color": "red"}, {"name": "idea", "color": "green"}]}),
    ("find_tags", {"query": "RE"}),
    ("remove_tags", {"names": ["docs"]}),
    ("list_tags", {}),
    ("roll_dice", {}),
    ("roll_dice", {}),
]

SESSION_R: list[tuple[str, dict[str, Any]]] = [
    ("resources/read", {"uri": "tags://all"}),
    ("add_tags", {"tags": [{"name": "bug", "color": "red"}]}),
    ("resources/read", {"uri": "tags://all"}),
    ("list_tags", {}),
]

SESSION_B: list[tuple[str, dict[str, Any]]] = [
    ("add_tags", {"tags": [{"name": "ux", "color": "pink"}]}),
    ("find_tags", {"query": "u"}),
    ("add_tags", {"tags": [{"name": "ops", "color": "grey"}, {"name": "ux", "color": "pink"}]}),
    ("remove_tags", {"names": ["ux", "nothing"]}),
    ("list_tags", {}),
]


class TagsServer:
    def __init__(self) -> None:
        self.tags: list[dict[str, str]] = []
        self.rolls = iter(["4", "1", "6"])

    def read(self, uri: str) -> dict[str, Any]:
        return {"contents": [{"uri": uri, "mimeType": "application/json", "text": json.dumps(self.tags)}]}

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "add_tags":
            new = [t for t in args["tags"] if all(t["name"] != o["name"] for o in self.tags)]
            self.tags += new
            return {"content": [text(json.dumps(new, indent=2))], "structuredContent": {"tags": new}}
        if name == "remove_tags":
            self.tags = [t for t in self.tags if t["name"] not in args["names"]]
            return {"content": [text("Tags removed")]}
        if name == "list_tags":
            return {"content": [text(json.dumps({"tags": self.tags}, separators=(",", ":")))]}
        if name == "find_tags":
            q = args["query"].lower()
            found = [t for t in self.tags if q in t["name"].lower() or q in t["color"].lower()]
            return {"content": [text(json.dumps({"tags": found}, separators=(",", ":")))]}
        return {"content": [text(next(self.rolls))]}


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def tags_cassette(
    path: Path, session: list[tuple[str, dict[str, Any]]] = SESSION_A, *, list_tools: bool = True
) -> Path:
    """The cassette of ``session`` played against a fresh :class:`TagsServer`."""
    return _cassette(path, TOOLS if list_tools else None, TagsServer(), session, "tags")


def _cassette(
    path: Path,
    tools: list[dict[str, Any]] | None,
    server: Any,
    session: list[tuple[str, dict[str, Any]]],
    name: str,
) -> Path:
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    answer = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": name, "version": "1.0"},
    }
    wire: list[tuple[str, dict[str, Any]]] = [
        ("client", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        ("server", {"jsonrpc": "2.0", "id": 0, "result": answer}),
        ("client", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
    if tools is not None:
        wire += [
            ("client", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            ("server", {"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}),
        ]
    if any(tool == "resources/read" for tool, _ in session):
        listed = {"resources": [{"uri": "tags://all", "name": "all tags", "mimeType": "application/json"}]}
        wire += [
            ("client", {"jsonrpc": "2.0", "id": 100, "method": "resources/list"}),
            ("server", {"jsonrpc": "2.0", "id": 100, "result": listed}),
        ]
    for n, (tool, args) in enumerate(session, start=2):
        if tool == "resources/read":
            wire += [
                ("client", {"jsonrpc": "2.0", "id": n, "method": tool, "params": args}),
                ("server", {"jsonrpc": "2.0", "id": n, "result": server.read(args["uri"])}),
            ]
            continue
        call = {"name": tool, "arguments": args}
        wire += [
            ("client", {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call}),
            ("server", {"jsonrpc": "2.0", "id": n, "result": server.call(tool, args)}),
        ]
    messages = []
    for seq, (direction, message) in enumerate(wire):
        entry = Message(seq, direction, message)
        if direction == "server":
            entry.reply_to, entry.latency_ms = seq - 1, 1.0
        messages.append(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_cassette(Cassette(messages, {"server": {"handshake": "initialize"}}), path)
    return path


NOTE_TOOLS = [
    {
        "name": "write_note",
        "inputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        },
    },
    {"name": "read_note", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {
        "name": "move_note",
        "inputSchema": {
            "type": "object",
            "properties": {"source": {"type": "string"}, "destination": {"type": "string"}},
        },
    },
]

NOTES_A: list[tuple[str, dict[str, Any]]] = [
    ("write_note", {"path": "/a/todo.txt", "content": "milk"}),
    ("read_note", {"path": "/a/todo.txt"}),
    ("read_note", {"path": "/a/none.txt"}),
    ("move_note", {"source": "/a/todo.txt", "destination": "/b/todo.txt"}),
    ("read_note", {"path": "/b/todo.txt"}),
    ("move_note", {"source": "/a/todo.txt", "destination": "/c.txt"}),
]

NOTES_B: list[tuple[str, dict[str, Any]]] = [
    ("read_note", {"path": "/x"}),
    ("write_note", {"path": "/x", "content": "one"}),
    ("write_note", {"path": "/x", "content": "two"}),
    ("read_note", {"path": "/x"}),
    ("move_note", {"source": "/x", "destination": "/y/z"}),
    ("read_note", {"path": "/y/z"}),
]


class NotesServer:
    def __init__(self) -> None:
        self.notes: dict[str, str] = {}

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "write_note":
            self.notes[args["path"]] = args["content"]
            return {"content": [text(f"Saved {args['path']}")]}
        source = args.get("source", args.get("path"))
        if source not in self.notes:
            return {"content": [text(f"no note at {source}")], "isError": True}
        if name == "read_note":
            return {"content": [text(self.notes[source])]}
        self.notes[args["destination"]] = self.notes.pop(source)
        return {"content": [text(f"Moved {source} to {args['destination']}")]}


def notes_cassette(path: Path, session: list[tuple[str, dict[str, Any]]] = NOTES_A) -> Path:
    """The cassette of ``session`` played against a fresh :class:`NotesServer`."""
    return _cassette(path, NOTE_TOOLS, NotesServer(), session, "notes")
