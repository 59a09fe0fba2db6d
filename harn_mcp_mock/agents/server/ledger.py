"""The Harness's shared kernel: the store, the clock, events and their listeners, visibility,
idempotency and event cursors.

Every service (:mod:`.sessions`, :mod:`.tasks`, :mod:`.issuer`, :mod:`.replay`) works through one
:class:`Ledger`, so a state change, its event and its idempotency record share one
:meth:`ProtocolStore.transaction`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from harn_mcp_mock.agents.db import ProtocolStore, rfc3339
from harn_mcp_mock.agents.envelopes import ErrorEnvelope, ProtocolError
from harn_mcp_mock.agents.receipts import sha256_ref
from harn_mcp_mock.clock import Clock

__all__ = [
    "DEFAULT_WORKSPACE",
    "IDEMPOTENCY_RETENTION_MS",
    "Created",
    "Ledger",
    "event_page",
    "invalid",
    "not_found",
]

IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000
DEFAULT_WORKSPACE = "ws_default"

Created = tuple[int, dict[str, Any], bool]
"""``(http_status, resource, idempotent_replay)`` of a write."""


def not_found(kind: str, resource_id: str) -> ProtocolError:
    return ProtocolError(ErrorEnvelope.of("resource_not_found", f"no {kind} {resource_id!r}", param="id"))


def invalid(message: str, param: str) -> ProtocolError:
    return ProtocolError.invalid(message, param=param)


def event_page(rows: list[dict[str, Any]], limit: int, after: int) -> dict[str, Any]:
    """A page of events read with ``limit + 1``; ``next_cursor`` is the last id delivered (or
    ``after`` when none was), so a client can always resume from it."""
    data = rows[:limit]
    return {
        "object": "list",
        "data": data,
        "has_more": len(rows) > limit,
        "next_cursor": data[-1]["id"] if data else after,
    }


class Ledger:
    """The store plus what every write shares. Thread-safe (the store serializes writes)."""

    def __init__(self, store: ProtocolStore, clock: Clock | None = None) -> None:
        self.store = store
        self.clock = clock or store.clock
        self._listeners: list[Callable[[], None]] = []
        self._listeners_lock = threading.Lock()

    def now(self) -> str:
        return rfc3339(self.clock.wall_ms())

    # -- events ------------------------------------------------------------------------------

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Called (from any thread) after events are appended."""
        with self._listeners_lock:
            self._listeners.append(listener)

    def notify(self) -> None:
        """Wake every event listener (call after appending events)."""
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    def emit(
        self,
        event: str,
        resource: Mapping[str, str],
        payload: Mapping[str, Any],
        *,
        task_id: str | None,
        metadata: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Append one event to the store (listeners are woken by :meth:`notify`)."""
        return self.store.append_event(event, resource, payload, task_id=task_id, metadata=metadata)

    def check_cursor(self, task_id: str, after: int) -> None:
        """``cursor_expired`` when events after ``after`` were pruned or the cursor was never issued."""
        floor = self.store.pruned_through(task_id)
        last = self.store.last_event_id()
        if after < 0 or after > last or after < floor:
            raise ProtocolError(
                ErrorEnvelope.of(
                    "cursor_expired",
                    f"event cursor {after} is no longer available for task {task_id}"
                    if after < floor
                    else f"event cursor {after} was never issued by this Harness",
                    param="Last-Event-ID",
                    details={"last_event_id": after, "earliest_available_after": floor},
                )
            )

    def check_issued(self, after: int) -> None:
        """``cursor_expired`` for a cursor this Harness never issued."""
        if after < 0 or after > self.store.last_event_id():
            raise ProtocolError(
                ErrorEnvelope.of(
                    "cursor_expired",
                    f"event cursor {after} was never issued by this Harness",
                    param="Last-Event-ID",
                    details={"last_event_id": after},
                )
            )

    # -- resources ---------------------------------------------------------------------------

    def visible(self, kind: str, resource_id: str, actor: str) -> dict[str, Any]:
        """The resource, when ``actor`` owns it; another actor's resource is not visible at all."""
        found = self.store.get(resource_id, kind)
        if found is None or found[1] != actor:
            raise not_found(kind, resource_id)
        return found[0]

    def put(self, doc: dict[str, Any], owner: str | None) -> None:
        """Rewrite an existing resource in place (it keeps its order)."""
        self.store.put(doc, ord=self.store.ord_of(doc["id"]) or 0, owner=owner)

    def idempotent(
        self,
        actor: str,
        workspace_id: str,
        target: str,
        key: str | None,
        body: Mapping[str, Any],
        create: Callable[[], tuple[int, dict[str, Any]]],
    ) -> Created:
        """Run ``create`` in one transaction under the spec's idempotency scope (actor +
        workspace_id + method + canonical target + key): ``(status, response, replayed)``. The
        first completed response is kept for 24 hours; the same key with another body is 409
        ``idempotency_key_reused``. Concurrent identical writes create one resource."""
        if key is not None and not (0 < len(key) <= 255):
            raise invalid("Idempotency-Key must be 1 to 255 characters", "Idempotency-Key")
        scope = body_hash = None
        if key is not None:
            scope = sha256_ref([actor, workspace_id, *target.split(" ", 1), key])
            body_hash = sha256_ref(dict(body))
        with self.store.transaction():
            if scope is not None and body_hash is not None:
                record = self.store.idempotency_get(scope, retention_ms=IDEMPOTENCY_RETENTION_MS)
                if record is not None:
                    if record.body_hash != body_hash:
                        raise ProtocolError(
                            ErrorEnvelope.of(
                                "idempotency_key_reused",
                                "this Idempotency-Key was already used with a different request body",
                                param="Idempotency-Key",
                                details={"resource_id": record.resource_id},
                            )
                        )
                    return record.status, record.response, True
            status, response = create()
            if scope is not None and body_hash is not None:
                self.store.idempotency_put(scope, body_hash, str(response["id"]), status, response)
        self.notify()
        return status, response, False
