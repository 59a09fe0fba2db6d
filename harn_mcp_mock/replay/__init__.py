"""Replay a cassette as an MCP server: the engine, the stdio loop and the session builder."""

from __future__ import annotations

from harn_mcp_mock._lazy import lazy_exports

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)

if TYPE_CHECKING:
    from harn_mcp_mock.options import parse_latency
    from harn_mcp_mock.replay.engine import Interaction, ReplayEngine, ReplayReport, build_interactions
    from harn_mcp_mock.replay.episodes import serve_new_episodes
    from harn_mcp_mock.replay.run import ReplayOutcome, run_replay
    from harn_mcp_mock.replay.session import engine_factory, open_engine

# name -> the module that defines it; loaded on first use (start-up speed, no heavy imports)
_HOME = {
    "Interaction": "engine",
    "ReplayEngine": "engine",
    "ReplayOutcome": "run",
    "ReplayReport": "engine",
    "build_interactions": "engine",
    "engine_factory": "session",
    "open_engine": "session",
    "parse_latency": "harn_mcp_mock.options",
    "run_replay": "run",
    "serve_new_episodes": "episodes",
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
