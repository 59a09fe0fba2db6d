"""Entry points: `harn` (groups `harn mcp mock ...`) and `harn-mcp-mock` (= `harn mcp mock`).

Both first offer the arguments to the start-up fast path (no typer import for a well-formed
``replay``), then build the typer app.
"""

from __future__ import annotations

import sys
from types import ModuleType


def harn_main() -> None:
    args = sys.argv[1:]
    if args[:2] == ["mcp", "mock"] or args == ["--version"]:
        _fast(args[2:] if args[:1] == ["mcp"] else args)
    _apps().harn(prog_name="harn")


def mock_main() -> None:
    _fast(sys.argv[1:])
    _apps().mock.app(prog_name="harn-mcp-mock")


def _fast(args: list[str]) -> None:
    from harn_mcp_mock.cli import fastpath

    code = fastpath.run(args)
    if code is not None:
        raise SystemExit(code)


def _apps() -> ModuleType:
    from harn_mcp_mock.cli import apps

    return apps
