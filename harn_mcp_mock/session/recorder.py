"""Frames -> redaction -> messages (paired by id, with latency) -> journal -> cassette.

The recorder is fed the byte chunks a proxy has already forwarded, in each direction. It splits
them into lines, parses each into a :class:`~harn_mcp_mock.jsonrpc.Frame`, redacts it, pairs
responses with their requests (by JSON-RPC id and direction, so server-to-client requests such
as ``sampling/createMessage`` pair with the client's answers), and appends the entries to the
journal with one write per chunk. Nothing unredacted is ever written.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import threading
from collections import deque
from pathlib import Path
from typing import Any, Protocol

from harn_mcp_mock import deepjson
from harn_mcp_mock._version import __version__
from harn_mcp_mock.cassette.handshake import HANDSHAKE_METHODS, server_summary
from harn_mcp_mock.cassette.migrate import FORMAT_VERSION, JOURNAL_FORMAT
from harn_mcp_mock.cassette.model import (
    Cassette,
    Message,
    blob_key,
    cas_dir,
    journal_path,
    load_journal,
    message_entry,
    redact_messages_again,
    save_cassette,
)
from harn_mcp_mock.clock import SYSTEM_CLOCK, Clock
from harn_mcp_mock.errors import CassetteError, NothingRecordedError
from harn_mcp_mock.jsonrpc.frames import CLIENT, SERVER, Frame, batch_items, parse_frame
from harn_mcp_mock.jsonrpc.framing import LineSplitter
from harn_mcp_mock.store.cas import CasStore, atomic_write


class MessageRedactor(Protocol):
    """What the recorder needs of a redactor (see :mod:`harn_mcp_mock.redact`)."""

    def redact_message(self, obj: Any) -> Any: ...

    def redact_text(self, text: str) -> str: ...

    @property
    def findings(self) -> dict[str, int]: ...


def _other(direction: str) -> str:
    return SERVER if direction == CLIENT else CLIENT


class JournalWriter:
    """Appends NDJSON records to ``NAME.cassette.json.journal`` with one ``write`` per batch."""

    def __init__(self, cassette: Path, header: dict[str, Any]) -> None:
        self.path = journal_path(cassette)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        self.append([{"format": JOURNAL_FORMAT, "version": FORMAT_VERSION, **header}])

    def append(self, records: list[dict[str, Any]]) -> None:
        if self._fd is None or not records:
            return
        data = b"".join(deepjson.dumps(r) + b"\n" for r in records)
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @property
    def closed(self) -> bool:
        return self._fd is None


class Recorder:
    """Thread-safe sink for the chunks a proxy forwards; produces the cassette on :meth:`finish`."""

    def __init__(
        self,
        cassette: str | Path,
        redactor: MessageRedactor,
        *,
        command: list[str],
        policy_name: str,
        policy_digest: str,
        transport: str = "stdio",
        clock: Clock = SYSTEM_CLOCK,
        observer: Any = None,
    ) -> None:
        self.cassette_path = Path(cassette)
        self.transport = transport
        self._observer = observer
        self.command = command
        self._redactor = redactor
        self._clock = clock
        self._lock = threading.Lock()
        self._splitters = {CLIENT: LineSplitter(), SERVER: LineSplitter()}
        self._pending: dict[tuple[str, bytes], deque[tuple[int, int, str]]] = {}
        self._cancelled: set[tuple[str, bytes]] = set()
        """(sender, id) of the requests their sender cancelled (``notifications/cancelled``)."""
        self._seq = 0
        self._learned_by: dict[int, int] = {}
        """seq -> how many values the redactor knew when it redacted that message (see finish)."""
        self._noted = _learned(redactor)
        """How many learned values the journal's fingerprints cover (see :meth:`_append`)."""
        self._server_at: tuple[int, str, Any] | None = None
        """(seq, method, id) of the handshake response the trailer's ``server`` comes from."""
        self._cas = CasStore(cas_dir(self.cassette_path))
        self._cas_is_new = not self._cas.root.exists()
        self._handshakes: list[dict[str, Any]] = []
        self._server: dict[str, Any] = {}
        self._redaction: dict[str, Any] = {"policy": policy_name, "digest": policy_digest}
        self._unwritten: dict[str, int] = {}
        """Rule -> findings in what :meth:`redact_unwritten` redacted: not in the trailer's count."""
        fingerprints = getattr(redactor, "fingerprints", None)
        known = fingerprints() if callable(fingerprints) else None
        if known:  # the env's secrets as keyed hashes, so that a replay can recognise them
            self._redaction["fingerprints"] = known
        self._new_fingerprints = getattr(redactor, "new_fingerprints", None)
        if callable(self._new_fingerprints):
            self._new_fingerprints()  # those are in the header
        self.counts = {CLIENT: 0, SERVER: 0, "invalid": 0}
        self.client_lines = 0
        """Lines the client sent, invalid ones included: any of them makes a session worth keeping."""
        self.server_lines = 0
        """Lines the server sent, invalid ones included (a session without one recorded nothing)."""
        recorded_at = dt.datetime.fromtimestamp(clock.wall_ms() / 1000, tz=dt.UTC)
        header = {
            "recorder": f"harn-mcp-mock {__version__}",
            "recorded_at": recorded_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "transport": transport,
            "command": command,
            "redaction": self._redaction,
        }
        tape = _tape_field(observer, self.cassette_path)
        if tape is not None:
            header["tape"] = tape
        self._journal = JournalWriter(self.cassette_path, header)

    @property
    def observer(self) -> Any:
        """Optional ``on_message(direction, redacted_message, latency_ms=...)`` (the MCP tape).
        An observer that writes a tape (``tape_path``) has the journal say where that tape is
        (``tape``, relative to the cassette's folder), so that ``recover`` redacts it again."""
        return self._observer

    @observer.setter
    def observer(self, value: Any) -> None:
        self._observer = value
        tape = _tape_field(value, self.cassette_path)
        if tape is not None:
            with self._lock:
                if not self._journal.closed:
                    self._journal.append([{"tape": tape}])

    @property
    def redactor(self) -> MessageRedactor:
        """The redactor every recorded message goes through (a tape of the session is redacted
        again with it at the end: value memory)."""
        return self._redactor

    def redact_unwritten(self, obj: Any) -> Any:
        """``obj`` redacted by the recording's redactor, which learns its secrets (to redact them
        wherever the session repeats them), but not counted in the cassette's ``findings``: for
        what the cassette never keeps (the HTTP request headers the record proxy forwards)."""
        with self._lock:
            before = self._redactor.findings
            out = self._redactor.redact_message(obj)
            for rule, count in self._redactor.findings.items():
                if count > before.get(rule, 0):
                    self._unwritten[rule] = self._unwritten.get(rule, 0) + count - before.get(rule, 0)
        return out

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, direction: str, chunk: bytes) -> None:
        """Record the complete lines in ``chunk`` (bytes already forwarded in ``direction``)."""
        now = self._clock.monotonic_ns()
        with self._lock:
            lines = self._splitters[direction].feed(chunk)
            if lines:
                self._append([self._record(parse_frame(line, direction), now) for line in lines])

    def end_of_stream(self, direction: str) -> None:
        """The ``direction`` stream closed: record an unterminated last line, if any."""
        now = self._clock.monotonic_ns()
        with self._lock:
            rest = self._splitters[direction].flush()
            if rest is not None:
                self._append([self._record(parse_frame(rest, direction), now)])

    def feed_frame(self, frame: Frame) -> None:
        """Record one already-parsed frame (transports that frame messages themselves)."""
        now = self._clock.monotonic_ns()
        with self._lock:
            self._append([self._record(frame, now)])

    def _append(self, records: list[dict[str, Any]]) -> None:
        """Journal ``records`` (under the lock); when the redactor learned a value while
        redacting them, with a ``learned`` record after them holding the keyed fingerprints of
        the values new to it, in the same write: a journal left by a killed recorder carries
        what ``recover`` needs to redact the values learned after earlier lines were written
        (docs/redaction.md, value memory)."""
        learned = _learned(self._redactor)
        if learned != self._noted:
            self._noted = learned
            fresh = self._new_fingerprints() if callable(self._new_fingerprints) else None
            if fresh:
                records = [*records, {"learned": fresh}]
        self._journal.append(records)

    def awaiting(self, direction: str) -> int:
        """How many requests sent by ``direction`` are still waiting for their answer (not those
        it cancelled with ``notifications/cancelled``: no answer is owed for them)."""
        with self._lock:
            return sum(
                len(waiting)
                for key, waiting in self._pending.items()
                if key[0] == direction and key not in self._cancelled
            )

    def forget_request(self, direction: str, msg_id: Any, seq: int) -> bool:
        """Stop waiting for an answer to the request recorded as ``seq`` (sent by ``direction``
        with id ``msg_id``): it was refused at the transport level (an HTTP redirect, 401, 429)
        and will be sent again, often with the same id, so a later answer must pair with the
        retry. True when it was waiting."""
        key = (direction, deepjson.dumps(msg_id))
        with self._lock:
            waiting = self._pending.get(key)
            if not waiting:
                return False
            kept = deque(entry for entry in waiting if entry[0] != seq)
            found = len(kept) != len(waiting)
            if kept:
                self._pending[key] = kept
            else:
                del self._pending[key]
            return found

    def _record(self, frame: Frame, now: int) -> dict[str, Any]:
        seq = self._seq
        self._seq += 1
        direction = frame.direction
        if direction == CLIENT:
            self.client_lines += 1
        else:
            self.server_lines += 1
        if frame.kind == "invalid":
            self.counts["invalid"] += 1
            text = self._redactor.redact_text(frame.raw.decode("utf-8", "replace"))
            self._learned_by[seq] = _learned(self._redactor)
            msg = Message(seq, direction, invalid=frame.problem or "invalid", raw=text)
            return message_entry(msg, self._cas)
        self.counts[direction] += 1
        redacted = self._redactor.redact_message(frame.obj)
        self._learned_by[seq] = _learned(self._redactor)
        replies: list[int | None] = []
        latencies: list[float | None] = []
        for i, item in enumerate(batch_items(frame)):
            if frame.kind != "batch":
                shown = redacted
            else:  # the redacted member of the batch (a redacted batch keeps its length)
                shown = redacted[i] if isinstance(redacted, list) and i < len(redacted) else None
            reply, latency = self._pair(item, seq, now, shown)
            replies.append(reply)
            latencies.append(latency)
        msg = Message(seq, direction, redacted)
        if self.observer is not None:
            latency = next((x for x in latencies if x is not None), None)
            self.observer.on_message(direction, redacted, latency_ms=latency)
        if frame.kind == "batch":
            if any(r is not None for r in replies):
                msg.reply_to, msg.latency_ms = replies, latencies
        elif replies[0] is not None:
            msg.reply_to, msg.latency_ms = replies[0], latencies[0]
        return message_entry(msg, self._cas)

    def _pair(self, item: Frame, seq: int, now: int, redacted: Any) -> tuple[int | None, float | None]:
        if item.kind == "notification" and item.method == "notifications/cancelled":
            params = item.obj.get("params") if isinstance(item.obj, dict) else None
            if isinstance(params, dict) and "requestId" in params:
                # The sender no longer wants that answer: it is not owed (awaiting), though the
                # other side may still send it, and it is paired if it comes.
                self._cancelled.add((item.direction, deepjson.dumps(params["requestId"])))
            return None, None
        if item.kind == "request":
            key = (item.direction, deepjson.dumps(item.id))
            self._cancelled.discard(key)  # an id used again after its request was cancelled
            self._pending.setdefault(key, deque()).append((seq, now, item.method or ""))
            return None, None
        if item.kind not in ("response", "error"):
            return None, None
        key = (_other(item.direction), deepjson.dumps(item.id))
        waiting = self._pending.get(key)
        if not waiting:
            return None, None
        req_seq, started, method = waiting.popleft()
        if not waiting:
            del self._pending[key]
        if method in HANDSHAKE_METHODS and item.direction == SERVER and redacted is not None:
            self._note_handshake(method, redacted, seq)
        return req_seq, round((now - started) / 1_000_000, 3)

    def _note_handshake(self, method: str, response: Any, seq: int) -> None:
        if not isinstance(response, dict):
            return
        error = response.get("error")
        if isinstance(error, dict):
            self._handshakes.append({"method": method, "error": error.get("code")})
            return
        server = server_summary(method, response)
        if server is None:
            return
        self._handshakes.append({"method": method})
        self._server = server
        self._server_at = (seq, method, response.get("id"))

    # -- finishing -------------------------------------------------------------------------

    def finish(
        self, exit_info: dict[str, Any], extra: dict[str, Any] | None = None, *, allow_empty: bool = True
    ) -> Cassette:
        """Close the journal, write the cassette atomically, and remove the journal.

        ``extra`` adds top-level fields to the trailer (``{"http": [...]}`` from the HTTP
        record proxy); only the keys the cassette format knows are kept. Unless ``allow_empty``,
        a session in which the client sent no message, or a stdio server none before it failed
        (it did not start: a typo in its path), writes nothing (an existing cassette is kept as it
        was, the journal is removed) and raises :class:`NothingRecordedError`.
        """
        self.end_of_stream(CLIENT)
        self.end_of_stream(SERVER)
        failed = exit_info.get("signal") is not None or exit_info.get("code") not in (0, None)
        server_failed_silent = self.transport == "stdio" and not self.server_lines and failed
        silent = CLIENT if not self.client_lines else SERVER if server_failed_silent else None
        if not allow_empty and silent is not None:
            self.discard()
            raise NothingRecordedError(
                _nothing_recorded(self.cassette_path, exit_info, silent), path=self.cassette_path
            )
        with self._lock:
            server = dict(self._server)
            if self._handshakes:
                server["attempts"] = self._handshakes
            extra = self._redactor.redact_message(extra) if extra else extra
            fingerprints = getattr(self._redactor, "fingerprints", None)
            known = fingerprints() if callable(fingerprints) else None
            if known:  # with the values learned during the session
                self._redaction["fingerprints"] = known
            counted = self._redactor.findings.items()
            findings = {rule: n - self._unwritten.get(rule, 0) for rule, n in sorted(counted)}
            findings = {rule: n for rule, n in findings.items() if n > 0}
            trailer: dict[str, Any] = {
                "redaction": {**self._redaction, "findings": findings},
                "exit": exit_info,
            }
            if server:
                trailer["server"] = server
            for key, value in (extra or {}).items():
                trailer.setdefault(key, value)
            self._journal.append([trailer])
            self._journal.close()
        cassette = load_journal(self._journal.path, cassette_path=self.cassette_path)
        stale = self._redact_again(cassette)
        save_cassette(cassette, self.cassette_path)
        os.unlink(self._journal.path)
        self._drop_blobs(stale, cassette)
        return cassette

    def _refresh_server(self, cassette: Cassette) -> None:
        """The ``server`` summary again from the handshake response as redacted again."""
        if self._server_at is None or "server" not in cassette.meta:
            return
        seq, method, msg_id = self._server_at
        msg = next((m for m in cassette.messages if m.seq == seq), None)
        response = msg.message if msg is not None and msg.invalid is None else None
        if isinstance(response, list):
            response = next(
                (x for x in response if isinstance(x, dict) and x.get("id") == msg_id and "result" in x), None
            )
        server = server_summary(method, response) if isinstance(response, dict) else None
        if server is not None:
            attempts = cassette.meta["server"].get("attempts")
            cassette.meta["server"] = server if attempts is None else {**server, "attempts": attempts}

    def _redact_again(self, cassette: Cassette) -> set[str]:
        """Redact again, with everything the redactor learned since, the messages recorded
        before it learned it (a secret named only in a later message), and the recorded command.
        Returns the keys of the blobs the changed messages no longer use."""
        final = _learned(self._redactor)
        if not final:
            return set()
        learned_by = self._learned_by
        stale = redact_messages_again(
            cassette, self._redactor, skip=lambda msg: learned_by.get(msg.seq, final) >= final
        )
        self._refresh_server(cassette)  # the trailer's summary of the handshake response
        return stale

    def _drop_blobs(self, stale: set[str], cassette: Cassette) -> None:
        """Delete the blobs of ``stale`` the saved cassette does not use (they held a secret)."""
        if not stale:
            return
        used = {blob_key(m) for m in cassette.messages}
        for key in stale - used:
            self._cas.path_for(key).unlink(missing_ok=True)

    def discard(self) -> None:
        """Close and delete the journal, and the blob folder if this recording made it (the
        session never started, or recorded nothing worth keeping)."""
        with self._lock:
            self._journal.close()
        self._journal.path.unlink(missing_ok=True)
        if self._cas_is_new and self._cas.root.is_dir():
            shutil.rmtree(self._cas.root, ignore_errors=True)

    def broke_off(self) -> None:
        """The session ended without :meth:`finish` (an exception, a kill): keep the journal for
        ``harn mcp mock recover`` if the client sent anything, else remove it (no stale journal)."""
        if self.client_lines:
            self.abandon()
        else:
            self.discard()

    def abandon(self) -> None:
        """Close the journal without finishing: it stays on disk for ``harn mcp mock recover``,
        rewritten (atomically) with every message recorded before the redactor learned a value
        redacted again, and the blobs they no longer use deleted, as :meth:`finish` does for
        the cassette."""
        with self._lock:
            if self._journal.closed:
                return
            self._journal.close()
            if _learned(self._redactor):
                self._seal()

    def _seal(self) -> None:
        """Rewrite the closed journal with what the redactor knows now (see :meth:`abandon`)."""
        path = self._journal.path
        try:
            cassette = load_journal(path, cassette_path=self.cassette_path)
        except CassetteError:
            return  # nothing readable to rewrite (recover reports it)
        stale = self._redact_again(cassette)
        meta = cassette.meta
        fingerprints = getattr(self._redactor, "fingerprints", None)
        known = fingerprints() if callable(fingerprints) else None
        if known and isinstance(meta.get("redaction"), dict):
            meta["redaction"] = {**meta["redaction"], "fingerprints": known}
        header = {k: meta[k] for k in _JOURNAL_HEADER if k in meta}
        records = [{"format": JOURNAL_FORMAT, "version": FORMAT_VERSION, **header}]
        records += [message_entry(m, self._cas) for m in cassette.messages]
        tail: dict[str, Any] = {k: meta[k] for k in ("server", "exit", "http") if k in meta}
        if tail:
            records.append(tail)
        atomic_write(path, b"".join(deepjson.dumps(r) + b"\n" for r in records))
        self._drop_blobs(stale, cassette)


_JOURNAL_HEADER = ("recorder", "recorded_at", "transport", "command", "redaction", "tape")


def _tape_field(observer: Any, cassette: Path) -> str | None:
    """Where the tape ``observer`` writes is, as the journal's ``tape`` field: relative to the
    cassette's folder (both resolved), so that ``recover`` finds it from there wherever it runs."""
    tape = getattr(observer, "tape_path", None)
    if tape is None:
        return None
    real: str = os.path.realpath(Path(tape))
    try:
        return os.path.relpath(real, os.path.realpath(cassette.parent))
    except ValueError:  # another drive (Windows): no relative path
        return real


def _learned(redactor: Any) -> int:
    """How many values ``redactor`` has learned (0 for a redactor without a memory)."""
    learned = getattr(redactor, "learned", 0)
    return learned if isinstance(learned, int) else 0


def _nothing_recorded(path: Path, exit_info: dict[str, Any], silent: str = CLIENT) -> str:
    """The one line for a recording in which the client (``silent``) or the server sent no message."""
    how = [str(exit_info.get("reason") or "ended")]
    if exit_info.get("signal"):
        how.insert(0, f"server killed by {exit_info['signal']}")
    elif exit_info.get("code") is not None:
        how.insert(0, f"server exit {exit_info['code']}")
    what = "an empty recording" if silent == CLIENT else "this recording"
    kept = (
        f"kept the existing cassette unchanged; pass --allow-empty to overwrite it with {what}"
        if path.exists()
        else f"no cassette written; pass --allow-empty to write {what}"
    )
    return f"nothing recorded: the {silent} sent no message ({', '.join(how)}); {kept}"
