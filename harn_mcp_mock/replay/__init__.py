"""Replay a cassette as an MCP server: the engine and the engine builder (the stdio loop is
:mod:`harn_mcp_mock.stdio`, the session :func:`harn_mcp_mock.session.open.open_session`)."""

from __future__ import annotations

from harn_mcp_mock._lazy import lazy_exports

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)

if TYPE_CHECKING:
    from harn_mcp_mock.options import parse_latency
    from harn_mcp_mock.replay.engine import Interaction, ReplayEngine, ReplayReport, build_interactions
    from harn_mcp_mock.replay.session import engine_factory, open_engine
    from harn_mcp_mock.session.open import ReplayOutcome
    from harn_mcp_mock.stdio.run import run_replay, serve_new_episodes

# name -> the module that defines it; loaded on first use (start-up speed, no heavy imports)
_HOME = {
    "Interaction": "engine",
    "ReplayEngine": "engine",
    "ReplayOutcome": "harn_mcp_mock.session.open",  # (the stdio loop's names: their homes moved up)
    "ReplayReport": "engine",
    "build_interactions": "engine",
    "engine_factory": "session",
    "open_engine": "session",
    "parse_latency": "harn_mcp_mock.options",
    "run_replay": "harn_mcp_mock.stdio.run",
    "serve_new_episodes": "harn_mcp_mock.stdio.run",
}

__getattr__ = lazy_exports(__name__, _HOME)

__all__ = [
    "Interaction",
    "ReplayEngine",
    "ReplayOutcome",
    "ReplayReport",
    "build_interactions",
    "engine_factory",
    "open_engine",
    "parse_latency",
    "run_replay",
    "serve_new_episodes",
]
