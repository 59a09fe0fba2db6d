"""The typer apps: `harn` (with `harn mcp mock ...`) and the `mcp mock` group alone."""

from __future__ import annotations

import typer

from harn_mcp_mock import __version__
from harn_mcp_mock.cli import mock, protocol, testbench


def _version(value: bool) -> None:
    if value:
        typer.echo(f"harn-mcp-mock {__version__}")
        raise typer.Exit()


def _root(help_text: str) -> typer.Typer:
    root = typer.Typer(
        help=help_text, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False
    )

    @root.callback()
    def _options(
        version: bool = typer.Option(
            False, "--version", callback=_version, is_eager=True, help="Print the version."
        ),
    ) -> None:
        pass

    return root


harn = _root("Harn: deterministic MCP servers and test benches.")
mcp_group = typer.Typer(
    help="Model Context Protocol tools.", no_args_is_help=True, pretty_exceptions_enable=False
)
mcp_group.add_typer(mock.app, name="mock")
harn.add_typer(mcp_group, name="mcp")
harn.add_typer(testbench.app, name="test-bench")
harn.add_typer(protocol.app, name="protocol")
