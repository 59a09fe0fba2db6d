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

from tests.echo_cassette import save_wire

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
    return save_wire(path, wire)


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


# A third server, "shelf", keeps files at path-like keys and folders: text listings of a folder
# (one line per entry), a search by glob (whole paths), a nested JSON tree and a batch read.
# Its tool names and layouts are its own (no real server's), so what ``world init`` infers is
# the mechanism (a listing of a keyed collection), not a server's names.

READ_ONLY = {"readOnlyHint": True}


def _tool(name: str, read: bool, **props: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "inputSchema": {"type": "object", "properties": props}}
    out["annotations"] = READ_ONLY if read else {"readOnlyHint": False}
    return out


STRING = {"type": "string"}
SHELF_TOOLS = [
    _tool("save_file", False, path=STRING, content=STRING),
    _tool("create_folder", False, path=STRING),
    _tool("open_file", True, path=STRING),
    _tool("show_folder", True, path=STRING),
    _tool("find_files", True, root=STRING, glob=STRING),
    _tool("folder_tree", True, path=STRING),
    _tool("open_files", True, paths={"type": "array", "items": STRING}),
]

SHELF_A: list[tuple[str, dict[str, Any]]] = [
    ("show_folder", {"path": "/s"}),
    ("save_file", {"path": "/s/b.txt", "content": "bee"}),
    ("create_folder", {"path": "/s/docs"}),
    ("save_file", {"path": "/s/docs/a.md", "content": "# A"}),
    ("save_file", {"path": "/s/a.txt", "content": "ay"}),
    ("show_folder", {"path": "/s"}),
    ("show_folder", {"path": "/s/docs"}),
    ("open_file", {"path": "/s/a.txt"}),
    ("open_file", {"path": "/s/zz.txt"}),
    ("find_files", {"root": "/s", "glob": "**/*.md"}),
    ("find_files", {"root": "/s", "glob": "*.csv"}),
    ("folder_tree", {"path": "/s"}),
    ("open_files", {"paths": ["/s/a.txt", "/s/none.txt", "/s/b.txt"]}),
]

SHELF_B: list[tuple[str, dict[str, Any]]] = [
    ("create_folder", {"path": "/s/src"}),
    ("save_file", {"path": "/s/src/main.py", "content": "print()"}),
    ("save_file", {"path": "/s/c.txt", "content": "see"}),
    ("show_folder", {"path": "/s"}),
    ("show_folder", {"path": "/s/src"}),
    ("find_files", {"root": "/s", "glob": "**/*.py"}),
    ("find_files", {"root": "/s", "glob": "*.txt"}),
    ("folder_tree", {"path": "/s"}),
    ("open_files", {"paths": ["/s/c.txt", "/s/src/main.py"]}),
    ("open_files", {"paths": ["/s/gone"]}),
]


class ShelfServer:
    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.folders: set[str] = set()

    def _under(self, path: str) -> list[tuple[str, bool]]:
        entries = [(p, True) for p in self.folders] + [(p, False) for p in self.files]
        return sorted((p[len(path) + 1 :], d) for p, d in entries if p.startswith(path + "/"))

    def _tree(self, path: str) -> list[dict[str, Any]]:
        return [
            {"kind": "folder", "title": n, "items": self._tree(f"{path}/{n}")}
            if d
            else {"kind": "file", "title": n}
            for n, d in self._under(path)
            if "/" not in n
        ]

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        import fnmatch

        if name == "save_file":
            self.files[args["path"]] = args["content"]
            return {"content": [text(f"saved {args['path']}")]}
        if name == "create_folder":
            self.folders.add(args["path"])
            return {"content": [text(f"made {args['path']}")]}
        if name == "open_file":
            if args["path"] not in self.files:
                return {"content": [text(f"cannot open {args['path']}")], "isError": True}
            return {"content": [text(self.files[args["path"]])]}
        if name == "show_folder":
            lines = [f"({'D' if d else 'F'}) {n}" for n, d in self._under(args["path"]) if "/" not in n]
            return {"content": [text("\n".join(lines))]}
        if name == "find_files":
            rx = fnmatch.translate(args["glob"].replace("**/", "")) if "**/" in args["glob"] else None
            found = [
                f"{args['root']}/{n}"
                for n, _ in self._under(args["root"])
                if (rx and __import__("re").match(rx, n.rsplit("/", 1)[-1]))
                or (not rx and "/" not in n and fnmatch.fnmatch(n, args["glob"]))
            ]
            return {"content": [text("\n".join(found) or "nothing found")]}
        if name == "folder_tree":
            return {"content": [text(json.dumps(self._tree(args["path"]), indent=2))]}
        blocks = [
            f"== {p}\n{self.files[p]}" if p in self.files else f"== {p} (missing)" for p in args["paths"]
        ]
        return {"content": [text("\n~~\n".join(blocks))]}


def shelf_cassette(path: Path, session: list[tuple[str, dict[str, Any]]] = SHELF_A) -> Path:
    """The cassette of ``session`` played against a fresh :class:`ShelfServer`."""
    return _cassette(path, SHELF_TOOLS, ShelfServer(), session, "shelf")


# A fourth server, "lanes": keys made by a create tool given only a key, a listing of them with
# the current one marked, and a tool that makes one current. Every call also takes the same
# ``board_path`` (a context argument, not a key).

BOARD = {"board_path": "/b"}
LANE_TOOLS = [
    _tool("add_lane", False, board_path=STRING, lane_name=STRING),
    _tool("use_lane", False, board_path=STRING, lane_name=STRING),
    _tool("lanes", True, board_path=STRING),
]

LANES_A: list[tuple[str, dict[str, Any]]] = [
    ("lanes", BOARD),
    ("add_lane", {**BOARD, "lane_name": "fast"}),
    ("lanes", BOARD),
    ("use_lane", {**BOARD, "lane_name": "fast"}),
    ("lanes", BOARD),
    ("use_lane", {**BOARD, "lane_name": "nope"}),
]

LANES_B: list[tuple[str, dict[str, Any]]] = [
    ("add_lane", {**BOARD, "lane_name": "b1"}),
    ("use_lane", {**BOARD, "lane_name": "b1"}),
    ("lanes", BOARD),
    ("use_lane", {**BOARD, "lane_name": "base"}),
    ("add_lane", {**BOARD, "lane_name": "a0"}),
    ("use_lane", {**BOARD, "lane_name": "zz"}),
    ("lanes", BOARD),
]


class LanesServer:
    def __init__(self) -> None:
        self.lanes = {"base"}
        self.current = "base"

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        lane = args.get("lane_name", "")
        if name == "add_lane":
            self.lanes.add(lane)
            return {"content": [text(f"added {lane}")]}
        if name == "use_lane":
            if lane not in self.lanes:
                return {"content": [text(f"no lane {lane}")], "isError": True}
            self.current = lane
            return {"content": [text(f"now on {lane}")]}
        lines = [f"{'>' if n == self.current else '-'} {n}" for n in sorted(self.lanes)]
        return {"content": [text("\n".join(lines))]}


def lanes_cassette(path: Path, session: list[tuple[str, dict[str, Any]]] = LANES_A) -> Path:
    """The cassette of ``session`` played against a fresh :class:`LanesServer`."""
    return _cassette(path, LANE_TOOLS, LanesServer(), session, "lanes")


# "cards": items keyed by name with a scalar field (kind) and a list field (labels), the
# semantics of server-memory's create_entities / add_observations / delete_observations:
# creates and adds skip what is there and answer only what they added; an add to a missing
# card is an error.
CARD = {"type": "object", "properties": {"name": STRING, "kind": STRING, "labels": {"type": "array"}}}
LABELS = {"type": "object", "properties": {"card": STRING, "labels": {"type": "array", "items": STRING}}}
CARD_TOOLS = [
    {
        **_tool("make_cards", False, cards={"type": "array", "items": CARD}),
        "outputSchema": {"type": "object", "properties": {"cards": {"type": "array", "items": CARD}}},
    },
    {
        **_tool("tag_cards", False, tags={"type": "array", "items": LABELS}),
        "outputSchema": {"type": "object", "properties": {"added": {"type": "array"}}},
    },
    _tool("delete_cards", False, names={"type": "array", "items": STRING}),
    _tool("remove_labels", False, untags={"type": "array", "items": LABELS}),
    _tool("list_cards", True),
]


def card(name: str, kind: str, *labels: str) -> dict[str, Any]:
    return {"name": name, "kind": kind, "labels": list(labels)}


CARDS_A: list[tuple[str, dict[str, Any]]] = [
    ("list_cards", {}),
    ("make_cards", {"cards": [card("ada", "person", "poet"), card("box", "thing")]}),
    ("tag_cards", {"tags": [{"card": "box", "labels": ["red", "big"]}]}),
    ("list_cards", {}),
    ("make_cards", {"cards": [card("ada", "person"), card("cat", "animal")]}),
    ("tag_cards", {"tags": [{"card": "nobody", "labels": ["x"]}]}),
    ("tag_cards", {"tags": [{"card": "ada", "labels": ["poet", "writer"]}]}),
    ("list_cards", {}),
    ("delete_cards", {"names": ["cat"]}),
    ("remove_labels", {"untags": [{"card": "box", "labels": ["big"]}]}),
    ("list_cards", {}),
    ("delete_cards", {"names": ["box"]}),
    ("list_cards", {}),
]

CARDS_B: list[tuple[str, dict[str, Any]]] = [
    ("make_cards", {"cards": [card("dot", "shape", "small")]}),
    ("make_cards", {"cards": [card("dot", "shape"), card("eel", "animal", "wet")]}),
    (
        "tag_cards",
        {"tags": [{"card": "eel", "labels": ["wet", "long"]}, {"card": "dot", "labels": ["round"]}]},
    ),
    ("tag_cards", {"tags": [{"card": "fox", "labels": ["red"]}]}),
    ("remove_labels", {"untags": [{"card": "dot", "labels": ["small"]}]}),
    ("delete_cards", {"names": ["eel", "gnu"]}),
    ("list_cards", {}),
]


class CardsServer:
    def __init__(self) -> None:
        self.cards: list[dict[str, Any]] = []

    def _card(self, name: str) -> dict[str, Any] | None:
        return next((c for c in self.cards if c["name"] == name), None)

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "make_cards":
            new = [dict(c) for c in args["cards"] if self._card(c["name"]) is None]
            self.cards += [{**c, "labels": list(c["labels"])} for c in new]
            return {"content": [text(json.dumps(new, indent=2))], "structuredContent": {"cards": new}}
        if name == "tag_cards":
            added = []
            for t in args["tags"]:
                found = self._card(t["card"])
                if found is None:
                    return {"content": [text(f"Card {t['card']} not found")], "isError": True}
                new = [x for x in t["labels"] if x not in found["labels"]]
                found["labels"] += new
                added.append({"card": t["card"], "newLabels": new})
            return {"content": [text(json.dumps(added, indent=2))], "structuredContent": {"added": added}}
        if name == "delete_cards":
            self.cards = [c for c in self.cards if c["name"] not in args["names"]]
            return {"content": [text("Cards deleted")]}
        if name == "remove_labels":
            for t in args["untags"]:
                found = self._card(t["card"])
                if found is not None:
                    found["labels"] = [x for x in found["labels"] if x not in t["labels"]]
            return {"content": [text("Labels removed")]}
        return {"content": [text(json.dumps({"cards": self.cards}, indent=2))]}


def cards_cassette(path: Path, session: list[tuple[str, dict[str, Any]]] = CARDS_A) -> Path:
    """The cassette of ``session`` played against a fresh :class:`CardsServer`."""
    return _cassette(path, CARD_TOOLS, CardsServer(), session, "cards")
