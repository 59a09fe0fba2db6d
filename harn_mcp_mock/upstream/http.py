"""A live MCP server behind a Streamable HTTP endpoint: the one home of our HTTP client side.

Two users: :class:`HttpUpstream` drives a server one message at a time (the
:class:`~harn_mcp_mock.upstream.base.Upstream` interface: ``verify --url`` against a live
server), and :class:`HttpForwarder` relays whole HTTP exchanges, streams included, for the
recording reverse proxy (``record --url``). Both use httpx (imported on first use, it is heavy),
the same SSE parser (:class:`SseSplitter`) and the same header rules.

:class:`HttpUpstream` POSTs each message (a JSON body or an SSE stream answers it, server
requests on the way included), sends the ``Mcp-Session-Id`` the server issued on
``initialize`` from then on, with ``MCP-Protocol-Version`` once negotiated, plus each
``--header``; a 2026-07-28-era request (its ``params._meta`` carries the protocol version) also
gets the routing headers that era requires (:meth:`HttpUpstream.routing_headers`). It opens the
standalone ``GET`` stream on :meth:`~HttpUpstream.listen` (a thread of its own; a ``405`` is
noted and nothing else happens) and ends the session with ``DELETE`` on
:meth:`~HttpUpstream.close`. Every exchange is noted (method, status, content type, the
response headers worth replaying, redacted) for the cassette's ``http`` list.
"""

from __future__ import annotations

import asyncio
import threading
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import orjson

from harn_mcp_mock.errors import ServerError, UpstreamTimeout, UsageError
from harn_mcp_mock.jsonrpc.frames import SERVER, Frame, batch_items, parse_frame
from harn_mcp_mock.options import parse_header_option as parse_header_option  # (its home was here)
from harn_mcp_mock.upstream.base import ExitInfo, Reply, answered_ids

if TYPE_CHECKING:
    import httpx2

ACCEPT = "application/json, text/event-stream"

HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"host",
        b"content-length",
        b"accept-encoding",
        b"content-encoding",
    }
)
KEPT_RESPONSE_HEADERS = ("content-type", "mcp-session-id", "location", "retry-after", "www-authenticate")
REPLAYED_HEADERS = ("location", "retry-after", "www-authenticate")
"""The response headers the cassette's ``http`` entries keep (redacted)."""


def _origin(url: urllib.parse.SplitResult) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme.lower())
    return url.scheme.lower(), (url.hostname or "").lower(), url.port or default


def upstream_relative(location: str, request_url: str, upstream: str) -> str | None:
    """``location`` (as answered to ``request_url``) as a path on the upstream's origin
    (``/path?query``), or None when it points elsewhere."""
    target = urllib.parse.urlsplit(urllib.parse.urljoin(request_url, location))
    if _origin(target) != _origin(urllib.parse.urlsplit(upstream)):
        return None
    return urllib.parse.urlunsplit(("", "", target.path or "/", target.query, target.fragment))


class SseSplitter:
    """Incremental SSE parser: feed bytes, get the ``data`` of each complete event.

    Linear in what it is fed: a chunk is scanned once, from where the last scan ended, and the
    pieces of an unfinished event are joined once, when it ends (a 20 MB answer arrives in
    hundreds of chunks; concatenating and re-scanning the buffer on each was quadratic).
    """

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        """The current, unfinished event's bytes so far (line ends already ``\n``)."""
        self._cr = False
        """The last chunk ended with ``\r`` (held back: a ``\r\n`` may be cut in two)."""

    def feed(self, chunk: bytes) -> list[bytes]:
        if self._cr:
            chunk, self._cr = b"\r" + chunk, False
        if chunk.endswith(b"\r"):
            chunk, self._cr = chunk[:-1], True
        chunk = chunk.replace(b"\r\n", b"\n")
        events: list[bytes] = []
        start = 0
        if chunk.startswith(b"\n") and self._parts and self._parts[-1].endswith(b"\n"):
            self._parts[-1] = self._parts[-1][:-1]  # the blank line was cut between two chunks
            self._emit(events)
            start = 1
        while True:
            end = chunk.find(b"\n\n", start)
            if end < 0:
                break
            self._parts.append(chunk[start:end])
            self._emit(events)
            start = end + 2
        if start < len(chunk):
            self._parts.append(chunk[start:])
        return events

    def _emit(self, events: list[bytes]) -> None:
        block = self._parts[0] if len(self._parts) == 1 else b"".join(self._parts)
        self._parts = []
        data = [line[5:].removeprefix(b" ") for line in block.split(b"\n") if line.startswith(b"data:")]
        if data:
            events.append(b"\n".join(data))


def describe_error(exc: Exception) -> str:
    """A one-line cause for an httpx error (refused, TLS, timeout...)."""
    parts: list[str] = []
    current: BaseException | None = exc
    while current is not None and len(parts) < 4:
        text = str(current).strip()
        if text and text not in parts:
            parts.append(text)
        current = current.__cause__ or current.__context__
    kind = type(exc).__name__
    if "CERTIFICATE" in " ".join(parts).upper() or "SSL" in " ".join(parts).upper():
        kind = "TLS error"
    return f"{kind}: {'; '.join(parts) or 'no detail'}"


class HttpUpstream:
    """One session with a live Streamable HTTP server (synchronous; the GET stream in a thread)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        version: str | None = None,
        redact_headers: Callable[[dict[str, str]], dict[str, Any]] | None = None,
        on_event: Callable[[str], None] | None = None,
    ) -> None:
        import httpx2

        self.url = url
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.version = version
        """The negotiated protocol version (sent as ``MCP-Protocol-Version``)."""
        self.session: str | None = None
        self.param_headers: dict[str, dict[tuple[str, ...], str]] = {}
        """Tool name -> its ``x-mcp-header`` map (``Mcp-Param-*``), from the latest ``tools/list``."""
        self.http: list[dict[str, Any]] = []
        """One note per exchange: the cassette's ``http`` list."""
        self._redact = redact_headers or (lambda h: h)
        self._on_event = on_event
        self._lock = threading.Lock()
        self._stream: _GetStream | None = None
        self.client = httpx2.Client(timeout=httpx2.Timeout(timeout), follow_redirects=False)

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

    def _note(self, method: str, seq: int | None, response: httpx2.Response) -> None:
        kept = {k: response.headers[k] for k in REPLAYED_HEADERS if k in response.headers}
        note = {
            "seq": seq,
            "method": method,
            "status": response.status_code,
            "content_type": response.headers.get("content-type") or None,
            "headers": {k: str(v) for k, v in self._redact(kept).items()},
        }
        with self._lock:
            self.http.append(note)

    def _learn(self, frame: Frame) -> None:
        """What a client learns from the server's answers: the version, the tools' headers."""
        for item in batch_items(frame):
            if item.kind == "response" and isinstance(item.obj, dict):
                result = item.obj.get("result")
                if not isinstance(result, dict):
                    continue
                version = result.get("protocolVersion")
                if isinstance(version, str) and "serverInfo" in result:
                    self.version = version
                if isinstance(result.get("tools"), list):
                    self.learn_tools(result)

    # -- the Upstream interface ----------------------------------------------------------------

    def exchange(
        self, body: bytes, expect: set[bytes], timeout: float, *, seq: int | None = None
    ) -> Iterator[Frame]:
        """POST ``body``; yield the server messages of its answer (a JSON body, or the SSE
        stream up to the last expected answer)."""
        import httpx2

        message = orjson.loads(body)
        headers = {**self._headers(), **self.routing_headers(message)}
        waiting = set(expect)
        try:
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
                            frame = parse_frame(data, SERVER)
                            self._learn(frame)
                            waiting -= answered_ids(frame)
                            yield frame
                        if not waiting:
                            return
                    return
                data = response.read()
                if data and kind == "application/json":
                    frame = parse_frame(data, SERVER)
                    self._learn(frame)
                    yield frame
        except httpx2.TimeoutException:
            raise UpstreamTimeout(f"the live server did not answer within {timeout:g}s") from None
        except httpx2.HTTPError as exc:
            raise ServerError(
                f"cannot reach the live server {self.url}: {type(exc).__name__}: {exc}"
            ) from None

    def send(self, body: bytes, *, seq: int | None = None) -> None:
        """POST ``body`` (an answer, a notification); its response carries no message we wait for."""
        import httpx2

        try:
            response = self.client.post(self.url, content=body, headers=self._headers())
        except httpx2.HTTPError as exc:
            raise ServerError(
                f"cannot reach the live server {self.url}: {type(exc).__name__}: {exc}"
            ) from None
        self._note("POST", seq, response)

    def listen(self, on_frame: Callable[[Frame], list[Reply]]) -> None:
        """Open the standalone GET stream (once the session is set up), in its own thread."""
        if self._stream is None and self.session is not None:
            self._stream = _GetStream(self, on_frame)
            self._stream.start()

    def close(self, grace: float, on_frame: Callable[[Frame], object] | None = None) -> ExitInfo:
        """End the session with ``DELETE``, let the GET stream end, close the client."""
        import httpx2

        try:
            if self.session is not None:
                try:
                    response = self.client.delete(self.url, headers=self._headers())
                except httpx2.HTTPError as exc:
                    raise ServerError(
                        f"cannot reach the live server {self.url}: {type(exc).__name__}: {exc}"
                    ) from None
                self._note("DELETE", None, response)
        finally:
            self.abort()
        return {"code": None, "signal": None, "reason": "client-eof"}

    def abort(self) -> None:
        """Stop the GET stream and close the client (after an error, or from :meth:`close`)."""
        if self._stream is not None:
            self._stream.finish()
            self._stream = None
        self.client.close()


class _GetStream:
    """The session's standalone ``GET`` SSE stream, read in a thread with its own event loop.

    Each server message on it goes to ``on_frame``; the answers it returns are POSTed from that
    thread. :meth:`finish` waits (bounded) for the server to end the stream (it does after
    ``DELETE``), then cancels the reader.
    """

    def __init__(self, upstream: HttpUpstream, on_frame: Callable[[Frame], list[Reply]]) -> None:
        self.upstream = upstream
        self.on_frame = on_frame
        self.timeout = upstream.timeout
        self.headers = {**upstream._headers(), "accept": "text/event-stream"}
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

        up = self.upstream
        timeout = httpx2.Timeout(self.timeout, read=None)  # a quiet stream is no error
        try:
            async with httpx2.AsyncClient(timeout=timeout, follow_redirects=False) as client:
                async with client.stream("GET", up.url, headers=self.headers) as response:
                    up._note("GET", None, response)
                    kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
                    if response.status_code != 200 or kind != "text/event-stream":
                        return
                    splitter = SseSplitter()
                    async for chunk in response.aiter_raw():
                        for data in splitter.feed(chunk):
                            for answer, seq in self.on_frame(parse_frame(data, SERVER)):
                                posted = await client.post(up.url, content=answer, headers=up._headers())
                                up._note("POST", seq, posted)
        except httpx2.HTTPError as exc:
            if up._on_event is not None:
                up._on_event(f"the GET stream failed: {type(exc).__name__}: {exc}")

    def finish(self) -> None:
        self._thread.join(self.timeout)
        if self._thread.is_alive() and self._loop is not None and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
            self._thread.join(self.timeout)


class HttpForwarder:
    """The recording reverse proxy's upstream side: one async client, whole exchanges relayed.

    Use :meth:`running` around the proxy's lifetime (its ASGI lifespan); then :meth:`open`
    sends a request and returns the streamed response (the caller reads and closes it).
    """

    def __init__(self, url: str, *, verify: bool | str = True) -> None:
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"bad upstream URL {url!r}: use http:// or https://", where="--url")
        self.url = url
        self.verify = verify
        self._client: httpx2.AsyncClient | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        import httpx2

        timeout = httpx2.Timeout(30.0, read=300.0)
        async with httpx2.AsyncClient(timeout=timeout, verify=self.verify, follow_redirects=False) as client:
            self._client = client
            try:
                yield
            finally:
                self._client = None

    async def open(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None
    ) -> httpx2.Response:
        """Send one request upstream; the response, streaming (``httpx2.HTTPError`` on failure)."""
        assert self._client is not None, "HttpForwarder.open runs inside running()"
        request = self._client.build_request(method, url, headers=dict(headers), content=body or None)
        return await self._client.send(request, stream=True)
