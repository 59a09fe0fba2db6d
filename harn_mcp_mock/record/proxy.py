"""The recording stdio proxy: client <-> proxy <-> real server, bytes forwarded unchanged.

Two pump threads copy bytes with blocking ``os.read``/``os.write``: each chunk is first handed
to the recording core (:class:`~harn_mcp_mock.session.record.RecordCore`: redacted and appended
to the journal, so whatever the other side has received is already on disk if we are killed) and then forwarded unchanged, partial lines
included, so the client sees exactly the bytes the server wrote and the other way round. The
server's stderr is inherited, so it passes straight through. The main thread waits for the
session to end, turns SIGINT/SIGTERM/SIGHUP into an orderly stop, bounds every shutdown wait,
finishes the cassette and returns the server's exit code.

How a session ends:

- the server exits or closes its stdout: its remaining output is relayed and recorded, our
  stdout is closed, and the server is reaped;
- the client closes our stdin (EOF): while the server still owes the client answers, its stdin
  stays open as long as it keeps writing (a piped client sends EOF right after its last request,
  and a server built on an MCP SDK stops at the end of its input, dropping the requests it is
  still handling: the answers would be lost, and missing from the cassette); then the server's
  stdin is closed and it gets ``grace`` seconds to exit, then SIGTERM, then SIGKILL. A server
  that wrote during those seconds is still answering (a slow start under load) and gets
  ``grace`` more, up to ``MAX_GRACES`` times: each wait ends on its output going quiet, not on
  a fixed clock;
- the client stops reading (our stdout breaks): treated like EOF;
- we get SIGINT/SIGTERM/SIGHUP: we stop as MCP clients stop a server (the signal is not
  forwarded: a Python server would print a ``KeyboardInterrupt`` traceback and keep waiting for
  its input). One line on stderr says so at once; the client's input is no longer forwarded,
  the server's stdin is closed and it gets ``grace`` seconds to exit (answering what it still
  owes), then SIGTERM, then SIGKILL. A second signal kills the server's process group at once.
  A signal that comes while the server already has its input closed (an MCP host closes stdin,
  then sends SIGTERM) sends it SIGTERM at once. Either way the cassette is finished.

A session in which the client sent no message at all leaves the cassette as it was (see
:meth:`Recorder.finish`'s ``allow_empty``).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.errors import NothingRecordedError, ServerStartError
from harn_mcp_mock.jsonrpc.frames import CLIENT, SERVER
from harn_mcp_mock.jsonrpc.framing import write_all
from harn_mcp_mock.jsonrpc.stdio import exit_status
from harn_mcp_mock.session.record import RecordCore
from harn_mcp_mock.session.recorder import Recorder
from harn_mcp_mock.shutdown import StopSignals
from harn_mcp_mock.upstream.stdio import StdioUpstream, exit_info

CHUNK = 1 << 16
MAX_GRACES = 12  # grace periods a server still writing after the client's EOF may take
TELL_AFTER = 2.0  # seconds of a busy server's silence, answers owed, before record says it waits


@dataclass(slots=True)
class RecordResult:
    exit_code: int
    """The server's exit code (128 + N when signal N ended it)."""
    cassette: Cassette
    reason: str
    counts: dict[str, int]
    """Messages recorded: ``client``, ``server`` and ``invalid``."""


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
        on_event: Callable[[str], None] | None = None,
        allow_empty: bool = False,
    ) -> None:
        self.command = list(command)
        self.recorder = recorder
        self.core = RecordCore(recorder)
        self.env = env
        self.cwd = cwd
        self.display_command = display_command
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.grace = grace
        self.handle_signals = handle_signals and threading.current_thread() is threading.main_thread()
        self.on_started = on_started
        self.on_event = on_event
        """Gets the lines for the human (on a stop signal); called in the signal handler."""
        self.allow_empty = allow_empty
        self._signals = 0
        self._stop_read, self._stop_write = os.pipe()  # readable once a stop signal arrived
        os.set_blocking(self._stop_write, False)
        self._ended = threading.Event()
        self._reason: str | None = None
        self._reason_lock = threading.Lock()
        self._server: StdioUpstream | None = None
        self._server_chunks = 0  # what the server wrote so far: its progress after the client's EOF
        self._progress = threading.Condition()  # notified on each server chunk and its output's end
        self._server_done = False
        self._holding = False  # the client's EOF came; the server's stdin is open for answers owed
        self._release = False  # a stop signal ends that wait

    def _end(self, reason: str) -> None:
        with self._reason_lock:
            if self._reason is None:
                self._reason = reason
        self._ended.set()

    # -- pumps -------------------------------------------------------------------------------

    def _client_to_server(self, server: StdioUpstream) -> None:
        server_alive = True
        watched = [self.stdin_fd, self._stop_read]
        try:
            while True:
                if self._stop_read in select.select(watched, [], [])[0]:
                    break  # stopping: what the client sends now never reaches the server
                try:
                    chunk = os.read(self.stdin_fd, CHUNK)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                self.core.from_client(chunk)  # journaled first: what the server got is on disk
                if server_alive:
                    try:
                        server.write(chunk)
                    except (BrokenPipeError, OSError):
                        server_alive = False  # the server is gone; its pump ends the session
        finally:
            self.core.end(CLIENT)
            self._end("client-eof")  # first: once the server sees EOF, the session is ending
            if self._reason != "client-eof":
                server.close_input()
            # else run() closes it, once the server answered what it owes (_await_answers)

    def _server_to_client(self, server: StdioUpstream) -> None:
        client_alive = True
        try:
            while True:
                chunk = server.read_chunk()
                if not chunk:
                    break
                self.core.from_server(chunk)  # journaled first: what the client got is on disk
                with self._progress:
                    self._server_chunks += 1
                    self._progress.notify_all()
                if client_alive:
                    try:
                        write_all(self.stdout_fd, chunk)
                    except (BrokenPipeError, OSError):
                        client_alive = False
                        self._end("client-closed-output")
        finally:
            self.core.end(SERVER)
            with self._progress:
                self._server_done = True
                self._progress.notify_all()
            self._end("server-exit")

    # -- run ---------------------------------------------------------------------------------

    def _on_signal(self, signum: int) -> None:
        server = self._server
        self._signals += 1
        if self._signals > 1:
            if server is not None:
                self._say("killing the server (SIGKILL); the cassette keeps what was recorded")
                server.signal(signal.SIGKILL)  # a second signal: stop now
            return
        again = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        if self._holding:
            self._say(
                f"stopping: no longer waiting for the server's answers; closing its input, then up to "
                f"{self.grace:g} s for it to exit ({again} again to kill it)"
            )
            with self._progress:
                self._release = True
                self._progress.notify_all()
            return
        if self._reason is not None and server is not None:
            # Already stopping (the client closed its input): whoever signals us now (an MCP host
            # does, shortly after closing stdin) will not wait out the grace period.
            self._say(
                f"stopping: the server's input is closed; sending it SIGTERM ({again} again to kill it)"
            )
            server.signal(signal.SIGTERM)
            return
        self._say(
            f"stopping: waiting up to {self.grace:g} s for the server to exit ({again} again to kill it)"
        )
        self._end(f"signal:{signal.Signals(signum).name}")
        self._stop_client_pump()

    def _await_answers(self) -> None:
        """After the client's EOF, before the server's stdin is closed: wait while the server
        owes the client answers and keeps writing (one ``grace`` of silence, ``MAX_GRACES`` in
        all, the end of its output or a stop signal ends the wait)."""
        start = time.monotonic()
        deadline = start + self.grace * MAX_GRACES
        told = self.grace <= TELL_AFTER  # the wait ends before it would be worth saying
        with self._progress:
            self._holding = True
            try:
                heard = start  # the server's last write (or the client's EOF)
                while owed := self.core.owed(CLIENT):
                    if self._server_done or self._release:
                        return
                    now = time.monotonic()
                    quiet_until = heard + self.grace
                    if now >= min(deadline, quiet_until):
                        return  # quiet for a whole grace (or too long in all): stop waiting
                    # A server that answered before and went quiet is busy: say what record waits
                    # for. (One that never wrote is starting up: a piped quickstart hears nothing.)
                    tell = not told and self._server_chunks > 0
                    until = (
                        min(deadline, quiet_until, heard + TELL_AFTER) if tell else min(deadline, quiet_until)
                    )
                    if self._progress.wait(timeout=max(until - now, 0.0)):
                        heard = time.monotonic()  # it wrote: one more grace
                    elif tell and time.monotonic() >= heard + TELL_AFTER:
                        told = True
                        self._say(
                            f"the client closed its input; keeping the server's open for the {owed} "
                            f"answer(s) it owes (Ctrl-C stops waiting)"
                        )
            finally:
                self._holding = False

    def _wait_while_answering(self, server: StdioUpstream) -> int | None:
        """After the client's EOF: wait while the server keeps writing, one ``grace`` at a time
        (up to ``MAX_GRACES``); its return code, or None once it went quiet for a whole ``grace``
        (or used them all) while still running."""
        for _ in range(MAX_GRACES):
            seen = self._server_chunks
            try:
                return server.proc.wait(timeout=self.grace)
            except subprocess.TimeoutExpired:
                if self._server_chunks == seen:
                    return None
        return None

    def _stop_client_pump(self) -> None:
        """Make the client pump stop and close the server's stdin (it alone writes there)."""
        with contextlib.suppress(OSError):
            os.write(self._stop_write, b"\0")

    def _say(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    def run(self) -> RecordResult:
        signals = contextlib.ExitStack()
        if self.handle_signals:  # before the spawn: a signal from now on is a stop, never a traceback
            signals.enter_context(StopSignals()).on_signal(self._on_signal)
        try:
            server = StdioUpstream.spawn(
                self.command, env=self.env, cwd=self.cwd, display=self.display_command
            )
        except BaseException:
            signals.close()
            raise
        self._server = server
        try:
            if self.on_started is not None:
                self.on_started(server.proc)
            c2s = threading.Thread(target=self._client_to_server, args=(server,), name="c2s", daemon=True)
            s2c = threading.Thread(target=self._server_to_client, args=(server,), name="s2c", daemon=True)
            c2s.start()
            s2c.start()
            self._ended.wait()
            reason = self._reason or "server-exit"
            if reason == "client-closed-output":
                self._stop_client_pump()  # it closes the server's stdin
            returncode = server.poll()
            if reason == "client-eof":
                if returncode is None:
                    self._await_answers()
                server.close_input()
                returncode = server.poll()
            if returncode is None and reason == "client-eof":
                returncode = self._wait_while_answering(server)
                if returncode is None:  # quiet for a whole grace and still running
                    returncode = server.stop(0)
            if returncode is None:
                returncode = server.stop(self.grace)
            # The server is gone: what it wrote before exiting is relayed and recorded, even
            # if a grandchild still holds its stdout open (then that is cut off by reap_group).
            s2c.join(timeout=self.grace)
            server.reap()
            s2c.join(timeout=self.grace)
            # Client input after this point is not part of the session.
            self._stop_client_pump()
            c2s.join(timeout=self.grace)
            if not c2s.is_alive():
                for fd in (self._stop_read, self._stop_write):
                    os.close(fd)
        except BaseException:
            server.kill()
            self.core.abandon()
            raise
        finally:
            signals.close()
        server.close_output()
        info = exit_info(returncode, reason)
        cassette = self.core.finish(dict(info), allow_empty=self.allow_empty)
        code, _ = exit_status(returncode)
        return RecordResult(code, cassette, reason, dict(self.core.counts))


def record_stdio(
    command: Sequence[str],
    recorder: Recorder,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    grace: float = 5.0,
    on_event: Callable[[str], None] | None = None,
    allow_empty: bool = False,
) -> RecordResult:
    """Proxy a stdio server between ``stdin_fd``/``stdout_fd`` and record it with ``recorder``
    (see :func:`~harn_mcp_mock.session.recorders.new_recorder`).

    A session in which the client sent no message raises
    :class:`~harn_mcp_mock.errors.NothingRecordedError` and leaves the cassette as it was,
    unless ``allow_empty``. ``on_event`` gets the lines for the human (what a stop signal does).
    """
    proxy = StdioProxy(
        command,
        recorder,
        env=env,
        cwd=cwd,
        display_command=" ".join(recorder.command),
        stdin_fd=stdin_fd,
        stdout_fd=stdout_fd,
        grace=grace,
        on_event=on_event,
        allow_empty=allow_empty,
    )
    try:
        return proxy.run()
    except (ServerStartError, NothingRecordedError):
        recorder.discard()  # nothing was recorded: leave no journal behind
        raise
    except BaseException:
        recorder.broke_off()  # a journal with client messages stays for `harn mcp mock recover`
        raise
