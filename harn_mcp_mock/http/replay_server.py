"""Serve any :class:`~harn_mcp_mock.jsonrpc.server.Engine` over MCP Streamable HTTP.

One endpoint (``/mcp`` by default) takes:

* ``POST`` a JSON-RPC message. An ``initialize`` request opens a session with a fresh engine
  from ``engine_factory`` and a fresh ``Mcp-Session-Id``; later messages must carry that id
  (400 when it is missing, 404 when it is unknown or ended). A request is answered with
  ``application/json`` when the engine's whole answer is the response, or with a
  ``text/event-stream`` carrying the notifications and server-to-client requests the engine
  emits before the response (``sse="auto"``; ``"always"`` / ``"never"`` force one). A
  server-to-client request pauses the engine; the client's answer arrives as a later POST
  (202) and the engine's continuation goes out on the stream that is still waiting. A POST
  of notifications or responses only gets 202. A request whose ``MCP-Protocol-Version``
  header names a session-less (2026-07-28 and later) revision needs no session: it is served
  by one shared session-less engine.
* ``GET`` opens the session's standalone SSE stream (409 when one is already open). It carries
  what the engine emits for a client that accepts JSON only.
* ``DELETE`` ends the session.

Everything runs on one event loop; engines are called synchronously there, so an engine that
is not thread-safe (the replay engine) is fine. Outputs with a delay (``--latency recorded``)
are held back on their stream, and later outputs of the same stream never overtake them.
"""

from __future__ import annotations

import ipaddress
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.jsonrpc.frames import CLIENT, parse_frame
from harn_mcp_mock.jsonrpc.server import Engine, Out

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

SseMode = Literal["auto", "always", "never"]

SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"
LAST_EVENT_ID_HEADER = b"last-event-id"
HANDSHAKE_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
"""Revisions that open a session with ``initialize`` (the SDK's HANDSHAKE_PROTOCOL_VERSIONS)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
JSON = b"application/json"
SSE = b"text/event-stream"


def _id_key(value: Any) -> bytes:
    return orjson.dumps(value)


def _is_request(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("method"), str) and "id" in obj


def _is_reply(obj: Any) -> bool:
    return isinstance(obj, dict) and "method" not in obj and ("result" in obj or "error" in obj)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names the loopback interface only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# --- streams of engine output ----------------------------------------------------------------


@dataclass(slots=True, eq=False)
class _Sink:
    """Where the outputs for one waiting HTTP response go, in order, each with its due time."""

    send: MemoryObjectSendStream[tuple[float, Any] | None]
    receive: MemoryObjectReceiveStream[tuple[float, Any] | None]
    waiting_for: bytes | None
    """The id (as a key) of the request whose response ends this stream; None for GET."""
    last_due: float = 0.0

    def put(self, out: Out, now: float) -> None:
        due = max(self.last_due, now + out.delay_ms / 1000.0)
        self.last_due = due
        try:
            self.send.send_nowait((due, out.message))
        except Exception:  # the client went away: its stream is closed; drop the message
            pass

    def close(self) -> None:
        try:
            self.send.send_nowait(None)
        except Exception:
            pass


def _new_sink(waiting_for: bytes | None) -> _Sink:
    import anyio

    send, receive = anyio.create_memory_object_stream[tuple[float, Any] | None](max_buffer_size=1 << 16)
    return _Sink(send, receive, waiting_for)


@dataclass(slots=True, eq=False)
class HttpSession:
    id: str | None
    engine: Engine
    paused: dict[bytes, _Sink] = field(default_factory=dict)
    """Server-to-client request id -> the stream the continuation belongs on."""
    get_stream: _Sink | None = None
    ended: bool = False
    event_counter: int = 0

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


# --- the ASGI app ------------------------------------------------------------------------------


class StreamableHttpEndpoint:
    """The ASGI endpoint (mount it at the MCP path). See the module docstring for the protocol."""

    def __init__(
        self,
        engine_factory: Callable[[], Engine],
        *,
        sse: SseMode = "auto",
        on_event: Callable[[str], None] | None = None,
    ) -> None:
        if sse not in ("auto", "always", "never"):
            raise UsageError(f"bad sse mode {sse!r}: use auto, always or never")
        self.engine_factory = engine_factory
        self.sse: SseMode = sse
        self.on_event = on_event
        self.sessions: dict[str, HttpSession] = {}
        self.engines: list[Engine] = []
        """Every engine made so far, in order (the CLI merges their reports)."""
        self._sessionless: HttpSession | None = None

    def _new_engine(self) -> Engine:
        engine = self.engine_factory()
        self.engines.append(engine)
        return engine

    def _event(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        method = scope["method"]
        headers = dict(scope["headers"])
        if method == "POST":
            await self._post(headers, receive, send)
        elif method == "GET":
            await self._get(headers, receive, send)
        elif method == "DELETE":
            await self._delete(headers, send)
        else:
            await _plain(send, 405, b"", extra=[(b"allow", b"GET, POST, DELETE")])

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
        body = await _read_body(receive)
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
            self.sessions[session.id] = session
        else:
            found, status, why = self._lookup(headers)
            if found is None:
                await _error(send, status, None, INVALID_REQUEST, why)
                return
            session = found
        extra = [(SESSION_HEADER, session.id.encode())] if session.id else []
        requests = [item for item in items if _is_request(item)]
        if not requests:
            for item in items:
                outs = session.engine.receive(item)
                sink = session.paused.pop(_id_key(item.get("id")), None) if _is_reply(item) else None
                session.route(outs, sink)
            await _plain(send, 202, b"", extra=extra)
            return
        outs = session.engine.receive(obj)
        if isinstance(obj, list):
            await self._batch(session, outs, send, extra)
            return
        key = _id_key(frame.id)
        lone = len(outs) == 1 and outs[0].delay_ms <= 0 and _is_reply(outs[0].message)
        use_sse = wants_sse and (self.sse == "always" or (self.sse == "auto" and not lone))
        if not wants_json:
            use_sse = True
        if lone and not use_sse:
            await _json(send, 200, orjson.dumps(outs[0].message), extra)
            return
        sink = _new_sink(key)
        try:
            session.route(outs, sink)
            if use_sse:
                await self._stream(session, sink, receive, send, extra)
            else:
                await self._collect(session, sink, frame.id, send, extra)
        finally:
            sink.send.close()

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
            await _plain(send, 202, b"", extra=extra)
        else:
            await _json(send, 200, orjson.dumps(replies), extra)

    async def _collect(
        self, session: HttpSession, sink: _Sink, request_id: Any, send: Send, extra: list[tuple[bytes, bytes]]
    ) -> None:
        """JSON-only client: wait for the response; anything else goes to the GET stream."""
        import anyio

        async with sink.receive:
            async for item in sink.receive:
                if item is None:
                    break
                due, message = item
                delay = due - time.monotonic()
                if delay > 0:
                    await anyio.sleep(delay)
                if _is_reply(message) and _id_key(message.get("id")) == sink.waiting_for:
                    await _json(send, 200, orjson.dumps(message), extra)
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
                    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": text}}
                    await _json(send, 200, orjson.dumps(body), extra)
                    return
                else:
                    self._event(
                        f"dropped {message.get('method')!r}: the client accepts JSON only and has no GET stream"
                    )
        await _error(send, 500, None, -32603, "the session ended before the response")

    async def _stream(
        self,
        session: HttpSession,
        sink: _Sink,
        receive: Receive,
        send: Send,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        """Write the sink as SSE until the response to the waited-for request (or the end)."""
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
        stream_no = session.event_counter
        session.event_counter += 1
        async with anyio.create_task_group() as tg:
            tg.start_soon(_watch_disconnect, receive, tg.cancel_scope)
            count = 0
            async with sink.receive:
                async for item in sink.receive:
                    if item is None:
                        break
                    due, message = item
                    delay = due - time.monotonic()
                    if delay > 0:
                        await anyio.sleep(delay)
                    count += 1
                    event = b"event: message\nid: %d-%d\ndata: %s\n\n" % (
                        stream_no,
                        count,
                        orjson.dumps(message),
                    )
                    await send({"type": "http.response.body", "body": event, "more_body": True})
                    if (
                        sink.waiting_for is not None
                        and _is_reply(message)
                        and _id_key(message.get("id")) == sink.waiting_for
                    ):
                        break
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            tg.cancel_scope.cancel()
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
        if session.get_stream is not None:
            await _error(
                send, 409, None, INVALID_REQUEST, "Conflict: this session's GET stream is already open"
            )
            return
        sink = _new_sink(None)
        session.get_stream = sink
        try:
            await self._stream(session, sink, receive, send, [(SESSION_HEADER, session.id.encode())])
        finally:
            sink.send.close()
            if session.get_stream is sink:
                session.get_stream = None

    async def _delete(self, headers: dict[bytes, bytes], send: Send) -> None:
        sid = headers.get(SESSION_HEADER)
        if sid is None:
            await _error(send, 400, None, INVALID_REQUEST, "Bad Request: Missing session ID")
            return
        session = self.sessions.pop(sid.decode("latin-1"), None)
        if session is None:
            await _error(send, 404, None, INVALID_REQUEST, "Not Found: unknown or ended session ID")
            return
        session.ended = True
        for sink in {*session.paused.values(), *([session.get_stream] if session.get_stream else [])}:
            sink.close()
        session.paused.clear()
        await _plain(send, 200, b"")


async def _watch_disconnect(receive: Receive, scope: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _plain(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-length", b"%d" % len(body)), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _json(send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]]) -> None:
    await _plain(send, status, body, [(b"content-type", JSON), *extra])


async def _error(send: Send, status: int, msg_id: Any, code: int, text: str) -> None:
    body = orjson.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": text}})
    await _json(send, status, body, [])


def build_app(
    engine_factory: Callable[[], Engine],
    *,
    path: str = "/mcp",
    sse: SseMode = "auto",
    on_event: Callable[[str], None] | None = None,
) -> tuple[Any, StreamableHttpEndpoint]:
    """(Starlette app, endpoint) serving ``engine_factory``'s engines at ``path``."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    endpoint = StreamableHttpEndpoint(engine_factory, sse=sse, on_event=on_event)
    app = Starlette(routes=[Route(path, endpoint=endpoint, methods=["GET", "POST", "DELETE"])])
    return app, endpoint


# --- running it ----------------------------------------------------------------------------


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _print_url(url: str) -> None:
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
    ) -> None:
        if not allow_remote and not is_loopback(host):
            raise UsageError(
                f"refusing to listen on {host!r}: only loopback by default (pass --allow-remote to bind elsewhere)",
                where="--host",
            )
        self.app = app
        self.lifespan = lifespan
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
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

    def run(self, on_ready: Callable[[str], None] | None = _print_url) -> None:
        """Serve until :meth:`stop` (or a signal, in the main thread). ``on_ready(url)`` first.

        The socket is already listening, so a client that connects right after ``on_ready``
        waits in the backlog rather than being refused.
        """
        import asyncio

        import uvicorn

        config = uvicorn.Config(
            self.app,
            log_level="warning",
            lifespan=self.lifespan,
            ws="none",
            access_log=False,
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        if self._stop_requested:
            self._server.should_exit = True
        if on_ready is not None:
            on_ready(self.url)
        previous = None
        if threading.current_thread() is threading.main_thread():
            # uvicorn re-raises the signal that stopped it; make SIGTERM end like Ctrl-C so the
            # caller still writes its cassette or report.
            previous = signal.signal(signal.SIGTERM, _interrupt)
        try:
            asyncio.run(self._server.serve(sockets=[self.socket]))
        finally:
            self.socket.close()
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    def stop(self) -> None:
        self._stop_requested = True
        if self._server is not None:
            self._server.should_exit = True


def serve_http(
    engine_factory: Callable[[], Engine],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    path: str = "/mcp",
    allow_remote: bool = False,
    sse: SseMode = "auto",
    on_ready: Callable[[str], None] | None = _print_url,
    on_event: Callable[[str], None] | None = None,
) -> StreamableHttpEndpoint:
    """Serve engines over Streamable HTTP until interrupted; returns the endpoint (its engines).

    ``on_ready(url)`` is called once the socket listens; by default it prints the URL as one
    line on stdout (the first line, for scripts).
    """
    app, endpoint = build_app(engine_factory, path=path, sse=sse, on_event=on_event)
    HttpServer(app, host=host, port=port, path=path, allow_remote=allow_remote).run(on_ready)
    return endpoint
