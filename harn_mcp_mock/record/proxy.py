"""The recording stdio proxy: client <-> proxy <-> real server, bytes forwarded unchanged.

Two pump threads copy bytes with blocking ``os.read``/``os.write``: each chunk is first handed
to the :class:`Recorder` (redacted and appended to the journal, so whatever the other side has
received is already on disk if we are killed) and then forwarded unchanged, partial lines
included, so the client sees exactly the bytes the server wrote and the other way round. The
server's stderr is inherited, so it passes straight through. The main thread waits for the
session to end, forwards SIGINT/SIGTERM/SIGHUP to the server, bounds every shutdown wait,
finishes the cassette and returns the server's exit code.

How a session ends:

- the server exits or closes its stdout: its remaining output is relayed and recorded, our
  stdout is closed, and the server is reaped;
- the client closes our stdin (EOF): the server's stdin is closed and it gets ``grace``
  seconds to exit, then SIGTERM, then SIGKILL;
- the client stops reading (our stdout breaks): treated like EOF;
- we get SIGINT/SIGTERM/SIGHUP: the signal goes to the server, which gets ``grace`` seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.clock import SYSTEM_CLOCK, Clock
from harn_mcp_mock.errors import ServerStartError
from harn_mcp_mock.jsonrpc.frames import CLIENT, SERVER
from harn_mcp_mock.jsonrpc.stdio import exit_status, reap_group, signal_group, spawn_server, stop_process
from harn_mcp_mock.record.recorder import MessageRedactor, Recorder

CHUNK = 1 << 16
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass(slots=True)
class RecordResult:
    exit_code: int
    """The server's exit code (128 + N when signal N ended it)."""
    cassette: Cassette
    reason: str
    counts: dict[str, int]
    """Messages recorded: ``client``, ``server`` and ``invalid``."""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class StdioProxy:
    """One recording session; build it, then :meth:`run` it (blocking)."""

    def __init__(
        self,
        command: Sequence[str],
        recorder: Recorder,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        display_command: str | None = None,
        stdin_fd: int = 0,
        stdout_fd: int = 1,
        grace: float = 5.0,
        handle_signals: bool = True,
        on_started: Callable[[subprocess.Popen[bytes]], None] | None = None,
    ) -> None:
        self.command = list(command)
        self.recorder = recorder
        self.env = env
        self.cwd = cwd
        self.display_command = display_command
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.grace = grace
        self.handle_signals = handle_signals and threading.current_thread() is threading.main_thread()
        self.on_started = on_started
        self._ended = threading.Event()
        self._reason: str | None = None
        self._reason_lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    def _end(self, reason: str) -> None:
        with self._reason_lock:
            if self._reason is None:
                self._reason = reason
        self._ended.set()

    # -- pumps -------------------------------------------------------------------------------

    def _client_to_server(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None
        server_in = proc.stdin.fileno()
        server_alive = True
        try:
            while True:
                try:
                    chunk = os.read(self.stdin_fd, CHUNK)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                self.recorder.feed(CLIENT, chunk)  # journaled first: what the server got is on disk
                if server_alive:
                    try:
                        _write_all(server_in, chunk)
                    except (BrokenPipeError, OSError):
                        server_alive = False  # the server is gone; its pump ends the session
        finally:
            self.recorder.end_of_stream(CLIENT)
            with contextlib.suppress(OSError):
                proc.stdin.close()
            self._end("client-eof")

    def _server_to_client(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        server_out = proc.stdout.fileno()
        client_alive = True
        try:
            while True:
                try:
                    chunk = os.read(server_out, CHUNK)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                self.recorder.feed(SERVER, chunk)  # journaled first: what the client got is on disk
                if client_alive:
                    try:
                        _write_all(self.stdout_fd, chunk)
                    except (BrokenPipeError, OSError):
                        client_alive = False
                        self._end("client-closed-output")
        finally:
            self.recorder.end_of_stream(SERVER)
            self._end("server-exit")

    # -- run ---------------------------------------------------------------------------------

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        proc = self._proc
        if proc is None:
            return
        if self._reason is not None and self._reason.startswith("signal:"):
            signal_group(proc, signal.SIGKILL)  # a second signal: stop now
            return
        signal_group(proc, signum)
        self._end(f"signal:{signal.Signals(signum).name}")

    def run(self) -> RecordResult:
        proc = spawn_server(self.command, env=self.env, cwd=self.cwd, display=self.display_command)
        self._proc = proc
        previous: dict[int, Any] = {}
        if self.handle_signals:
            for sig in FORWARDED_SIGNALS:
                previous[sig] = signal.signal(sig, self._on_signal)
        try:
            if self.on_started is not None:
                self.on_started(proc)
            c2s = threading.Thread(target=self._client_to_server, args=(proc,), name="c2s", daemon=True)
            s2c = threading.Thread(target=self._server_to_client, args=(proc,), name="s2c", daemon=True)
            c2s.start()
            s2c.start()
            self._ended.wait()
            reason = self._reason or "server-exit"
            if reason == "client-closed-output" and proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            returncode = proc.poll()
            if returncode is None:
                returncode = stop_process(proc, grace=self.grace)
            # The server is gone: what it wrote before exiting is relayed and recorded, even
            # if a grandchild still holds its stdout open (then that is cut off by reap_group).
            s2c.join(timeout=self.grace)
            reap_group(proc)
            s2c.join(timeout=self.grace)
        except BaseException:
            signal_group(proc, signal.SIGKILL)
            proc.wait()
            self.recorder.abandon()
            raise
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        if proc.stdout is not None:
            with contextlib.suppress(OSError):
                proc.stdout.close()
        code, signame = exit_status(returncode)
        exit_info = {"code": returncode if returncode >= 0 else None, "signal": signame, "reason": reason}
        cassette = self.recorder.finish(exit_info)
        return RecordResult(code, cassette, reason, dict(self.recorder.counts))


def record_stdio(
    command: Sequence[str],
    cassette: str | Path,
    redactor: MessageRedactor,
    *,
    redacted_command: list[str],
    policy_name: str,
    policy_digest: str,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    clock: Clock = SYSTEM_CLOCK,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    grace: float = 5.0,
    observer: Any = None,
) -> RecordResult:
    """Proxy a stdio server between ``stdin_fd``/``stdout_fd`` and record it into ``cassette``."""
    recorder = Recorder(
        cassette,
        redactor,
        command=redacted_command,
        policy_name=policy_name,
        policy_digest=policy_digest,
        clock=clock,
        observer=observer,
    )
    proxy = StdioProxy(
        command,
        recorder,
        env=env,
        cwd=cwd,
        display_command=" ".join(redacted_command),
        stdin_fd=stdin_fd,
        stdout_fd=stdout_fd,
        grace=grace,
    )
    try:
        return proxy.run()
    except ServerStartError:
        recorder.discard()  # nothing was recorded: leave no journal behind
        raise
    except BaseException:
        recorder.abandon()  # the journal stays for `harn mcp mock recover`
        raise
