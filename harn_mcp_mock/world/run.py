"""Serve a world over stdio and, when the client disconnects, build the final state document.

Scoring (goal, collateral, pass) is a layer above; the CLI composes the two for ``--report``.
"""

from __future__ import annotations

from pathlib import Path

from harn_mcp_mock.jsonrpc.server import serve_stdio
from harn_mcp_mock.world.engine import WorldEngine
from harn_mcp_mock.world.spec import load_spec


def serve_world(
    spec_path: str | Path,
    *,
    task: str | None = None,
    seed: int = 0,
    run_id: str = "run",
    faults: str | None = None,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
) -> WorldEngine:
    """Load the spec, serve it until stdin closes, and return the engine (final state, log)."""
    engine = WorldEngine(load_spec(spec_path), task=task, seed=seed, run_id=run_id, faults=faults)
    serve_stdio(engine, stdin_fd=stdin_fd, stdout_fd=stdout_fd)
    return engine
