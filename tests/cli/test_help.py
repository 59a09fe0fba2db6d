"""--help names values in plain words (PATH, NAME:VALUE), not typer's Python types. Every
command's help is walked in tests/test_first_hour.py; here, the names chosen and the mechanism."""

from __future__ import annotations

from enum import Enum
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
