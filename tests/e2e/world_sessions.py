"""Sessions with real stateful servers, recorded through ``harn mcp mock record`` for ``world init``.

Each session is a fixed list of steps (a tool call, or a resource read); :func:`record_session`
runs them with the official ``mcp`` SDK client against
``python -m harn_mcp_mock record --cassette C -- <server command>`` and returns what the client
saw, one answer per step. The servers are ones we did not write:

* ``@modelcontextprotocol/server-memory`` (a knowledge graph kept in ``MEMORY_FILE_PATH``);
* ``@modelcontextprotocol/server-filesystem`` (one allowed directory, a temporary root);
* ``mcp-server-git`` (a fixed repository the test makes).

:data:`MEMORY_A`, :func:`filesystem_session` and :data:`GIT_SESSION` are the sessions a world
is scaffolded from; :data:`MEMORY_B`, :func:`filesystem_session_b` and :data:`GIT_SESSION_B` are
different sessions (other entities, files or branches, another order, error cases) replayed
against that world. :func:`tutorial_session` is the session of docs/worlds.md's Tutorial
(``examples/world_init/memory-session.json``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.e2e.peers import WAIT
from tests.e2e.scenarios import dump, server_parameters

Step = tuple[str, Any]
"""``("tool", (name, arguments))`` or ``("resource", uri)``."""


def tool(name: str, **arguments: Any) -> Step:
    return ("tool", (name, arguments))


def entity(name: str, kind: str, *observations: str) -> dict[str, Any]:
    return {"name": name, "entityType": kind, "observations": list(observations)}


def relation(source: str, target: str, kind: str) -> dict[str, Any]:
    return {"from": source, "to": target, "relationType": kind}


MEMORY_A: list[Step] = [
    tool("read_graph"),
    tool(
        "create_entities",
        entities=[
            entity("Ada", "person", "writes programs"),
            entity("Babbage", "person", "designs engines"),
            entity("Engine", "machine"),
        ],
    ),
    tool(
        "create_relations",
        relations=[relation("Ada", "Engine", "programs"), relation("Babbage", "Engine", "designs")],
    ),
    tool("add_observations", observations=[{"entityName": "Engine", "contents": ["analytical", "steam"]}]),
    ("resource", "memory://knowledge-graph"),
    tool("read_graph"),
    tool("search_nodes", query="engine"),
    tool("open_nodes", names=["Ada"]),
    tool("create_entities", entities=[entity("Ada", "person"), entity("Lovelace", "title")]),
    tool("create_relations", relations=[relation("Ada", "Engine", "programs")]),
    tool("add_observations", observations=[{"entityName": "Nobody", "contents": ["ghost"]}]),
    tool("add_observations", observations=[{"entityName": "Ada", "contents": ["writes programs", "poet"]}]),
    tool("delete_observations", deletions=[{"entityName": "Engine", "observations": ["steam"]}]),
    tool("delete_relations", relations=[relation("Babbage", "Engine", "designs")]),
    tool("search_nodes", query="person"),
    tool("delete_entities", entityNames=["Lovelace"]),
    tool("open_nodes", names=["Ada", "Babbage", "Nobody"]),
    tool("delete_entities", entityNames=["Engine"]),
    tool("read_graph"),
    ("resource", "memory://knowledge-graph"),
]

MEMORY_B: list[Step] = [
    tool("search_nodes", query="rust"),
    tool("add_observations", observations=[{"entityName": "Grace", "contents": ["admiral"]}]),
    tool(
        "create_entities",
        entities=[
            entity("Grace", "person", "wrote COBOL"),
            entity("Linus", "person", "wrote Linux", "likes Rust"),
        ],
    ),
    tool("create_entities", entities=[entity("Linux", "project", "a kernel", "uses Rust")]),
    tool("open_nodes", names=["Linux", "Grace"]),
    tool(
        "create_relations",
        relations=[relation("Linus", "Linux", "maintains"), relation("Grace", "Linux", "admires")],
    ),
    tool("search_nodes", query="rust"),
    tool("add_observations", observations=[{"entityName": "Grace", "contents": ["admiral", "wrote COBOL"]}]),
    tool(
        "create_relations",
        relations=[relation("Grace", "Linux", "admires"), relation("Linux", "Grace", "cites")],
    ),
    tool("read_graph"),
    tool("delete_relations", relations=[relation("Grace", "Linux", "admires")]),
    tool("open_nodes", names=["Grace"]),
    tool(
        "delete_observations", deletions=[{"entityName": "Linus", "observations": ["likes Rust", "absent"]}]
    ),
    tool("search_nodes", query="LINUX"),
    tool("delete_entities", entityNames=["Linux", "Nobody"]),
    tool("create_entities", entities=[entity("Grace", "admiral"), entity("Hopper", "ship", "USS Hopper")]),
    tool("add_observations", observations=[{"entityName": "Linux", "contents": ["gone"]}]),
    tool("delete_observations", deletions=[{"entityName": "Nobody", "observations": ["x"]}]),
    tool("read_graph"),
    ("resource", "memory://knowledge-graph"),
    tool("open_nodes", names=[]),
]


def filesystem_session(root: Path) -> list[Step]:
    r = str(root)
    return [
        tool("list_allowed_directories"),
        tool("list_directory", path=r),
        tool("write_file", path=f"{r}/notes.txt", content="first line\nsecond line\n"),
        tool("read_text_file", path=f"{r}/notes.txt"),
        tool("create_directory", path=f"{r}/docs"),
        tool("write_file", path=f"{r}/docs/readme.md", content="# Read me\n"),
        tool("list_directory", path=r),
        tool("read_text_file", path=f"{r}/missing.txt"),
        tool("move_file", source=f"{r}/notes.txt", destination=f"{r}/docs/notes.txt"),
        tool("list_directory", path=f"{r}/docs"),
        tool("read_text_file", path=f"{r}/docs/notes.txt"),
        tool("write_file", path=f"{r}/docs/notes.txt", content="rewritten\n"),
        tool("read_text_file", path=f"{r}/docs/notes.txt"),
        tool("read_text_file", path=f"{r}/notes.txt"),
        tool("list_directory", path=r),
        tool("search_files", path=r, pattern="**/*.md"),
        tool("search_files", path=r, pattern="*.txt"),
        tool("search_files", path=r, pattern="**/*.txt"),
        tool("directory_tree", path=r),
        tool("read_multiple_files", paths=[f"{r}/docs/notes.txt", f"{r}/notes.txt", f"{r}/docs/readme.md"]),
        tool("read_file", path=f"{r}/docs/readme.md"),
        tool("move_file", source=f"{r}/gone.txt", destination=f"{r}/docs/gone.txt"),
    ]


def filesystem_session_b(root: Path) -> list[Step]:
    """Another session with the filesystem server (other files, another order, error cases),
    replayed against the world scaffolded from :func:`filesystem_session`."""
    r = str(root)
    return [
        tool("list_directory", path=r),
        tool("create_directory", path=f"{r}/src"),
        tool("write_file", path=f"{r}/src/main.py", content="print('hi')\n"),
        tool("write_file", path=f"{r}/b.txt", content="bee\n"),
        tool("write_file", path=f"{r}/a.txt", content="ay\n"),
        tool("list_directory", path=r),
        tool("read_text_file", path=f"{r}/src/main.py"),
        tool("read_text_file", path=f"{r}/nope.txt"),
        tool("move_file", source=f"{r}/a.txt", destination=f"{r}/src/a.txt"),
        tool("list_directory", path=f"{r}/src"),
        tool("read_text_file", path=f"{r}/a.txt"),
        tool("read_text_file", path=f"{r}/src/a.txt"),
        tool("write_file", path=f"{r}/b.txt", content="bee again\n"),
        tool("read_text_file", path=f"{r}/b.txt"),
        tool("list_allowed_directories"),
        tool("create_directory", path=f"{r}/src/lib"),
        tool("list_directory", path=f"{r}/src"),
        tool("move_file", source=f"{r}/gone.txt", destination=f"{r}/here.txt"),
        tool("search_files", path=r, pattern="**/*.py"),
        tool("search_files", path=f"{r}/src", pattern="*.txt"),
        tool("search_files", path=r, pattern="*.md"),
        tool("directory_tree", path=f"{r}/src"),
        tool("read_multiple_files", paths=[f"{r}/src/a.txt", f"{r}/b.txt"]),
        tool("read_multiple_files", paths=[f"{r}/a.txt", f"{r}/src/main.py", f"{r}/src/a.txt"]),
        tool("read_file", path=f"{r}/src/main.py"),
        tool("read_file", path=f"{r}/a.txt"),
        tool("directory_tree", path=r),
        tool("list_directory", path=r),
    ]


GIT_SESSION: list[Step] = [
    tool("git_status", repo_path="{repo}"),
    tool("git_log", repo_path="{repo}", max_count=5),
    tool("git_branch", repo_path="{repo}", branch_type="local"),
    tool("git_create_branch", repo_path="{repo}", branch_name="feature"),
    tool("git_branch", repo_path="{repo}", branch_type="local"),
    tool("git_checkout", repo_path="{repo}", branch_name="feature"),
    tool("git_status", repo_path="{repo}"),
    tool("git_diff_unstaged", repo_path="{repo}"),
    tool("git_add", repo_path="{repo}", files=["hello.txt"]),
    tool("git_diff_staged", repo_path="{repo}"),
    tool("git_status", repo_path="{repo}"),
    tool("git_checkout", repo_path="{repo}", branch_name="no-such-branch"),
    tool("git_branch", repo_path="{repo}", branch_type="local"),
]


GIT_SESSION_B: list[Step] = [
    tool("git_create_branch", repo_path="{repo}", branch_name="dev"),
    tool("git_create_branch", repo_path="{repo}", branch_name="alpha"),
    tool("git_branch", repo_path="{repo}", branch_type="local"),
    tool("git_checkout", repo_path="{repo}", branch_name="missing"),
    tool("git_checkout", repo_path="{repo}", branch_name="alpha"),
    tool("git_branch", repo_path="{repo}", branch_type="local"),
    tool("git_checkout", repo_path="{repo}", branch_name="main"),
    tool("git_branch", repo_path="{repo}", branch_type="local"),
    tool("git_status", repo_path="{repo}"),
]
"""Another session with the git server (other branches, another order, a missing branch)."""


def bind(steps: Sequence[Step], **values: str) -> list[Step]:
    """``steps`` with ``{name}`` in their string arguments replaced by ``values``."""

    def sub(value: Any) -> Any:
        if isinstance(value, str):
            return value.format(**values)
        if isinstance(value, list | tuple):
            return type(value)(sub(v) for v in value)
        if isinstance(value, dict):
            return {k: sub(v) for k, v in value.items()}
        return value

    return [(kind, sub(what)) for kind, what in steps]


def tutorial_session() -> list[Step]:
    """The Tutorial's session: it creates an entity that exists, adds observations to a missing
    entity and observations that are there already (server-memory skips what exists and answers
    only what it added)."""
    path = Path(__file__).resolve().parents[2] / "examples" / "world_init" / "memory-session.json"
    return [tool(s["tool"], **s["arguments"]) for s in json.loads(path.read_text())]


def record_command(cassette: Path, command: Sequence[str]) -> list[str]:
    return [
        *[sys.executable, "-m", "harn_mcp_mock", "record", "--cassette", str(cassette)],
        *["--shutdown-timeout", str(WAIT), "--", *command],
    ]


async def run_session(
    command: Sequence[str], steps: Sequence[Step], env: dict[str, str] | None = None
) -> list[Any]:
    """Run ``steps`` against ``command`` with the ``mcp`` SDK client (classic handshake); one
    answer per step: the result (``isError`` ones too) or ``{"error": {code, message}}``."""
    answers: list[Any] = []
    with anyio.fail_after(WAIT):
        async with Client(server_parameters(command, env), mode="legacy") as client:  # type: ignore[arg-type]
            await client.list_tools()
            for kind, what in steps:
                try:
                    if kind == "tool":
                        name, arguments = what
                        answers.append(dump(await client.call_tool(name, arguments)))
                    else:
                        answers.append(dump(await client.read_resource(what)))
                except MCPError as exc:
                    answers.append({"error": {"code": exc.code, "message": exc.error.message}})
    return answers


def record_session(
    cassette: Path, command: Sequence[str], steps: Sequence[Step], env: dict[str, str] | None = None
) -> list[Any]:
    """Run ``steps`` through ``harn mcp mock record`` around ``command``; the cassette is written."""
    return anyio.run(run_session, record_command(cassette, command), steps, env)
