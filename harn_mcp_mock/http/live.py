"""Engines that reach a live server, for ``replay --http`` in the modes that record.

The HTTP endpoint serves any :class:`~harn_mcp_mock.jsonrpc.server.Engine`; these two forward
what they must to a live server and give back, for each client message, the messages the live
server sent for it, up to its answer or to a request of its own (sampling, elicitation, roots):
the endpoint then pauses that stream until the client's answer comes in a later POST, and the
rest follows on the same stream, as with a replayed server request.

* :class:`EpisodesEngine` (``new_episodes``): the replay answers what the cassette holds; the
  rest goes through :class:`~harn_mcp_mock.replay.episodes.NewEpisodes` (the live server after
  ``--`` or at ``--url``) and is appended to the cassette when the session ends.
* :class:`RecordEngine` (``once`` without a cassette, ``all``, with the server after ``--``):
  every message goes to a child process and into a :class:`~harn_mcp_mock.record.recorder.Recorder`,
  redacted, as ``record`` does. With ``--url`` the recording reverse proxy does this instead
  (:func:`~harn_mcp_mock.http.record_proxy.record_http`), keeping HTTP's own facts too.

The live server is waited for on the endpoint's loop (up to ``timeout`` s of silence), so a
session that records serves one request at a time: these are for tests, not for load.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from harn_mcp_mock import deepjson
from harn_mcp_mock.errors import NothingRecordedError, ServerError, UpstreamTimeout
from harn_mcp_mock.jsonrpc.codes import INTERNAL_ERROR
from harn_mcp_mock.jsonrpc.frames import CLIENT, parse_frame
from harn_mcp_mock.jsonrpc.server import Out

if TYPE_CHECKING:
    from harn_mcp_mock.cassette.model import Cassette
    from harn_mcp_mock.record.recorder import Recorder
    from harn_mcp_mock.replay.engine import ReplayReport
    from harn_mcp_mock.replay.episodes import NewEpisodes
    from harn_mcp_mock.upstream.stdio import StdioUpstream


def _is_server_request(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("method"), str) and "id" in obj


def _outs(lines: Sequence[bytes]) -> Iterator[Out]:
    for line in lines:
        try:
            yield Out(orjson.loads(line))
        except orjson.JSONDecodeError:
            continue  # a live server's non-JSON line: nothing an HTTP client could take


def _failed(waiting: set[bytes], why: Exception) -> list[Out]:
    """A JSON-RPC error for each request the live server will not answer now (it exited or
    went silent), so the client is told at once rather than left waiting; ``waiting`` empties."""
    outs = []
    for key in sorted(waiting):
        error = {"code": INTERNAL_ERROR, "message": f"the live server did not answer: {why}"}
        outs.append(Out({"jsonrpc": "2.0", "id": orjson.loads(key), "error": error}))
    waiting.clear()
    return outs


class EpisodesEngine:
    """``new_episodes`` over HTTP: one :class:`NewEpisodes` session per HTTP session."""

    def __init__(self, session: NewEpisodes, *, timeout: float = 30.0) -> None:
        self.session = session
        self.timeout = timeout

    @property
    def cassette(self) -> Cassette:
        """The replayed cassette (the endpoint reads its recorded HTTP facts)."""
        return self.session.engine.cassette

    def receive(self, message: Any) -> list[Out]:
        try:
            lines = self.session.from_client(deepjson.dumps(message))
        except ServerError as exc:  # the live server could not be started or set up
            is_request = _is_server_request(message)  # (a client request has the same shape)
            return _failed({orjson.dumps(message["id"])} if is_request else set(), exc)
        return list(_outs(lines)) + self._pull()

    def _pull(self) -> list[Out]:
        """What the live server sends until the forwarded requests are answered, or it asks
        the client something (then the client's answer, a later :meth:`receive`, goes on)."""
        session = self.session
        outs: list[Out] = []
        try:
            while session.waiting and session.live is not None:
                chunk = session.live.read_chunk(self.timeout)
                if chunk is None:
                    raise UpstreamTimeout(f"the live server did not answer within {self.timeout:g}s")
                batch = list(_outs(session.from_live(chunk)))
                outs += batch
                if any(_is_server_request(out.message) for out in batch):
                    break
        except (ServerError, UpstreamTimeout) as exc:
            outs += _failed(session.waiting, exc)
        return outs

    def finish(self) -> ReplayReport:
        """Stop the live server and append what it recorded (see :meth:`NewEpisodes.finish`)."""
        return self.session.finish()

    def abort(self) -> None:
        self.session.abort()


class RecordEngine:
    """Records one session of the stdio server ``command`` while an HTTP client talks to it."""

    def __init__(self, command: Sequence[str], recorder: Recorder, *, timeout: float = 30.0) -> None:
        from harn_mcp_mock.upstream.stdio import StdioUpstream

        self.recorder = recorder
        self.timeout = timeout
        self.live: StdioUpstream = StdioUpstream.spawn(command, display=" ".join(recorder.command))
        self.waiting: set[bytes] = set()
        self.cassette: Cassette | None = None
        """The cassette written, once :meth:`finish` ran."""
        self.nothing: NothingRecordedError | None = None
        """Why :meth:`finish` wrote no cassette (the server said nothing before it failed)."""
        self._finished = False
        self._asked: set[str] = set()
        """The methods of the client requests forwarded so far."""

    @property
    def only_probed(self) -> bool:
        """Nothing but ``server/discover`` was asked yet and the recording goes on: a 2026-07-28
        client whose probe a handshake-era server refused sends its ``initialize`` next, in an
        HTTP session of its own, but over stdio that is the same session (one child process)."""
        return not self._finished and self._asked <= {"server/discover"}

    def receive(self, message: Any) -> list[Out]:
        data = deepjson.dumps(message)
        frame = parse_frame(data, CLIENT)
        self.recorder.feed_frame(frame)
        if frame.kind == "request":
            self.waiting.add(orjson.dumps(frame.id))
            self._asked.add(str(frame.method))
        try:
            self.live.send(data)
        except ServerError as exc:
            return _failed(self.waiting, exc)
        return self._pull()

    def _pull(self) -> list[Out]:
        outs: list[Out] = []
        try:
            while self.waiting:
                chunk = self.live.read_chunk(self.timeout)
                if chunk is None:
                    raise UpstreamTimeout(f"the live server did not answer within {self.timeout:g}s")
                if not chunk:
                    raise ServerError("the live server exited while recording")
                asks = False
                for frame in self.live.frames(chunk):
                    self.recorder.feed_frame(frame)
                    if frame.kind in ("response", "error"):
                        self.waiting.discard(orjson.dumps(frame.id))
                    if frame.is_message:
                        outs.append(Out(frame.obj))
                    asks = asks or frame.kind == "request"
                if asks:
                    break
        except (ServerError, UpstreamTimeout) as exc:
            outs += _failed(self.waiting, exc)  # the recording keeps them as unanswered
        return outs

    def finish(self, *, allow_empty: bool = False) -> Cassette | None:
        """Close the server's input, let it exit (what it still says is recorded) and write the
        cassette; None (and :attr:`nothing` says why) when the recording kept the old one."""
        if self._finished:
            return self.cassette
        self._finished = True
        info = self.live.close(self.timeout, self.recorder.feed_frame)
        try:
            self.cassette = self.recorder.finish(dict(info), allow_empty=allow_empty)
        except NothingRecordedError as exc:  # raised here it would end in uvicorn's traceback
            self.nothing = exc
        return self.cassette

    def abort(self) -> None:
        self.live.kill()
        self.recorder.broke_off()


def record_engine(
    command: Sequence[str], cassette: str | Path, policy_path: str | Path | None
) -> RecordEngine:
    """A :class:`RecordEngine` for ``command`` recording into ``cassette`` under the redaction policy."""
    from harn_mcp_mock.record.session import command_recorder, load_policy

    recorder, _shown = command_recorder(command, cassette, load_policy(policy_path))
    try:
        return RecordEngine(command, recorder)
    except BaseException:
        recorder.discard()  # nothing recorded: no journal left in the way
        raise
