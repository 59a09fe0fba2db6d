"""harn-mcp-mock: deterministic MCP tool servers for testing and evaluation."""

from __future__ import annotations

from harn_mcp_mock._version import __version__ as __version__

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "RecordTransport",
    "ReplaySession",
    "ReplayTransport",
    "open_replay",
    "record_session",
    "replay_session",
    "run_eval",
    "run_eval_async",
]

_RUNNER = frozenset({"run_eval", "run_eval_async"})

if TYPE_CHECKING:
    from harn_mcp_mock.api import (
        RecordTransport,
        ReplaySession,
        ReplayTransport,
        open_replay,
        record_session,
        replay_session,
    )
    from harn_mcp_mock.runner.api import run_eval, run_eval_async


def __getattr__(name: str) -> Any:
    """The Python API, imported on first use so that ``import harn_mcp_mock`` stays fast."""
    if name in _RUNNER:
        from harn_mcp_mock.runner import api as runner_api

        return getattr(runner_api, name)
    if name in __all__:
        from harn_mcp_mock import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
