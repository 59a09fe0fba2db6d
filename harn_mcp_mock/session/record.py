"""Recording as an engine: one core every recorder drives, and the engine over any Upstream.

:class:`RecordCore` is what a recording is, with no I/O (as the replay engine's ``receive``
has none): what each side said goes through it into the
:class:`~harn_mcp_mock.session.recorder.Recorder` (redacted, paired by id, journaled), as raw
bytes where the transport forwards bytes (the stdio proxy: partial lines and non-JSON lines
kept as they came) or as frames where it frames messages itself (the HTTP endpoint, the
Python API's SDK streams). Whoever serves the client drives it:

- the stdio proxy (:mod:`harn_mcp_mock.record.proxy`) pumps bytes both ways in two threads,
  feeding the core before each chunk is forwarded: byte-faithful and concurrent (the server's
  own requests, interleaving);
- :class:`RecordEngine` is an :class:`~harn_mcp_mock.jsonrpc.server.Engine`
  (``receive(message) -> list[Out]``) over any :class:`~harn_mcp_mock.upstream.Upstream` (a
  stdio child, a Streamable HTTP server), for a transport that serves engines (``replay --http``
  in the modes that record); what the live server says unprompted (HTTP's GET stream) comes in
  on its push side, :meth:`RecordEngine.push`, and goes out with the next answer;
- the Python API's ``RecordTransport`` feeds the core the frames the SDK's streams carry.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from harn_mcp_mock import deepjson
from harn_mcp_mock.errors import NothingRecordedError, ServerError, ServerExited, UpstreamTimeout
from harn_mcp_mock.jsonrpc.codes import INTERNAL_ERROR
from harn_mcp_mock.jsonrpc.frames import CLIENT, SERVER, Frame, parse_frame
from harn_mcp_mock.jsonrpc.server import Out
from harn_mcp_mock.upstream.base import Reply, answered_ids, request_ids

if TYPE_CHECKING:
    from harn_mcp_mock.cassette.model import Cassette
    from harn_mcp_mock.session.recorder import MessageRedactor, Recorder
    from harn_mcp_mock.upstream.base import ExitInfo, Upstream


class RecordCore:
    """One recording: each side's bytes or frames in, the cassette out (:meth:`finish`). No I/O
    but the recorder's journal; thread-safe (the recorder locks)."""

    __slots__ = ("recorder",)

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    # -- what each side said ---------------------------------------------------------------

    def from_client(self, chunk: bytes) -> None:
        """Bytes the client sent, as they came (call it before forwarding them: whatever the
        server received is on disk if we are killed)."""
        self.recorder.feed(CLIENT, chunk)

    def from_server(self, chunk: bytes) -> None:
        """Bytes the server sent, as they came (before forwarding them to the client)."""
        self.recorder.feed(SERVER, chunk)

    def end(self, direction: str) -> None:
        """The ``direction`` side's stream closed: its unterminated last line is recorded."""
        self.recorder.end_of_stream(direction)

    def frame(self, frame: Frame) -> None:
        """One message already framed by the transport (its ``direction`` says who sent it)."""
        self.recorder.feed_frame(frame)

    def owed(self, direction: str = CLIENT) -> int:
        """How many requests ``direction`` sent are still waiting for their answer."""
        return self.recorder.awaiting(direction)

    # -- facts for the transports ------------------------------------------------------------

    @property
    def command(self) -> list[str]:
        """The live server's command line as recorded (redacted)."""
        return self.recorder.command

    @property
    def redactor(self) -> MessageRedactor:
        return self.recorder.redactor

    @property
    def counts(self) -> dict[str, int]:
        return self.recorder.counts

    @property
    def server_lines(self) -> int:
        return self.recorder.server_lines

    # -- the end -----------------------------------------------------------------------------

    def finish(
        self, exit_info: dict[str, Any], extra: dict[str, Any] | None = None, *, allow_empty: bool = True
    ) -> Cassette:
        """Write the cassette (see :meth:`Recorder.finish`)."""
        return self.recorder.finish(exit_info, extra, allow_empty=allow_empty)

    def discard(self) -> None:
        """Nothing worth keeping was recorded: no journal, no cassette."""
        self.recorder.discard()

    def broke_off(self) -> None:
        """Ended without :meth:`finish`: the journal stays for ``recover`` if the client spoke."""
        self.recorder.broke_off()

    def abandon(self) -> None:
        """Close the journal without finishing it (kept for ``recover``)."""
        self.recorder.abandon()


def failed(waiting: set[bytes], why: Exception) -> list[Out]:
    """A JSON-RPC error for each request the live server will not answer now (it exited or
    went silent), so the client is told at once rather than left waiting; ``waiting`` empties."""
    outs = []
    for key in sorted(waiting):
        error = {"code": INTERNAL_ERROR, "message": f"the live server did not answer: {why}"}
        outs.append(Out({"jsonrpc": "2.0", "id": orjson.loads(key), "error": error}))
    waiting.clear()
    return outs


class RecordEngine:
    """Records one session of a live server while a client talks to it through an engine host.

    Each client message is recorded and sent to ``upstream``; what the live server says back
    (up to the answers owed, or a request of its own: sampling, elicitation, roots) is recorded
    and returned. The exchanges the server paused by asking the client something go on once
    the client's answer comes, in a later :meth:`receive`. The live server is waited for on the
    caller's thread (up to ``timeout`` s of silence): one request at a time, for tests."""

    def __init__(self, core: RecordCore, upstream: Upstream, *, timeout: float = 30.0) -> None:
        self.core = core
        self.upstream = upstream
        self.timeout = timeout
        self.waiting: set[bytes] = set()
        """The ids (JSON bytes) of the client's requests the live server has not answered."""
        self.cassette: Cassette | None = None
        """The cassette written, once :meth:`finish` ran."""
        self.nothing: NothingRecordedError | None = None
        """Why :meth:`finish` wrote no cassette (the server said nothing before it failed)."""
        self._exchanges: list[tuple[Iterator[Frame], set[bytes]]] = []
        """Exchanges under way, the newest last: each one's frames and the ids it still awaits."""
        self._pushed: deque[Out] = deque()
        self._push_lock = threading.Lock()
        self._finished = False
        self._asked: set[str] = set()
        """The methods of the client requests forwarded so far."""

    @property
    def recorder(self) -> Recorder:
        return self.core.recorder

    @property
    def only_probed(self) -> bool:
        """Nothing but ``server/discover`` was asked yet and the recording goes on: a 2026-07-28
        client whose probe a handshake-era server refused sends its ``initialize`` next, in an
        HTTP session of its own, but over stdio that is the same session (one child process)."""
        return not self._finished and self._asked <= {"server/discover"}

    def receive(self, message: Any) -> list[Out]:
        data = deepjson.dumps(message)
        frame = parse_frame(data, CLIENT)
        seq = sum(self.core.counts.values())  # the seq the recorder gives it (HTTP notes it)
        self.core.frame(frame)
        expect = request_ids(frame)
        if frame.kind == "request":
            self._asked.add(str(frame.method))
        self.waiting |= expect
        frames = self.upstream.exchange(data, expect, self.timeout, seq=seq)
        self._exchanges.append((frames, set(expect)))
        return self._drain() + self._drive()

    def push(self, frame: Frame) -> list[Reply]:
        """What the live server sent outside any exchange (the push side: HTTP's GET stream):
        recorded, and sent to the client with the next answer. Called from the upstream's
        listening thread; nothing is answered back from here."""
        self.core.frame(frame)
        if frame.is_message:
            with self._push_lock:
                self._pushed.append(Out(frame.obj))
        return []

    def _drain(self) -> list[Out]:
        with self._push_lock:
            outs = list(self._pushed)
            self._pushed.clear()
        return outs

    def _drive(self) -> list[Out]:
        """Read the newest exchange under way until every answer owed came or the server asks
        the client something (then the client's answer, a later :meth:`receive`, goes on)."""
        outs: list[Out] = []
        try:
            while self._exchanges:
                frames, _expect = self._exchanges[-1]
                try:
                    frame = next(frames)
                except StopIteration:
                    self._exchanges.pop()
                    continue
                self.core.frame(frame)
                answered = answered_ids(frame)
                self.waiting -= answered
                for _frames, expect in self._exchanges:
                    expect -= answered
                for done, expect in self._exchanges[:-1]:
                    if not expect:  # answered on a newer exchange's stream (one stdout)
                        _close(done)
                self._exchanges = [(f, e) for f, e in self._exchanges if e or f is frames]
                if frame.is_message:
                    outs.append(Out(frame.obj))
                if frame.kind == "request":
                    break
            self.upstream.listen(self.push)  # once its session is set up (a no-op over stdio)
        except (ServerError, UpstreamTimeout) as exc:
            why = (
                ServerError("the live server exited while recording")
                if isinstance(exc, ServerExited)
                else exc
            )
            self._close_exchanges()
            outs += failed(self.waiting, why)  # the recording keeps them as unanswered
        return outs

    def _close_exchanges(self) -> None:
        for frames, _expect in self._exchanges:
            _close(frames)
        self._exchanges.clear()

    def finish(self, *, allow_empty: bool = False) -> Cassette | None:
        """End the live session (what the server still says is recorded) and write the
        cassette; None (and :attr:`nothing` says why) when the recording kept the old one."""
        if self._finished:
            return self.cassette
        self._finished = True
        self._close_exchanges()
        info: ExitInfo = self.upstream.close(self.timeout, self.core.frame)
        http: list[dict[str, Any]] = getattr(self.upstream, "http", None) or []  # HTTP's own facts
        try:
            self.cassette = self.core.finish(
                dict(info), {"http": http} if http else None, allow_empty=allow_empty
            )
        except NothingRecordedError as exc:  # raised here it would end in uvicorn's traceback
            self.nothing = exc
        return self.cassette

    def abort(self) -> None:
        """Stop the live server at once and keep the journal for ``recover``."""
        stop = getattr(self.upstream, "kill", None) or getattr(self.upstream, "abort", None)
        if callable(stop):
            stop()
        self._close_exchanges()
        self.core.broke_off()


def _close(frames: Iterator[Frame]) -> None:
    """End an exchange's generator (an HTTP answer's stream is closed with it)."""
    close = getattr(frames, "close", None)
    if callable(close):
        close()
