"""Tape records, the streaming writer and the fast loader.

A tape is NDJSON: the first line is the header, every further line one record. Each line is
the canonical JSON (:func:`~harn_mcp_mock.store.canonical_bytes`) of its object, so two runs
that saw the same inputs at the same (virtual) times write byte-identical tapes.

The writer appends and flushes one whole line per record, so a tape is readable while it is
being written and a writer that dies leaves at worst a torn last line, which the loader drops
with a note (like the cassette journal).
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, NamedTuple

import orjson

from harn_mcp_mock._version import __version__
from harn_mcp_mock.clock import SYSTEM_CLOCK, Clock
from harn_mcp_mock.errors import (
    CassetteIntegrityError,
    TapeError,
    TapeFormatError,
    TapeIntegrityError,
    TapeVersionError,
)
from harn_mcp_mock.inputs import read_input
from harn_mcp_mock.store import INLINE_THRESHOLD, CasStore, canonical_bytes, digest

TAPE_FORMAT_VERSION = 1
"""The newest tape format this code reads and the one it writes."""

KNOWN_KINDS: frozenset[str] = frozenset(
    {
        "clock_read",
        "clock_sleep",
        "llm_call",
        "file_read",
        "file_write",
        "file_delete",
        "process_spawn",
        "mcp_json_rpc",
    }
)
"""Record kinds of format version 1; any other kind loads as ``unknown``."""

UNKNOWN_KIND = "unknown"

PHASES: tuple[str, str] = ("user_script", "runtime_finalize")

WRAPPING_FIELDS: frozenset[str] = frozenset(
    {"type", "seq", "phase", "virtual_time_ms", "monotonic_ms", "kind"}
)
"""Keys every record line carries; everything else is a kind-specific field."""


def cas_dir(path: str | Path) -> Path:
    """The content-addressed sidecar of the tape ``path``: ``run.tape`` -> ``run.tape.cas``."""
    path = Path(path)
    return path.with_name(path.name + ".cas")


def is_payload_ref(value: Any) -> bool:
    """True for a payload reference: ``{"content_hash", "text"}`` or ``{"content_hash", "len_bytes"}``."""
    return type(value) is dict and "content_hash" in value and ("text" in value or "len_bytes" in value)


# --- records ----------------------------------------------------------------------------------


class TapeRecord(NamedTuple):
    """One record line. ``fields`` holds everything but the wrapping fields (read-only by contract).

    ``kind`` is ``"unknown"`` for a kind this version does not know; ``raw_kind`` is always the
    kind as written. A named tuple: the loader builds a million of these per tape, and
    ``tuple.__new__`` is the cheapest constructor Python has.
    """

    seq: int
    phase: str
    virtual_time_ms: int
    monotonic_ms: int
    kind: str
    raw_kind: str
    fields: dict[str, Any]
    cas: CasStore | None = None

    def payload(self, name: str) -> bytes:
        """The bytes of payload field ``name``, inline or from the sidecar, hash verified."""
        ref = self.fields.get(name)
        if not is_payload_ref(ref):
            raise KeyError(f"record {self.seq} has no payload field {name!r}")
        assert isinstance(ref, dict)
        key = ref["content_hash"]
        where = f"seq {self.seq}.{name}"
        if "text" in ref:
            data = str(ref["text"]).encode()
            if digest(data) != key:
                raise TapeIntegrityError("inline payload does not match its content_hash", where=where)
            return data
        if self.cas is None:
            raise TapeIntegrityError("payload is in a CAS sidecar but the tape has none", where=where)
        try:
            size = ref.get("len_bytes")
            data = self.cas.get(str(key), size if isinstance(size, int) and size >= 0 else 0)
        except CassetteIntegrityError as exc:
            raise TapeIntegrityError(exc.message, path=exc.path, where=where) from None
        if len(data) != ref.get("len_bytes"):
            raise TapeIntegrityError(
                f"payload is {len(data)} bytes, the record says {ref.get('len_bytes')}", where=where
            )
        return data

    def to_json(self) -> dict[str, Any]:
        """The record as it is written on a tape line."""
        doc: dict[str, Any] = {
            "type": "record",
            "seq": self.seq,
            "phase": self.phase,
            "virtual_time_ms": self.virtual_time_ms,
            "monotonic_ms": self.monotonic_ms,
            "kind": self.raw_kind,
        }
        doc.update(self.fields)
        return doc


@dataclass(slots=True)
class Tape:
    """A loaded tape. ``notes`` says what the loader tolerated (e.g. a dropped torn last line)."""

    header: dict[str, Any]
    records: list[TapeRecord]
    path: Path
    notes: list[str] = field(default_factory=list)

    @property
    def version(self) -> int:
        return int(self.header["version"])

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[TapeRecord]:
        return iter(self.records)


# --- loading ----------------------------------------------------------------------------------


def _read_lines(path: Path) -> tuple[list[bytes], bool]:
    """The lines of ``path`` and whether the last one is complete (ends with a newline)."""
    try:
        data = read_input(path)
    except OSError as exc:
        raise TapeError(f"cannot read tape: {exc.strerror}", path=path) from None
    lines = data.split(b"\n")
    complete = not lines[-1]
    if complete:
        lines.pop()  # the newline that ends the last line
    return lines, complete


def _parse_header(lines: list[bytes], path: Path) -> dict[str, Any]:
    if not lines or not lines[0].strip():
        raise TapeFormatError("empty tape (no header line)", path=path, where="1")
    try:
        header = orjson.loads(lines[0])
    except orjson.JSONDecodeError:
        raise TapeFormatError("header is not valid JSON", path=path, where="1") from None
    if type(header) is not dict or header.get("type") != "header":
        raise TapeFormatError('the first line must be a {"type": "header"} object', path=path, where="1")
    version = header.get("version")
    if type(version) is not int or version < 1:
        raise TapeFormatError(
            f"header version must be a positive integer, not {version!r}", path=path, where="1"
        )
    if version > TAPE_FORMAT_VERSION:
        raise TapeVersionError(
            f"tape format version {version} is newer than this harn-mcp-mock reads "
            f"(up to {TAPE_FORMAT_VERSION}); upgrade harn-mcp-mock",
            path=path,
            where="1",
        )
    return header


def _bad(path: Path, lineno: int, what: str) -> TapeFormatError:
    return TapeFormatError(what, path=path, where=str(lineno))


def _parse_record(line: bytes, lineno: int, path: Path, cas: CasStore) -> TapeRecord:
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise _bad(path, lineno, "not valid JSON") from None
    if type(doc) is not dict:
        raise _bad(path, lineno, "expected a JSON object")
    pop = doc.pop
    try:
        if pop("type") != "record":
            raise _bad(path, lineno, 'expected "type": "record"')
        seq = pop("seq")
        phase = pop("phase")
        vt = pop("virtual_time_ms")
        mono = pop("monotonic_ms")
        raw_kind = pop("kind")
    except KeyError as exc:
        raise _bad(path, lineno, f"record has no {exc.args[0]!r} field") from None
    if type(seq) is not int or type(raw_kind) is not str or type(phase) is not str:
        raise _bad(path, lineno, "seq must be an integer, kind and phase strings")
    kind = raw_kind if raw_kind in KNOWN_KINDS else UNKNOWN_KIND
    return TapeRecord(seq, phase, vt, mono, kind, raw_kind, doc, cas)


def _parse_fast(
    lines: list[bytes],
    start: int,
    cas: CasStore,
    records: list[TapeRecord],
    shared: Sequence[bytes] | None,
    shared_records: Sequence[TapeRecord] | None,
) -> int:
    """Parse ``lines[start:]`` into ``records`` until the first line that is not a plain, valid
    record; return the index of that line (``len(lines)`` when all parsed).

    The hot loop: no per-line function calls besides ``orjson.loads`` and the record constructor.
    """
    loads = orjson.loads
    known = KNOWN_KINDS
    make = tuple.__new__
    cls = TapeRecord
    append = records.append
    n_shared = len(shared) if shared is not None and shared_records is not None else 0
    i = start
    n = len(lines)
    try:
        while i < n:
            line = lines[i]
            j = i - 1  # the position among record lines
            if j < n_shared and shared[j] == line:  # type: ignore[index]
                append(shared_records[j])  # type: ignore[index]
                i += 1
                continue
            doc = loads(line)
            pop = doc.pop
            if pop("type") != "record":
                return i
            seq = pop("seq")
            phase = pop("phase")
            vt = pop("virtual_time_ms")
            mono = pop("monotonic_ms")
            raw_kind = pop("kind")
            if type(seq) is not int or type(raw_kind) is not str or type(phase) is not str:
                return i
            kind = raw_kind if raw_kind in known else UNKNOWN_KIND
            append(make(cls, (seq, phase, vt, mono, kind, raw_kind, doc, cas)))
            i += 1
    except (orjson.JSONDecodeError, KeyError, AttributeError, TypeError):
        # Not JSON, not an object, a missing key: let the careful path name the problem.
        # (A record missing a key after "type" was popped is re-read from its line, so no harm.)
        return i
    return i


def _parse_body(
    lines: list[bytes],
    complete: bool,
    path: Path,
    notes: list[str],
    shared: Sequence[bytes] | None = None,
    shared_records: Sequence[TapeRecord] | None = None,
) -> list[TapeRecord]:
    """Parse record lines 2..n. With ``shared``, a line equal to ``shared[i]`` reuses ``shared_records[i]``."""
    cas = CasStore(cas_dir(path))
    records: list[TapeRecord] = []
    last = len(lines)
    # Building a million small dicts triggers the cyclic GC hundreds of times for nothing
    # (records hold no cycles): pause it while parsing.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        i = 1
        while i < last:
            i = _parse_fast(lines, i, cas, records, shared, shared_records)
            if i >= last:
                break
            # The careful path for the one line the fast loop stopped at.
            line, lineno = lines[i], i + 1
            if shared is not None:
                shared = shared_records = None  # positions of lines and records now differ
            i += 1
            if not line.strip():
                continue
            try:
                records.append(_parse_record(line, lineno, path, cas))
            except TapeFormatError:
                if lineno == last and not complete:
                    notes.append(f"dropped a torn last line {lineno} (the writer died mid-write)")
                    break
                raise
    finally:
        if was_enabled:
            gc.enable()
    return records


def _load(
    path: Path, shared: Tape | None = None, shared_lines: list[bytes] | None = None
) -> tuple[Tape, list[bytes]]:
    lines, complete = _read_lines(path)
    header = _parse_header(lines, path)
    notes: list[str] = []
    if shared is not None and shared_lines is not None and len(shared.records) != len(shared_lines) - 1:
        shared = shared_lines = None  # blank or dropped lines: positions of lines and records differ
    records = _parse_body(
        lines,
        complete,
        path,
        notes,
        shared=shared_lines[1:] if shared_lines is not None else None,
        shared_records=shared.records if shared is not None else None,
    )
    return Tape(header, records, path, notes), lines


def load_tape(path: str | Path) -> Tape:
    """Load a tape; refuses a newer format version with :class:`TapeVersionError`.

    A last line without its newline that is not valid JSON (the writer died mid-write) is
    dropped with a note in :attr:`Tape.notes`; any other bad line is a :class:`TapeFormatError`.
    """
    return _load(Path(path))[0]


def load_tape_pair(a: str | Path, b: str | Path) -> tuple[Tape, Tape]:
    """Load two tapes to compare them, parsing shared lines once.

    A line of ``b`` byte-equal to the line of ``a`` at the same position reuses ``a``'s parsed
    record (the same object), so two mostly-equal tapes cost little more than one. The shared
    record reads payloads from ``a``'s sidecar (same content hash, so the same bytes).
    """
    tape_a, lines_a = _load(Path(a))
    tape_b, _ = _load(Path(b), shared=tape_a, shared_lines=lines_a)
    return tape_a, tape_b


# --- writing ----------------------------------------------------------------------------------


def payload_ref(cas: CasStore, data: bytes | str) -> dict[str, Any]:
    """The reference a payload is stored as: inline text up to 4 KiB of UTF-8, else a blob of
    ``cas`` (the tape's sidecar)."""
    if isinstance(data, str):
        raw = data.encode()
        text: str | None = data
    else:
        raw = bytes(data)
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            text = None  # not UTF-8: cannot be inline text
    if text is not None and len(raw) <= INLINE_THRESHOLD:
        return {"content_hash": digest(raw), "text": text}
    return {"content_hash": cas.put(raw), "len_bytes": len(raw)}


class TapeWriter:
    """Stream records to ``path`` (NDJSON) as they happen; payloads over 4 KiB go to ``path.cas/``.

    Thread-safe: ``seq`` is assigned and the line written under one lock. Use as a context
    manager or call :meth:`close`.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Clock | None = None,
        script_path: str | None = None,
        argv: Sequence[str] = (),
        harn_version: str = __version__,
        started_at_unix_ms: int | None = None,
        sync: bool = True,
    ) -> None:
        self.path = Path(path)
        self.sync = sync
        """fsync at close and each sidecar blob (False: a writer whose files are disposable on a
        crash, a runner's trial)."""
        self.clock: Clock = clock if clock is not None else SYSTEM_CLOCK
        self.cas = CasStore(cas_dir(self.path), sync=sync)
        self._lock = threading.Lock()
        self._seq = 0
        if started_at_unix_ms is None:
            started_at_unix_ms = self.clock.wall_ms()
        self._t0_ns = self.clock.monotonic_ns()
        self.header: dict[str, Any] = {
            "type": "header",
            "version": TAPE_FORMAT_VERSION,
            "harn_version": harn_version,
            "started_at_unix_ms": started_at_unix_ms,
            "script_path": script_path,
            "argv": list(argv),
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh: BinaryIO | None = self.path.open("wb")
        except OSError as exc:  # --emit-tape FOLDER, a path under a file: one line naming it
            from harn_mcp_mock.store.cas import cannot_write

            raise cannot_write(self.path, exc) from None
        self._write_line(self.header)

    @property
    def records_written(self) -> int:
        return self._seq

    def _write_line(self, doc: Mapping[str, Any]) -> None:
        assert self._fh is not None
        self._fh.write(canonical_bytes(doc) + b"\n")  # one write per line: a crash tears at most the last
        self._fh.flush()

    def payload_ref(self, data: bytes | str) -> dict[str, Any]:
        """The reference a payload is stored as: inline text up to 4 KiB of UTF-8, else the sidecar."""
        return payload_ref(self.cas, data)

    def record(
        self,
        kind: str,
        *,
        phase: str = "user_script",
        payloads: Mapping[str, bytes | str] | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Append one record; returns it as written (with ``seq`` and the time stamps)."""
        if not kind or not isinstance(kind, str):
            raise ValueError("a record kind must be a non-empty string")
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {PHASES}, not {phase!r}")
        clash = WRAPPING_FIELDS.intersection(fields)
        if payloads:
            clash |= WRAPPING_FIELDS.intersection(payloads)
            clash |= set(fields).intersection(payloads)
        if clash:
            raise ValueError(f"field names {sorted(clash)} clash with wrapping fields or each other")
        refs = {name: self.payload_ref(data) for name, data in payloads.items()} if payloads else {}
        with self._lock:
            if self._fh is None:
                raise ValueError(f"tape writer for {self.path} is closed")
            doc: dict[str, Any] = {
                "type": "record",
                "seq": self._seq,
                "phase": phase,
                "virtual_time_ms": self.clock.wall_ms(),
                "monotonic_ms": (self.clock.monotonic_ns() - self._t0_ns) // 1_000_000,
                "kind": kind,
            }
            doc.update(fields)
            doc.update(refs)
            self._write_line(doc)
            self._seq += 1
        return doc

    def close(self) -> None:
        """Flush and fsync the tape; the file is complete once this returns. Idempotent."""
        with self._lock:
            fh, self._fh = self._fh, None
        if fh is None:
            return
        try:
            fh.flush()
            if self.sync:
                os.fsync(fh.fileno())
        finally:
            fh.close()

    @property
    def closed(self) -> bool:
        return self._fh is None

    def __enter__(self) -> TapeWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
