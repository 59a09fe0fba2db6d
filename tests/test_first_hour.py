"""A new user's first hour: `--version` everywhere, help that reads cleanly at 80 columns and
points at docs a pip user has (`harn mcp mock docs TOPIC`), the shipped worlds (`world list`,
`--spec NAME`), and `make demo` without Node."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from harn_mcp_mock.cli import apps
from harn_mcp_mock.shipped import doc_path, doc_topics, resolve_spec, shipped_worlds, world_specs

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
runner = CliRunner()


def command_paths(command: Any, path: list[str]) -> Iterator[list[str]]:
    yield path
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from command_paths(sub, [*path, name])


TYPE_REPR = re.compile(r"<\w[\w\[\]|,. ]*>|list\[")
"""typer 0.29's own metavars (``<path>``, ``<int>``, ``<list[str]>``, ``<a|b>``): cli/_help.py names
values in plain words instead."""

ALL_COMMANDS = list(command_paths(typer.main.get_command(apps.harn), []))


def test_the_walk_reaches_every_command_group() -> None:
    names = {" ".join(p) for p in ALL_COMMANDS}
    assert {
        "mcp mock replay",
        "mcp mock world list",
        "mcp mock docs",
        "test-bench run",
        "protocol conform",
    } <= names


@pytest.mark.parametrize("path", ALL_COMMANDS, ids=lambda p: " ".join(p) or "harn")
def test_help_fits_80_columns_has_no_type_repr_metavar_and_its_doc_links_resolve(path: list[str]) -> None:
    result = runner.invoke(apps.harn, [*path, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    text = result.output
    assert [line for line in text.splitlines() if TYPE_REPR.search(line)] == []  # PATH, not <path>
    assert [line for line in text.splitlines() if len(line) > 80] == []
    assert not re.search(r"docs/[\w-]+\.md", text), "point help at `harn mcp mock docs TOPIC`"
    for topic in re.findall(r"harn mcp mock docs ([a-z][\w-]*)", text):
        assert topic == "TOPIC" or doc_path(topic).is_file()
    _, _, commands = text.partition("\nCommands:\n")
    cut = [line for line in commands.splitlines() if line.rstrip().endswith("...")]
    assert cut == [], "a command's summary was cut: give it a short_help"


def test_usage_blocks_in_help_keep_their_lines() -> None:
    text = runner.invoke(apps.harn, ["mcp", "mock", "verify", "--help"], env={"COLUMNS": "80"}).output
    assert "  Usage: harn mcp mock verify --cassette A --candidate B\n" in text
    assert "     or: harn mcp mock verify --cassette A -- SERVER...\n" in text


@pytest.mark.parametrize(
    "argv",
    [
        [str(BIN / "harn"), "--version"],
        [str(BIN / "harn"), "mcp", "mock", "--version"],
        [str(BIN / "harn-mcp-mock"), "--version"],
        [sys.executable, "-m", "harn_mcp_mock", "--version"],
    ],
    ids=["harn", "harn mcp mock", "harn-mcp-mock", "python -m"],
)
def test_version_on_every_entry_point(argv: list[str]) -> None:
    from importlib.metadata import version

    out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout, out.stderr) == (0, f"harn-mcp-mock {version('harn-mcp-mock')}\n", "")


def test_version_also_works_through_typer() -> None:
    for app, argv in ((apps.harn, ["--version"]), (apps.mock.app, ["--version"])):
        result = runner.invoke(app, argv)
        assert result.exit_code == 0
        assert result.output.startswith("harn-mcp-mock ")


# -- docs -----------------------------------------------------------------------------------------


def test_docs_lists_every_topic_and_prints_one() -> None:
    listing = runner.invoke(apps.mock.app, ["docs"])
    assert listing.exit_code == 0
    assert set(doc_topics()) == {p.stem for p in (ROOT / "docs").glob("*.md")}
    for topic in doc_topics():
        assert re.search(rf"^{re.escape(topic)} ", listing.output, re.M)
    shown = runner.invoke(apps.mock.app, ["docs", "drift-rules"])
    assert shown.exit_code == 0
    assert shown.output == (ROOT / "docs" / "drift-rules.md").read_text(encoding="utf-8")
    assert doc_path("docs/tape.md") == doc_path("tape") == doc_path("tape.md#section")


def test_an_unknown_doc_is_one_line_naming_the_topics_exit_2() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "docs", "nope"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert "no doc 'nope'; topics: architecture, cassette-format," in out.stderr


# -- worlds ---------------------------------------------------------------------------------------


def test_world_list_prints_every_shipped_world_with_its_tasks() -> None:
    result = runner.invoke(apps.mock.app, ["world", "list"])
    assert result.exit_code == 0, result.output
    specs = sorted((ROOT / "worlds").glob("*/*.world.json"))
    assert [w.name for w in shipped_worlds()] == [p.parent.name for p in specs] != []
    for path in specs:
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert re.search(rf"^{doc['name']}  \(", result.output, re.M)
        for task in doc["tasks"]:
            assert task["id"] in result.output
    assert "scripted_agent.py" in result.output


def test_world_list_json() -> None:
    result = runner.invoke(apps.mock.app, ["world", "list", "--json"])
    assert result.exit_code == 0
    doc = json.loads(result.output)
    bank = next(w for w in doc["worlds"] if w["name"] == "bank")
    assert Path(bank["path"]) == ROOT / "worlds" / "bank" / "bank.world.json"
    assert bank["description"].startswith("A retail bank")
    assert {"id": "pay-rent"}.items() <= bank["tasks"][0].items()
    assert bank["fault_profiles"] == ["flaky"]
    assert Path(doc["agent_example"]) == ROOT / "examples" / "agent" / "scripted_agent.py"


def test_spec_takes_a_shipped_worlds_name_and_a_path_wins() -> None:
    assert resolve_spec("bank") == world_specs()["bank"]
    assert resolve_spec(Path("bank")) == world_specs()["bank"]
    assert resolve_spec("worlds/bank/bank.world.json") == Path("worlds/bank/bank.world.json")
    assert resolve_spec("nope") == Path("nope")
    assert runner.invoke(apps.mock.app, ["world", "check", "--spec", "tickets"]).exit_code == 0


def test_world_serves_a_shipped_world_by_name_through_the_fast_path(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    out = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "world", "--spec", "bank", "--task", "pay-rent",
         "--state-out", str(state)],
        capture_output=True, text=True, timeout=60, input="", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(state.read_text(encoding="utf-8"))["world"] == "bank"


def test_an_unknown_world_name_is_one_line_naming_the_shipped_ones(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "world", "--spec", "bnak"],
        capture_output=True, text=True, timeout=60, input="", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr == (
        "harn mcp mock world: error: bnak: no such world spec (shipped worlds: bank, notes, retail, support, tickets)\n"
    )


def test_world_without_a_spec_points_at_world_list() -> None:
    result = runner.invoke(apps.mock.app, ["world"])
    assert result.exit_code == 2
    assert "Missing option '--spec': a spec file or a shipped world's name (`world list`)." in result.output


# -- make demo without Node -----------------------------------------------------------------------


def make_plan(target: str, path: str) -> subprocess.CompletedProcess[str]:
    """What ``make -n -B target`` would run (every prerequisite forced), with PATH = ``path``."""
    env = {**os.environ, "PATH": path}
    return subprocess.run(
        ["make", "-n", "-B", target], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env
    )


def test_make_demo_needs_no_npm_and_make_test_still_installs_the_npm_peers(tmp_path: Path) -> None:
    for tool in ("make", "bash", "python3"):
        found = shutil.which(tool)
        assert found is not None
        (tmp_path / tool).symlink_to(found)
    demo = make_plan("demo", str(tmp_path))  # no node, no npm on PATH
    assert demo.returncode == 0, demo.stderr
    assert "examples/demo.py" in demo.stdout and "examples/world_demo.py" in demo.stdout
    assert "npm" not in demo.stdout and "node" not in demo.stdout
    test = make_plan("test", os.environ["PATH"])
    assert "npm ci --prefix tests/e2e" in test.stdout
