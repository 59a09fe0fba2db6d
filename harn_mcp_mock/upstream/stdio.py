"""A live MCP server as a child process speaking newline-delimited JSON-RPC on its stdio.

The one place that spawns, feeds, reads, stops and reaps a live stdio server: the recording
proxy pumps its file descriptors byte for byte (:meth:`StdioUpstream.write`,
:attr:`StdioUpstream.stdout_fd`), ``new_episodes`` forwards misses to it, and a live ``verify``
drives it message by message (:meth:`StdioUpstream.exchange`). Process-group handling (its
own session, the parent-death signal, SIGTERM then SIGKILL, reaping what it left behind) is in
:mod:`harn_mcp_mock.jsonrpc.stdio`.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Any

from harn_mcp_mock.errors import ServerError, ServerExited, UpstreamTimeout
from harn_mcp_mock.jsonrpc.frames import SERVER, Frame, parse_frame
from harn_mcp_mock.jsonrpc.framing import LineSplitter, write_all
from harn_mcp_mock.jsonrpc.stdio import exit_status, reap_group, signal_group, spawn_server, stop_process
from harn_mcp_mock.upstream.base import ExitInfo, Reply, answered_ids

CHUNK = 1 << 16
# How long a server whose stdin broke may take to exit before we call it alive but not reading.
EXIT_AFTER_EPIPE_S = 1.0


class StdioUpstream:
    """One live server process; build it with :meth:`spawn`."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self.stdin_fd = proc.stdin.fileno()
        self.stdout_fd = proc.stdout.fileno()
        self._lines = LineSplitter()

    @classmethod
    def spawn(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        display: str | None = None,
        stderr: int | IO[Any] | None = None,
    ) -> StdioUpstream:
        """Start ``command`` (``display``: its redacted text, for error messages; ``stderr``:
        where its stderr goes, ours by default)."""
        return cls(spawn_server(command, env=env, cwd=cwd, display=display, stderr=stderr))

    # -- bytes ---------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Write raw bytes to the server's stdin (``OSError`` once it stopped reading)."""
        write_all(self.stdin_fd, data)

    def read_chunk(self, timeout: float | None = None) -> bytes | None:
        """The next bytes the server wrote; ``b""`` at the end of its output, ``None`` when
        nothing came within ``timeout`` seconds."""
        if timeout is not None and not select.select([self.stdout_fd], [], [], timeout)[0]:
            return None
        try:
            return os.read(self.stdout_fd, CHUNK)
        except OSError:
            return b""

    def frames(self, chunk: bytes) -> list[Frame]:
        """The complete server messages in ``chunk`` (a partial line waits for the next)."""
        return [parse_frame(line, SERVER) for line in self._lines.feed(chunk)]

    # -- messages (the Upstream interface) -----------------------------------------------------

    def send(self, body: bytes, *, seq: int | None = None) -> None:
        """Send one JSON-RPC message (no newline in ``body``)."""
        try:
            self.write(body + b"\n")
        except OSError:
            # A server that exits closes its stdin a moment before it can be reaped: one that is
            # gone a second later exited, one still running only stopped reading.
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(EXIT_AFTER_EPIPE_S)
            if self.proc.returncode is not None:
                code, sig = exit_status(self.proc.returncode)
                how = f"killed by {sig}" if sig else f"exit code {code}"
                raise ServerError(f"the live server exited before answering ({how})") from None
            raise ServerError("the live server stopped reading its stdin") from None

    def exchange(
        self, body: bytes, expect: set[bytes], timeout: float, *, seq: int | None = None
    ) -> Iterator[Frame]:
        """Send ``body``, then yield every server message until each id in ``expect`` (JSON
        bytes) is answered. Raises :class:`UpstreamTimeout` after ``timeout`` s of silence and
        :class:`ServerError` when the server exits first."""
        self.send(body)
        waiting = set(expect)
        while waiting:
            chunk = self.read_chunk(timeout)
            if chunk is None:
                raise UpstreamTimeout(f"the live server did not answer within {timeout:g}s")
            if not chunk:
                raise ServerExited("the live server exited before answering")
            for frame in self.frames(chunk):
                waiting -= answered_ids(frame)
                yield frame

    def listen(self, on_frame: Callable[[Frame], list[Reply]]) -> None:
        """Nothing to open: a stdio server sends everything on its one output."""

    def close(self, grace: float, on_frame: Callable[[Frame], object] | None = None) -> ExitInfo:
        """Close the server's stdin (as an MCP client does), give it ``grace`` s to exit, then
        SIGTERM, then SIGKILL; what it wrote while exiting goes to ``on_frame``."""
        self.close_input()
        code = stop_process(self.proc, grace=grace)
        rest = b""
        with contextlib.suppress(OSError):
            assert self.proc.stdout is not None
            rest = self.proc.stdout.read() or b""
        for frame in self.frames(rest):
            if on_frame is not None:
                on_frame(frame)
        tail = self._lines.flush()
        if tail is not None and on_frame is not None:
            on_frame(parse_frame(tail, SERVER))
        self.close_output()
        reap_group(self.proc)
        return exit_info(code, "client-eof")

    # -- the process ---------------------------------------------------------------------------

    def close_input(self) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()

    def close_output(self) -> None:
        assert self.proc.stdout is not None
        with contextlib.suppress(OSError):
            self.proc.stdout.close()

    def poll(self) -> int | None:
        return self.proc.poll()

    def stop(self, grace: float) -> int:
        """Wait up to ``grace`` s for an exit, then SIGTERM, then SIGKILL; the return code."""
        return stop_process(self.proc, grace=grace)

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the server's process group."""
        signal_group(self.proc, sig)

    def kill(self) -> None:
        """SIGKILL the process group and wait (after an error: no orphan, no zombie)."""
        signal_group(self.proc, signal.SIGKILL)
        self.proc.wait()

    def reap(self) -> None:
        """Stop whatever the exited server left running in its process group."""
        reap_group(self.proc)


def exit_info(returncode: int, reason: str) -> ExitInfo:
    """The cassette's ``exit`` record for a Popen return code."""
    _, signame = exit_status(returncode)
    return {"code": returncode if returncode >= 0 else None, "signal": signame, "reason": reason}
