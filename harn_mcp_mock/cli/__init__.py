"""The command line: thin typer apps over the library (parse, one library call, render)."""

from __future__ import annotations

from harn_mcp_mock._lazy import lazy_exports

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)

if TYPE_CHECKING:
    from harn_mcp_mock.cli.main import harn_main, mock_main

# name -> the module that defines it; loaded on first use (start-up speed, no heavy imports)
_HOME = {
    "harn_main": "main",
    "mock_main": "main",
}

__getattr__ = lazy_exports(__name__, _HOME)

__all__ = [
    "harn_main",
    "mock_main",
]
