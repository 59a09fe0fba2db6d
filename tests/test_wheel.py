"""The wheel a pip user installs: it carries the package data (the default redaction policy, the
docs, the shipped worlds, the examples), and installed into a fresh venv, away
from the checkout, `--version`, `docs`, `world list` and a shipped world by name all work.

The wheel is built in-process by hatchling (the build backend, in the dev extra) and installed
offline: ``--no-deps --no-index``, with the project venv's site-packages on the fresh venv's
path for the dependencies (a ``.pth`` line, which does not pull in the editable install).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from hatchling.builders.wheel import WheelBuilder

from harn_mcp_mock import __version__

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("test_wheel")]  # builds the wheel and a fresh venv

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 120


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    [built] = list(WheelBuilder(str(ROOT)).build(directory=str(out), versions=["standard"]))
    return Path(built)


def repo_files(folder: str, pattern: str = "*") -> set[str]:
    """The folder's files as git keeps them (byte-code caches that tests leave behind are not)."""
    files = (ROOT / folder).rglob(pattern)
    return {
        p.relative_to(ROOT / folder).as_posix() for p in files if p.is_file() and "__pycache__" not in p.parts
    }


def test_the_wheel_carries_the_package_data_docs_worlds_and_agent(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "harn_mcp_mock/redact/policies/default.json" in names
    data = "harn_mcp_mock/_data/"
    for folder, pattern in (("docs", "*.md"), ("worlds", "*"), ("examples", "*")):
        for rel in repo_files(folder, pattern):
            assert f"{data}{folder}/{rel}" in names, rel
    assert f"{data}worlds/bank/bank_effects.py" in names
    assert f"{data}examples/agent/scripted_agent.py" in names
    assert f"{data}examples/servers/notes_server.py" in names  # the quickstart's server
    assert f"{data}docs/drift-rules.md" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


@pytest.fixture(scope="module")
def fresh_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv with only the wheel installed in it (dependencies reused from the project venv)."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=TIMEOUT_S)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=TIMEOUT_S,
    ).stdout.strip()  # fmt: skip
    (Path(purelib) / "project_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--no-index", "--force-reinstall", str(wheel)],
        check=True, capture_output=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    return venv


def run_installed(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(venv / "bin" / args[0]), *args[1:]],
        capture_output=True, text=True, timeout=TIMEOUT_S, cwd=cwd, env=env, input="",
    )  # fmt: skip


def test_the_installed_wheel_runs_away_from_the_checkout(fresh_venv: Path, tmp_path: Path) -> None:
    version = run_installed(fresh_venv, "harn-mcp-mock", "--version", cwd=tmp_path)
    assert (version.returncode, version.stdout) == (0, f"harn-mcp-mock {__version__}\n"), version.stderr

    where = run_installed(
        fresh_venv, "python", "-c", "import harn_mcp_mock; print(harn_mcp_mock.__file__)", cwd=tmp_path
    )
    assert Path(where.stdout.strip()).is_relative_to(fresh_venv), "the wheel's copy, not the checkout's"

    listed = run_installed(fresh_venv, "harn", "mcp", "mock", "world", "list", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    doc = json.loads(listed.stdout)
    assert [w["name"] for w in doc["worlds"]] == ["bank", "notes", "retail", "support", "tickets"]
    for world in doc["worlds"]:
        assert Path(world["path"]).is_relative_to(fresh_venv) and Path(world["path"]).is_file()
    assert Path(doc["agent_example"]).is_relative_to(fresh_venv) and Path(doc["agent_example"]).is_file()

    text = run_installed(fresh_venv, "harn", "mcp", "mock", "world", "list", cwd=tmp_path)
    assert "pay-rent" in text.stdout and "close-login-bug" in text.stdout

    rules = run_installed(fresh_venv, "harn", "mcp", "mock", "docs", "drift-rules", cwd=tmp_path)
    assert rules.returncode == 0 and rules.stdout == (ROOT / "docs" / "drift-rules.md").read_text(
        encoding="utf-8"
    )

    checked = run_installed(
        fresh_venv, "harn", "mcp", "mock", "world", "check", "--spec", "bank", cwd=tmp_path
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr  # bank's Python effects shipped too

    state = tmp_path / "s.json"
    served = run_installed(
        fresh_venv, "harn-mcp-mock", "world", "--spec", "tickets", "--task", "close-login-bug",
        "--state-out", str(state), cwd=tmp_path,
    )  # fmt: skip
    assert served.returncode == 0, served.stderr
    assert json.loads(state.read_text(encoding="utf-8"))["world"] == "tickets"


def test_the_quickstart_records_from_the_installed_wheel_with_its_examples_linked(
    fresh_venv: Path, tmp_path: Path
) -> None:
    """A pip user has no clone: the quickstart's `ln -s` line links the shipped examples, and its
    record command then runs as written (the example server came with the wheel)."""
    lines = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8").splitlines()
    link = next(line for line in lines if line.startswith("ln -s "))
    session = next(line for line in lines if line.startswith("$ printf") and "> session.jsonl" in line)
    record = next(line for line in lines if line.startswith("$ NOTES_API_KEY="))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{fresh_venv / 'bin'}{os.pathsep}{env['PATH']}"
    result = subprocess.run(
        ["bash", "-c", f"set -e; {link}; {session[2:]}; {record[2:]}"],
        capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "examples").resolve().is_relative_to(fresh_venv.resolve())
    assert "wrote cassettes/notes.cassette.json (4 client, 3 server, 0 invalid messages" in result.stderr
