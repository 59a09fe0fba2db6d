"""Serve any :class:`~harn_mcp_mock.jsonrpc.server.Engine` over MCP Streamable HTTP.

One endpoint (``/mcp`` by default) takes:

* ``POST`` a JSON-RPC message. An ``initialize`` request opens a session with a fresh engine
  from ``engine_factory`` and a fresh ``Mcp-Session-Id``; later messages must carry that id
  (400 when it is missing, 404 when it is unknown or ended). A request is answered with
  ``application/json`` when the engine's whole answer is the response, or with a
  ``text/event-stream`` carrying the notifications and server-to-client requests the engine
  emits before the response (``sse="auto"``; ``"always"`` / ``"never"`` force one). With
  ``"auto"``, a cassette recorded over HTTP from a server that answered every request with a
  stream is replayed with streams too. A stream opened for a client of revision 2025-11-25 or
  later starts with a priming event (an id, empty data) it can resume from. A
  server-to-client request pauses the engine; the client's answer arrives as a later POST
  (202) and the engine's continuation goes out on the stream that is still waiting. A POST
  of notifications or responses only gets 202. A request whose ``MCP-Protocol-Version``
  header names a session-less (2026-07-28 and later) revision needs no session: it is served
  by one shared session-less engine.
* ``GET`` opens the session's standalone SSE stream (409 when one is already open). It carries
  what the engine emits for a client that accepts JSON only.
* ``GET`` with ``Last-Event-ID: STREAM-N`` resumes a dropped stream (POST or GET) after event
  N: the events after it again, then the rest live (400 when the id names nothing resumable).
* ``DELETE`` ends the session.

A replayed cassette's ``http`` list (recorded through the HTTP record proxy) makes the
recorded non-2xx answers (401, 429 with ``retry-after``, 5xx...) come back for the matching
requests instead of a JSON-RPC answer (:class:`HttpFaultPlan`); the engine is told
(``answered_by_status``, when it has one), so such a request is on the tape and in the report.

Everything runs on one event loop; engines are called synchronously there, so an engine that
is not thread-safe (the replay engine) is fine. Outputs with a delay (``--latency recorded``)
are held back on their stream, and later outputs of the same stream never overtake them.
"""

from __future__ import annotations

import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from harn_mcp_mock import deepjson
from harn_mcp_mock.clock import SYSTEM_CLOCK, Clock
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.http.guard import GuardSettings, SessionTable, guard_middleware
from harn_mcp_mock.http.server import (
    JSON,
    HttpServer,
    Receive,
    Scope,
    Send,
    print_url,
    read_body,
    send_json,
    send_plain,
    watch_disconnect,
)
from harn_mcp_mock.jsonrpc.codes import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from harn_mcp_mock.jsonrpc.frames import CLIENT, parse_frame
from harn_mcp_mock.jsonrpc.server import Engine, Out

SseMode = Literal["auto", "always", "never"]

SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"
LAST_EVENT_ID_HEADER = b"last-event-id"
HANDSHAKE_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
"""Revisions that open a session with ``initialize`` (the SDK's HANDSHAKE_PROTOCOL_VERSIONS)."""

SSE = b"text/event-stream"


PRIMING_VERSION = "2025-11-25"
"""The first revision whose clients take a priming event (empty ``data``) on a stream."""
DEFAULT_VERSION = "2025-03-26"
"""What a request without ``MCP-Protocol-Version`` is taken to speak (as the SDKs do)."""


def _header_version(headers: dict[bytes, bytes]) -> str:
    return headers.get(VERSION_HEADER, DEFAULT_VERSION.encode()).decode("latin-1").strip()


def _client_version(message: Any, headers: dict[bytes, bytes]) -> str:
    """The revision an ``initialize`` asks for (its ``params.protocolVersion``)."""
    params = message.get("params") if isinstance(message, dict) else None
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return version if isinstance(version, str) else _header_version(headers)


def _id_key(value: Any) -> bytes:
    return deepjson.dumps(value)


def _is_request(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("method"), str) and "id" in obj


def _is_reply(obj: Any) -> bool:
    return isinstance(obj, dict) and "method" not in obj and ("result" in obj or "error" in obj)


# --- streams of engine output ----------------------------------------------------------------


SINK_LIMIT = 1 << 16
"""Outputs a stream holds for a client that is not reading (more are dropped)."""


@dataclass(slots=True, eq=False)
class _Sink:
    """Where the outputs for one waiting HTTP response go, in order, each with its due time.

    A plain queue (no anyio stream objects to close): it may outlive its connection, waiting
    for a ``Last-Event-ID`` resume.
    """

    waiting_for: bytes | None
    """The id (as a key) of the request whose response ends this stream; None for GET."""
    items: deque[tuple[float, Any] | None] = field(default_factory=deque)
    closed: bool = False
    last_due: float = 0.0
    wake: Any = None

    def put(self, out: Out, now: float) -> None:
        if self.closed or len(self.items) >= SINK_LIMIT:
            return  # the client went away for good, or is not reading: drop the message
        due = max(self.last_due, now + out.delay_ms / 1000.0)
        self.last_due = due
        self.items.append((due, out.message))
        self._signal()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.items.append(None)
            self._signal()

    def _signal(self) -> None:
        if self.wake is not None:
            self.wake.set()
            self.wake = None

    async def get(self) -> tuple[float, Any] | None:
        """The next output, waiting for one; None once closed."""
        import anyio

        while not self.items:
            if self.closed:
                return None
            self.wake = anyio.Event()
            await self.wake.wait()
        return self.items.popleft()


def _new_sink(waiting_for: bytes | None) -> _Sink:
    return _Sink(waiting_for)


GET_LOG_CAP = 1024
"""Events of a session's GET stream kept for ``Last-Event-ID`` resumption (older ones are gone)."""


@dataclass(slots=True, eq=False)
class _StreamLog:
    """One SSE stream's events (id ``NUMBER-N``), kept so a client can resume after a drop.

    The stream's writer takes outputs from ``sink``, appends each event here first, then
    sends it; a client that reconnects with ``Last-Event-ID: NUMBER-N`` gets the events after
    N again, then the rest as it comes. A POST stream's log is dropped once it was delivered
    to its end; a GET stream keeps its last :data:`GET_LOG_CAP` events.
    """

    number: int
    sink: _Sink
    events: list[tuple[float, bytes]] = field(default_factory=list)
    """(due time, encoded event), numbered ``base + 1`` on."""
    base: int = 0
    done: bool = False
    attached: bool = False
    cap: int | None = None


@dataclass(slots=True, eq=False)
class HttpSession:
    id: str | None
    engine: Engine
    paused: dict[bytes, _Sink] = field(default_factory=dict)
    """Server-to-client request id -> the stream the continuation belongs on."""
    get_stream: _Sink | None = None
    """The standalone stream's sink; it outlives a dropped GET connection (events wait there)."""
    ended: bool = False
    event_counter: int = 0
    streams: dict[int, _StreamLog] = field(default_factory=dict)
    """SSE streams that may still be resumed, by number."""

    def new_log(self, sink: _Sink, cap: int | None = None) -> _StreamLog:
        log = _StreamLog(self.event_counter, sink, cap=cap)
        self.event_counter += 1
        self.streams[log.number] = log
        return log

    def receive(self, message: Any) -> list[Out]:
        """The engine's outputs for ``message``. One marked ``close`` (the recorded server exited
        there) ends the session: its answer still goes out, later requests get 404."""
        outs = self.engine.receive(message)
        if any(out.close for out in outs):
            self.ended = True
        return outs

    def route(self, outs: list[Out], sink: _Sink | None) -> None:
        """Send ``outs`` to ``sink`` (or the GET stream), noting where server requests wait."""
        now = time.monotonic()
        for out in outs:
            target = sink or self.get_stream
            if target is None:
                continue
            if _is_request(out.message):
                self.paused[_id_key(out.message["id"])] = target
            target.put(out, now)
        if self.ended:  # the recorded server exited here: each stream ends after what it holds
            _close_streams(self)
            if sink is not None:
                sink.close()


# --- recorded HTTP statuses (the cassette's ``http`` list) -----------------------------------


@dataclass(slots=True)
class HttpFault:
    """A recorded non-2xx answer to reproduce: status, content type, kept headers, and body."""

    status: int
    content_type: str | None
    headers: dict[str, str]
    seq: int | None
    reply: Any = None
    """The recorded JSON-RPC answer that came with it (its id is replaced), if any."""

    def body(self, msg_id: Any) -> bytes:
        if self.content_type is None or "json" not in self.content_type.lower():
            return b""
        if isinstance(self.reply, dict):
            return deepjson.dumps({**self.reply, "id": msg_id})
        text = f"HTTP {self.status} (recorded)"
        return deepjson.dumps(
            {"jsonrpc": "2.0", "id": msg_id, "error": {"code": INVALID_REQUEST, "message": text}}
        )

    def header_list(self) -> list[tuple[bytes, bytes]]:
        out = [(k.lower().encode("latin-1"), v.encode("latin-1", "replace")) for k, v in self.headers.items()]
        if self.content_type is not None and self.body(None):
            out.append((b"content-type", self.content_type.encode("latin-1", "replace")))
        return out


def recorded_sse(entries: Any) -> bool | None:
    """How the recorded server answered POSTs with ``200``: True if always as an SSE stream, False
    if always as JSON, None if both or neither (or nothing was recorded over HTTP)."""
    kinds: set[bool] = set()
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, dict) or entry.get("method") != "POST":
            continue
        status, content_type = entry.get("status"), entry.get("content_type")
        if status == 200 and isinstance(content_type, str):  # 202 has no body, whatever its type says
            kinds.add(SSE.decode() in content_type.lower())
    return kinds.pop() if len(kinds) == 1 else None


def stream_key(message: Any) -> bytes | None:
    """What identifies a server message across recording and replay (its id left out: replay
    gives a server request a fresh one); None for a response."""
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    return orjson.dumps({k: v for k, v in message.items() if k != "id"})


def recorded_on_get(entries: Any, cassette: Any) -> frozenset[bytes]:
    """The server messages that came on a recorded GET stream (the ``events`` of the cassette's
    ``http`` GET entries), as :func:`stream_key`."""
    seqs: set[int] = set()
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and entry.get("method") == "GET":
            seqs.update(e for e in entry.get("events") or () if isinstance(e, int))
    if not seqs or cassette is None:
        return frozenset()
    keys = (stream_key(m.message) for m in cassette.messages if m.seq in seqs and m.direction == "server")
    return frozenset(k for k in keys if k is not None)


class HttpFaultPlan:
    """What the cassette's ``http`` list says to reproduce, shared by every session of a server.

    For a POST, the recorded client messages with the same match key are taken in recorded
    order: each one either got a non-2xx status (a fault, replayed as it was) or went through
    (None: the engine answers). The n-th matching request gets the n-th outcome; after the
    last, the last outcome repeats (like ``--repeat last``). A GET or DELETE gets a recorded
    status only when every recorded GET (DELETE) got that same non-2xx status.
    """

    def __init__(self, engine: Any) -> None:
        self.key: Callable[[Any], bytes] | None = None
        self.outcomes: dict[bytes, list[HttpFault | None]] = {}
        self.used: dict[bytes, int] = {}
        self.by_method: dict[str, HttpFault] = {}
        self.served: set[int] = set()
        """Seqs of recorded requests answered with their fault: used, as far as reports go."""
        cassette = getattr(engine, "cassette", None)
        meta = getattr(cassette, "meta", None)
        entries = meta.get("http") if isinstance(meta, dict) else None
        self.recorded_sse = recorded_sse(entries)
        """True when every recorded POST answer with a body was an SSE stream (False: JSON)."""
        self.on_get = recorded_on_get(entries, cassette)
        """The server messages (as :func:`stream_key`) that came on a recorded GET stream."""
        matcher, redactor = getattr(engine, "matcher", None), getattr(engine, "redactor", None)
        if not isinstance(entries, list) or not entries or matcher is None or cassette is None:
            return
        self.key = lambda message: matcher.key(redactor.redact_message(message) if redactor else message)
        faults: dict[int, HttpFault] = {}
        methods: dict[str, list[HttpFault]] = {}
        replies = cassette.responses_by_request()
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("status"), int):
                continue
            status = entry["status"]
            fault = HttpFault(
                status, entry.get("content_type"), dict(entry.get("headers") or {}), entry.get("seq")
            )
            if fault.seq is None:
                methods.setdefault(str(entry.get("method")), []).append(fault)
            elif not 200 <= status < 300:
                reply = replies.get(fault.seq)
                fault.reply = reply.message if reply is not None else None
                faults[fault.seq] = fault
        for method, seen in methods.items():
            if len({f.status for f in seen}) == 1 and not 200 <= seen[0].status < 300:
                self.by_method[method] = seen[0]
        if not faults:
            return
        for msg in cassette.messages:
            if msg.direction == "client" and isinstance(msg.message, dict) and "method" in msg.message:
                outcome = faults.get(msg.seq)
                key = self.key(msg.message)
                self.outcomes.setdefault(key, []).append(outcome)
        self.outcomes = {k: v for k, v in self.outcomes.items() if any(v)}

    def take(self, message: Any) -> HttpFault | None:
        """The recorded fault for this POSTed message, if its turn says so (consumes a turn)."""
        if self.key is None or not self.outcomes or not isinstance(message, dict) or "method" not in message:
            return None
        key = self.key(message)
        outcomes = self.outcomes.get(key)
        if outcomes is None:
            return None
        turn = self.used.get(key, 0)
        self.used[key] = turn + 1
        fault = outcomes[min(turn, len(outcomes) - 1)]
        if fault is not None and fault.seq is not None:
            self.served.add(fault.seq)
        return fault

    def mark(self, engines: list[Engine]) -> None:
        """Count the served faults' interactions as used in ``engines`` (for reports and picking)."""
        if not self.served:
            return
        for engine in engines:
            for inter in getattr(engine, "interactions", ()):
                if inter.seq in self.served and inter.uses == 0:
                    inter.uses = 1


# --- the ASGI app ------------------------------------------------------------------------------


class StreamableHttpEndpoint:
    """The ASGI endpoint (mount it at the MCP path). See the module docstring for the protocol."""

    def __init__(
        self,
        engine_factory: Callable[[], Engine],
        *,
        sse: SseMode = "auto",
        on_event: Callable[[str], None] | None = None,
        guard: GuardSettings | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        if sse not in ("auto", "always", "never"):
            raise UsageError(f"bad sse mode {sse!r}: use auto, always or never")
        self.engine_factory = engine_factory
        self.sse: SseMode = sse
        self.on_event = on_event
        limits = guard or GuardSettings()
        self.sessions: SessionTable[HttpSession] = SessionTable(
            idle_timeout=limits.session_idle_timeout,
            max_sessions=limits.max_sessions,
            clock=clock,
            busy=_busy,
            on_evict=self._end_session,
        )
        """Open sessions, bounded by idle time and count (docs/http.md)."""
        self.engines: list[Engine] = []
        """The engines of the open sessions, in order (the CLI merges their reports)."""
        self.on_retire: Callable[[Engine], None] | None = None
        """Called with the engine of a session that ended (DELETE, idle expiry, eviction),
        which is then forgotten here: fold its report in now."""
        self._sessionless: HttpSession | None = None
        self.faults: HttpFaultPlan | None = None

    def _new_engine(self) -> Engine:
        engine = self.engine_factory()
        self.engines.append(engine)
        if self.faults is None:
            self.faults = HttpFaultPlan(engine)
        self.faults.mark([engine])
        return engine

    def _end_session(self, session: HttpSession, why: str) -> None:
        """End ``session`` (deleted, expired or evicted) and retire its engine."""
        session.ended = True
        _close_streams(session)
        session.paused.clear()
        if why != "deleted":
            self._event(f"session {session.id} {why} (see --session-idle-timeout, --max-sessions)")
        if self.faults is not None:
            self.faults.mark([session.engine])
        if session.engine in self.engines:
            self.engines.remove(session.engine)
            if self.on_retire is not None:
                self.on_retire(session.engine)

    def _fault(self, message: Any) -> HttpFault | None:
        if self.faults is None or not self.faults.outcomes or isinstance(message, list):
            return None
        fault = self.faults.take(message)
        if fault is not None:
            self.faults.mark(self.engines)
            self._event(f"answering {message.get('method')!r} with its recorded HTTP {fault.status}")
        return fault

    def _event(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    def _divert(self, session: HttpSession, outs: list[Out], waiting_for: bytes | None) -> list[Out]:
        """Send to the session's GET stream, in order, the outputs that belong there: those
        recorded on a GET stream (a list_changed or log message sent outside any request), and
        those after the answer to ``waiting_for`` (its stream ends with that answer, so they
        would be lost); the rest, for the request's own stream. Without an open GET stream (or
        once the session ended) nothing moves."""
        if session.get_stream is None or session.ended:
            return outs
        on_get = self.faults.on_get if self.faults is not None else frozenset()
        kept: list[Out] = []
        answered = False
        for out in outs:
            message = out.message
            if answered or (on_get and stream_key(message) in on_get):
                session.route([out], None)
                continue
            kept.append(out)
            if waiting_for is not None and _is_reply(message) and _id_key(message.get("id")) == waiting_for:
                answered = True
        return kept

    def close(self) -> None:
        """End every open stream (the server is shutting down); call it on the server's loop."""
        for session in [*self.sessions.values(), *([self._sessionless] if self._sessionless else [])]:
            _close_streams(session)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        method = scope["method"]
        headers = dict(scope["headers"])
        if method in ("GET", "DELETE") and self.faults is not None and method in self.faults.by_method:
            fault = self.faults.by_method[method]
            await send_plain(send, fault.status, fault.body(None), fault.header_list())
        elif method == "POST":
            await self._post(headers, receive, send)
        elif method == "GET":
            await self._get(headers, receive, send)
        elif method == "DELETE":
            await self._delete(headers, send)
        else:
            await send_plain(send, 405, b"", extra=[(b"allow", b"GET, POST, DELETE")])

    # -- sessions ---------------------------------------------------------------------------

    def _lookup(self, headers: dict[bytes, bytes]) -> tuple[HttpSession | None, int, str]:
        """(session, status, why) for a non-initialize message."""
        sid = headers.get(SESSION_HEADER)
        if sid is None:
            version = headers.get(VERSION_HEADER)
            if version is not None and version.decode("latin-1") not in HANDSHAKE_VERSIONS:
                if self._sessionless is None:
                    self._sessionless = HttpSession(None, self._new_engine())
                return self._sessionless, 0, ""
            return None, 400, "Bad Request: Missing session ID"
        session = self.sessions.get(sid.decode("latin-1"))
        if session is None or session.ended:
            return None, 404, "Not Found: unknown or ended session ID"
        return session, 0, ""

    # -- POST -------------------------------------------------------------------------------

    async def _post(self, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        accept = headers.get(b"accept", b"*/*").lower()
        wants_json = JSON in accept or b"*/*" in accept or b"application/*" in accept
        wants_sse = SSE in accept
        if not (wants_json or wants_sse):
            await _error(
                send,
                406,
                None,
                INVALID_REQUEST,
                "Not Acceptable: accept application/json or text/event-stream",
            )
            return
        body = await read_body(receive)
        frame = parse_frame(body, CLIENT)
        if frame.kind == "invalid":
            not_json = (frame.problem or "").startswith("not JSON")
            code, text = (PARSE_ERROR, "Parse error") if not_json else (INVALID_REQUEST, "Invalid Request")
            self._event(f"invalid message from the client: {frame.problem}")
            await _error(send, 400, None, code, f"{text}: {frame.problem}")
            return
        obj = frame.obj
        items = obj if isinstance(obj, list) else [obj]
        is_init = frame.kind == "request" and frame.method == "initialize"
        if is_init:
            session = HttpSession(uuid.uuid4().hex, self._new_engine())
            assert session.id is not None
        else:
            found, status, why = self._lookup(headers)
            if found is None:
                await _error(send, status, None, INVALID_REQUEST, why)
                return
            session = found
        fault = self._fault(obj)
        if fault is not None:  # a recorded 401, 429, 5xx...: no session is opened, nothing answers
            body = fault.body(frame.id)
            told = getattr(session.engine, "answered_by_status", None)
            if told is not None:  # still on the tape and in the report's request count
                told(obj, fault.status, orjson.loads(body) if body else None)
            await send_plain(send, fault.status, body, fault.header_list())
            return
        if is_init:
            assert session.id is not None
            if not self.sessions.add(session.id, session):
                self._end_session(session, "refused")
                await _error(
                    send, 503, frame.id, INTERNAL_ERROR, "Service Unavailable: every session is busy"
                )
                return
        extra = [(SESSION_HEADER, session.id.encode())] if session.id else []
        requests = [item for item in items if _is_request(item)]
        if not requests:
            for item in items:
                outs = session.receive(item)
                sink = session.paused.pop(_id_key(item.get("id")), None) if _is_reply(item) else None
                if sink is not None:
                    outs = self._divert(session, outs, sink.waiting_for)
                session.route(outs, sink)
            await send_plain(send, 202, b"", extra=extra)
            return
        outs = session.receive(obj)
        if isinstance(obj, list):
            await self._batch(session, outs, send, extra)
            return
        injected = next((out.fault for out in outs if out.fault is not None), None)
        if injected is not None:
            await self._inject(session, injected, send, extra, wants_sse)
            return
        key = _id_key(frame.id)
        outs = self._divert(session, outs, key)
        lone = len(outs) == 1 and outs[0].delay_ms <= 0 and _is_reply(outs[0].message)
        streamed = self.faults is not None and self.faults.recorded_sse is True  # as recorded
        use_sse = wants_sse and (self.sse == "always" or (self.sse == "auto" and (streamed or not lone)))
        if not wants_json:
            use_sse = True
        if lone and not use_sse:
            if session.ended:  # the recorded server exited here: its other streams end too
                _close_streams(session)
            await send_json(send, 200, deepjson.dumps(outs[0].message), extra)
            return
        sink = _new_sink(key)
        session.route(outs, sink)
        if use_sse:
            version = _client_version(frame.obj, headers) if is_init else _header_version(headers)
            prime = version >= PRIMING_VERSION
            await self._stream(session, session.new_log(sink), receive, send, extra, prime=prime)
            return
        try:
            await self._collect(session, sink, frame.id, send, extra)
        finally:
            sink.close()

    async def _inject(
        self,
        session: HttpSession,
        fault: dict[str, Any],
        send: Send,
        extra: list[tuple[bytes, bytes]],
        wants_sse: bool,
    ) -> None:
        """Carry out a transport fault ``replay --faults`` injected (faults/overlay.py)."""
        kind = fault["kind"]
        if kind == "http_status":
            headers = [(k.lower().encode(), str(v).encode()) for k, v in fault["headers"].items()]
            body = str(fault.get("body", "")).encode()
            self._event(f"injected fault: HTTP {fault['status']}")
            await send_plain(send, int(fault["status"]), body, [(b"content-type", b"text/plain"), *headers])
            return
        if kind == "malformed":
            self._event("injected fault: a malformed answer")
            await send_json(send, 200, fault["raw"], extra)
            return
        # disconnect: the session ends (later requests get 404) and this response ends empty
        self._event(f"injected fault: session {session.id} disconnected")
        if session.id is not None:
            self.sessions.pop(session.id, None)
        self._end_session(session, "deleted")  # as a DELETE would: no idle/eviction note
        content_type = SSE if wants_sse else JSON
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", content_type), *extra],
            }
        )
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _batch(
        self, session: HttpSession, outs: list[Out], send: Send, extra: list[tuple[bytes, bytes]]
    ) -> None:
        """A batch (2025-03-26) is answered as one JSON array; what else it emits goes to GET."""
        replies: Any = None
        others: list[Out] = []
        for out in outs:
            if isinstance(out.message, list):
                replies = out.message
            else:
                others.append(out)
        session.route(others, None)
        if replies is None:
            await send_plain(send, 202, b"", extra=extra)
        else:
            await send_json(send, 200, deepjson.dumps(replies), extra)

    async def _collect(
        self, session: HttpSession, sink: _Sink, request_id: Any, send: Send, extra: list[tuple[bytes, bytes]]
    ) -> None:
        """JSON-only client: wait for the response; anything else goes to the GET stream."""
        import anyio

        while True:
            item = await sink.get()
            if item is None:
                break
            due, message = item
            delay = due - time.monotonic()
            if delay > 0:
                await anyio.sleep(delay)
            if _is_reply(message) and _id_key(message.get("id")) == sink.waiting_for:
                await send_json(send, 200, deepjson.dumps(message), extra)
                return
            if session.get_stream is not None:
                if _is_request(message):  # its answer resumes the engine here, on this POST
                    session.paused[_id_key(message["id"])] = sink
                session.get_stream.put(Out(message), time.monotonic())
            elif _is_request(message):
                # Nowhere to ask the client: give up on the request rather than hang.
                session.paused.pop(_id_key(message["id"]), None)
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
                session.engine.receive({**cancel, "params": {"requestId": request_id}})
                text = (
                    f"the recorded answer needs a server-to-client {message['method']} request, which "
                    "needs a stream: accept text/event-stream or open the session's GET stream"
                )
                self._event(text)
                body = {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": INTERNAL_ERROR, "message": text},
                }
                await send_json(send, 200, deepjson.dumps(body), extra)
                return
            else:
                self._event(
                    f"dropped {message.get('method')!r}: the client accepts JSON only and has no GET stream"
                )
        await _error(send, 500, None, INTERNAL_ERROR, "the session ended before the response")

    async def _stream(
        self,
        session: HttpSession,
        log: _StreamLog,
        receive: Receive,
        send: Send,
        extra: list[tuple[bytes, bytes]],
        after: int | None = None,
        prime: bool = False,
    ) -> None:
        """Write ``log`` as SSE (the events after ``after``, then the sink's) until its end.

        A POST stream ends with the response to its request; a GET stream when the session
        ends. If the client goes away first, the log stays for a ``Last-Event-ID`` resume.
        ``prime`` first sends a priming event (id ``NUMBER-0``, empty data; SEP-1699): a client
        that loses the stream before any message can still resume it from the start.
        """
        import anyio

        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", SSE),
                    (b"cache-control", b"no-cache, no-transform"),
                    (b"x-accel-buffering", b"no"),
                    *extra,
                ],
            }
        )
        log.attached = True
        if prime:
            await send(
                {
                    "type": "http.response.body",
                    "body": b"id: %d-0\ndata: \n\n" % log.number,
                    "more_body": True,
                }
            )
        index = 0 if after is None else after - log.base
        completed = False
        sink = log.sink
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(watch_disconnect, receive, tg.cancel_scope)
                while True:
                    if index < len(log.events):
                        due, data = log.events[index]
                        delay = due - time.monotonic()
                        if delay > 0:
                            await anyio.sleep(delay)
                        await send({"type": "http.response.body", "body": data, "more_body": True})
                        index += 1
                        continue
                    if log.done:
                        break
                    item = await sink.get()
                    if item is None:
                        log.done = True
                        continue
                    due, message = item
                    number = log.base + len(log.events) + 1
                    event = b"event: message\nid: %d-%d\ndata: %s\n\n" % (
                        log.number,
                        number,
                        deepjson.dumps(message),
                    )
                    log.events.append((due, event))
                    if (
                        sink.waiting_for is not None
                        and _is_reply(message)
                        and _id_key(message.get("id")) == sink.waiting_for
                    ):
                        log.done = True
                    if log.cap is not None and len(log.events) > log.cap:
                        del log.events[0]
                        log.base += 1
                        index -= 1
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                completed = True
                tg.cancel_scope.cancel()
        finally:
            log.attached = False
            if completed:  # delivered to its end: nothing left to resume
                session.streams.pop(log.number, None)
                sink.close()
                for key, waiting in list(session.paused.items()):
                    if waiting is sink:
                        del session.paused[key]

    # -- GET / DELETE -----------------------------------------------------------------------

    async def _get(self, headers: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        if SSE not in headers.get(b"accept", b"").lower():
            await _error(
                send, 406, None, INVALID_REQUEST, "Not Acceptable: the GET stream is text/event-stream"
            )
            return
        session, status, why = self._lookup(headers)
        if session is None or session.id is None:
            await _error(send, status or 405, None, INVALID_REQUEST, why or "no stream without a session")
            return
        extra = [(SESSION_HEADER, session.id.encode())]
        cursor = headers.get(LAST_EVENT_ID_HEADER)
        if cursor is not None:
            await self._resume(session, cursor.decode("latin-1").strip(), receive, send, extra)
            return
        current = next((log for log in session.streams.values() if log.sink is session.get_stream), None)
        if current is not None and current.attached:
            await _error(
                send, 409, None, INVALID_REQUEST, "Conflict: this session's GET stream is already open"
            )
            return
        if current is not None:  # a new GET after a dropped one: a new stream, the same queue
            session.streams.pop(current.number, None)
            sink = current.sink
        else:
            sink = _new_sink(None)
            session.get_stream = sink
        log = session.new_log(sink, cap=GET_LOG_CAP)
        await self._stream(session, log, receive, send, extra)
        if log.number not in session.streams and session.get_stream is sink:  # ended
            session.get_stream = None

    async def _resume(
        self,
        session: HttpSession,
        cursor: str,
        receive: Receive,
        send: Send,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        """``GET`` with ``Last-Event-ID``: the events of that stream after it, then the rest live."""
        number, _, seen = cursor.partition("-")
        log = session.streams.get(int(number)) if number.isdigit() else None
        after = int(seen) if seen.isdigit() else -1
        if log is None or not log.base <= after <= log.base + len(log.events):
            await _error(
                send,
                400,
                None,
                INVALID_REQUEST,
                f"Bad Request: Last-Event-ID {cursor!r} names no stream or event this session can resume "
                "(unknown, already delivered to its end, or too old)",
            )
            return
        if log.attached:
            await _error(
                send, 409, None, INVALID_REQUEST, "Conflict: that stream is open on another connection"
            )
            return
        self._event(f"resuming stream {log.number} after event {after}")
        await self._stream(session, log, receive, send, extra, after=after)

    async def _delete(self, headers: dict[bytes, bytes], send: Send) -> None:
        sid = headers.get(SESSION_HEADER)
        if sid is None:
            await _error(send, 400, None, INVALID_REQUEST, "Bad Request: Missing session ID")
            return
        session = self.sessions.pop(sid.decode("latin-1"), None)
        if session is None:
            await _error(send, 404, None, INVALID_REQUEST, "Not Found: unknown or ended session ID")
            return
        self._end_session(session, "deleted")
        await send_plain(send, 200, b"")


def _busy(session: HttpSession) -> bool:
    """A session with a stream open on a connection is in use (never expired nor evicted)."""
    return any(log.attached for log in session.streams.values())


def _close_streams(session: HttpSession) -> None:
    """End every stream of ``session`` (each one's writer then finishes its response)."""
    sinks = {
        *session.paused.values(),
        *(log.sink for log in session.streams.values()),
        *([session.get_stream] if session.get_stream else []),
    }
    for sink in sinks:
        sink.close()


async def _error(send: Send, status: int, msg_id: Any, code: int, text: str) -> None:
    body = deepjson.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": text}})
    await send_json(send, status, body, [])


def redirect_paths(engine: Engine) -> list[str]:
    """The paths the recorded redirects of ``engine``'s cassette lead to (recorded through the
    proxy as origin-relative ``Location`` values): replay serves them too, so a client that
    follows a replayed redirect stays on the replay server."""
    meta = getattr(getattr(engine, "cassette", None), "meta", None)
    entries = meta.get("http") if isinstance(meta, dict) else None
    paths: list[str] = []
    for entry in entries if isinstance(entries, list) else ():
        status = entry.get("status") if isinstance(entry, dict) else None
        headers = entry.get("headers") if isinstance(entry, dict) else None
        location = headers.get("location") if isinstance(headers, dict) else None
        if isinstance(status, int) and 300 <= status < 400 and isinstance(location, str):
            target = location.partition("?")[0].partition("#")[0]
            if target.startswith("/") and not target.startswith("//") and target not in paths:
                paths.append(target)
    return paths


def build_app(
    engine_factory: Callable[[], Engine],
    *,
    path: str = "/mcp",
    sse: SseMode = "auto",
    on_event: Callable[[str], None] | None = None,
    also: Iterable[str] = (),
    guard: GuardSettings | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> tuple[Any, StreamableHttpEndpoint]:
    """(Starlette app, endpoint) serving ``engine_factory``'s engines at ``path`` (and ``also``),
    behind the Origin/Host/body-size checks and session limits of ``guard`` (defaults: None)."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    endpoint = StreamableHttpEndpoint(engine_factory, sse=sse, on_event=on_event, guard=guard, clock=clock)
    paths = [path, *(p for p in also if p != path)]
    methods = ["GET", "POST", "DELETE"]
    routes = [Route(p, endpoint=endpoint, methods=methods) for p in paths]
    app = Starlette(routes=routes, middleware=guard_middleware(guard))
    return app, endpoint


def serve_http(
    engine_factory: Callable[[], Engine],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    path: str = "/mcp",
    allow_remote: bool = False,
    sse: SseMode = "auto",
    on_ready: Callable[[str], None] | None = print_url,
    on_event: Callable[[str], None] | None = None,
) -> StreamableHttpEndpoint:
    """Serve engines over Streamable HTTP until interrupted; returns the endpoint (its engines).

    ``on_ready(url)`` is called once the socket listens; by default it prints the URL as one
    line on stdout (the first line, for scripts).
    """
    guard = GuardSettings.for_host(host)
    app, endpoint = build_app(engine_factory, path=path, sse=sse, on_event=on_event, guard=guard)
    server = HttpServer(
        app, host=host, port=port, path=path, allow_remote=allow_remote, on_shutdown=endpoint.close
    )
    server.run(on_ready)
    return endpoint
