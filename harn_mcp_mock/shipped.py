"""What ships with the package besides the code: the docs, the worlds and the agent example.

The repository's ``docs/``, ``worlds/`` and ``examples/`` are the sources of truth; the wheel
carries copies under ``harn_mcp_mock/_data/`` (``[tool.hatch.build.targets.wheel.force-include]``
in pyproject.toml). An installed wheel reads those; a source checkout (an editable install) reads
the repository's folders, so nothing is duplicated in git.

``harn mcp mock docs TOPIC`` prints a doc; ``harn mcp mock world list`` lists the worlds, and
``--spec NAME`` takes a shipped world's name as well as a path. Nothing here imports more than
the standard library, so ``world``'s start-up stays cheap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harn_mcp_mock.errors import UsageError

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

_PACKAGE = Path(__file__).resolve().parent
KINDS = ("docs", "worlds", "examples")


def shipped_dir(kind: str) -> Path:
    """The folder of shipped ``docs``, ``worlds`` or ``examples``: the wheel's, else the checkout's."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of shipped data {kind!r}")
    installed = _PACKAGE / "_data" / kind
    return installed if installed.is_dir() else _PACKAGE.parent / kind


# -- docs -----------------------------------------------------------------------------------------


def doc_topics() -> list[str]:
    """The topics ``harn mcp mock docs`` can print: each ``docs/TOPIC.md``, sorted."""
    return sorted(p.stem for p in shipped_dir("docs").glob("*.md"))


def doc_path(topic: str) -> Path:
    """The file of a doc topic (``tape``, ``tape.md`` or ``docs/tape.md`` all name the same one)."""
    name = Path(topic.split("#", 1)[0]).name.removesuffix(".md")
    path = shipped_dir("docs") / f"{name}.md"
    if not name or not path.is_file():
        raise UsageError(f"no doc {topic!r}; topics: {', '.join(doc_topics())}", where="TOPIC")
    return path


# -- worlds ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShippedWorld:
    name: str
    path: Path
    description: str
    tasks: list[dict[str, str]]
    """Each task's ``id`` and ``description``."""
    fault_profiles: list[str]
    servers: list[dict[str, Any]]
    """Each MCP server it serves: ``name`` and its ``tools`` (one server, named after the world's
    ``server.name``, showing every tool, unless the spec declares ``servers``)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "description": self.description,
            "tasks": self.tasks,
            "fault_profiles": self.fault_profiles,
            "servers": self.servers,
        }


def world_specs() -> dict[str, Path]:
    """Each shipped world's name (its folder) and spec file, sorted by name."""
    return {p.parent.name: p for p in sorted(shipped_dir("worlds").glob("*/*.world.json"))}


def shipped_worlds() -> list[ShippedWorld]:
    """The shipped worlds with their descriptions, tasks and fault profiles."""
    worlds = []
    for name, path in world_specs().items():
        doc = json.loads(path.read_text(encoding="utf-8"))
        tasks = [{"id": str(t["id"]), "description": str(t.get("description", ""))} for t in doc["tasks"]]
        profiles = sorted(doc.get("fault_profiles", {}))
        servers = [
            {"name": str(s["name"]), "tools": list(s.get("tools", []))} for s in doc.get("servers", [])
        ] or [
            {
                "name": str(doc.get("server", {}).get("name", f"{doc['name']}-world")),
                "tools": [str(t["name"]) for t in doc.get("tools", [])],
            }
        ]
        worlds.append(ShippedWorld(name, path, str(doc.get("description", "")), tasks, profiles, servers))
    return worlds


def resolve_spec(spec: str | Path) -> Path:
    """A ``--spec`` argument as a file: an existing path as given, else a shipped world's name."""
    path = Path(spec)
    if path.exists() or path.suffix or len(path.parts) != 1:
        return path
    return world_specs().get(path.name, path)


def agent_example() -> Path:
    """The scripted agent (a plain ``mcp`` client that plays the shipped worlds' tasks)."""
    return shipped_dir("examples") / "agent" / "scripted_agent.py"
