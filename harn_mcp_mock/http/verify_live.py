"""Record a fresh candidate by replaying a cassette's client side against a live Streamable HTTP server.

The HTTP counterpart of :func:`harn_mcp_mock.verify.live.rerun_live`: the baseline's client
messages are POSTed in recorded order, one at a time (a request waits for its answer, a JSON
body or the SSE stream up to the response, bounded by ``timeout``). The ``Mcp-Session-Id`` the
server issues on ``initialize`` is sent from then on, with ``MCP-Protocol-Version`` once
negotiated (on POST, GET and DELETE), plus each ``--header``. A 2026-07-28-era request (its
``params._meta`` carries the protocol version) also gets the routing headers that era requires:
``MCP-Protocol-Version`` equal to that version, ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*``
(:meth:`_HttpRerun.routing_headers`). Server-to-client requests on a stream are answered from the
baseline's recorded client answers (as over stdio) by a POST while the stream stays open. At
the end the session is ended with ``DELETE``. Every message is redacted and recorded through
the usual :class:`~harn_mcp_mock.record.recorder.Recorder`, with the cassette's ``http`` list.

Once the session is set up (after the first message that follows ``initialize``), the
standalone ``GET`` stream is opened too, in a thread of its own (:class:`_GetStream`): what the
server sends there (notifications, server-to-client requests, answered from the baseline as
on a POST stream) is recorded with the rest. A server that does not offer it (``405``) is
fine: the status is noted and nothing else happens. The stream ends when the server ends it
(after ``DELETE``) or, at the latest, ``timeout`` seconds after ``DELETE``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from harn_mcp_mock.cassette.matching import Matcher
from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.errors import ServerError
from harn_mcp_mock.http.record_proxy import REPLAYED_HEADERS, SseSplitter, open_recorder
from harn_mcp_mock.jsonrpc.frames import CLIENT, SERVER, Frame, batch_items, parse_frame
from harn_mcp_mock.verify.live import RoundTrips, _Answers

if TYPE_CHECKING:
    import httpx2

    from harn_mcp_mock.record.recorder import Recorder

ACCEPT = "application/json, text/event-stream"


class _HttpRerun:
    def __init__(
        self,
        client: httpx2.Client,
        url: str,
        recorder: Recorder,
        redactor: Any,
        headers: dict[str, str],
        answers: _Answers,
        version: str | None,
        trips: RoundTrips | None = None,
    ) -> None:
        self.client = client
        self.url = url
        self.recorder = recorder
        self.redactor = redactor
        self.headers = headers
        self.answers = answers
        self.version = version
        self.trips = trips
        self.session: str | None = None
        self.param_headers: dict[str, dict[tuple[str, ...], str]] = {}
        """Tool name -> its ``x-mcp-header`` map (``Mcp-Param-*``), from the latest ``tools/list``."""
        self.http: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        """Held while recording: the GET stream's thread records too."""

    def _headers(self) -> dict[str, str]:
        out = {"accept": ACCEPT, "content-type": "application/json", **self.headers}
        if self.session is not None:
            out["mcp-session-id"] = self.session
        if self.version is not None:
            out["mcp-protocol-version"] = self.version
        return out

    def routing_headers(self, message: Any) -> dict[str, str]:
        """The per-request headers of the 2026-07-28 HTTP era, for a request that carries its envelope.

        A request whose ``params._meta`` names its protocol version (every request of a
        ``server/discover``-era client) gets ``MCP-Protocol-Version`` equal to it, ``Mcp-Method``,
        ``Mcp-Name`` for ``tools/call``, ``prompts/get`` and ``resources/read``, and the
        ``Mcp-Param-*`` headers its tool's ``inputSchema`` declares (``x-mcp-header``), exactly as
        the SDK client stamps them; servers answer 400 without them. That version is kept for
        the messages that follow (answers, ``GET``, ``DELETE``). Anything else gets nothing here.
        """
        from mcp.shared.inbound import (
            MCP_METHOD_HEADER,
            MCP_NAME_HEADER,
            MCP_PROTOCOL_VERSION_HEADER,
            NAME_BEARING_METHODS,
            encode_header_value,
            mcp_param_headers,
        )
        from mcp_types import PROTOCOL_VERSION_META_KEY

        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return {}
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
        if not isinstance(version, str) or not isinstance(params, dict):
            return {}
        self.version = version
        method = message["method"]
        out = {MCP_PROTOCOL_VERSION_HEADER: version, MCP_METHOD_HEADER: method}
        name_key = NAME_BEARING_METHODS.get(method)
        if name_key is not None and isinstance(name := params.get(name_key), str):
            out[MCP_NAME_HEADER] = encode_header_value(name)
        if method == "tools/call" and isinstance(name := params.get("name"), str):
            arguments = params.get("arguments")
            header_map = self.param_headers.get(name)
            if header_map and isinstance(arguments, dict):
                out.update(mcp_param_headers(header_map, arguments))
        return out

    def learn_tools(self, result: dict[str, Any]) -> None:
        """Note each listed tool's ``Mcp-Param-*`` headers (as the SDK client does on ``tools/list``)."""
        from mcp.shared.inbound import find_invalid_x_mcp_header, x_mcp_header_map

        for tool in result.get("tools") or []:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                schema = tool.get("inputSchema")
                if find_invalid_x_mcp_header(schema) is None:
                    self.param_headers[tool["name"]] = x_mcp_header_map(schema)

    def _record(self, frame: Frame) -> int | None:
        if frame.kind == "invalid" and not frame.raw.strip():
            return None
        with self.lock:
            seq = sum(self.recorder.counts.values())
            self.recorder.feed_frame(frame)
        return seq

    def _note(self, method: str, seq: int | None, response: httpx2.Response) -> None:
        kept = {k: response.headers[k] for k in REPLAYED_HEADERS if k in response.headers}
        with self.lock:
            self._add_note(method, seq, response, kept)

    def _add_note(
        self, method: str, seq: int | None, response: httpx2.Response, kept: dict[str, str]
    ) -> None:
        self.http.append(
            {
                "seq": seq,
                "method": method,
                "status": response.status_code,
                "content_type": response.headers.get("content-type") or None,
                "headers": {k: str(v) for k, v in self.redactor.redact_message(kept).items()},
            }
        )

    def post(self, message: Any) -> None:
        """POST one client message; read its answer (answering server requests on the way)."""
        body = orjson.dumps(message)
        seq = self._record(parse_frame(body, CLIENT))
        waiting = {orjson.dumps(f.id) for f in batch_items(parse_frame(body, CLIENT)) if f.kind == "request"}
        routing = self.routing_headers(message)
        headers = {**self._headers(), **routing}
        with self.client.stream("POST", self.url, content=body, headers=headers) as response:
            self._note("POST", seq, response)
            session = response.headers.get("mcp-session-id")
            if session and self.session is None:
                self.session = session
            kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
            if kind == "text/event-stream":
                splitter = SseSplitter()
                for chunk in response.iter_raw():
                    for data in splitter.feed(chunk):
                        self._server(parse_frame(data, SERVER), waiting)
                    if not waiting:
                        return
                return
            data = response.read()
            if data and kind == "application/json":
                self._server(parse_frame(data, SERVER), waiting)

    def _server(self, frame: Frame, waiting: set[bytes]) -> None:
        if self._record(frame) is None:
            return
        for item in batch_items(frame):
            if item.kind in ("response", "error"):
                waiting.discard(orjson.dumps(item.id))
                if self.trips is not None:
                    self.trips.incoming(item.obj)
                if isinstance(item.obj, dict) and isinstance(item.obj.get("result"), dict):
                    result = item.obj["result"]
                    version = result.get("protocolVersion")
                    if isinstance(version, str) and "serverInfo" in result:
                        self.version = version
                    if isinstance(result.get("tools"), list):
                        self.learn_tools(result)
            elif item.kind == "request" and isinstance(item.obj, dict):
                self.reply(self.answers.answer(item.obj))

    def reply(self, message: dict[str, Any]) -> None:
        body = orjson.dumps(message)
        seq = self._record(parse_frame(body, CLIENT))
        response = self.client.post(self.url, content=body, headers=self._headers())
        self._note("POST", seq, response)

    def end(self) -> None:
        if self.session is None:
            return
        response = self.client.delete(self.url, headers=self._headers())
        self._note("DELETE", None, response)


class _GetStream:
    """The session's standalone ``GET`` SSE stream, read in a thread with its own event loop.

    Server messages on it are recorded as they come; server-to-client requests are answered
    (from the baseline) by a POST from that thread. :meth:`finish` waits (bounded) for the
    server to end the stream, then cancels the reader.
    """

    def __init__(self, run: _HttpRerun, timeout: float, on_event: Callable[[str], None] | None) -> None:
        self.run = run
        self.timeout = timeout
        self.on_event = on_event
        self.headers = {**run._headers(), "accept": "text/event-stream"}
        self.headers.pop("content-type", None)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._started.wait(self.timeout)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._started.set()
        try:
            await self._read()
        except asyncio.CancelledError:
            pass

    async def _read(self) -> None:
        import httpx2

        timeout = httpx2.Timeout(self.timeout, read=None)  # a quiet stream is no error
        try:
            async with httpx2.AsyncClient(timeout=timeout, follow_redirects=False) as client:
                async with client.stream("GET", self.run.url, headers=self.headers) as response:
                    self.run._note("GET", None, response)
                    kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
                    if response.status_code != 200 or kind != "text/event-stream":
                        return
                    splitter = SseSplitter()
                    async for chunk in response.aiter_raw():
                        for data in splitter.feed(chunk):
                            for answer in self._server(parse_frame(data, SERVER)):
                                body = orjson.dumps(answer)
                                seq = self.run._record(parse_frame(body, CLIENT))
                                posted = await client.post(
                                    self.run.url, content=body, headers=self.run._headers()
                                )
                                self.run._note("POST", seq, posted)
        except httpx2.HTTPError as exc:
            if self.on_event is not None:
                self.on_event(f"the GET stream failed: {type(exc).__name__}: {exc}")

    def _server(self, frame: Frame) -> list[dict[str, Any]]:
        """Record a server message from the stream; the answers to the requests in it."""
        if self.run._record(frame) is None:
            return []
        return [
            self.run.answers.answer(item.obj)
            for item in batch_items(frame)
            if item.kind == "request" and isinstance(item.obj, dict)
        ]

    def finish(self) -> None:
        """Let the server end the stream (it does after ``DELETE``), then stop reading."""
        self._thread.join(self.timeout)
        if self._thread.is_alive() and self._loop is not None and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
            self._thread.join(self.timeout)


def rerun_live_http(
    base: Cassette,
    url: str,
    candidate: str | Path,
    *,
    headers: Sequence[str] = (),
    policy_path: str | Path | None = None,
    timeout: float = 30.0,
    on_event: Callable[[str], None] | None = None,
) -> Cassette:
    """Drive the Streamable HTTP server at ``url`` with ``base``'s client side; the candidate."""
    import httpx2

    recorder, redactor, parsed = open_recorder(candidate, url, headers, policy_path=policy_path)
    server = base.server
    version = server.get("protocolVersion") if server.get("handshake") == "server/discover" else None
    reason = "client-eof"
    try:
        with httpx2.Client(timeout=httpx2.Timeout(timeout), follow_redirects=False) as client:
            run = _HttpRerun(
                client,
                url,
                recorder,
                redactor,
                parsed,
                _Answers(base, Matcher()),
                version if isinstance(version, str) else None,
                RoundTrips(base),
            )
            stream: _GetStream | None = None
            try:
                for msg in base.messages:
                    if msg.direction != "client" or msg.invalid is not None:
                        continue
                    items = list(batch_items(parse_frame(orjson.dumps(msg.message), CLIENT)))
                    if all(f.kind in ("response", "error") for f in items):
                        continue  # the client's answers to server requests are given live
                    try:
                        run.post(run.trips.outgoing(msg.seq, msg.message) if run.trips else msg.message)
                    except httpx2.TimeoutException:
                        if on_event is not None:
                            on_event(f"the live server did not answer within {timeout:g}s; moving on")
                    initialize = any(f.method == "initialize" for f in items)
                    if stream is None and run.session is not None and not initialize:
                        stream = _GetStream(run, timeout, on_event)  # the session is set up
                        stream.start()
                run.end()
            except httpx2.HTTPError as exc:
                raise ServerError(
                    f"cannot reach the live server {url}: {type(exc).__name__}: {exc}"
                ) from None
            finally:
                if stream is not None:
                    stream.finish()
    except BaseException:
        recorder.discard()
        raise
    extra = {"http": run.http} if run.http else None
    return recorder.finish({"code": None, "signal": None, "reason": reason}, extra=extra)
