"""The runner owns each trial's world: a :class:`WorldHub` keeps every running trial's world in
this process and serves it to the trial's agent two ways:

- over **stdio**, through the bridge (:mod:`harn_mcp_mock.runner.bridge`): a tiny stdlib process
  the agent starts from ``HARN_MCP_CONFIG``, which names its trial with a per-trial token on the
  hub's Unix socket and hands the hub its stdin and stdout (the hub then serves the client's
  pipes directly);
- over **Streamable HTTP**, at ``http://127.0.0.1:PORT/t/<token>/mcp`` (one loopback server for
  the hub, an unguessable path per trial).

Every session of a trial (each bridge started, each HTTP session) reaches the same
:class:`~harn_mcp_mock.world.run.SharedWorld`, as a real server's backend would, which counts
sessions and tool calls. When the trial ends the runner closes it here (its sessions end, later
ones are refused) and writes the world's state, report and tape itself: nothing an agent writes
is read for scoring.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harn_mcp_mock.runner.matrix import NO_FAULTS, Trial
from harn_mcp_mock.world.run import SharedWorld

if TYPE_CHECKING:
    from harn_mcp_mock.world.spec import WorldSpec

__all__ = ["BRIDGE", "TrialWorld", "WorldHub", "process_hub"]

BRIDGE = Path(__file__).with_name("bridge.py")
HANDSHAKE_TIMEOUT_S = 10.0
JOIN_TIMEOUT_S = 5.0


@dataclass(slots=True, eq=False)
class TrialWorld:
    """One trial's world while it runs: how the agent reaches it, and the world itself."""

    token: str
    shared: SharedWorld
    socket_path: str
    http_base: str | None
    config_dir: str = ""
    """The hub's private folder, where :attr:`config_path` is written."""
    tape: Any = None
    """The open ``TapeWriter`` (closed with the trial)."""
    closed: bool = False
    threads: list[threading.Thread] = field(default_factory=list)
    stop_r: int = -1
    stop_w: int = -1
    servers: dict[str, str] = field(default_factory=dict)
    """A world of several servers: each server's name and its own token (its bridge's, its URL's),
    in the spec's order; every one reaches this one world. Empty: one server (:attr:`token`)."""

    @property
    def command(self) -> list[str]:
        """The stdio command that reaches this world (``-I``: no site, no cwd on the path); a world
        of several servers: the whole world as one server (every tool)."""
        return self.command_for(self.token)

    def command_for(self, token: str) -> list[str]:
        """The stdio bridge command for ``token`` (the world's, or one server's)."""
        return [sys.executable, "-I", str(BRIDGE), self.socket_path, token]

    def server_of(self, token: str) -> str | None:
        """The server ``token`` reaches (None: the whole world)."""
        return next((name for name, known in self.servers.items() if known == token), None)

    @property
    def tokens(self) -> list[str]:
        """Every token that reaches this world: its own, then each server's."""
        return [self.token, *self.servers.values()]

    def endpoints(self) -> dict[str, tuple[list[str], str | None]]:
        """Each server of a world of several: its name, bridge command and URL (empty for a
        world of one server)."""
        return {name: (self.command_for(token), self.url_for(token)) for name, token in self.servers.items()}

    @property
    def config_path(self) -> str:
        """Where the agent's ``HARN_MCP_CONFIG`` file is: named by this trial's token in the hub's
        private folder, so no later trial or attempt rewrites it (an agent left over from a
        runner killed with SIGKILL, reading its config late, never finds the world of the
        trial's rerun there), and removed when the trial ends."""
        return os.path.join(self.config_dir, f"{self.token}.json")

    @property
    def url(self) -> str | None:
        return self.url_for(self.token)

    def url_for(self, token: str) -> str | None:
        return None if self.http_base is None else f"{self.http_base}/t/{token}/mcp"


class _HttpFront:
    """One loopback Streamable HTTP server (uvicorn in a thread) for every trial of the hub.

    The socket listens at once (so a trial's URL is known before its agent starts, and a client
    that comes early waits in the backlog). uvicorn and the HTTP stack are imported and started in
    the server's thread only when the first client connects, and a trial's endpoint is made on its
    first request: a run whose agents speak stdio only pays for none of it, neither on its
    trials' path nor at its start and end. Its shutdown wakes uvicorn's main loop at once (uvicorn
    itself looks at ``should_exit`` every 0.1 s)."""

    def __init__(self) -> None:
        self.worlds: dict[str, TrialWorld] = {}
        self.endpoints: dict[str, Any] = {}
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(1024)
        self.base = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        self.server: Any = None
        self.loop: Any = None
        self.guard: Any = None
        self._woken: Any = None
        """An ``asyncio.Event`` of the server's loop: set to end its main loop."""
        self._lock = threading.Lock()
        self._stopping = False
        self._stop_r, self._stop_w = os.pipe()
        self.thread = threading.Thread(target=self._serve, name="harn-hub-http", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            readable, _, _ = select.select([self.socket.fileno(), self._stop_r], [], [])
        except (OSError, ValueError):  # closed under us
            return
        with self._lock:
            if self._stopping or self._stop_r in readable:
                return
        import asyncio

        import uvicorn

        from harn_mcp_mock.http.guard import GuardSettings, HttpGuard, render_jsonrpc

        self.guard = GuardSettings.for_host("127.0.0.1")
        app = HttpGuard(self._dispatch, settings=self.guard, render=render_jsonrpc)
        config = uvicorn.Config(
            app, log_level="warning", lifespan="off", ws="none", access_log=False, timeout_graceful_shutdown=1
        )
        front = self

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield  # signals are the runner's

            async def main_loop(self) -> None:
                # uvicorn's own loop sleeps 0.1 s between looks at should_exit; this one is woken
                # by the hub's shutdown, and still ticks once a second (the Date header).
                counter = 0
                while not await self.on_tick(counter):
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(front._woken.wait(), 1.0)
                    counter += 10

        async def main() -> None:
            with self._lock:
                self.loop = asyncio.get_running_loop()
                self._woken = asyncio.Event()
                self.server = Server(config)
                self.server.should_exit = self._stopping
            await self.server.serve(sockets=[self.socket])

        asyncio.run(main())

    def _endpoint(self, token: str) -> Any:
        endpoint = self.endpoints.get(token)
        world = self.worlds.get(token)
        if endpoint is None and world is not None:
            import functools

            from harn_mcp_mock.http.replay_server import StreamableHttpEndpoint

            sessions = functools.partial(world.shared.session, world.server_of(token))
            endpoint = self.endpoints[token] = StreamableHttpEndpoint(sessions, guard=self.guard)
        return endpoint

    async def _dispatch(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        parts = str(scope.get("path", "")).split("/")
        endpoint = None
        if len(parts) == 4 and parts[1] == "t" and parts[3] == "mcp":
            endpoint = self._endpoint(parts[2])
        if endpoint is None:
            body = b"no such trial (it ended, or the address is wrong)\n"
            headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 404, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await endpoint(scope, receive, send)

    def add(self, world: TrialWorld) -> None:
        for token in world.tokens:
            self.worlds[token] = world

    def remove(self, world: TrialWorld) -> None:
        for token in world.tokens:
            self.worlds.pop(token, None)
            endpoint = self.endpoints.pop(token, None)
            if endpoint is not None and self.loop is not None:
                with contextlib.suppress(RuntimeError):  # the loop already ended
                    self.loop.call_soon_threadsafe(endpoint.close)

    def shutdown(self) -> None:
        with self._lock:
            self._stopping = True
            os.write(self._stop_w, b"\0")
            if self.server is not None:
                self.server.should_exit = True
                with contextlib.suppress(RuntimeError):  # its loop already ended
                    self.loop.call_soon_threadsafe(self._woken.set)
        self.thread.join(JOIN_TIMEOUT_S)
        self.socket.close()
        os.close(self._stop_r)
        os.close(self._stop_w)


class WorldHub:
    """Serves the worlds of the trials running in this process (see the module docstring).

    ``http=False`` serves stdio only (no HTTP server, no uvicorn import)."""

    def __init__(self, *, http: bool = True) -> None:
        from harn_mcp_mock.runner.sandbox import hubs_root

        self._dir = tempfile.mkdtemp(prefix="hub-", dir=hubs_root())
        self._generation = 0
        self._retired: list[socket.socket] = []
        self._wake_r, self._wake_w = os.pipe()
        self._listener, self.socket_path, self._listener_id = self._listen("worlds.sock")
        self._lock = threading.Lock()
        self._trials: dict[str, TrialWorld] = {}
        self._stop_r, self._stop_w = os.pipe()
        self._closed = False
        self._http = _HttpFront() if http else None
        self._acceptor = threading.Thread(target=self._accept, name="harn-hub", daemon=True)
        self._acceptor.start()

    # -- trials ------------------------------------------------------------------------------

    def _listen(self, name: str) -> tuple[socket.socket, str, tuple[int, int]]:
        path = os.path.join(self._dir, name)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(256)
        info = os.lstat(path)
        return listener, path, (info.st_dev, info.st_ino)

    def _check_listener(self) -> None:
        """An agent without a sandbox may have removed or replaced the hub's socket: then the
        next trial gets a fresh one (at a fresh path) instead of a bridge that cannot connect."""
        try:
            info = os.lstat(self.socket_path)
            if (info.st_dev, info.st_ino) == self._listener_id:
                return
        except OSError:
            pass
        with self._lock:
            self._generation += 1
            self._retired.append(self._listener)
            self._listener, self.socket_path, self._listener_id = self._listen(
                f"worlds.{self._generation}.sock"
            )
        os.write(self._wake_w, b"\0")  # the acceptor takes the new listener

    def open(self, trial: Trial, spec: WorldSpec | None = None, *, tape: Path | None = None) -> TrialWorld:
        """A fresh world for ``trial`` (``spec``: its compiled spec, else loaded from the trial's
        path), its tape written to ``tape``. Close it with :meth:`close`."""
        from harn_mcp_mock.world.engine import ServerView, WorldEngine
        from harn_mcp_mock.world.spec import load_spec

        self._check_listener()

        engine = WorldEngine(
            spec if spec is not None else load_spec(trial.spec),
            task=trial.task,
            seed=trial.seed,
            run_id=trial.run_id,
            faults=None if trial.profile == NO_FAULTS else trial.profile,
        )
        writer: Any = None
        served: Any = engine
        # A world of several servers: a view of the one engine per server (its serverInfo and
        # tools), each taped under its own name onto the trial's one tape.
        servers: dict[str, Any] = {name: ServerView(engine, name) for name in engine.spec.servers}
        if tape is not None:
            from harn_mcp_mock.tape.mcp import McpTapeObserver, TapedEngine
            from harn_mcp_mock.world.run import world_tape

            writer = world_tape(engine, tape, trial.spec, sync=False)
            served = TapedEngine(engine, McpTapeObserver(writer, engine.spec.name))
            servers = {
                name: TapedEngine(view, McpTapeObserver(writer, name)) for name, view in servers.items()
            }
        stop_r, stop_w = os.pipe()
        world = TrialWorld(
            token=secrets.token_urlsafe(24),
            servers={name: secrets.token_urlsafe(24) for name in servers},
            shared=SharedWorld(engine, served, servers),
            socket_path=self.socket_path,
            http_base=None if self._http is None else self._http.base,
            config_dir=self._dir,
            tape=writer,
            stop_r=stop_r,
            stop_w=stop_w,
        )
        with self._lock:
            for token in world.tokens:
                self._trials[token] = world
        if self._http is not None:
            self._http.add(world)
        return world

    def close(self, world: TrialWorld) -> None:
        """End the trial's sessions (later ones are refused) and close its tape. The world's
        engine (``world.shared.world``) keeps the final state."""
        with self._lock:
            if world.closed:
                return
            world.closed = True
            for token in world.tokens:
                self._trials.pop(token, None)
            threads = list(world.threads)
        if self._http is not None:
            self._http.remove(world)
        with world.shared.lock:
            world.shared.closed = True
        os.write(world.stop_w, b"\0")
        for thread in threads:
            thread.join(JOIN_TIMEOUT_S)
        os.close(world.stop_r)
        os.close(world.stop_w)
        with contextlib.suppress(OSError):
            os.unlink(world.config_path)
        if world.tape is not None:
            world.tape.close()

    @contextlib.contextmanager
    def serve(
        self, trial: Trial, spec: WorldSpec | None = None, *, tape: Path | None = None
    ) -> Iterator[TrialWorld]:
        """:meth:`open` ... :meth:`close` as a ``with`` block."""
        world = self.open(trial, spec, tape=tape)
        try:
            yield world
        finally:
            self.close(world)

    # -- stdio connections -------------------------------------------------------------------

    def _accept(self) -> None:
        while True:
            listener = self._listener
            readable, _, _ = select.select([listener.fileno(), self._stop_r, self._wake_r], [], [])
            if self._stop_r in readable:
                return
            if self._wake_r in readable:  # a new listener: the old one is closed here, not under select
                os.read(self._wake_r, 64)
                with self._lock:
                    retired, self._retired = self._retired, []
                for old in retired:
                    old.close()
                continue
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(
                target=self._serve_connection, args=(conn,), name="harn-hub-conn", daemon=True
            ).start()

    def _serve_connection(self, conn: socket.socket) -> None:
        from harn_mcp_mock.jsonrpc.server import serve_stdio

        with conn:
            # The bridge hands over the client's own pipes with its token: no relay in between.
            token, fds = _read_handshake(conn)
            with self._lock:
                world = self._trials.get(token) if token and len(fds) == 2 else None
                if world is not None:
                    world.threads.append(threading.current_thread())
                    stop_r = world.stop_r
                    server = world.server_of(token or "")
            if world is None:  # an unknown or ended trial: the bridge sees the connection close
                for fd in fds:
                    os.close(fd)
                return
            conn.setblocking(True)
            try:
                serve_stdio(world.shared.session(server), stdin_fd=fds[0], stdout_fd=fds[1], stop_fd=stop_r)
            finally:
                for fd in fds:
                    os.close(fd)
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)

    # -- the end -----------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Close every trial still open, stop serving, remove the socket."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            left = list(self._trials.values())
        for world in left:
            self.close(world)
        os.write(self._stop_w, b"\0")
        self._acceptor.join(JOIN_TIMEOUT_S)
        self._listener.close()
        for old in self._retired:
            old.close()
        if self._http is not None:
            self._http.shutdown()
        import shutil

        shutil.rmtree(self._dir, ignore_errors=True)  # its socket, and what trials left (scratch)
        for fd in (self._stop_r, self._stop_w, self._wake_r, self._wake_w):
            os.close(fd)

    def __enter__(self) -> WorldHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def _read_handshake(conn: socket.socket) -> tuple[str | None, list[int]]:
    """A bridge's one message: its trial's token (the first line, bounded in size and time) and
    the client's pipes that came with it (``SCM_RIGHTS``)."""
    conn.settimeout(HANDSHAKE_TIMEOUT_S)
    try:
        data, fds, _, _ = socket.recv_fds(conn, 128, 2)
        while data and b"\n" not in data and len(data) < 128:
            more = conn.recv(128 - len(data))
            if not more:
                break
            data += more
    except OSError:
        return None, []
    line, newline, _ = data.partition(b"\n")
    return (line.decode("ascii", "replace") if newline else None), list(fds)


_PROCESS_HUB: WorldHub | None = None
_PROCESS_HUB_LOCK = threading.Lock()


def process_hub() -> WorldHub:
    """This process's hub, made on first use and shut down at exit (a Ray worker runs many
    trials: they share it)."""
    global _PROCESS_HUB
    with _PROCESS_HUB_LOCK:
        if _PROCESS_HUB is None:
            import atexit

            _PROCESS_HUB = WorldHub()
            atexit.register(_PROCESS_HUB.shutdown)
        return _PROCESS_HUB
