"""The short client sessions recorded with each release (through `harn mcp mock record`).

One official-SDK client session per release, in the ``initialize`` era (the old releases speak
nothing newer): list what the server offers, then a few read-only calls whose answers do not
depend on the clock, so a release verified against itself gives no finding. Calls are chosen by
what the release lists (tool names changed across releases). ``walk`` reads every page of each
list (``nextCursor``); without it only the first page is read, as the SDK's ``list_*`` do.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client

from tests.e2e.scenarios import server_parameters

__all__ = ["SESSION_TIMEOUT_S", "calls_for", "make_repository", "run_session"]

SESSION_TIMEOUT_S = 60.0
FIXED_DATE = "2026-01-02T03:04:05+00:00"


def make_repository(work: Path) -> Path:
    """A git repository with two commits of fixed dates (stable hashes), also the filesystem root."""
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GIT_AUTHOR_DATE": FIXED_DATE, "GIT_COMMITTER_DATE": FIXED_DATE}
    env |= {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}  # no signing, hooks or templates
    git = ["git", "-C", str(work), "-c", "user.name=Tester", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True, env=env)
    (work / "README.md").write_text("hello\n", encoding="utf-8")
    subprocess.run([*git, "add", "README.md"], check=True, env=env)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True, env=env)
    (work / "README.md").write_text("hello\nworld\n", encoding="utf-8")
    (work / "notes.txt").write_text("a note\n", encoding="utf-8")
    subprocess.run([*git, "add", "README.md", "notes.txt"], check=True, env=env)
    subprocess.run([*git, "commit", "-q", "-m", "second"], check=True, env=env)
    return work


async def _list(client: Client, method: str, walk: bool) -> list[Any]:
    lister = {
        "tools": client.list_tools,
        "prompts": client.list_prompts,
        "resources": client.list_resources,
        "resourceTemplates": client.list_resource_templates,
    }[method]
    items: list[Any] = []
    cursor: str | None = None
    while True:
        page: Any = await lister(cursor=cursor) if cursor else await lister()
        items += list(getattr(page, {"resourceTemplates": "resource_templates"}.get(method, method)))
        cursor = page.next_cursor
        if not walk or not cursor:
            return items


def calls_for(kind: str, tools: set[str], prompts: set[str], work: str) -> list[tuple[str, dict[str, Any]]]:
    """The session's calls after listing: ``(method, params)``, read-only and clock-free.

    Shared with ``capture.py``, which makes the same calls for the ground truth."""
    if kind == "time":
        zones = {"source_timezone": "UTC", "time": "09:30", "target_timezone": "Asia/Kolkata"}
        return [("tools/call", {"name": "convert_time", "arguments": zones})]
    if kind == "git":
        repo = {"repo_path": work}
        return [
            ("tools/call", {"name": "git_status", "arguments": repo}),
            ("tools/call", {"name": "git_log", "arguments": {**repo, "max_count": 5}}),
            ("tools/call", {"name": "git_show", "arguments": {**repo, "revision": "HEAD"}}),
            ("tools/call", {"name": "git_diff_unstaged", "arguments": repo}),
        ]
    if kind == "filesystem":
        return [
            ("tools/call", {"name": "list_allowed_directories", "arguments": {}}),
            ("tools/call", {"name": "list_directory", "arguments": {"path": work}}),
            ("tools/call", {"name": "read_file", "arguments": {"path": f"{work}/notes.txt"}}),
            ("tools/call", {"name": "search_files", "arguments": {"path": work, "pattern": "notes"}}),
        ]
    old = "add" in tools  # the 2025 releases: camelCase tools, test://static/resource/1..100
    return [
        ("tools/call", {"name": "echo", "arguments": {"message": "hello"}}),
        ("tools/call", {"name": "add" if old else "get-sum", "arguments": {"a": 2, "b": 3}}),
        ("prompts/get", {"name": "simple_prompt" if "simple_prompt" in prompts else "simple-prompt"}),
        (
            "resources/read",
            {"uri": "test://static/resource/2" if old else "demo://resource/static/document/features.md"},
        ),
    ]


async def _session(command: list[str], kind: str, work: Path, walk: bool) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with Client(server_parameters(command), mode="legacy") as client:
            caps: types.ServerCapabilities = client.server_capabilities
            tools = {t.name for t in await _list(client, "tools", walk)}
            prompts = {p.name for p in await _list(client, "prompts", walk)} if caps.prompts else set()
            if caps.resources is not None:
                await _list(client, "resources", walk)
                await _list(client, "resourceTemplates", walk)
            for method, params in calls_for(kind, tools, prompts, str(work)):
                if method == "tools/call":
                    await client.call_tool(params["name"], params["arguments"])
                elif method == "prompts/get":
                    await client.get_prompt(params["name"], params.get("arguments"))
                else:
                    await client.read_resource(params["uri"])


def run_session(record: list[str], kind: str, work: Path, *, walk: bool = False) -> None:
    """Drive ``record`` (a `harn mcp mock record ... -- <release>` command) through the session."""
    anyio.run(_session, record, kind, work, walk)
