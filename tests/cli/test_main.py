"""The CLI surface: entry points, the start-up fast path, one-line errors and exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from harn_mcp_mock.cli import apps, fastpath

runner = CliRunner()


def click_command(name: str) -> Any:
    group: Any = typer.main.get_command(apps.mock.app)  # typer vendors its own click
    return group.commands[name]


def typer_options(name: str) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for param in click_command(name).params:
        if type(param).__name__.endswith("Option"):
            kind = "flag" if param.is_flag else "list" if param.multiple else "str"
            for flag in param.opts:
                out[flag] = (str(param.name), kind)
    return out


def loosely(table: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    return {flag: (name, "str" if kind in ("path", "int") else kind) for flag, (name, kind) in table.items()}


def test_the_fast_path_tables_mirror_the_typer_options_exactly() -> None:
    assert loosely(fastpath.REPLAY_FLAGS) == typer_options("replay")
    assert loosely(fastpath.WORLD_FLAGS) == typer_options("world")


def test_the_fast_path_leaves_help_unknown_flags_and_other_commands_to_typer() -> None:
    assert fastpath.run(["replay", "--help"]) is None
    assert fastpath.run(["replay", "--cassette"]) is None
    assert fastpath.run(["replay", "--cassette", "x", "--bogus"]) is None
    assert fastpath.run(["replay", "--strict"]) is None  # no --cassette: typer says what is missing
    assert fastpath.run(["record", "--cassette", "x"]) is None
    assert fastpath.run(["world", "check", "--spec", "w.json"]) is None
    assert fastpath.run(["world", "--spec", "w.json", "--seed", "x"]) is None


def test_the_fast_path_parses_what_typer_parses() -> None:
    argv = [
        "--cassette",
        "a.json",
        "--mode=once",
        "--strict",
        "--ignore-path",
        "/a",
        "--ignore-path",
        "/b",
        "--",
        "srv",
        "--flag",
    ]
    assert fastpath.parse(argv, fastpath.REPLAY_FLAGS) == {
        "cassette": Path("a.json"),
        "mode": "once",
        "strict": True,
        "ignore_paths": ["/a", "/b"],
        "command": ["srv", "--flag"],
    }


def test_every_entry_point_runs_the_same_commands() -> None:
    for cmd in (
        ["harn", "mcp", "mock", "--help"],
        ["harn-mcp-mock", "--help"],
        [sys.executable, "-m", "harn_mcp_mock", "--help"],
    ):
        exe = cmd if cmd[0] == sys.executable else [str(Path(sys.executable).parent / cmd[0]), *cmd[1:]]
        out = subprocess.run(exe, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        for command in ("record", "replay", "show", "recover"):
            assert command in out.stdout


def test_version_is_printed() -> None:
    result = runner.invoke(apps.harn, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("harn-mcp-mock ")


def test_a_bad_cassette_is_one_line_on_stderr_with_exit_3(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cassette.json"
    bad.write_text('{"format": "harn-mcp-mock/cassette", "version": 7, "messages": []}')
    for command in (["show", "--cassette", str(bad)], ["replay", "--cassette", str(bad)]):
        out = subprocess.run(
            [sys.executable, "-m", "harn_mcp_mock", *command],
            capture_output=True,
            text=True,
            timeout=60,
            input="",
        )
        assert out.returncode == 3
        assert out.stderr.count("\n") == 1
        assert f"{bad}:version: written by cassette format version 7" in out.stderr
        assert "Traceback" not in out.stderr


def test_recover_without_a_journal_is_one_line_exit_3(tmp_path: Path) -> None:
    result = runner.invoke(apps.mock.app, ["recover", "--cassette", str(tmp_path / "x.cassette.json")])
    assert result.exit_code == 3
    assert "no unfinished recording (journal) to recover" in result.output


def test_a_typer_exit_inside_handle_errors_keeps_its_exit_code() -> None:
    import typer

    from harn_mcp_mock.cli._common import handle_errors

    with pytest.raises(typer.Exit) as raised, handle_errors("harn test"):
        raise typer.Exit(5)
    assert raised.value.exit_code == 5
