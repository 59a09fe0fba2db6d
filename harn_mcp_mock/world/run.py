"""Serve a world over stdio and, when the client disconnects, build the final state document.

Scoring (goal, collateral, pass) is a layer above; the CLI composes the two for ``--report``.
"""

from __future__ import annotations

from pathlib import Path

from harn_mcp_mock.jsonrpc.server import Out, serve_stdio
from harn_mcp_mock.world.engine import ServerView, WorldEngine
from harn_mcp_mock.world.spec import load_spec

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

    from harn_mcp_mock.tape import TapeWriter


def world_tape(
    engine: WorldEngine, path: str | Path, spec_path: str | Path, *, sync: bool = True
) -> TapeWriter:
    """The event tape of a world run, stamped with the world's virtual clock (the same seed and
    calls give a byte-identical tape); close it, or use it as a context manager. ``sync=False``:
    no fsync at close (a runner's trial, rerun when a crash cut it short)."""
    from harn_mcp_mock.tape import TapeWriter
    from harn_mcp_mock.tape.mcp import EngineClock

    argv = ["world", "--seed", str(engine.seed), "--run-id", engine.run_id]
    if engine.profile:
        argv += ["--faults", engine.profile]
    return TapeWriter(
        path,
        clock=EngineClock(engine),
        script_path=str(spec_path),
        argv=argv,
        started_at_unix_ms=engine.spec.start_ms,
        sync=sync,
    )


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
    server: str | None = None,
) -> WorldEngine:
    """Load the spec, serve it until stdin closes (or ``stop_fd`` turns readable: a stop signal,
    :mod:`harn_mcp_mock.shutdown`), and return the engine (final state, log).

    ``emit_tape`` writes every exchange to an event tape stamped with the world's virtual clock,
    so the same seed and calls give a byte-identical tape. ``server``: one server of a world of
    several (its serverInfo and tools, over a state of its own here; the runner serves them all
    over one state).
    """
    engine = WorldEngine(load_spec(spec_path), task=task, seed=seed, run_id=run_id, faults=faults)
    served: Any = engine if server is None else ServerView(engine, server)
    if emit_tape is None:
        serve_stdio(served, stdin_fd=stdin_fd, stdout_fd=stdout_fd, stop_fd=stop_fd)
        return engine
    from harn_mcp_mock.tape.mcp import McpTapeObserver, TapedEngine

    with world_tape(engine, emit_tape, spec_path) as writer:
        serve_stdio(
            TapedEngine(served, McpTapeObserver(writer, server or engine.spec.name)),
            stdin_fd=stdin_fd,
            stdout_fd=stdout_fd,
            stop_fd=stop_fd,
        )
    return engine


class SharedWorld:
    """One world served to every session a client opens (as a real server's backend is): each
    session's messages reach the same engine, one message at a time (a lock: sessions may come
    from several threads). It counts the sessions (``initialize`` requests) and tool calls, and
    knows the calls that changed the world's state (:attr:`state_changes`), whichever session
    made them, with or without ``initialize``.

    ``engine`` is the :class:`WorldEngine`, or a wrapper of it (a ``TapedEngine`` writing the tape).
    A world of several servers gives ``servers``: each server's engine (a :class:`ServerView`, or
    a wrapper of it) by name; every session of any of them reaches the one state, under one lock.
    """

    def __init__(
        self, world: WorldEngine, engine: object = None, servers: dict[str, object] | None = None
    ) -> None:
        import threading

        self.world = world
        self.engine = engine if engine is not None else world
        self.servers: dict[str, object] = dict(servers or {})
        self.sessions = 0
        self.tool_calls = 0
        self.closed = False
        """Set when the trial ended: later messages get an error and reach no state."""
        self.lock = threading.Lock()

    @property
    def state_changes(self) -> int:
        """Tool calls whose effects changed the world's state (a change undone later counts)."""
        with self.lock:
            return sum(1 for call in self.world.calls if call.get("changed"))

    def session(self, server: str | None = None) -> WorldSession:
        """An engine for one more session (stdio connection or HTTP session) of this world, or
        of its server ``server`` (a world of several)."""
        return WorldSession(self, self.engine if server is None else self.servers[server])


class WorldSession:
    """One session's engine over a :class:`SharedWorld` (the ``Engine`` seam)."""

    __slots__ = ("engine", "shared")

    def __init__(self, shared: SharedWorld, engine: object = None) -> None:
        self.shared = shared
        self.engine = shared.engine if engine is None else engine

    def receive(self, message: Any) -> list[Any]:
        shared = self.shared
        with shared.lock:
            if shared.closed:
                return _ended(message)
            for one in message if isinstance(message, list) else (message,):
                if isinstance(one, dict) and "id" in one:
                    method = one.get("method")
                    if method == "initialize":
                        shared.sessions += 1
                    elif method == "tools/call":
                        shared.tool_calls += 1
            return self.engine.receive(message)  # type: ignore[attr-defined,no-any-return]


def _ended(message: Any) -> list[Out]:
    """The answer of a world whose trial ended: an error for each request, nothing else."""
    from harn_mcp_mock.jsonrpc.codes import INTERNAL_ERROR

    error = {"code": INTERNAL_ERROR, "message": "the trial ended: this world takes no more calls"}
    return [
        Out({"jsonrpc": "2.0", "id": one["id"], "error": error})
        for one in (message if isinstance(message, list) else [message])
        if isinstance(one, dict) and "id" in one and "method" in one
    ]
