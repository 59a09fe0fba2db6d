"""The stdio transport's session: ``harn mcp mock replay`` over our own stdin/stdout, whatever
the record mode (the serving loop is :func:`harn_mcp_mock.jsonrpc.server.serve_stdio`, the
session :func:`harn_mcp_mock.session.open.open_session`)."""

from __future__ import annotations

from harn_mcp_mock._lazy import lazy_exports

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)

if TYPE_CHECKING:
    from harn_mcp_mock.session.open import ReplayOutcome
    from harn_mcp_mock.stdio.run import run_replay

# name -> the module that defines it; loaded on first use (start-up speed, no heavy imports)
_HOME = {
    "ReplayOutcome": "harn_mcp_mock.session.open",
    "run_replay": "run",
}

__getattr__ = lazy_exports(__name__, _HOME)

__all__ = ["ReplayOutcome", "run_replay"]
