"""Any :class:`~harn_mcp_mock.upstream.base.Upstream` seen as a stdio server's output: one
stream of lines on a pipe, read with ``select`` like a child's stdout.

``new_episodes`` drives its live server that way (write a line, read lines when the pipe turns
readable), so a Streamable HTTP server (``--url``) plugs in where a child process does: each
forwarded request is exchanged in a thread of its own and every message of its answer (JSON
body or SSE stream) is written to the pipe as it arrives; the session's standalone GET stream
is written there too. A request the live server could not answer (unreachable, timed out)
gets a JSON-RPC error on the pipe, so the client is answered and the session goes on.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from typing import Any

import orjson

from harn_mcp_mock import deepjson
from harn_mcp_mock.errors import HarnError
from harn_mcp_mock.jsonrpc.codes import INTERNAL_ERROR
from harn_mcp_mock.jsonrpc.frames import SERVER, Frame, parse_frame
from harn_mcp_mock.jsonrpc.framing import LineSplitter, write_all
from harn_mcp_mock.upstream.base import ExitInfo, Reply, Upstream

CHUNK = 1 << 16


class LineUpstream:
    """``upstream`` behind the part of :class:`~harn_mcp_mock.upstream.stdio.StdioUpstream`'s
    interface a line-driven session uses (``send``, ``exchange``, ``stdout_fd``,
    ``read_chunk``, ``frames``, ``close_input``, ``stop``, ``close_output``, ``reap``, ``kill``)."""

    def __init__(self, upstream: Upstream, *, timeout: float = 30.0) -> None:
        self.upstream = upstream
        self.timeout = timeout
        self.stdout_fd, self._write_fd = os.pipe()
        self._lines = LineSplitter()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._closed = False
        self.exit: ExitInfo | None = None

    # -- the live server's side ----------------------------------------------------------------

    def _emit(self, data: bytes) -> None:
        with self._lock:
            if not self._closed:
                with contextlib.suppress(OSError):
                    write_all(self._write_fd, data + b"\n")

    def _exchange(self, body: bytes, msg_id: Any) -> None:
        try:
            for frame in self.upstream.exchange(body, {orjson.dumps(msg_id)}, self.timeout):
                self._emit(frame.raw)
        except HarnError as exc:
            error = {"code": INTERNAL_ERROR, "message": f"the live server did not answer: {exc.message}"}
            self._emit(deepjson.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error}))

    def _on_get(self, frame: Frame) -> list[Reply]:
        self._emit(frame.raw)
        return []

    # -- what the session calls ----------------------------------------------------------------

    def send(self, body: bytes, *, seq: int | None = None) -> None:
        """A request is exchanged in its own thread (its answer comes out on the pipe); anything
        else (a notification, an answer to the server's request) is sent as it is."""
        obj = orjson.loads(body)
        if isinstance(obj, dict) and isinstance(obj.get("method"), str) and "id" in obj:
            thread = threading.Thread(target=self._exchange, args=(body, obj["id"]), daemon=True)
            self._threads.append(thread)
            thread.start()
            return
        self.upstream.send(body, seq=seq)
        if isinstance(obj, dict) and obj.get("method") == "notifications/initialized":
            self.upstream.listen(self._on_get)  # the session is set up: its GET stream too

    def exchange(self, body: bytes, expect: set[bytes], timeout: float, *, seq: int | None = None) -> Any:
        """The upstream's own exchange (the handshake, answered before anything else)."""
        return self.upstream.exchange(body, expect, timeout, seq=seq)

    def read_chunk(self, timeout: float | None = None) -> bytes | None:
        """The next bytes on the pipe; ``b""`` once closed, ``None`` when nothing came in ``timeout`` s."""
        if timeout is not None and not select.select([self.stdout_fd], [], [], timeout)[0]:
            return None
        try:
            return os.read(self.stdout_fd, CHUNK)
        except OSError:
            return b""

    def frames(self, chunk: bytes) -> list[Frame]:
        return [parse_frame(line, SERVER) for line in self._lines.feed(chunk)]

    def close_input(self) -> None:
        """End the live session (``DELETE``) once the requests in flight are answered; the pipe
        then ends, as a child's stdout does when it exits."""
        for thread in self._threads:
            thread.join(self.timeout)
        try:
            self.exit = self.upstream.close(self.timeout, lambda frame: self._emit(frame.raw))
        except HarnError:
            self.exit = {"code": None, "signal": None, "reason": "client-eof"}
        with self._lock:
            self._closed = True
            with contextlib.suppress(OSError):
                os.close(self._write_fd)

    def stop(self, grace: float) -> int:
        return 0  # no process of ours: ending the session was close_input's

    def close_output(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.stdout_fd)

    def reap(self) -> None:
        """Nothing left running: the threads ended with their exchanges."""

    def kill(self) -> None:
        """After an error: drop the live session without waiting."""
        abort = getattr(self.upstream, "abort", None)
        if abort is not None:
            abort()
        with self._lock:
            self._closed = True
            with contextlib.suppress(OSError):
                os.close(self._write_fd)
