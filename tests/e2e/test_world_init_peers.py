"""``world init --from-cassette`` on recordings of real stateful servers we did not write.

Each session is recorded through ``harn mcp mock record`` (a subprocess) with the official
``mcp`` SDK client (:mod:`tests.e2e.world_sessions`); ``world init`` (the real command, a
subprocess) scaffolds a spec from the cassette; then:

* the unedited spec passes ``world check``;
* it reproduces >= 95% of its own recording's answers (the figure ``world init`` prints);
* for each, a different session (other entities or files,
  another order, error cases), run against the live server through ``record``, gets the same
  answers from the world (from its models) on >= 80% (memory, git) and >= 95% (filesystem) of its steps (:func:`harn_mcp_mock.world.scaffold.replay` of that second cassette).

The figures measured are written in docs/worlds.md ("Scaffolding a world from a recording").
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harn_mcp_mock.world.scaffold import figures, read_recordings, replay
from tests.conftest import require_peer
from tests.e2e import world_sessions as ws
from tests.e2e.peers import WAIT, filesystem_server_command, git_server_command, memory_server_command

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def harn(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", *args],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


def init_and_check(cassette: Path, out: Path) -> tuple[float, int]:
    """``world init`` then ``world check`` on the unedited spec; the share of answers ``init``
    printed as reproduced, and how many models answered."""
    init = harn(
        "world", "init", "--from-cassette", str(cassette), "--out", str(out), "--report", str(out) + ".txt"
    )
    assert init.returncode == 0, init.stderr
    assert Path(str(out) + ".txt").read_text() == init.stdout
    check = harn("world", "check", "--spec", str(out))
    assert check.returncode == 0, check.stdout + check.stderr
    found = re.search(
        r"reproduced (\d+)/(\d+) recorded answers \(\d+%\); (\d+) answered by models", init.stdout
    )
    assert found, init.stdout
    return int(found.group(1)) / int(found.group(2)), int(found.group(3))


def test_server_memory_scaffold_reproduces_its_recording_and_another_session(tmp_path: Path) -> None:
    command = require_peer(memory_server_command)
    own = tmp_path / "memory-a.cassette.json"
    other = tmp_path / "memory-b.cassette.json"
    ws.record_session(own, command, ws.MEMORY_A, {"MEMORY_FILE_PATH": str(tmp_path / "a.jsonl")})
    ws.record_session(other, command, ws.MEMORY_B, {"MEMORY_FILE_PATH": str(tmp_path / "b.jsonl")})
    spec = tmp_path / "memory.world.json"
    share, by_model = init_and_check(own, spec)
    assert share >= 0.95
    assert by_model == len(ws.MEMORY_A)

    doc = json.loads(spec.read_text())
    second = figures(replay(doc, read_recordings([other])))
    assert second["steps"] == len(ws.MEMORY_B)
    assert second["share"] >= 0.80, second
    # the agreement comes from the models, not from recorded answers
    assert second["by_model"] == second["steps"]

    # the tutorial's last step: an agent run against fresh copies of the scaffolded world
    agent = Path(__file__).resolve().parents[2] / "examples" / "agent" / "scripted_agent.py"
    run = harn(
        "run",
        "--spec",
        str(spec),
        "--k",
        "2",
        "--out",
        str(tmp_path / "runs"),
        "--",
        sys.executable,
        str(agent),
        "--harn-trial",
        "good",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "eval: 2 trial(s) scored, 2 passed" in run.stdout + run.stderr


def test_server_memory_scaffold_of_the_tutorial_session_is_all_models(tmp_path: Path) -> None:
    """The docs' Tutorial: creates of existing entities and adds of existing observations
    (skipped, not answered), an add to a missing entity (an error); recorded on a fresh memory
    file, then again on the file the first run left (as a user running the Tutorial twice does)."""
    command = require_peer(memory_server_command)
    steps = ws.tutorial_session()
    memory = {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    for run in ("fresh", "again"):
        cassette = tmp_path / f"{run}.cassette.json"
        ws.record_session(cassette, command, steps, memory)
        share, by_model = init_and_check(cassette, tmp_path / f"{run}.world.json")
        assert share == 1.0, run
        assert by_model == len(steps), run


def test_server_filesystem_scaffold_reproduces_its_recording_and_another_session(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    command = require_peer(lambda: filesystem_server_command(root))
    cassette = tmp_path / "fs.cassette.json"
    ws.record_session(cassette, command, ws.filesystem_session(root))
    spec = tmp_path / "fs.world.json"
    share, by_model = init_and_check(cassette, spec)
    assert share >= 0.95
    # every answer from a model: documents (write, read, move, their errors), marks (directories),
    # and join-style listings (list_directory, search_files, directory_tree, read_multiple_files)
    assert by_model == len(ws.filesystem_session(root))

    shutil.rmtree(root)  # the second session starts from the same (empty) root
    root.mkdir()
    other = tmp_path / "fs-b.cassette.json"
    ws.record_session(other, command, ws.filesystem_session_b(root))
    second = figures(replay(json.loads(spec.read_text()), read_recordings([other])))
    assert second["steps"] == len(ws.filesystem_session_b(root))
    assert second["share"] >= 0.95, second
    assert second["by_model"] == second["steps"]


def git_repo(repo: Path) -> Path:
    """A fixed repository: one commit of hello.txt, then an unstaged change to it."""
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir()
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    (repo / "hello.txt").write_text("hello\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "first"], check=True, env=env)
    (repo / "hello.txt").write_text("hello\nworld\n")
    return repo


def test_mcp_server_git_scaffold_reproduces_its_recording_and_another_session(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    command = require_peer(lambda: git_server_command(repo))
    cassette = tmp_path / "git.cassette.json"
    ws.record_session(cassette, command, ws.bind(ws.GIT_SESSION, repo=str(repo)), GIT_ENV)
    spec = tmp_path / "git.world.json"
    share, by_model = init_and_check(cassette, spec)
    assert share >= 0.95
    # branches are marks (git_create_branch), listed by git_branch with the current one marked,
    # made current by git_checkout (its error too); git_add answers as recorded; status, diffs
    # and log are not modelled
    assert by_model >= 7

    git_repo(repo)  # the same fixed repository again
    other = tmp_path / "git-b.cassette.json"
    ws.record_session(other, command, ws.bind(ws.GIT_SESSION_B, repo=str(repo)), GIT_ENV)
    second = figures(replay(json.loads(spec.read_text()), read_recordings([other])))
    assert second["steps"] == len(ws.GIT_SESSION_B)
    assert second["share"] >= 0.80, second
    assert second["by_model_reproduced"] >= len(ws.GIT_SESSION_B) - 1, second  # all but git_status
