"""Durable storage for the protocol Harness: SQLite (stdlib ``sqlite3``), one connection, one lock.

Everything a Harness accepts lives here, so a new process on the same file sees it again:

* ``resources``: every resource document (task, session, message, artifact, outcome, receipt) as
  JSON, with the columns the server filters on (owner, workspace, session, task, status) and an
  ``ord`` that orders each kind (receipts are chained in ``ord`` order).
* ``events``: the append-only event log. ``id`` is an ``AUTOINCREMENT`` integer, so event ids are
  monotonic and never reused, even after pruning; ``sequence`` counts per resource.
* ``event_floors``: how far a task's events were pruned, so a resume cursor that falls in the gap
  is reported as gone instead of silently skipping events.
* ``idempotency``: the first response for each idempotency scope, with ``created_ms`` on the
  injected clock (entries older than the retention are ignored and purged).
* ``counters``: per-kind id counters (ids are ``task_000001``, ...; never recycled).

Writes that must be atomic (submit with its idempotency row, a lifecycle transition with its
event) go through :meth:`ProtocolStore.transaction`: the process-wide lock plus ``BEGIN
IMMEDIATE``, so two stores on one file (two processes) also serialise. The file runs in WAL mode
with ``synchronous=FULL``: a committed transaction survives a kill.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock.clock import SYSTEM_CLOCK, Clock
from harn_mcp_mock.errors import HarnessStoreError

__all__ = ["IdempotencyRecord", "ProtocolStore", "rfc3339"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS resources (
    id TEXT PRIMARY KEY,
    object TEXT NOT NULL,
    ord INTEGER NOT NULL,
    owner TEXT,
    workspace_id TEXT,
    session_id TEXT,
    task_id TEXT,
    status TEXT,
    doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS resources_by_object ON resources (object, ord);
CREATE INDEX IF NOT EXISTS resources_by_session ON resources (session_id, object, ord);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    resource_object TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    task_id TEXT,
    sequence INTEGER NOT NULL,
    doc TEXT NOT NULL,
    UNIQUE (resource_object, resource_id, sequence)
);
CREATE INDEX IF NOT EXISTS events_by_task ON events (task_id, id);
CREATE TABLE IF NOT EXISTS event_floors (task_id TEXT PRIMARY KEY, pruned_through INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency (
    scope TEXT PRIMARY KEY,
    body_hash TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    status INTEGER NOT NULL,
    response TEXT NOT NULL,
    created_ms INTEGER NOT NULL
);
"""


def rfc3339(ms: int) -> str:
    """``2026-01-01T00:00:00.000Z`` for Unix milliseconds."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


class IdempotencyRecord:
    __slots__ = ("body_hash", "created_ms", "resource_id", "response", "status")

    def __init__(self, body_hash: str, resource_id: str, status: int, response: Any, created_ms: int) -> None:
        self.body_hash = body_hash
        self.resource_id = resource_id
        self.status = status
        self.response = response
        self.created_ms = created_ms


class ProtocolStore:
    """The Harness's durable state. Thread-safe; every method may be called from any thread."""

    def __init__(self, path: str | Path = ":memory:", *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.path = str(path)
        self.clock = clock
        self._lock = threading.RLock()
        self._depth = 0
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise HarnessStoreError(
                f"cannot use it as a Harness store: {exc} (pass --db a new or existing store file "
                "in a writable folder)",
                path=self.path,
            ) from None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def now_ms(self) -> int:
        return self.clock.wall_ms()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """An atomic unit (re-entrant: an inner ``transaction`` joins the outer one)."""
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._conn.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outer:
                    self._conn.execute("ROLLBACK")
                raise
            self._depth -= 1
            if outer:
                self._conn.execute("COMMIT")

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self._conn.execute(sql, params).fetchall())

    # -- ids ---------------------------------------------------------------------------------

    def next_ord(self, name: str) -> int:
        with self.transaction():
            self._conn.execute(
                "INSERT INTO counters (name, n) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET n = n + 1",
                (name,),
            )
            return int(self._conn.execute("SELECT n FROM counters WHERE name = ?", (name,)).fetchone()[0])

    def new_id(self, prefix: str) -> tuple[str, int]:
        """A fresh ``prefix_000001``-style id and its ordinal."""
        n = self.next_ord(prefix)
        return f"{prefix}_{n:06d}", n

    # -- resources ---------------------------------------------------------------------------

    def put(
        self,
        doc: Mapping[str, Any],
        *,
        ord: int,
        owner: str | None = None,
        object: str | None = None,
        task_id: str | None = None,
    ) -> None:
        """Insert or replace a resource document (its columns are read from the document)."""
        kind = object or doc.get("object")
        if task_id is None:
            task_id = doc.get("task_id") if kind != "task" else doc.get("id")
        with self.transaction():
            self._conn.execute(
                "INSERT INTO resources (id, object, ord, owner, workspace_id, session_id, task_id, status, doc)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET"
                " status = excluded.status, doc = excluded.doc",
                (
                    doc.get("id") or doc.get("receipt_id"),
                    kind,
                    ord,
                    owner,
                    doc.get("workspace_id"),
                    doc.get("session_id") if kind != "session" else doc.get("id"),
                    task_id,
                    doc.get("status"),
                    orjson.dumps(dict(doc)).decode(),
                ),
            )

    def get(self, resource_id: str, object: str | None = None) -> tuple[dict[str, Any], str | None] | None:
        """``(document, owner)`` or None."""
        rows = self._rows("SELECT object, owner, doc FROM resources WHERE id = ?", (resource_id,))
        if not rows or (object is not None and rows[0][0] != object):
            return None
        return orjson.loads(rows[0][2]), rows[0][1]

    def ord_of(self, resource_id: str) -> int | None:
        rows = self._rows("SELECT ord FROM resources WHERE id = ?", (resource_id,))
        return int(rows[0][0]) if rows else None

    def find(
        self,
        object: str,
        *,
        owner: str | None = None,
        status: str | None = None,
        session_id: str | None = None,
        task_id: str | None = None,
        after_ord: int = 0,
        limit: int | None = None,
    ) -> list[tuple[int, dict[str, Any]]]:
        """``(ord, document)`` of one kind, in ``ord`` order, filtered by the given columns."""
        sql = "SELECT ord, doc FROM resources WHERE object = ? AND ord > ?"
        params: list[Any] = [object, after_ord]
        for column, value in (
            ("owner", owner),
            ("status", status),
            ("session_id", session_id),
            ("task_id", task_id),
        ):
            if value is not None:
                sql += f" AND {column} = ?"
                params.append(value)
        sql += " ORDER BY ord"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [(int(o), orjson.loads(d)) for o, d in self._rows(sql, params)]

    def last(self, object: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT doc FROM resources WHERE object = ? ORDER BY ord DESC LIMIT 1", (object,))
        return orjson.loads(rows[0][0]) if rows else None

    # -- events ------------------------------------------------------------------------------

    def append_event(
        self,
        event: str,
        resource: Mapping[str, str],
        payload: Mapping[str, Any],
        *,
        task_id: str | None = None,
        extra: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Append one event; its ``id`` is the next global integer, ``sequence`` per resource."""
        with self.transaction():
            row = self._conn.execute(
                "SELECT COALESCE(MAX(sequence), 0) FROM events WHERE resource_object = ? AND resource_id = ?",
                (resource["object"], resource["id"]),
            ).fetchone()
            sequence = int(row[0]) + 1
            previous = self._conn.execute(
                "SELECT MAX(id) FROM events WHERE resource_object = ? AND resource_id = ?",
                (resource["object"], resource["id"]),
            ).fetchone()[0]
            cur = self._conn.execute(
                "INSERT INTO events (resource_object, resource_id, task_id, sequence, doc) VALUES (?, ?, ?, ?, '')",
                (resource["object"], resource["id"], task_id, sequence),
            )
            event_id = int(cur.lastrowid or 0)
            doc: dict[str, Any] = {
                "id": event_id,
                "object": "event",
                "event": event,
                "resource": {"object": resource["object"], "id": resource["id"]},
                "created_at": rfc3339(self.now_ms()),
                "sequence": sequence,
                "payload": dict(payload),
            }
            if task_id is not None:
                doc["task_id"] = task_id
            if previous is not None:
                doc["previous_event_id"] = str(previous)  # the models type optional *_id fields as strings
            doc.update(extra or {})
            doc["metadata"] = dict(metadata or {})
            self._conn.execute(
                "UPDATE events SET doc = ? WHERE id = ?", (orjson.dumps(doc).decode(), event_id)
            )
        return doc

    def events_for_task(
        self, task_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        sql = "SELECT doc FROM events WHERE task_id = ? AND id > ? ORDER BY id"
        params: list[Any] = [task_id, after]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [orjson.loads(d) for (d,) in self._rows(sql, params)]

    def events_for_session(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The session's own events and those of every task in it, in id order."""
        sql = (
            "SELECT doc FROM events WHERE id > ? AND ((resource_object = 'session' AND resource_id = ?)"
            " OR task_id IN (SELECT id FROM resources WHERE object = 'task' AND session_id = ?)) ORDER BY id"
        )
        params: list[Any] = [after, session_id, session_id]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [orjson.loads(d) for (d,) in self._rows(sql, params)]

    def event(self, event_id: int) -> dict[str, Any] | None:
        rows = self._rows("SELECT doc FROM events WHERE id = ?", (event_id,))
        return orjson.loads(rows[0][0]) if rows else None

    def last_event_id(self) -> int:
        """The highest event id ever issued (0 before the first); survives pruning."""
        rows = self._rows("SELECT seq FROM sqlite_sequence WHERE name = 'events'")
        return int(rows[0][0]) if rows else 0

    def prune_events(self, task_id: str, through: int) -> int:
        """Drop a task's events with ``id <= through`` (retention); returns how many went."""
        with self.transaction():
            cur = self._conn.execute("DELETE FROM events WHERE task_id = ? AND id <= ?", (task_id, through))
            self._conn.execute(
                "INSERT INTO event_floors (task_id, pruned_through) VALUES (?, ?) ON CONFLICT (task_id)"
                " DO UPDATE SET pruned_through = MAX(pruned_through, excluded.pruned_through)",
                (task_id, through),
            )
            return int(cur.rowcount)

    def pruned_through(self, task_id: str) -> int:
        rows = self._rows("SELECT pruned_through FROM event_floors WHERE task_id = ?", (task_id,))
        return int(rows[0][0]) if rows else 0

    # -- idempotency -------------------------------------------------------------------------

    def idempotency_get(self, scope: str, *, retention_ms: int) -> IdempotencyRecord | None:
        """The stored first response for ``scope``, unless older than ``retention_ms`` (then purged)."""
        with self.transaction():
            cutoff = self.now_ms() - retention_ms
            self._conn.execute("DELETE FROM idempotency WHERE created_ms < ?", (cutoff,))
            row = self._conn.execute(
                "SELECT body_hash, resource_id, status, response, created_ms FROM idempotency WHERE scope = ?",
                (scope,),
            ).fetchone()
        if row is None:
            return None
        return IdempotencyRecord(row[0], row[1], int(row[2]), orjson.loads(row[3]), int(row[4]))

    def idempotency_put(
        self, scope: str, body_hash: str, resource_id: str, status: int, response: Any
    ) -> None:
        with self.transaction():
            self._conn.execute(
                "INSERT INTO idempotency (scope, body_hash, resource_id, status, response, created_ms)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (scope, body_hash, resource_id, status, orjson.dumps(response).decode(), self.now_ms()),
            )
