"""MCP traffic onto a tape: one ``mcp_json_rpc`` record per completed exchange or notification.

The record, replay and world commands hand every JSON-RPC message they forward (already
redacted) to :meth:`McpTapeObserver.on_message`. Requests are paired with their responses by
``(direction of the request, id)``, so responses may arrive in any order and both sides may
have requests in flight with the same id. A record is written when the exchange completes,
so records are in completion order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock.store import CasStore, canonical_bytes, digest
from harn_mcp_mock.store.cas import atomic_write
from harn_mcp_mock.tape.model import TapeWriter, cas_dir, is_payload_ref, payload_ref

CLIENT_TO_SERVER = "client->server"
SERVER_TO_CLIENT = "server->client"

_DIRECTIONS = {
    "client->server": CLIENT_TO_SERVER,
    "client": CLIENT_TO_SERVER,
    "server->client": SERVER_TO_CLIENT,
    "server": SERVER_TO_CLIENT,
}
_OPPOSITE = {CLIENT_TO_SERVER: SERVER_TO_CLIENT, SERVER_TO_CLIENT: CLIENT_TO_SERVER}


def _id_key(value: Any) -> tuple[str, Any]:
    # 1 and "1" are different JSON-RPC ids.
    return (type(value).__name__, value if isinstance(value, (int, str)) else repr(value))


class _Pending:
    __slots__ = ("body", "fault", "method", "started_ns")

    def __init__(self, method: str, body: bytes, started_ns: int) -> None:
        self.method = method
        self.body = body
        self.started_ns = started_ns
        self.fault: dict[str, Any] | None = None


class McpTapeObserver:
    """Pairs JSON-RPC requests with responses and writes ``mcp_json_rpc`` records to ``writer``.

    Record fields: ``server``, ``method``, ``direction`` (of the request: ``client->server`` for
    a client call, ``server->client`` for sampling/elicitation/roots), ``request_digest`` and
    ``response_digest`` (BLAKE3 of the canonical JSON), ``latency_ms``, the payloads
    ``request`` and ``response`` (canonical JSON of the messages as given) and ``error_code``
    when the response is a JSON-RPC error. A notification gives a record with ``server``,
    ``method``, ``direction``, ``notification: true``, ``request_digest`` and ``payload``.
    """

    def __init__(self, writer: TapeWriter, server: str) -> None:
        self.writer = writer
        self.server = server
        self._pending: dict[tuple[str, tuple[str, Any]], _Pending] = {}
        self._lock = threading.Lock()

    @property
    def tape_path(self) -> Path:
        """The tape this observer writes to (a recorder's journal names it, for ``recover``)."""
        return self.writer.path

    def on_message(self, direction: str, message: Any, *, latency_ms: float | None = None) -> None:
        """Observe one message sent in ``direction`` (``client->server``/``server->client``;
        ``client``/``server`` name the sender). A batch (a JSON array) is taken element by element."""
        try:
            sender = _DIRECTIONS[direction]
        except KeyError:
            raise ValueError(
                f"direction must be 'client->server' or 'server->client', not {direction!r}"
            ) from None
        if isinstance(message, list):
            for item in message:
                self.on_message(sender, item, latency_ms=latency_ms)
            return
        if not isinstance(message, dict):
            return  # not JSON-RPC: nothing to pair (the cassette keeps invalid traffic)
        method = message.get("method")
        has_id = "id" in message and message["id"] is not None
        if isinstance(method, str):
            body = canonical_bytes(message)
            if not has_id:
                self.writer.record(
                    "mcp_json_rpc",
                    server=self.server,
                    method=method,
                    direction=sender,
                    notification=True,
                    request_digest=digest(body),
                    payloads={"payload": body},
                )
                return
            with self._lock:
                self._pending[(sender, _id_key(message["id"]))] = _Pending(
                    method, body, self.writer.clock.monotonic_ns()
                )
            return
        if not has_id or ("result" not in message and "error" not in message):
            return
        request_direction = _OPPOSITE[sender]
        with self._lock:
            pending = self._pending.pop((request_direction, _id_key(message["id"])), None)
        self._write_exchange(request_direction, pending, message, latency_ms)

    def mark_fault(self, request_id: Any, fault: dict[str, Any]) -> None:
        """The client's request ``request_id`` (seen, not yet answered) got an injected fault
        (``replay --faults``): its record carries ``fault: {"id", "kind"}``, so a reader can tell
        injected failures from the server's own."""
        with self._lock:
            pending = self._pending.get((CLIENT_TO_SERVER, _id_key(request_id)))
            if pending is not None:
                pending.fault = {"id": fault["fault"], "kind": fault["kind"]}

    def on_status(self, request_id: Any, status: int, response: dict[str, Any] | None) -> None:
        """The client's request ``request_id`` (seen) was answered with the HTTP ``status`` alone
        (a replayed 4xx/5xx): its record carries ``http_status``, and ``response`` when a
        JSON-RPC body came with it (else no response, and it is not ``unanswered``)."""
        with self._lock:
            pending = self._pending.pop((CLIENT_TO_SERVER, _id_key(request_id)), None)
        self._write_exchange(CLIENT_TO_SERVER, pending, response, None, http_status=status)

    def _write_exchange(
        self,
        direction: str,
        pending: _Pending | None,
        response: dict[str, Any] | None,
        latency_ms: float | None,
        *,
        http_status: int | None = None,
    ) -> None:
        fields: dict[str, Any] = {
            "server": self.server,
            "method": pending.method if pending else None,
            "direction": direction,
        }
        if http_status is not None:
            fields["http_status"] = http_status
        payloads: dict[str, bytes | str] = {}
        if pending is not None:
            if pending.fault is not None:
                fields["fault"] = pending.fault
            fields["request_digest"] = digest(pending.body)
            payloads["request"] = pending.body
            if latency_ms is None and response is not None:
                latency_ms = (self.writer.clock.monotonic_ns() - pending.started_ns) / 1_000_000
        else:
            fields["request_digest"] = None
            fields["unmatched"] = True  # a response to a request we never saw
        if response is not None:
            body = canonical_bytes(response)
            fields["response_digest"] = digest(body)
            payloads["response"] = body
            error = response.get("error")
            if isinstance(error, dict) and "code" in error:
                fields["error_code"] = error["code"]
        else:
            fields["response_digest"] = None
            if http_status is None:
                fields["unanswered"] = True
        fields["latency_ms"] = round(latency_ms, 3) if latency_ms is not None else None
        self.writer.record("mcp_json_rpc", payloads=payloads, **fields)

    @property
    def pending(self) -> int:
        """Requests still waiting for their response."""
        return len(self._pending)

    def finish(self) -> None:
        """Write a record (``unanswered: true``, no response) for every request never answered."""
        with self._lock:
            left = list(self._pending.items())
            self._pending.clear()
        for (direction, _), pending in left:  # dict order: the order the requests were seen
            self._write_exchange(direction, pending, None, None)


class TapedEngine:
    """Wraps a JSON-RPC engine (replay, world) so every exchange is also written to a tape.

    ``redact`` is applied to incoming client messages before they reach the tape (the replay
    passes its cassette's redactor; a world has no secrets). Outgoing messages are already
    what a cassette or world spec holds.
    """

    def __init__(self, engine: Any, observer: McpTapeObserver, redact: Any = None) -> None:
        self.engine = engine
        self.observer = observer
        self.redact = redact

    def receive(self, message: Any) -> list[Any]:
        shown = self.redact(message) if self.redact is not None else message
        self.observer.on_message("client", shown)
        outs = self.engine.receive(message)
        for out in outs:
            if getattr(out, "raw", None) is None:  # a non-JSON line is no MCP message
                self.observer.on_message("server", out.message)
        return list(outs)

    def answered_by_status(self, message: Any, status: int, reply: Any) -> None:
        """The HTTP endpoint answered ``message`` with a recorded HTTP ``status`` (and ``reply``,
        its JSON-RPC body, or None) without asking the engine: it is on the tape all the same,
        and the engine is told (its report counts the request)."""
        shown = self.redact(message) if self.redact is not None else message
        self.observer.on_message("client", shown)
        if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message:
            self.observer.on_status(message["id"], status, reply if isinstance(reply, dict) else None)
        inner = getattr(self.engine, "answered_by_status", None)
        if inner is not None:
            inner(message, status, reply)

    def __getattr__(self, name: str) -> Any:
        """Everything else is the wrapped engine's (its cassette, report, ``finish``), so a
        server that reads them (HTTP replay merging its sessions' reports) takes either."""
        return getattr(self.engine, name)


class EngineClock:
    """A Clock reading a world engine's virtual time, so a world's tape is deterministic."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def wall_ms(self) -> int:
        return int(self.engine.now_ms)

    def monotonic_ns(self) -> int:
        return int(self.engine.now_ms - self.engine.spec.start_ms) * 1_000_000

    def sleep(self, seconds: float) -> None:
        self.engine.now_ms += int(seconds * 1000)


_PAYLOAD_DIGESTS = (
    ("request", "request_digest"),
    ("response", "response_digest"),
    ("payload", "request_digest"),
)
"""Each payload field of an ``mcp_json_rpc`` record and the digest field that names its bytes."""


def redact_tape(path: str | Path, redact: Callable[[Any], Any]) -> bool:
    """Rewrite the closed tape at ``path`` with every ``mcp_json_rpc`` payload, and the header's
    ``script_path`` and ``argv``, passed through ``redact`` (a parsed JSON value in, the very
    same object out when nothing changes: a redactor's ``redact_message``).

    For the end of a session whose redactor learned a secret after the records that carry it
    were written (see docs/redaction.md, value memory). The digests follow their payloads; a
    payload may move between inline text and the sidecar; the tape is replaced atomically, so
    a reader sees the old tape or the new one; sidecar blobs that held a replaced payload and
    that no record uses any more are deleted. Lines that do not change keep their bytes; a
    torn last line (a writer that died) is dropped. True when something changed."""
    path = Path(path)
    lines = path.read_bytes().split(b"\n")
    cas = CasStore(cas_dir(path))
    out: list[bytes] = []
    stale: set[str] = set()
    used: set[str] = set()
    changed = False
    for index, line in enumerate(lines):
        if not line.strip():
            out.append(line)
            continue
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError:
            if index == len(lines) - 1:  # a torn last line: what it held is not kept
                changed = True
                out.append(b"")  # the tape ends with its last complete line's newline
                continue
            out.append(line)
            continue
        new = _redact_line(doc, redact, cas, stale) if type(doc) is dict else None
        if new is not None:
            doc = new
            line = canonical_bytes(doc)
            changed = True
        if type(doc) is dict:
            used.update(
                str(ref["content_hash"]) for ref in doc.values() if is_payload_ref(ref) and "len_bytes" in ref
            )
        out.append(line)
    if not changed:
        return False
    atomic_write(path, b"\n".join(out))
    for key in stale - used:
        cas.path_for(key).unlink(missing_ok=True)
    return True


def _redact_line(
    doc: dict[str, Any], redact: Callable[[Any], Any], cas: CasStore, stale: set[str]
) -> dict[str, Any] | None:
    """``doc`` (a tape line) redacted again, or None when nothing changed."""
    if doc.get("type") == "header":
        shown = [doc.get("script_path"), *(doc.get("argv") or [])]
        strings = [x for x in shown if isinstance(x, str)]
        if len(strings) != len(shown) or not strings:
            return None
        again = redact(strings)
        if again is strings or again == strings:
            return None
        return {**doc, "script_path": again[0], "argv": list(again[1:])}
    if doc.get("kind") != "mcp_json_rpc":
        return None
    new: dict[str, Any] | None = None
    for field, digest_field in _PAYLOAD_DIGESTS:
        ref = doc.get(field)
        if not isinstance(ref, dict) or not is_payload_ref(ref):
            continue
        if "text" in ref:
            body = str(ref["text"]).encode()
        else:
            size = ref.get("len_bytes")
            body = cas.get(str(ref["content_hash"]), size if isinstance(size, int) and size >= 0 else None)
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError:
            continue
        again = redact(message)
        if again is message:
            continue
        fresh = canonical_bytes(again)
        if fresh == body:
            continue
        if "len_bytes" in ref:
            stale.add(str(ref["content_hash"]))
        new = dict(doc) if new is None else new
        new[field] = payload_ref(cas, fresh)
        new[digest_field] = digest(fresh)
    return new


def redact_again(redactors: list[Any], *, tape: Path) -> bool:
    """After a session: when one of ``redactors`` (the sessions' request redactors) learned a
    secret while it ran (docs/redaction.md, value memory), redact the closed tape at ``tape``
    again with what they all know, so that no value identified later stays where it was
    written before. True when the tape changed."""
    if not any(getattr(r, "learned", 0) for r in redactors):
        return False
    return redact_tape(tape, _with_all(redactors))


def _with_all(redactors: list[Any]) -> Callable[[Any], Any]:
    """One ``redact_message`` applying each redactor that learned something in turn."""
    learned = [r for r in redactors if getattr(r, "learned", 0)]

    def redact(value: Any) -> Any:
        for r in learned:
            value = r.redact_message(value)
        return value

    return redact
