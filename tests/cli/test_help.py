"""--help names values in plain words (PATH, NAME:VALUE), not typer's Python types. Every
command's help is walked in tests/test_first_hour.py; here, the names chosen and the mechanism."""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from harn_mcp_mock.cli import apps
from harn_mcp_mock.cli._help import HarnGroup


class Mode(Enum):
    fast = "fast"
    slow = "slow"


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        (
            ["record"],
            ["--header NAME:VALUE", "--allow-origin ORIGIN", "--allow-host HOST", "--cassette PATH"],
        ),
        (
            ["verify"],
            ["--header NAME:VALUE", "--ignore-path POINTER", "--latency-ratio FLOAT", "--timeout FLOAT"],
        ),
        (["run"], ["--task TASK", "--min-pass-k K=V", "--k INTEGER", "--spec PATH", "agent...  The agent"]),
        (["replay"], ["command...  Live server command", "--port INTEGER"]),
    ],
)
def test_the_mock_commands_name_their_values(path: list[str], shown: list[str]) -> None:
    """Through the `harn-mcp-mock` entry point's own app (mock.app, not harn's group)."""
    output = CliRunner().invoke(apps.mock.app, [*path, "--help"]).output
    assert [text for text in shown if text not in output] == []


def test_a_harn_group_names_choices_lists_and_arguments_plainly() -> None:
    app = typer.Typer(cls=HarnGroup, add_completion=False, rich_markup_mode=None)

    @app.command()
    def go(
        names: Annotated[list[str] | None, typer.Argument(help="Names.")] = None,
        mode: Annotated[Mode, typer.Option("--mode", help="A mode.")] = Mode.fast,
        text: Annotated[str, typer.Option("--text", help="Text.")] = "",
        numbers: Annotated[list[int] | None, typer.Option("--n", help="Numbers.")] = None,
        kept: Annotated[str, typer.Option("--kept", metavar="MINE", help="Its own.")] = "",
        flag: Annotated[bool, typer.Option("--flag", help="A flag.")] = False,
    ) -> None:
        pass

    @app.command()
    def other() -> None:
        pass

    output = CliRunner().invoke(app, ["go", "--help"]).output
    lines = [" ".join(line.split()[:2]) for line in output.splitlines() if line.startswith("  ")]
    assert lines == [
        "names... Names.",
        "--mode [fast|slow]",
        "--text TEXT",
        "--n INTEGER",
        "--kept MINE",
        "--flag A",
        "--help Show",
    ]


def test_runs_help_lists_every_exit_code_of_the_docs_table_on_both_paths(tmp_path: Path) -> None:
    """Before: 3 (the cost cap) was in neither."""
    from tests.cli.test_main import both_paths

    docs = (Path(__file__).resolve().parents[2] / "docs" / "runner.md").read_text()
    table = docs[docs.index("## Exit codes") :].split("\n## ")[0]
    codes = re.findall(r"^\| ([\d / ]+) \|", table, re.MULTILINE)
    assert codes == ["0", "1", "2", "3", "75", "130 / 143 / 129"]
    fast, slow = both_paths(["run", "--help"], tmp_path)
    assert fast[0] == 0 and fast[1] == slow[1]
    shown = " ".join(fast[1].split())
    for code in codes:
        assert f" {code} " in shown, code
    assert "3 --run-max-cost stopped the run with trials left" in shown
