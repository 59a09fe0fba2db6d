"""Record a Streamable HTTP MCP server: a reverse proxy on loopback that forwards to ``upstream``.

Every request (POST, GET, DELETE) is forwarded with its headers (``Mcp-Session-Id``,
``MCP-Protocol-Version``, ``Last-Event-ID``, ``Authorization``...) plus the ``--header``
values; every answer comes back with its status and headers, JSON bodies whole and SSE streams
event by event, as they arrive. Each JSON-RPC message seen in either direction goes through
the :class:`~harn_mcp_mock.session.recorder.Recorder` (redacted there, as over stdio). The
HTTP-level facts (method, status, content type, redacted headers) of every exchange are kept
in :attr:`RecordProxy.exchanges`; the cassette's optional ``http`` list keeps, per exchange, the
seq of the client message it carried, the method, the status, the content type, the
response headers worth replaying and, for a GET, the seqs of the messages that came on its
SSE stream (:meth:`RecordProxy.http_entries`; replay sends those on its GET stream again).

An upstream that cannot be reached (refused connection, bad TLS, timeout) is answered with
``502`` and a JSON-RPC error naming the upstream and the cause, so the client fails clearly.

A redirect whose ``Location`` is on the upstream's origin is rewritten to the same place
through the proxy (which then serves that path too), and kept origin-relative in the
cassette. An SSE relay ends with the upstream's stream, with its client (the upstream stream
is then closed too) and when the proxy shuts down (:meth:`RecordProxy.close`).
"""

from __future__ import annotations

import signal
import urllib.parse
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harn_mcp_mock import deepjson
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.http.guard import GuardSettings, guard_middleware
from harn_mcp_mock.http.server import (
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
from harn_mcp_mock.jsonrpc.codes import INTERNAL_ERROR
from harn_mcp_mock.jsonrpc.frames import CLIENT, SERVER, Frame, parse_frame
from harn_mcp_mock.options import LiveTarget, RecordOptions
from harn_mcp_mock.record.session import http_recorder
from harn_mcp_mock.upstream.http import (
    HOP_BY_HOP,
    KEPT_RESPONSE_HEADERS,
    REPLAYED_HEADERS,
    HttpForwarder,
    SseSplitter,
    describe_error,
    upstream_relative,
)

if TYPE_CHECKING:
    import httpx2

    from harn_mcp_mock.cassette.claim import CassetteClaim
    from harn_mcp_mock.cassette.model import Cassette
    from harn_mcp_mock.session.recorder import MessageRedactor, Recorder
    from harn_mcp_mock.shutdown import StopSignals


class RecordProxy:
    """The ASGI reverse proxy. Use :meth:`lifespan` (Starlette) to own the upstream client."""

    def __init__(
        self,
        upstream: str,
        recorder: Recorder,
        redactor: MessageRedactor,
        *,
        headers: Mapping[str, str] | None = None,
        verify: bool | str = True,
        on_event: Callable[[str], None] | None = None,
        path: str = "/mcp",
    ) -> None:
        self.forwarder = HttpForwarder(upstream, verify=verify)
        """The upstream side: one async client, owned by :meth:`lifespan`."""
        self.upstream = upstream
        self.path = path
        """The proxy's own path: it stands for ``upstream``."""
        upstream_path = urllib.parse.urlsplit(upstream).path or "/"
        self.paths: dict[str, str] = {}
        """Other paths the proxy serves: the upstream paths it redirected to (proxy path -> URL)."""
        self._upstream_path = upstream_path
        self.recorder = recorder
        self.redactor = redactor
        self.headers = dict(headers or {})
        self.verify = verify
        self.on_event = on_event
        self.exchanges: list[dict[str, Any]] = []
        """One entry per HTTP exchange: method, status, content type, redacted headers, rpc ids."""
        self._last_seq: int | None = None
        self._closing: Any = None
        """An anyio Event, set when the server shuts down: open streams end then."""

    def http_entries(self) -> list[dict[str, Any]]:
        """The cassette's ``http`` list: one entry per exchange that got a status."""
        entries: list[dict[str, Any]] = []
        for exchange in self.exchanges:
            if "status" not in exchange or exchange["method"] not in ("POST", "GET", "DELETE"):
                continue
            headers = exchange.get("response_headers") or {}
            entry = {
                "seq": exchange.get("seq"),
                "method": exchange["method"],
                "status": exchange["status"],
                "content_type": exchange.get("content_type"),
                "headers": {k: str(headers[k]) for k in REPLAYED_HEADERS if k in headers},
            }
            if exchange.get("events"):
                entry["events"] = list(exchange["events"])
            entries.append(entry)
        return entries

    @asynccontextmanager
    async def lifespan(self, _app: Any) -> AsyncIterator[None]:
        import anyio

        self._closing = anyio.Event()
        async with self.forwarder.running():
            yield

    def _unanswered(self, frame: Frame, exchange: dict[str, Any]) -> None:
        """A request that got a non-2xx status and no JSON-RPC answer (a redirect, 401, 429...)
        was never answered: its client sends it again (often with the same id), and the answer to
        that one must pair with it, not with this one. The recorder pairs by id, first come
        first served, so this one leaves its queue of waiting requests."""
        status = exchange.get("status")
        if not isinstance(status, int) or 200 <= status < 300:
            return
        answered = {deepjson.dumps(i) for i in exchange.get("server_ids") or ()}
        seq = exchange.get("seq")
        observer = self.recorder.observer
        items = frame.obj if isinstance(frame.obj, list) else [frame.obj]
        for item in items:
            if not (isinstance(item, dict) and "method" in item and "id" in item):
                continue
            if deepjson.dumps(item["id"]) in answered or not isinstance(seq, int):
                continue
            self.recorder.forget_request(CLIENT, item["id"], seq)
            if observer is not None:  # on the tape as answered by the status alone
                observer.on_status(item["id"], status, None)

    def close(self) -> None:
        """End every stream being relayed (the server is shutting down); call it on the loop."""
        if self._closing is not None:
            self._closing.set()

    async def _watch_closing(self, scope: Any) -> None:
        await self._closing.wait()
        scope.cancel()

    def _event(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    def _record(self, frame: Frame) -> list[Any]:
        """Feed a frame to the recorder; the JSON-RPC ids it carries (for the exchange log)."""
        if frame.kind == "invalid" and not frame.raw.strip():
            return []
        self._last_seq = sum(self.recorder.counts.values())  # the seq the recorder gives it
        self.recorder.feed_frame(frame)
        items = frame.obj if isinstance(frame.obj, list) else [frame.obj]
        return [item.get("id") for item in items if isinstance(item, dict) and "id" in item]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        method: str = scope["method"]
        body = await read_body(receive) if method in ("POST", "PUT", "PATCH") else b""
        exchange: dict[str, Any] = {"method": method}
        request_headers = {
            k.decode("latin-1"): v.decode("latin-1")
            for k, v in scope["headers"]
            if k.lower() not in HOP_BY_HOP
        }
        request_headers.update(self.headers)
        request_headers["accept-encoding"] = "identity"
        exchange["request_headers"] = self.recorder.redact_unwritten(
            {k.lower(): v for k, v in request_headers.items() if k.lower() != "accept-encoding"}
        )  # never written: its secrets are learned, not counted in the cassette's findings
        request_frame: Frame | None = None
        if body:
            request_frame = parse_frame(body, CLIENT)
            self._last_seq = None
            exchange["client_ids"] = self._record(request_frame)
            exchange["seq"] = self._last_seq
        self.exchanges.append(exchange)
        url = self.upstream if scope["path"] == self.path else self.paths.get(scope["path"])
        if url is None:
            await send_plain(send, 404, b"")
            return
        if scope.get("query_string"):
            url += ("&" if "?" in url else "?") + scope["query_string"].decode("latin-1")
        import httpx2

        try:
            response = await self.forwarder.open(method, url, request_headers, body or None)
        except httpx2.HTTPError as exc:
            cause = describe_error(exc)
            said = f"cannot reach the upstream server {self.upstream}: {cause}"
            self._event(said)  # the CLI puts its own name before it
            text = f"harn-mcp-mock record: {said}"
            exchange.update(status=502, error=cause, content_type="application/json")
            if request_frame is not None:
                self._unanswered(request_frame, exchange)
            msg_id = (
                request_frame.id if request_frame is not None and request_frame.kind == "request" else None
            )
            error = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": INTERNAL_ERROR, "message": text}}
            await send_json(send, 502, deepjson.dumps(error), [])
            return
        try:
            await self._relay(response, exchange, receive, send, scope, url)
        finally:
            await response.aclose()
            if request_frame is not None:
                self._unanswered(request_frame, exchange)

    def _redirect(self, location: str, request_url: str, scope: Scope) -> tuple[str, str] | None:
        """For a ``Location`` on the upstream's origin: (what the client gets: the same place
        through the proxy, what the cassette keeps: the origin-relative path); None otherwise."""
        relative = upstream_relative(location, request_url, self.upstream)
        if relative is None:
            return None
        target = urllib.parse.urlsplit(relative)
        if target.path == self._upstream_path:
            proxy_path = self.path
        else:
            proxy_path = target.path
            if proxy_path != self.path:
                self.paths[proxy_path] = urllib.parse.urljoin(self.upstream, target.path)
        host = dict(scope["headers"]).get(b"host")
        if host is None:
            server_host, server_port = scope.get("server") or ("127.0.0.1", None)
            host = f"{server_host}:{server_port}".encode() if server_port else str(server_host).encode()
        through = urllib.parse.urlunsplit(
            (scope.get("scheme", "http"), host.decode("latin-1"), proxy_path, target.query, target.fragment)
        )
        return through, relative

    async def _relay(
        self,
        response: httpx2.Response,
        exchange: dict[str, Any],
        receive: Receive,
        send: Send,
        scope: Scope,
        request_url: str,
    ) -> None:
        content_type = response.headers.get("content-type", "")
        exchange["status"] = response.status_code
        exchange["content_type"] = content_type or None
        kept = {k: response.headers[k] for k in KEPT_RESPONSE_HEADERS if k in response.headers}
        rewritten = None
        if 300 <= response.status_code < 400 and "location" in response.headers:
            rewritten = self._redirect(response.headers["location"], request_url, scope)
            if rewritten is not None:
                kept["location"] = rewritten[1]  # the cassette stays free of the upstream's host
        written = {k: v for k, v in kept.items() if k in REPLAYED_HEADERS}  # in the http entries
        exchange["response_headers"] = {
            **self.recorder.redact_unwritten({k: v for k, v in kept.items() if k not in written}),
            **self.redactor.redact_message(written),
        }
        if response.status_code >= 400 or 300 <= response.status_code < 400:
            self._event(f"upstream answered {exchange['method']} with HTTP {response.status_code}")
        headers = [(k.lower(), v) for k, v in response.headers.raw if k.lower() not in HOP_BY_HOP]
        if rewritten is not None:
            location = rewritten[0].encode("latin-1")
            headers = [(k, location if k == b"location" else v) for k, v in headers]
        server_ids: list[Any] = []
        exchange["server_ids"] = server_ids
        if content_type.partition(";")[0].strip().lower() == "text/event-stream":
            import anyio
            import httpx2

            await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
            splitter = SseSplitter()
            # Relay until the upstream ends the stream, the client goes away (then the upstream
            # stream is closed too: the server sees the client leave) or the proxy shuts down.
            async with anyio.create_task_group() as tg:
                tg.start_soon(watch_disconnect, receive, tg.cancel_scope)
                tg.start_soon(self._watch_closing, tg.cancel_scope)
                try:
                    async for chunk in response.aiter_raw():
                        for data in splitter.feed(chunk):
                            server_ids.extend(self._record(parse_frame(data, SERVER)))
                            if exchange["method"] == "GET" and self._last_seq is not None:
                                exchange.setdefault("events", []).append(self._last_seq)
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
                except httpx2.HTTPError as exc:  # cut off, or quiet past the read timeout
                    # End the client's stream too (it may resume it with Last-Event-ID).
                    self._event(f"the upstream's SSE stream broke off: {describe_error(exc)}")
                tg.cancel_scope.cancel()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        body = await response.aread()
        if body and content_type.partition(";")[0].strip().lower() == "application/json":
            server_ids.extend(self._record(parse_frame(body, SERVER)))
        await send_plain(send, response.status_code, body, headers)


def build_proxy_app(proxy: RecordProxy, *, path: str = "/mcp", guard: GuardSettings | None = None) -> Any:
    from starlette.applications import Starlette
    from starlette.routing import Route

    # Its own path, and any other: the upstream paths it redirected to (others get 404 there).
    methods = ["GET", "POST", "DELETE"]
    return Starlette(
        routes=[
            Route(path, endpoint=proxy, methods=methods),
            Route("/{rest:path}", endpoint=proxy, methods=methods),
        ],
        lifespan=proxy.lifespan,
        middleware=guard_middleware(guard),
    )


def record_http(
    cassette: str | Path,
    live: LiveTarget | str,
    options: RecordOptions | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    path: str = "/mcp",
    allow_remote: bool = False,
    verify: bool | str = True,
    on_ready: Callable[[str], None] | None = print_url,
    on_event: Callable[[str], None] | None = None,
    on_server: Callable[[HttpServer], None] | None = None,
    guard: GuardSettings | None = None,
    claim: CassetteClaim | None = None,
    stop: StopSignals | None = None,
    emit_tape: str | Path | None = None,
) -> tuple[Cassette, RecordProxy]:
    """Run the recording proxy until a stop signal (SIGINT, SIGTERM, SIGHUP) or ``server.stop()``;
    write the cassette (``exit.reason`` ``signal:NAME`` or ``proxy-stopped``). ``live``: the
    Streamable HTTP server (a :class:`~harn_mcp_mock.options.LiveTarget` with its URL and
    ``--header`` values, or the URL alone). ``options`` says how (policy, ``allow_empty``): without a single client message, nothing
    is written and :class:`~harn_mcp_mock.errors.NothingRecordedError` is raised, unless
    ``options.allow_empty``. ``guard``: the Origin/Host/body-size checks (defaults for ``host``).

    Holds the cassette's recording claim throughout (:mod:`harn_mcp_mock.cassette.claim`;
    ``claim``: one held already, as ``replay --http --mode once`` passes). ``stop``: the stop
    signals the caller catches already (see :meth:`HttpServer.run`). ``emit_tape``: also write
    every exchange, redacted, to an event tape (as ``record --emit-tape`` over stdio), redacted
    again at the end with what the redactor learned."""
    from harn_mcp_mock.cassette.claim import recording_claim

    target = live if isinstance(live, LiveTarget) else LiveTarget(url=live)
    if target.url is None:
        raise UsageError("an HTTP recording needs the server's URL (--url), not a command", where="--url")
    upstream = target.url
    opts = options if options is not None else RecordOptions()
    with recording_claim(cassette, claim):
        recorder, redactor, parsed = http_recorder(cassette, target, policy_path=opts.redact_policy)
        if emit_tape is None:
            return _record_claimed(
                upstream, recorder, redactor, parsed, opts, host, port, path, allow_remote, verify,
                on_ready, on_event, on_server, guard, stop,
            )  # fmt: skip
        from harn_mcp_mock.session.tape import RecordingTape

        shown = recorder.command  # ["--url", URL, "--header", "NAME:VALUE"...], redacted
        try:
            tape = RecordingTape(emit_tape, script_path=shown[1], argv=shown[2:])
        except BaseException:
            recorder.discard()
            raise
        tape.redactors.append(redactor)
        recorder.observer = tape.observer(
            urllib.parse.urlsplit(shown[1]).netloc.rpartition("@")[2] or shown[1]
        )
        done = False
        try:
            result = _record_claimed(
                upstream, recorder, redactor, parsed, opts, host, port, path, allow_remote, verify,
                on_ready, on_event, on_server, guard, stop,
            )  # fmt: skip
            done = True
            return result
        finally:  # requests never answered are on the tape too, when the recording finished
            tape.close(unanswered=done)


def _record_claimed(
    upstream: str,
    recorder: Recorder,
    redactor: MessageRedactor,
    parsed: dict[str, str],
    opts: RecordOptions,
    host: str,
    port: int,
    path: str,
    allow_remote: bool,
    verify: bool | str,
    on_ready: Callable[[str], None] | None,
    on_event: Callable[[str], None] | None,
    on_server: Callable[[HttpServer], None] | None,
    guard: GuardSettings | None,
    stop: StopSignals | None,
) -> tuple[Cassette, RecordProxy]:
    """:func:`record_http` once the claim is held and the recorder made."""
    try:
        proxy = RecordProxy(
            upstream, recorder, redactor, headers=parsed, verify=verify, on_event=on_event, path=path
        )
        server = HttpServer(
            build_proxy_app(proxy, path=path, guard=guard or GuardSettings.for_host(host)),
            host=host,
            port=port,
            path=path,
            allow_remote=allow_remote,
            lifespan="on",
            on_shutdown=proxy.close,
        )
    except BaseException:
        recorder.discard()
        raise
    if on_server is not None:
        on_server(server)
    try:
        server.run(on_ready, stop=stop)
    except BaseException:
        recorder.broke_off()  # a journal with client messages stays for `harn mcp mock recover`
        raise
    stopped = server.stopped_by
    reason = "proxy-stopped" if stopped is None else f"signal:{signal.Signals(stopped).name}"
    entries = proxy.http_entries()
    extra = {"http": entries} if entries else None
    exit_info = {"code": None, "signal": None, "reason": reason}
    return recorder.finish(exit_info, extra=extra, allow_empty=opts.allow_empty), proxy
