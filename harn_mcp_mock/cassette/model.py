"""The cassette: every JSON-RPC message of one MCP session, redacted, in wire order.

On disk a cassette is ``NAME.cassette.json`` (indented JSON, our keys in a fixed order and
each message in the key order its sender wrote, so git diffs read well) plus, when any payload
exceeds :data:`~harn_mcp_mock.store.INLINE_THRESHOLD`, a content-addressed sidecar folder
``NAME.cassette.json.cas/`` of BLAKE3-named blobs.

While recording, messages go first to a journal, ``NAME.cassette.json.journal`` (NDJSON: a
header line, one line per message, an ``exit`` line), appended as they flow. Finishing a
recording turns the journal into the cassette atomically and removes it; a recorder killed
before that leaves the journal, which :func:`load_cassette` reads as it is and
:func:`~harn_mcp_mock.cassette.recovery.recover_journal` turns into a cassette. So a crash never loses what was seen.

Format version 1 (``docs/cassette-format.md``, schema in ``schema.json``)::

    {"format": "harn-mcp-mock/cassette", "version": 1, "recorder": "...", "recorded_at": "...",
     "transport": "stdio", "command": [...redacted argv...],
     "redaction": {"policy": "default", "digest": "blake3:...", "findings": {...}},
     "server": {"handshake": "initialize", "protocolVersion": "...", "serverInfo": {...},
                "capabilities": {...}},
     "exit": {"code": 0, "signal": null, "reason": "client-eof"},
     "http": [{"seq": 0, "method": "POST", "status": 401, "content_type": null,
               "headers": {"www-authenticate": "Bearer"}},
              {"seq": null, "method": "GET", "status": 200, "content_type": "text/event-stream",
               "headers": {}, "events": [7]}],   # Streamable HTTP only, optional
     "messages": [
       {"seq": 0, "dir": "client", "message": {...}},
       {"seq": 1, "dir": "server", "reply_to": 0, "latency_ms": 1.25, "message": {...}},
       {"seq": 2, "dir": "server", "blob": {"blake3": "<hex>", "bytes": 81234, "as": "json"}},
       {"seq": 3, "dir": "client", "invalid": "not JSON: ...", "raw": "..."}]}
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import orjson

from harn_mcp_mock import deepjson
from harn_mcp_mock._record import field, record
from harn_mcp_mock.cassette.migrate import FORMAT, FORMAT_VERSION, JOURNAL_FORMAT, check_version
from harn_mcp_mock.errors import (
    CassetteError,
    CassetteFormatError,
    CassetteIntegrityError,
)
from harn_mcp_mock.inputs import read_input
from harn_mcp_mock.jsonrpc.frames import Kind, classify
from harn_mcp_mock.store.cas import INLINE_THRESHOLD, CasStore, atomic_write

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

_META_KEYS = ("recorder", "recorded_at", "transport", "command", "redaction", "server", "exit", "http")
_HTTP_METHODS = ("POST", "GET", "DELETE")
_HTTP_KEYS = frozenset({"seq", "method", "status", "content_type", "headers", "events"})
_DIRECTIONS = ("client", "server")
INLINE_DEPTH = 200
"""Messages nested deeper than this go to a blob, so the cassette's own JSON stays writable
(orjson writes 254 levels) and parsable (1,024) whatever a peer sent (:mod:`harn_mcp_mock.deepjson`)."""


def cas_dir(path: Path) -> Path:
    return path.with_name(path.name + ".cas")


def journal_path(path: Path) -> Path:
    return path.with_name(path.name + ".journal")


@record
class Message:
    """One recorded wire message (or one line that was not a JSON-RPC message)."""

    seq: int
    direction: str
    message: Any = None
    """The redacted JSON-RPC envelope (an object, or a list for a batch); None when invalid."""
    invalid: str | None = None
    """Why the line was not a JSON-RPC message; ``raw`` then holds its redacted text."""
    raw: str | None = None
    reply_to: int | list[int | None] | None = None
    """Seq of the request a response answers (a list aligned with the items of a batch)."""
    latency_ms: float | list[float | None] | None = None

    @property
    def kind(self) -> Kind:
        if self.invalid is not None:
            return "invalid"
        return classify(self.message)[0]

    @property
    def id(self) -> Any:
        return self.message.get("id") if isinstance(self.message, dict) else None

    @property
    def method(self) -> str | None:
        if isinstance(self.message, dict):
            method = self.message.get("method")
            return method if isinstance(method, str) else None
        return None


@record
class Cassette:
    messages: list[Message] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    complete: bool = True
    """False when read from the journal of a recording that never finished."""

    def requests(self, direction: str = "client") -> Iterator[Message]:
        return (m for m in self.messages if m.direction == direction and m.kind == "request")

    def responses_by_request(self) -> dict[int, Message]:
        """Seq of each answered request -> the message that answered it."""
        answered: dict[int, Message] = {}
        for msg in self.messages:
            if isinstance(msg.reply_to, int):
                answered[msg.reply_to] = msg
            elif isinstance(msg.reply_to, list):
                for seq in msg.reply_to:
                    if seq is not None:
                        answered[seq] = msg
        return answered

    @property
    def server(self) -> dict[str, Any]:
        server = self.meta.get("server")
        return server if isinstance(server, dict) else {}


# --- entries: the one JSON shape of a message, shared by journal and cassette -----------------


def message_entry(msg: Message, cas: CasStore) -> dict[str, Any]:
    """The JSON entry of a message, spilling payloads over the inline threshold into ``cas``."""
    entry: dict[str, Any] = {"seq": msg.seq, "dir": msg.direction}
    if msg.reply_to is not None:
        entry["reply_to"] = msg.reply_to
        entry["latency_ms"] = msg.latency_ms
    if msg.invalid is not None:
        entry["invalid"] = msg.invalid
        raw = (msg.raw or "").encode()
        if len(raw) > INLINE_THRESHOLD:
            entry["blob"] = {"blake3": cas.put(raw), "bytes": len(raw), "as": "text"}
        else:
            entry["raw"] = msg.raw or ""
        return entry
    body = deepjson.dumps(msg.message)
    if len(body) > INLINE_THRESHOLD or deepjson.depth(msg.message) > INLINE_DEPTH:
        entry["blob"] = {"blake3": cas.put(body), "bytes": len(body), "as": "json"}
    else:
        entry["message"] = msg.message
    return entry


def _fail(path: Path, where: str, what: str) -> CassetteFormatError:
    return CassetteFormatError(what, path=path, where=where)


def message_from_entry(entry: Any, index: int, cas: CasStore, path: Path) -> Message:
    where = f"messages[{index}]"
    if not isinstance(entry, dict):
        raise _fail(path, where, "expected an object")
    unknown = set(entry) - {"seq", "dir", "reply_to", "latency_ms", "invalid", "raw", "message", "blob"}
    if unknown:
        raise _fail(path, f"{where}.{sorted(unknown)[0]}", "unknown field")
    seq = entry.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise _fail(path, f"{where}.seq", "expected an integer")
    direction = entry.get("dir")
    if direction not in _DIRECTIONS:
        raise _fail(path, f"{where}.dir", "expected 'client' or 'server'")
    reply_to = entry.get("reply_to")
    if reply_to is not None and not _is_seq_ref(reply_to):
        raise _fail(path, f"{where}.reply_to", "expected a seq or a list of seqs")
    latency = entry.get("latency_ms")
    if latency is not None and not _is_latency(latency):
        raise _fail(path, f"{where}.latency_ms", "expected a number or a list of numbers")
    invalid = entry.get("invalid")
    if invalid is not None and not isinstance(invalid, str):
        raise _fail(path, f"{where}.invalid", "expected a string")
    content: Any = None
    raw: str | None = None
    if "blob" in entry:
        blob = entry["blob"]
        if not isinstance(blob, dict) or not isinstance(blob.get("blake3"), str):
            raise _fail(path, f"{where}.blob", "expected {blake3, bytes, as}")
        size = blob.get("bytes")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise _fail(path, f"{where}.blob.bytes", "expected a non-negative integer")
        try:
            data = cas.get(blob["blake3"], size)
        except CassetteIntegrityError as exc:
            raise CassetteIntegrityError(exc.message, path=path, where=f"{where}.blob") from None
        if size != len(data):
            raise CassetteIntegrityError("CAS blob size does not match", path=path, where=f"{where}.blob")
        if blob.get("as") == "text":
            raw = data.decode("utf-8", "replace")
        else:
            try:
                content = orjson.loads(data)
            except orjson.JSONDecodeError:
                raise CassetteIntegrityError(
                    "CAS blob is not JSON", path=path, where=f"{where}.blob"
                ) from None
    elif invalid is not None:
        raw = entry.get("raw")
        if not isinstance(raw, str):
            raise _fail(path, f"{where}.raw", "expected a string")
    elif "message" in entry:
        content = entry["message"]
    else:
        raise _fail(path, where, "needs one of 'message', 'blob' or 'invalid'")
    if invalid is None:
        if classify(content)[0] == "invalid":
            raise _fail(path, f"{where}.message", "not a JSON-RPC message or batch")
    return Message(seq, direction, content, invalid, raw, reply_to, latency)


def _is_seq_ref(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return True
    return isinstance(value, list) and all(
        v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in value
    )


def _is_latency(value: Any) -> bool:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return True
    return isinstance(value, list) and all(
        v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in value
    )


# --- load ------------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        data = read_input(path)
    except FileNotFoundError:
        raise CassetteError("no such cassette", path=path) from None
    except OSError as exc:
        raise CassetteError(f"cannot read cassette: {exc.strerror}", path=path) from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        hint = " (truncated?)" if exc.pos >= len(data.rstrip()) else ""
        raise CassetteFormatError(
            f"not valid JSON{hint}: {str(exc).split(':')[0]}", path=path, where=f"{exc.lineno}:{exc.colno}"
        ) from None


def load_cassette(path: str | Path) -> Cassette:
    """Load and check a cassette (or, when only its journal exists, the unfinished recording).

    Raises a :class:`~harn_mcp_mock.errors.CassetteError` subclass naming the file and the
    field or line at fault for anything unreadable, newer, malformed or altered.
    """
    path = Path(path)
    if not path.exists() and journal_path(path).exists():
        return load_journal(journal_path(path), cassette_path=path)
    doc = _read_json(path)
    if not isinstance(doc, dict):
        raise _fail(path, "$", "expected a JSON object")
    if doc.get("format") != FORMAT:
        raise _fail(path, "format", f"expected {FORMAT!r}: is this a harn-mcp-mock cassette?")
    doc = check_version(doc, path)
    messages_doc = doc.get("messages")
    if not isinstance(messages_doc, list):
        raise _fail(path, "messages", "expected a list")
    cas = CasStore(cas_dir(path))
    messages = [message_from_entry(entry, i, cas, path) for i, entry in enumerate(messages_doc)]
    _check_seqs(messages, path)
    meta = {key: doc[key] for key in _META_KEYS if key in doc}
    _check_meta(meta, path)
    return Cassette(messages, meta, path, complete=True)


def load_journal(jpath: Path, *, cassette_path: Path | None = None) -> Cassette:
    """Read a recording journal; a torn last line (the recorder died mid-write) is dropped.
    The journal's ``tape`` (where the session's ``--emit-tape`` tape is, relative to the
    cassette's folder) is in ``meta["tape"]``: no cassette keeps it."""
    target = cassette_path or jpath.with_name(jpath.name.removesuffix(".journal"))
    try:
        lines = read_input(jpath).split(b"\n")
    except OSError as exc:
        raise CassetteError(f"cannot read journal: {exc.strerror}", path=jpath) from None
    cas = CasStore(cas_dir(target))
    meta: dict[str, Any] = {}
    messages: list[Message] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            if lineno >= len(lines) - 1:
                break  # the last line was being written when the recorder died
            raise CassetteFormatError("not valid JSON", path=jpath, where=str(lineno)) from None
        if not isinstance(record, dict):
            raise CassetteFormatError("expected a JSON object", path=jpath, where=str(lineno))
        if lineno == 1:
            if record.get("format") != JOURNAL_FORMAT:
                raise CassetteFormatError(f"expected a {JOURNAL_FORMAT!r} header", path=jpath, where="1")
            check_version(record, jpath)
            meta.update({k: record[k] for k in (*_META_KEYS, "tape") if k in record})
        elif "seq" in record:
            messages.append(message_from_entry(record, len(messages), cas, jpath))
        else:
            meta.update(
                {k: record[k] for k in ("server", "exit", "redaction", "http", "tape") if k in record}
            )
            if isinstance(record.get("learned"), dict):  # fingerprints of values learned meanwhile
                _add_fingerprints(meta, record["learned"])
    if not meta and not messages:
        raise CassetteFormatError("empty journal", path=jpath)
    _check_meta(meta, jpath)
    return Cassette(messages, meta, target, complete="exit" in meta)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_META_SHAPES: dict[str, dict[str, Any]] = {
    # object field -> {sub-field: accepted types}; every field is optional
    "redaction": {"policy": str, "digest": str, "findings": dict},
    "server": {"handshake": str, "protocolVersion": str, "serverInfo": dict, "capabilities": dict},
    "exit": {"code": (int, type(None)), "signal": (int, str, type(None)), "reason": (str, type(None))},
}


def _add_fingerprints(meta: dict[str, Any], learned: dict[str, Any]) -> None:
    """Merge a journal's ``learned`` record (fingerprints of values the recorder learned while it
    ran) into ``meta["redaction"]["fingerprints"]``."""
    redaction = meta.get("redaction")
    if not isinstance(redaction, dict) or not isinstance(learned.get("values"), list):
        return
    known = redaction.get("fingerprints")
    if (
        isinstance(known, dict)
        and known.get("key") == learned.get("key")
        and isinstance(known.get("values"), list)
    ):
        values = {v for v in (*known["values"], *learned["values"]) if isinstance(v, str)}
        learned = {**known, "values": sorted(values)}
    meta["redaction"] = {**redaction, "fingerprints": learned}


def _check_meta(meta: dict[str, Any], path: Path) -> None:
    """The recording's top-level fields have the types docs/cassette-format.md gives them."""
    for key in ("recorder", "recorded_at", "transport"):
        if key in meta and not isinstance(meta[key], str):
            raise _fail(path, key, "expected a string")
    command = meta.get("command")
    if command is not None and (
        not isinstance(command, list) or not all(isinstance(a, str) for a in command)
    ):
        raise _fail(path, "command", "expected a list of strings")
    for key, fields in _META_SHAPES.items():
        if key not in meta:
            continue
        value = meta[key]
        if not isinstance(value, dict):
            raise _fail(path, key, "expected an object")
        for name, types in fields.items():
            if name in value and (not isinstance(value[name], types) or isinstance(value[name], bool)):
                raise _fail(path, f"{key}.{name}", f"unexpected {type(value[name]).__name__}")
    findings = meta.get("redaction", {}).get("findings", {})
    if not all(_is_int(v) for v in findings.values()):
        raise _fail(path, "redaction.findings", "expected an object of counts")
    if "http" in meta:
        _check_http(meta["http"], path)


def _check_http(entries: Any, path: Path) -> None:
    """The optional ``http`` list: one object per HTTP exchange of a Streamable HTTP recording."""
    if not isinstance(entries, list):
        raise _fail(path, "http", "expected a list")
    for index, entry in enumerate(entries):
        where = f"http[{index}]"
        if not isinstance(entry, dict):
            raise _fail(path, where, "expected an object")
        unknown = set(entry) - _HTTP_KEYS
        if unknown:
            raise _fail(path, f"{where}.{sorted(unknown)[0]}", "unknown field")
        seq = entry.get("seq")
        if seq is not None and (not isinstance(seq, int) or isinstance(seq, bool)):
            raise _fail(path, f"{where}.seq", "expected an integer or null")
        if entry.get("method") not in _HTTP_METHODS:
            raise _fail(path, f"{where}.method", "expected POST, GET or DELETE")
        status = entry.get("status")
        if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
            raise _fail(path, f"{where}.status", "expected an HTTP status code")
        content_type = entry.get("content_type")
        if content_type is not None and not isinstance(content_type, str):
            raise _fail(path, f"{where}.content_type", "expected a string or null")
        headers = entry.get("headers", {})
        if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
            raise _fail(path, f"{where}.headers", "expected an object of strings")
        events = entry.get("events", [])
        if not isinstance(events, list) or not all(
            isinstance(e, int) and not isinstance(e, bool) for e in events
        ):
            raise _fail(path, f"{where}.events", "expected a list of message seqs")


def _check_seqs(messages: list[Message], path: Path) -> None:
    seen: set[int] = set()
    for index, msg in enumerate(messages):
        if msg.seq in seen:
            raise _fail(path, f"messages[{index}].seq", f"duplicate seq {msg.seq}")
        seen.add(msg.seq)


# --- save ------------------------------------------------------------------------------------


def cassette_document(cassette: Cassette, cas: CasStore) -> dict[str, Any]:
    doc: dict[str, Any] = {"format": FORMAT, "version": FORMAT_VERSION}
    for key in _META_KEYS:
        if key in cassette.meta:
            doc[key] = cassette.meta[key]
    doc["messages"] = [message_entry(m, cas) for m in cassette.messages]
    return doc


def dump_document(doc: Mapping[str, Any]) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def save_cassette(cassette: Cassette, path: str | Path) -> Path:
    """Write ``cassette`` to ``path`` atomically (blobs first, then the JSON by rename)."""
    path = Path(path)
    doc = cassette_document(cassette, CasStore(cas_dir(path)))
    atomic_write(path, dump_document(doc))
    cassette.path = path
    return path


def redact_messages_again(
    cassette: Cassette, red: Any, *, skip: Callable[[Message], bool] | None = None
) -> set[str]:
    """Run the redactor ``red`` (a :class:`~harn_mcp_mock.redact.MessageRedactor`) again over
    the recorded command and every message of ``cassette`` but those ``skip`` names, in place
    (value memory: a value learned after these were written). Returns the CAS blob keys of the
    messages that changed (their old blobs, which nothing may use any more)."""
    command = cassette.meta.get("command")
    if isinstance(command, list):
        cassette.meta["command"] = [red.redact_text(a) if isinstance(a, str) else a for a in command]
    stale: set[str] = set()
    for msg in cassette.messages:
        if skip is not None and skip(msg):
            continue
        if msg.invalid is not None:
            raw = red.redact_text(msg.raw or "")
            if raw != msg.raw:
                stale.add(blob_key(msg))
                msg.raw = raw
            continue
        new = red.redact_message(msg.message)
        if new is not msg.message and new != msg.message:
            stale.add(blob_key(msg))
            msg.message = new
    return stale


def blob_key(msg: Message) -> str:
    """The name the blob of ``msg`` has (or would have) in the CAS: BLAKE3 of its bytes."""
    from blake3 import blake3

    data = (msg.raw or "").encode() if msg.invalid is not None else deepjson.dumps(msg.message)
    return str(blake3(data).hexdigest())
