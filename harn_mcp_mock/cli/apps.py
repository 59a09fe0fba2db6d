"""The typer apps: `harn` (with `harn mcp mock ...`) and the `mcp mock` group alone."""

from __future__ import annotations

import typer

from harn_mcp_mock.cli import mock, protocol, testbench
from harn_mcp_mock.cli._help import HarnGroup
from harn_mcp_mock.cli.mock import VersionOpt


def _root(help_text: str) -> typer.Typer:
    root = typer.Typer(
        cls=HarnGroup,
        help=help_text,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )

    @root.callback()
    def _options(version: VersionOpt = False) -> None:
        pass

    return root


harn = _root("Harn: deterministic MCP servers and test benches.")
mcp_group = typer.Typer(
    cls=HarnGroup,
    help="Model Context Protocol tools.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
mcp_group.add_typer(mock.app, name="mock")
harn.add_typer(mcp_group, name="mcp")
harn.add_typer(testbench.app, name="test-bench", short_help="Run Python scripts hermetically.")
harn.add_typer(protocol.app, name="protocol", short_help="Harn Agents Protocol v1: a mock Harness.")
