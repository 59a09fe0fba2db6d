"""``--mode new_episodes`` (X07 ``record_missing``): replay hits, forward misses, append them.

Requests the cassette answers are replayed. The first request it cannot answer starts the live
server (a :class:`~harn_mcp_mock.upstream.stdio.StdioUpstream`, or a Streamable HTTP server
given by ``url``, read as lines through :class:`~harn_mcp_mock.upstream.lines.LineUpstream`) and
opens the replay's own session with it (:meth:`NewEpisodes._open_session`):

* the client sent ``initialize`` (a handshake-era client): the live server is given the client's
  own ``initialize`` and ``notifications/initialized``;
* it did not (a 2026-07-28 client, whose ``server/discover`` the replay answered and whose every
  request carries its envelope in ``_meta``): the live server is asked ``server/discover`` with
  that envelope; when it lists the client's version there is no session to open and each miss
  goes as it is. When it refuses (a handshake-era server), the replay makes the classic
  handshake itself (an ``initialize`` of :data:`HANDSHAKE_ERA_VERSION` with the client's
  ``clientInfo`` and capabilities from the envelope); each miss then goes without the
  envelope's era keys, and its answer reaches the client as a 2026-07-28 result
  (:func:`~harn_mcp_mock.replay.handshake.as_complete`), as a replayed one does.

Then every miss is forwarded to it byte for byte (but for that envelope), and everything the
live server sends is relayed to the client (its server-to-client request ids are mapped to
``live:<id>`` so they never collide with the replay's own) and recorded, redacted, through the usual
:class:`~harn_mcp_mock.session.recorder.Recorder`. At the end the new messages are appended to
the cassette in one atomic write. A cassette with no handshake yet is simply recorded.

:class:`NewEpisodes` is the session, without I/O of its own: :class:`EpisodesEngine` (the
engine stdio's :func:`~harn_mcp_mock.jsonrpc.server.serve_stdio` serves line by line and
``replay --http`` message by message) and the Python API's in-memory transport
(:class:`harn_mcp_mock.api.EpisodesTransport`) drive it.
:func:`harn_mcp_mock.session.open.open_session` builds it.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from harn_mcp_mock import deepjson
from harn_mcp_mock.cassette.model import Cassette, cas_dir, journal_path, load_cassette, save_cassette
from harn_mcp_mock.errors import ServerError, UpstreamTimeout
from harn_mcp_mock.jsonrpc.frames import CLIENT, SERVER, parse_frame
from harn_mcp_mock.jsonrpc.server import Out
from harn_mcp_mock.options import LiveTarget, ReplayOptions
from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.replay.engine import ReplayReport
from harn_mcp_mock.replay.handshake import PROTOCOL_VERSION_META, as_complete, is_modern_request
from harn_mcp_mock.replay.session import open_engine
from harn_mcp_mock.session.record import failed
from harn_mcp_mock.session.recorder import Recorder
from harn_mcp_mock.session.recorders import new_recorder
from harn_mcp_mock.upstream import open_upstream
from harn_mcp_mock.upstream.lines import LineUpstream
from harn_mcp_mock.upstream.stdio import StdioUpstream, exit_info

HANDSHAKE_ID = "harn-new-episodes-initialize"
LIVE_PREFIX = "live:"
HANDSHAKE_ERA_VERSION = "2025-11-25"
"""The version of the ``initialize`` the replay sends itself (a 2026-07-28 client's miss, a live
server that refuses ``server/discover``): the newest revision with a handshake."""
CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
ENVELOPE_KEYS = (PROTOCOL_VERSION_META, CLIENT_INFO_META, CLIENT_CAPABILITIES_META)
"""The ``_meta`` keys a 2026-07-28 client stamps on every request (its envelope)."""
OWN_CLIENT_INFO = {"name": "harn-mcp-mock new_episodes", "version": "0"}


class NewEpisodes:
    """One ``new_episodes`` session: client lines in, lines for the client out.

    Feed it the client's lines (:meth:`from_client`) and the live server's output
    (:meth:`from_live`, once :attr:`live` exists: read :attr:`live_fd`); each returns the lines
    to send to the client. :meth:`finish` stops the live server and appends what it recorded.
    """

    def __init__(
        self,
        cassette: str | Path,
        live: LiveTarget,
        *,
        options: ReplayOptions | None = None,
        on_event: Callable[[str], None] | None = None,
        grace: float = 5.0,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | IO[Any] | None = None,
        observer: Any = None,
    ) -> None:
        self.path = Path(cassette)
        self.observer = observer
        """Optional :class:`~harn_mcp_mock.tape.mcp.McpTapeObserver` (``--emit-tape``): it is given
        every exchange served, replayed or live, redacted (the live ones through the recorder)."""
        self.url = live.url
        """The live server is this Streamable HTTP endpoint rather than a command."""
        self.headers = live.header_map()
        """Added to every request to ``url`` (``--header``); their values are secrets to redaction."""
        self.timeout = live.timeout
        self.command = list(live.command) if live.url is None else ["--url", live.url]
        self.on_event = on_event
        self.grace = grace
        self.env = dict(os.environ if env is None else env)
        self.cwd = cwd
        self.stderr = stderr
        opts = ReplayOptions() if options is None else options
        self.engine = open_engine(self.path, opts, on_event=on_event)
        policy_path = opts.redact_policy
        self.policy = (
            RedactionPolicy.load(policy_path) if policy_path is not None else RedactionPolicy.default()
        )
        self.scratch = self.path.with_name(
            self.path.name.removesuffix(".cassette.json") + ".new-episodes.cassette.json"
        )
        # The recording's env secrets, known by their fingerprints, are redacted from new episodes too.
        known = (self.engine.cassette.meta.get("redaction") or {}).get("fingerprints")
        secrets = [*(f"{k}:{v}" for k, v in self.headers.items()), *self.headers.values()]
        self.redactor = self.policy.redactor(argv=[*self.command, *secrets], env=self.env, fingerprints=known)
        self.recorder: Recorder | None = None
        self.live: StdioUpstream | LineUpstream | None = None
        self.handshake: dict[str, Any] | None = None
        self.waiting: set[bytes] = set()
        """The ids (JSON bytes) of forwarded requests the live server has not answered yet."""
        self.stateless = False
        """The live server answered ``server/discover`` with the client's version: no session
        was opened, each miss carries its own envelope (the 2026-07-28 era)."""
        self.translated: dict[bytes, str] = {}
        """A 2026-07-28 client's requests forwarded to a handshake-era live session: id (JSON
        bytes) -> method; their answers reach the client as 2026-07-28 results."""

    @property
    def live_fd(self) -> int | None:
        """The live server's output, to wait on; None until the first miss started it."""
        return None if self.live is None else self.live.stdout_fd

    # -- the client ----------------------------------------------------------------------------

    def from_client(self, line: bytes) -> list[bytes]:
        """One line from the client; the lines (no newline) to send it now."""
        frame = parse_frame(line, CLIENT)
        obj = frame.obj
        if frame.kind == "request" and isinstance(obj, dict):
            if obj.get("method") == "initialize":
                self.handshake = obj
            if self.engine.has_match(obj):
                return self._replayed(obj)
            live, recorder = self._start_live(obj)
            key = deepjson.dumps(frame.id)
            if not self.stateless and self.handshake is None and is_modern_request(obj):
                line = deepjson.dumps(_without_envelope(obj))  # the live session is of the handshake era
                frame = parse_frame(line, CLIENT)
                self.translated[key] = str(obj["method"])
            recorder.feed_frame(frame)
            self.waiting.add(key)
            self.engine.report.recorded += 1
            live.send(line)
            return []
        if (
            frame.kind in ("response", "error")
            and isinstance(frame.id, str)
            and frame.id.startswith(LIVE_PREFIX)
        ):
            live, recorder = self._start_live(obj)
            answer = {**obj, "id": orjson.loads(frame.id.removeprefix(LIVE_PREFIX))}
            data = deepjson.dumps(answer)
            recorder.feed_frame(parse_frame(data, CLIENT))
            live.send(data)
            return []
        if frame.is_message:
            return self._replayed(obj)
        return []

    def _replayed(self, obj: Any) -> list[bytes]:
        """The replay's answer to the client's ``obj`` (on the tape, when there is one)."""
        observer = self.observer
        if observer is None:
            return [deepjson.dumps(o.message) for o in self.engine.receive(obj)]
        observer.on_message(CLIENT, self.redactor.redact_message(obj))
        outs = self.engine.receive(obj)
        for out in outs:
            if getattr(out, "raw", None) is None:  # a non-JSON line is no MCP message
                observer.on_message(SERVER, out.message)
        return [deepjson.dumps(o.message) for o in outs]

    @property
    def redactors(self) -> list[Any]:
        """The session's redactors (the live traffic's, the replayed requests'): what the tape is
        redacted again with at the end (value memory, docs/redaction.md)."""
        return [self.redactor, self.engine.redactor]

    # -- the live server -----------------------------------------------------------------------

    def from_live(self, chunk: bytes) -> list[bytes]:
        """Output of the live server (``b""``: it ended); the lines to relay to the client."""
        assert self.live is not None and self.recorder is not None
        if not chunk:
            raise ServerError("the live server exited while recording new episodes")
        out: list[bytes] = []
        for frame in self.live.frames(chunk):
            self.recorder.feed_frame(frame)
            if frame.kind in ("response", "error"):
                key = deepjson.dumps(frame.id)
                self.waiting.discard(key)
                method = self.translated.pop(key, None)
                if method is not None and isinstance(frame.obj, dict):
                    out.append(deepjson.dumps(as_complete(frame.obj, method)))
                    continue
            if frame.kind == "request" and isinstance(frame.obj, dict):
                live_id = f"{LIVE_PREFIX}{deepjson.dumps(frame.id).decode()}"
                out.append(deepjson.dumps({**frame.obj, "id": live_id}))
            else:
                out.append(frame.raw)
        return out

    def _start_live(self, first: Any) -> tuple[StdioUpstream | LineUpstream, Recorder]:
        """The live server, started (and its session opened) for ``first``, the first miss."""
        if self.live is not None and self.recorder is not None:
            return self.live, self.recorder
        recorder = new_recorder(
            self.scratch, self.policy, self.command, redactor=self.redactor, observer=self.observer
        )
        if self.on_event is not None:
            self.on_event(f"starting the live server to record a miss: {' '.join(recorder.command)}")
        self.recorder = recorder
        live: StdioUpstream | LineUpstream
        if self.url is not None:  # a Streamable HTTP server, read as lines like a child's stdout
            upstream = open_upstream(
                self.url, headers=self.headers, timeout=self.timeout, on_event=self.on_event
            )
            live = LineUpstream(upstream)
        else:
            live = StdioUpstream.spawn(
                self.command,
                env=self.env,
                cwd=self.cwd,
                display=" ".join(recorder.command),
                stderr=self.stderr,
            )
        self.live = live
        self._open_session(live, first if isinstance(first, dict) else {})
        return live, recorder

    def _open_session(self, live: StdioUpstream | LineUpstream, first: dict[str, Any]) -> None:
        """Open the replay's own session with the live server (see the module's docstring): the
        client's ``initialize``; else ``server/discover`` with the envelope of ``first`` (a
        2026-07-28 client's miss); else (refused, or no envelope) an ``initialize`` of our own."""
        if self.handshake is None and is_modern_request(first):
            meta = first["params"]["_meta"]
            discover = {"jsonrpc": "2.0", "id": HANDSHAKE_ID, "method": "server/discover"}
            answer = self._handshake(live, {**discover, "params": {"_meta": meta}})
            result = answer.get("result") if answer is not None else None
            supported = result.get("supportedVersions") if isinstance(result, dict) else None
            if isinstance(supported, list) and meta[PROTOCOL_VERSION_META] in supported:
                self.stateless = True
                if self.on_event is not None:
                    self.on_event("the live server answered server/discover: no session to open")
                return
            if self.on_event is not None:
                self.on_event("the live server refused server/discover: opening a session with initialize")
        initialize = self.handshake if self.handshake is not None else _own_initialize(first)
        answer = self._handshake(live, {**initialize, "id": HANDSHAKE_ID})
        if answer is None or "result" not in answer:
            raise ServerError("the live server refused `initialize` (new_episodes)")
        live.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    @staticmethod
    def _handshake(live: StdioUpstream | LineUpstream, request: dict[str, Any]) -> dict[str, Any] | None:
        """The live server's answer to our own handshake ``request`` (None: it sent none)."""
        answer: dict[str, Any] | None = None
        method = request["method"]
        try:
            for frame in live.exchange(deepjson.dumps(request), {orjson.dumps(HANDSHAKE_ID)}, 30.0):
                if frame.kind in ("response", "error") and frame.id == HANDSHAKE_ID:
                    answer = frame.obj if isinstance(frame.obj, dict) else None
        except (UpstreamTimeout, ServerError):
            raise ServerError(f"the live server did not answer `{method}` (new_episodes)") from None
        return answer

    # -- the end -------------------------------------------------------------------------------

    def finish(self, stop_fd: int | None = None) -> ReplayReport:
        """Stop the live server (if started) and append what it recorded to the cassette.

        ``stop_fd`` (the stdio loop's): the live server is given up to ``grace`` s to exit after
        its input is closed, but a stop signal cuts that short and it is sent SIGTERM at once.
        An MCP host stops a stdio server by closing its input and, 2 s later, SIGTERM, then
        SIGKILL: a live server that ignores its input's end (server-everything) must be stopped
        while the new episodes can still be appended."""
        report = self.engine.finish()
        if self.live is None or self.recorder is None:
            return report
        live, recorder = self.live, self.recorder
        live.close_input()
        grace = self.grace
        if stop_fd is not None and isinstance(live, StdioUpstream):
            self._await_exit(live, stop_fd)
            grace = 0.0  # it exited, or it is stopped now
        info = exit_info(live.stop(grace), "client-eof")
        live.close_output()
        live.reap()
        new = recorder.finish(dict(info))
        _append(self.path, new)
        for leftover in (self.scratch, journal_path(self.scratch)):
            leftover.unlink(missing_ok=True)
        blobs = cas_dir(self.scratch)
        if blobs.is_dir():
            for blob in blobs.iterdir():
                blob.unlink()
            blobs.rmdir()
        if self.on_event is not None:
            self.on_event(f"appended {len(new.messages)} new messages to {self.path}")
        return report

    def _await_exit(self, live: StdioUpstream, stop_fd: int) -> None:
        """Until the live server's output ends (it exited), a stop signal or ``grace`` s; what
        it still says is recorded."""
        assert self.recorder is not None
        deadline = time.monotonic() + self.grace
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([live.stdout_fd, stop_fd], [], [], left)
            if stop_fd in readable or not readable:
                return
            chunk = live.read_chunk()
            if not chunk:
                return
            for frame in live.frames(chunk):
                self.recorder.feed_frame(frame)

    def abort(self) -> None:
        """After an error: kill the live server; the journal stays for ``recover``."""
        if self.live is not None:
            self.live.kill()
        if self.recorder is not None:
            self.recorder.abandon()


def _append(path: Path, new: Cassette) -> None:
    old = load_cassette(path)
    offset = max((m.seq for m in old.messages), default=-1) + 1
    for msg in new.messages:
        msg.seq += offset
        if isinstance(msg.reply_to, int):
            msg.reply_to += offset
        elif isinstance(msg.reply_to, list):
            msg.reply_to = [None if r is None else r + offset for r in msg.reply_to]
    merged = Cassette([*old.messages, *new.messages], old.meta, path)
    save_cassette(merged, path)


def _own_initialize(first: dict[str, Any]) -> dict[str, Any]:
    """The ``initialize`` the replay sends for a client that sent none: of
    :data:`HANDSHAKE_ERA_VERSION`, with the ``clientInfo`` and capabilities of the envelope of
    ``first`` (a 2026-07-28 client's request), else its own name and no capabilities."""
    params = first.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    info, capabilities = meta.get(CLIENT_INFO_META), meta.get(CLIENT_CAPABILITIES_META)
    return {
        "jsonrpc": "2.0",
        "method": "initialize",
        "params": {
            "protocolVersion": HANDSHAKE_ERA_VERSION,
            "capabilities": capabilities if isinstance(capabilities, dict) else {},
            "clientInfo": info if isinstance(info, dict) else dict(OWN_CLIENT_INFO),
        },
    }


def _without_envelope(message: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 request without its envelope's keys in ``_meta`` (dropped when that empties
    it), for a live server of the handshake era."""
    params = message["params"]
    meta = {k: v for k, v in params["_meta"].items() if k not in ENVELOPE_KEYS}
    rest = {k: v for k, v in params.items() if k != "_meta"}
    return {**message, "params": {**rest, "_meta": meta} if meta else rest}


# -- the engine a transport that serves engines serves ---------------------------------------------


def _is_request(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("method"), str) and "id" in obj


def _outs(lines: Sequence[bytes]) -> Iterator[Out]:
    for line in lines:
        try:
            yield Out(orjson.loads(line))
        except orjson.JSONDecodeError:
            continue  # a live server's non-JSON line: nothing an engine's client could take


class EpisodesEngine:
    """``new_episodes`` as an :class:`~harn_mcp_mock.jsonrpc.server.Engine`: one
    :class:`NewEpisodes` session (``replay --http`` serves one per HTTP session).

    For each client message it gives back what the replay answers, or what the live server
    sent for it, up to its answer or a request of its own (sampling, elicitation, roots): the
    client's answer, a later :meth:`receive`, goes on. The live server is waited for on the
    caller's thread (up to ``timeout`` s of silence): one request at a time, for tests."""

    def __init__(self, session: NewEpisodes, *, timeout: float = 30.0, stop_fd: int | None = None) -> None:
        self.session = session
        self.timeout = timeout
        self.wait = session.grace
        """After the client's EOF on stdio: seconds the live server may stay silent while it
        owes answers (:class:`~harn_mcp_mock.jsonrpc.server.LineEngine`)."""
        self.stop_fd = stop_fd
        """The stdio loop's stop signal: it cuts short the live server's exit at :meth:`finish`."""
        self._report: ReplayReport | None = None

    # -- on stdio: jsonrpc.server.serve_stdio serves it line by line (a LineEngine) -------------

    def receive_line(self, line: bytes) -> list[Out]:
        """A client line as it came (forwarded byte for byte on a miss); what to send it now."""
        return [Out(None, raw=out) for out in self.session.from_client(line)]

    @property
    def live_fd(self) -> int | None:
        return self.session.live_fd

    def from_live(self) -> list[Out]:
        """What the live server said (it is readable), relayed as it came."""
        live = self.session.live
        assert live is not None
        return [Out(None, raw=out) for out in self.session.from_live(live.read_chunk() or b"")]

    @property
    def owes(self) -> int:
        """How many forwarded requests the live server has not answered yet."""
        return len(self.session.waiting) if self.session.live is not None else 0

    # -- as an Engine (HTTP, one message at a time) --------------------------------------------

    @property
    def cassette(self) -> Cassette:
        """The replayed cassette (an HTTP endpoint reads its recorded HTTP facts)."""
        return self.session.engine.cassette

    def receive(self, message: Any) -> list[Out]:
        try:
            lines = self.session.from_client(deepjson.dumps(message))
        except ServerError as exc:  # the live server could not be started or set up
            return failed({orjson.dumps(message["id"])} if _is_request(message) else set(), exc)
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
                if any(_is_request(out.message) for out in batch):
                    break
        except (ServerError, UpstreamTimeout) as exc:
            outs += failed(session.waiting, exc)
        return outs

    def finish(self) -> ReplayReport:
        """Stop the live server and append what it recorded (see :meth:`NewEpisodes.finish`);
        once (a later call returns the same report)."""
        if self._report is None:
            self._report = self.session.finish(self.stop_fd)
        return self._report

    def abort(self) -> None:
        self.session.abort()
