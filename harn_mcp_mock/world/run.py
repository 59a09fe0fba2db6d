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
    emit_tape: str | Path | None = None,
    stop_fd: int | None = None,
) -> WorldEngine:
    """Load the spec, serve it until stdin closes (or ``stop_fd`` turns readable: a stop signal,
    :mod:`harn_mcp_mock.shutdown`), and return the engine (final state, log).

    ``emit_tape`` writes every exchange to an event tape stamped with the world's virtual clock,
    so the same seed and calls give a byte-identical tape.
    """
    engine = WorldEngine(load_spec(spec_path), task=task, seed=seed, run_id=run_id, faults=faults)
    if emit_tape is None:
        serve_stdio(engine, stdin_fd=stdin_fd, stdout_fd=stdout_fd, stop_fd=stop_fd)
        return engine
    from harn_mcp_mock.tape import TapeWriter
    from harn_mcp_mock.tape.mcp import EngineClock, McpTapeObserver, TapedEngine

    argv = ["world", "--seed", str(seed), "--run-id", run_id] + (["--faults", faults] if faults else [])
    with TapeWriter(
        emit_tape,
        clock=EngineClock(engine),
        script_path=str(spec_path),
        argv=argv,
        started_at_unix_ms=engine.spec.start_ms,
    ) as writer:
        serve_stdio(
            TapedEngine(engine, McpTapeObserver(writer, engine.spec.name)),
            stdin_fd=stdin_fd,
            stdout_fd=stdout_fd,
            stop_fd=stop_fd,
        )
    return engine
