"""Serving an ASGI app: :class:`HttpServer` (uvicorn on a socket that already listens, stopped
from any thread or by a stop signal) and the small ASGI helpers the HTTP endpoints share (read a
request body, watch for a disconnect, send a plain or JSON response).

The replay/world endpoint (:mod:`~harn_mcp_mock.http.replay_server`), the recording reverse
proxy (:mod:`~harn_mcp_mock.http.record_proxy`) and the agents protocol's server all run on it.
uvicorn is imported by :meth:`HttpServer.run`, never at import time.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any, Literal

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.http.guard import is_loopback

if TYPE_CHECKING:
    from harn_mcp_mock.shutdown import StopSignals

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

JSON = b"application/json"


# --- ASGI helpers ----------------------------------------------------------------------------


async def watch_disconnect(receive: Receive, scope: Any) -> None:
    """Cancel ``scope`` when the client disconnects (run it in the task group serving a stream)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return


async def read_body(receive: Receive) -> bytes:
    """The whole request body (what arrived, if the client disconnected mid-way)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def send_plain(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-length", b"%d" % len(body)), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def send_json(send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]]) -> None:
    await send_plain(send, status, body, [(b"content-type", JSON), *extra])


# --- running an app --------------------------------------------------------------------------


def print_url(url: str) -> None:
    """The default ``on_ready``: the URL as one line on stdout (the first line, for scripts)."""
    sys.stdout.write(url + "\n")
    sys.stdout.flush()


class HttpServer:
    """An ASGI app on a listening socket, run by uvicorn. ``stop()`` may be called from any thread."""

    def __init__(
        self,
        app: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/mcp",
        allow_remote: bool = False,
        lifespan: Literal["on", "off"] = "off",
        on_shutdown: Callable[[], None] | None = None,
    ) -> None:
        if not allow_remote and not is_loopback(host):
            raise UsageError(
                f"refusing to listen on {host!r}: only loopback by default (pass --allow-remote to bind elsewhere)",
                where="--host",
            )
        if not 0 <= port <= 65535:  # bind() would raise OverflowError, not OSError
            raise UsageError(f"{port} is not a TCP port (0 to 65535; 0 picks a free one)", where="--port")
        self.app = app
        self.lifespan = lifespan
        self.on_shutdown = on_shutdown
        """Called on the server's loop when it starts shutting down: end open streams there, so
        the graceful shutdown does not wait for them (and then cancel them)."""
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        # proto IPPROTO_TCP (not 0): asyncio sets TCP_NODELAY only on sockets that say TCP, and
        # without it a response's headers and body (two writes) wait out a delayed ACK (~40 ms).
        self.socket = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind((host.strip("[]"), port))
        except OSError as exc:
            self.socket.close()
            raise UsageError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}", where="--port"
            ) from exc
        self.socket.listen(1024)
        bound_host, bound_port = self.socket.getsockname()[:2]
        shown = f"[{bound_host}]" if family == socket.AF_INET6 else bound_host
        self.url = f"http://{shown}:{bound_port}{path}"
        self._server: Any = None
        self._stop_requested = False
        self.stopped_by: int | None = None
        """The stop signal (SIGINT, SIGTERM, SIGHUP) that ended :meth:`run`, if one did."""

    def run(
        self, on_ready: Callable[[str], None] | None = print_url, *, stop: StopSignals | None = None
    ) -> None:
        """Serve until :meth:`stop` or a stop signal (in the main thread). ``on_ready(url)`` first.

        The socket is already listening, so a client that connects right after ``on_ready``
        waits in the backlog rather than being refused. A stop signal (caught by ``stop``, or by
        a :class:`~harn_mcp_mock.shutdown.StopSignals` of its own) ends the serving gracefully and
        returns (see :attr:`stopped_by`); a second SIGINT cuts the graceful wait short. Nothing
        is raised and no signal is re-raised: the caller writes its report or cassette.
        """
        import asyncio

        import uvicorn

        from harn_mcp_mock.shutdown import StopSignals

        config = uvicorn.Config(
            self.app,
            log_level="warning",
            lifespan=self.lifespan,
            ws="none",
            access_log=False,
            timeout_graceful_shutdown=2,
        )
        on_shutdown = self.on_shutdown

        class Server(uvicorn.Server):
            async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
                if on_shutdown is not None:
                    on_shutdown()
                await super().shutdown(sockets)

            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield  # the stop signals are StopSignals' (uvicorn's would re-raise them at exit)

        server = self._server = Server(config)
        if self._stop_requested:
            server.should_exit = True

        def on_signal(signum: int) -> None:
            if server.should_exit and signum == signal.SIGINT:
                server.force_exit = True  # a second Ctrl-C: do not wait for open requests
            server.should_exit = True

        with contextlib.ExitStack() as stack:
            stopper = stop if stop is not None else stack.enter_context(StopSignals())
            stopper.on_signal(on_signal)
            if stopper.signum is not None:
                server.should_exit = True  # it came while we were starting
            if on_ready is not None:
                on_ready(self.url)
            try:
                asyncio.run(server.serve(sockets=[self.socket]))
            finally:
                self.socket.close()
                self.stopped_by = stopper.signum

    def stop(self) -> None:
        self._stop_requested = True
        if self._server is not None:
            self._server.should_exit = True
