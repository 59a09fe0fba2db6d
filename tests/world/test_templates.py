"""Join-style template operators: ``$join`` (a text listing of keys) and ``$tree`` (nested nodes)."""

from __future__ import annotations

from typing import Any

from harn_mcp_mock.world.templates import Context, render

STATE = {
    "files": {"/r/b.txt": "bee", "/r/a.txt": "ay", "/r/d/c.md": "see", "/other/x": "x"},
    "dirs": {"/r/d": True},
    "current": "/r/b.txt",
}
SOURCES = [{"keys": "/files", "line": "[F] {name}"}, {"keys": "/dirs", "line": "[D] {name}"}]


def run(template: Any, **args: Any) -> Any:
    return render(template, Context(args=args, state=STATE))


def test_join_lists_the_keys_directly_under_a_path_sorted_by_name() -> None:
    listing = {"$join": SOURCES, "under": "{args.path}", "sort": True}
    assert run(listing, path="/r") == "[F] a.txt\n[F] b.txt\n[D] d"
    assert run(listing, path="/r/d/") == "[F] c.md"
    assert run(listing, path="/none") == ""
    assert run({**listing, "sort": False}, path="/r") == "[F] b.txt\n[F] a.txt\n[D] d"


def test_join_below_a_path_by_glob_with_an_empty_text() -> None:
    search = {"$join": SOURCES[:1], "under": "{args.path}", "depth": "all", "glob": "{args.g}"}
    search = {**search, "sort": True, "empty": "none under {args.path}"}
    assert run(search, path="/r", g="**/*.md") == "[F] d/c.md"
    assert run(search, path="/r", g="*.txt") == "[F] a.txt\n[F] b.txt"
    assert run(search, path="/r", g="*.md") == "none under /r"


def test_join_of_listed_keys_with_their_values_or_a_missing_layout() -> None:
    batch = {"items": "{args.paths}", "at": "/files/{key}", "line": "{key}: {value}", "missing": "{key}?"}
    assert run({"$join": [batch], "sep": " | "}, paths=["/r/a.txt", "/no", "/r/b.txt"]) == (
        "/r/a.txt: ay | /no? | /r/b.txt: bee"
    )
    assert run({"$join": [{k: v for k, v in batch.items() if k != "missing"}]}, paths=["/no"]) == ""


def test_tree_nests_the_keys_under_a_path() -> None:
    tree = {
        "$tree": [
            {"keys": "/dirs", "to": {"name": "{name}", "children": "{children}"}},
            {"keys": "/files", "to": {"name": "{name}"}},
        ],
        "under": "{args.path}",
        "sort": True,
    }
    assert run(tree, path="/r") == [
        {"name": "a.txt"},
        {"name": "b.txt"},
        {"name": "d", "children": [{"name": "c.md"}]},
    ]
    assert run({"$json": tree}, path="/r/d") == '[{"name":"c.md"}]'
