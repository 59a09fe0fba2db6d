"""The checks every HTTP surface runs before its app sees a request (``replay --http``,
``record --url``, ``protocol serve``), and the bounded session table of ``replay --http``.

* **Origin** (DNS-rebinding protection: the MCP Streamable HTTP transport says servers MUST
  validate ``Origin`` and answer an invalid one with 403 and a JSON-RPC error): a request
  with an ``Origin`` header that is not a loopback origin (``http(s)://localhost:*``,
  ``127.0.0.1``, ``[::1]``) nor in ``allow_origins`` gets 403. No ``Origin`` (a non-browser
  client: the SDKs, curl) passes. ``*`` in ``allow_origins`` allows every origin (unsafe).
* **Host**: while the server listens on loopback, a ``Host`` that is not a loopback name (with
  or without a port) nor in ``allow_hosts`` gets 421 Misdirected Request, as the official
  Python SDK's ``TransportSecurityMiddleware`` answers (its ``Origin`` answer is 403 too). The
  agents protocol's error envelope has no 421, so ``protocol serve`` answers 403 there.
* **Body size**: a ``Content-Length`` above ``max_body_bytes`` gets 413 without reading the
  body; a body without one (chunked) is counted as it arrives and gets 413 as soon as the
  running total passes the limit, before it is buffered whole.

:class:`HttpGuard` is the Starlette middleware that does all three; each surface only renders
the refusal in its own error format (``render``). :class:`SessionTable` bounds sessions by idle
time and count on an injectable clock.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from harn_mcp_mock.clock import SYSTEM_CLOCK, Clock
from harn_mcp_mock.jsonrpc.codes import INVALID_REQUEST

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Render = Callable[[int, str, str], tuple[int, bytes, list[tuple[bytes, bytes]]]]
"""(status, kind, message) -> (status, body, headers) of a refusal; kind: origin, host or body."""

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
DEFAULT_SESSION_IDLE_TIMEOUT = 3600.0
DEFAULT_MAX_SESSIONS = 1000
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is loopback only."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class GuardSettings:
    """What an HTTP surface accepts, and how many sessions it keeps."""

    allow_origins: tuple[str, ...] = ()
    """Origins (``scheme://host[:port]``) accepted besides loopback ones; ``*`` accepts all."""
    allow_hosts: tuple[str, ...] = ()
    """``Host`` names (with or without ``:port``) accepted besides loopback ones."""
    check_host: bool = True
    """Check ``Host`` (on when the server listens on loopback)."""
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT
    """Seconds a session may go unused before it ends (None: never)."""
    max_sessions: int | None = DEFAULT_MAX_SESSIONS
    """Sessions kept at once (None: no limit)."""

    @classmethod
    def for_host(
        cls,
        host: str,
        *,
        allow_origins: tuple[str, ...] | list[str] = (),
        allow_hosts: tuple[str, ...] | list[str] = (),
        max_body_bytes: int | None = None,
        session_idle_timeout: float | None = None,
        max_sessions: int | None = None,
    ) -> GuardSettings:
        """Settings for a server listening on ``host`` (Host is checked on loopback only).

        A value of 0 for the idle timeout or the session count means no limit; None keeps the
        default. Bad values raise :class:`~harn_mcp_mock.errors.UsageError` naming the flag.
        """
        from harn_mcp_mock.errors import UsageError

        for origin in allow_origins:
            if origin != "*" and _origin_key(origin) is None:
                raise UsageError(
                    f"bad origin {origin!r}: use scheme://host[:port] (or * for any, unsafe)",
                    where="--allow-origin",
                )
        for name in allow_hosts:
            if not name.strip() or "/" in name:
                raise UsageError(f"bad host {name!r}: use NAME or NAME:PORT", where="--allow-host")
        checks = (
            ("--max-body-bytes", max_body_bytes),
            ("--session-idle-timeout", session_idle_timeout),
            ("--max-sessions", max_sessions),
        )
        for flag, value in checks:
            if value is not None and value < 0:
                raise UsageError(f"{flag} must be 0 or more, not {value}", where=flag)
        if max_body_bytes == 0:
            raise UsageError("--max-body-bytes must be at least 1", where="--max-body-bytes")
        return cls(
            allow_origins=tuple(allow_origins),
            allow_hosts=tuple(h.strip().lower() for h in allow_hosts),
            check_host=is_loopback(host),
            max_body_bytes=DEFAULT_MAX_BODY_BYTES if max_body_bytes is None else max_body_bytes,
            session_idle_timeout=(
                DEFAULT_SESSION_IDLE_TIMEOUT
                if session_idle_timeout is None
                else (float(session_idle_timeout) or None)
            ),
            max_sessions=DEFAULT_MAX_SESSIONS if max_sessions is None else (max_sessions or None),
        )

    def origin_ok(self, origin: str | None) -> bool:
        if origin is None or "*" in self.allow_origins:
            return True
        key = _origin_key(origin)
        if key is None:
            return False  # "null" (a sandboxed page, a file: URL) or garbage
        scheme, host, _port = key
        if scheme in ("http", "https") and is_loopback(host):
            return True
        return any(_origin_key(allowed) == key for allowed in self.allow_origins)

    def host_ok(self, host: str | None) -> bool:
        if not self.check_host:
            return True
        if not host:
            return False  # as the SDK does: HTTP/1.1 always sends one
        host = host.strip().lower()
        if host in self.allow_hosts:
            return True
        name = _host_name(host)
        return name is not None and (is_loopback(name) or name in self.allow_hosts)


def _origin_key(origin: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of ``origin``, default ports filled in; None if it is not one."""
    try:
        parts = urllib.parse.urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname or parts.path not in ("", "/"):
        return None
    scheme = parts.scheme.lower()
    default = {"http": 80, "https": 443}.get(scheme)
    return scheme, parts.hostname.lower(), port or default


def _host_name(host: str) -> str | None:
    """The name part of a ``Host`` header (``[::1]:8080`` -> ``::1``); None if malformed."""
    if host.startswith("["):
        end = host.find("]")
        if end < 0 or (host[end + 1 :] and not host[end + 1 :].removeprefix(":").isdigit()):
            return None
        return host[1:end]
    name, sep, port = host.partition(":")
    if sep and not port.isdigit():
        return None
    return name or None


class BodyTooLarge(Exception):
    """A request body passed the limit while it was being read (:class:`HttpGuard` answers 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body exceeds the limit of {limit} bytes")
        self.limit = limit


class HttpGuard:
    """Starlette middleware: Origin, Host and body-size checks before the app (see the module).

    Install it with ``Middleware(HttpGuard, settings=..., render=...)`` so that it runs inside
    Starlette's error middleware: a body that passes the limit while the app reads it raises
    :class:`BodyTooLarge` from ``receive``, and this middleware answers 413 (the app has not
    answered yet: every surface reads the body before it answers).
    """

    def __init__(self, app: Any, settings: GuardSettings, render: Render) -> None:
        self.app = app
        self.settings = settings
        self.render = render

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        settings = self.settings
        headers = dict(scope.get("headers") or ())
        host = headers.get(b"host")
        if not settings.host_ok(None if host is None else host.decode("latin-1")):
            shown = "none" if host is None else repr(host.decode("latin-1"))
            await self._refuse(send, 421, "host", f"Misdirected Request: Host {shown} is not this server")
            return
        origin = headers.get(b"origin")
        if not settings.origin_ok(None if origin is None else origin.decode("latin-1")):
            shown = repr(origin.decode("latin-1")) if origin is not None else ""
            await self._refuse(
                send, 403, "origin", f"Forbidden: Origin {shown} is not allowed (see --allow-origin)"
            )
            return
        limit = settings.max_body_bytes
        length = headers.get(b"content-length")
        if length is not None and length.strip().isdigit() and int(length) > limit:
            await self._refuse(send, 413, "body", f"Payload Too Large: the body exceeds {limit} bytes")
            return
        total = 0
        started = False

        async def counted() -> Message:
            nonlocal total
            message = await receive()
            if message["type"] == "http.request":
                total += len(message.get("body", b""))
                if total > limit:
                    raise BodyTooLarge(limit)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except BodyTooLarge:
            if started:
                raise
            await self._refuse(send, 413, "body", f"Payload Too Large: the body exceeds {limit} bytes")

    async def _refuse(self, send: Send, status: int, kind: str, message: str) -> None:
        status, body, headers = self.render(status, kind, message)
        # The client may still be sending a body we will not read: close the connection after.
        extra = [(b"content-length", b"%d" % len(body)), (b"connection", b"close"), *headers]
        await send({"type": "http.response.start", "status": status, "headers": extra})
        await send({"type": "http.response.body", "body": body})


def render_jsonrpc(status: int, kind: str, message: str) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    """A refusal as a JSON-RPC error (id null), as the MCP endpoints answer."""
    import orjson

    body = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    return status, orjson.dumps(body), [(b"content-type", b"application/json")]


def guard_middleware(settings: GuardSettings | None, render: Render = render_jsonrpc) -> list[Any]:
    """The ``middleware=`` list for a Starlette app guarded by ``settings`` (default settings
    when None)."""
    from starlette.middleware import Middleware

    return [Middleware(HttpGuard, settings=settings or GuardSettings(), render=render)]


# --- bounded sessions --------------------------------------------------------------------------

T = TypeVar("T")


class SessionTable(Generic[T]):
    """Sessions by id, least recently used first, bounded by idle time and count.

    Each :meth:`get` of a live session marks it used. An idle session (``busy`` says False: no
    open stream, no request waiting) unused for ``idle_timeout`` seconds ends (``on_evict``;
    its id then gets 404, so the client opens a new session). When ``max_sessions`` are open,
    :meth:`add` ends the least recently used idle session to make room; when every session is
    busy it refuses (False: the server answers 503). Time comes from ``clock``.
    """

    def __init__(
        self,
        *,
        idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT,
        max_sessions: int | None = DEFAULT_MAX_SESSIONS,
        clock: Clock = SYSTEM_CLOCK,
        busy: Callable[[T], bool] = lambda item: False,
        on_evict: Callable[[T, str], None] | None = None,
    ) -> None:
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self.clock = clock
        self.busy = busy
        self.on_evict = on_evict
        self._items: OrderedDict[str, tuple[T, int]] = OrderedDict()
        self.expired = 0
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, sid: object) -> bool:
        return sid in self._items

    def values(self) -> Iterator[T]:
        return iter([item for item, _ in self._items.values()])

    def get(self, sid: str) -> T | None:
        """The session, marked used now; None if unknown, ended or expired."""
        self.sweep()
        entry = self._items.get(sid)
        if entry is None:
            return None
        self._items[sid] = (entry[0], self.clock.monotonic_ns())
        self._items.move_to_end(sid)
        return entry[0]

    def pop(self, sid: str, default: None = None) -> T | None:
        entry = self._items.pop(sid, default)
        return None if entry is None else entry[0]

    def add(self, sid: str, item: T) -> bool:
        """Keep ``item`` as ``sid``; False (nothing kept) when full and no session is idle."""
        self.sweep()
        if self.max_sessions is not None and len(self._items) >= self.max_sessions:
            victim = next((k for k, (v, _) in self._items.items() if not self.busy(v)), None)
            if victim is None:
                return False
            self._end(victim, "evicted")
        self._items[sid] = (item, self.clock.monotonic_ns())
        return True

    def sweep(self) -> None:
        """End the idle sessions unused for longer than the timeout (oldest first)."""
        if self.idle_timeout is None or not self._items:
            return
        cutoff = self.clock.monotonic_ns() - int(self.idle_timeout * 1_000_000_000)
        stale: list[str] = []
        for sid, (item, used) in self._items.items():
            if used > cutoff:
                break  # least recently used first: the rest are newer
            if not self.busy(item):
                stale.append(sid)
        for sid in stale:
            self._end(sid, "expired")

    def _end(self, sid: str, why: str) -> None:
        item, _ = self._items.pop(sid)
        if why == "expired":
            self.expired += 1
        else:
            self.evicted += 1
        if self.on_evict is not None:
            self.on_evict(item, why)
