"""Lint on the recorded surfaces of four real servers we did not write: server-everything,
mcp-server-time, mcp-server-git and server-filesystem (initialize, tools/list, prompts/list,
resources/list as each answers, and a few calls), linted together in one run (so the
cross-server check sees all four): no poisoning and no secret finding. And the shipped
cassettes under cassettes/ stay clean too."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from harn_mcp_mock.lint import LintConfig, lint_paths, render_lint
from tests.conftest import require_peer
from tests.e2e.peers import filesystem_server_command, git_server_command

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


async def record_surface(path: Path, command: list[str], calls: list[tuple[str, dict[str, Any]]]) -> None:
    from mcp.shared.exceptions import MCPError

    from harn_mcp_mock import record_session

    with anyio.fail_after(120):
        async with record_session(path, command) as session:
            caps = session.server_capabilities
            await session.list_tools()
            for listing, offered in (
                (session.list_prompts, caps is not None and caps.prompts is not None),
                (session.list_resources, caps is not None and caps.resources is not None),
            ):
                if offered:
                    try:
                        await listing()
                    except MCPError:  # listed in the capabilities, refused all the same: recorded as is
                        pass
            for name, arguments in calls:
                await session.call_tool(name, arguments)


def tool_names(path: Path) -> list[str]:
    from harn_mcp_mock.cassette.model import load_cassette
    from harn_mcp_mock.verify.surface import surface_of

    return sorted(surface_of(load_cassette(path)).tools())


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit, for mcp-server-git."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.org"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    (repo / "README.md").write_text("A small repository.\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "first"], cwd=repo, check=True)
    return repo


async def test_the_recorded_surfaces_of_four_real_servers_raise_no_poisoning_or_secret_finding(
    tmp_path: Path, repo: Path, everything_command: list[str], time_command: list[str]
) -> None:
    files = tmp_path / "files"
    files.mkdir()
    (files / "notes.txt").write_text("Buy milk.\n")
    git = require_peer(lambda: git_server_command(repo))
    filesystem = require_peer(lambda: filesystem_server_command(files))

    out = tmp_path / "cassettes"
    await record_surface(out / "everything.cassette.json", everything_command, [("echo", {"message": "hi"})])
    await record_surface(
        out / "time.cassette.json", time_command, [("get_current_time", {"timezone": "UTC"})]
    )
    await record_surface(out / "git.cassette.json", git, [("git_status", {"repo_path": str(repo)})])
    await record_surface(
        out / "filesystem.cassette.json",
        filesystem,
        [("list_directory", {"path": str(files)}), ("read_text_file", {"path": str(files / "notes.txt")})],
    )
    result = lint_paths([out], LintConfig(), root=tmp_path)
    assert len(result.files) == 4
    listed = {p.name.split(".")[0]: len(tool_names(p)) for p in out.glob("*.cassette.json")}
    assert listed["time"] == 2 and min(listed.values()) >= 2 and listed["git"] >= 10, listed
    assert [f for f in result.findings if f.rule.startswith(("P", "S"))] == [], render_lint(result, "text")


def test_the_shipped_cassettes_raise_no_poisoning_finding() -> None:
    result = lint_paths([ROOT / "cassettes"], LintConfig(), root=ROOT)
    assert result.files
    assert [f for f in result.findings if f.rule.startswith(("P", "S"))] == [], render_lint(result, "text")
