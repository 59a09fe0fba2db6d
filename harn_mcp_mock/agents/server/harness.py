"""The Harness core: tasks, their lifecycle, events, idempotency, outcomes and receipts.

No HTTP here: :mod:`.app` maps requests onto these methods and :class:`ProtocolError` envelopes
onto responses. Every state change is one :meth:`ProtocolStore.transaction`, so a lifecycle
transition, its event, the outcome and the receipt are committed together or not at all.

Lifecycle events emitted (spec names only): ``task.submitted`` (accepted), ``task.started``
(SUBMITTED -> WORKING), ``task.completed`` / ``task.failed`` / ``task.canceled`` (terminal);
``user.message`` for the input, ``user.cancel_requested`` before a cancel, ``agent.mcp_tool_use``
and ``agent.tool_result`` per tool call, ``agent.message`` for the summary, ``artifact.created``
for the final world snapshot, ``receipt.issued`` after the terminal event.

Restart: :meth:`Harness.recover` (run by the constructor) fails every task that was WORKING when
the last process died (its tool calls may have partly happened, so re-running it would not be
honest), with a ``task.failed`` event, an outcome and a receipt; SUBMITTED tasks stay SUBMITTED
and are listed by :meth:`Harness.pending` for the runner to pick up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from harn_mcp_mock.agents import PROTOCOL_VERSION
from harn_mcp_mock.agents.errors import ErrorEnvelope, ProtocolError
from harn_mcp_mock.agents.lifecycle import TaskState, is_terminal, transition
from harn_mcp_mock.agents.receipts import RECEIPT_SCHEMA, seal, sha256_ref, verify_chain
from harn_mcp_mock.agents.server.agent import AgentResult, run_scripted
from harn_mcp_mock.agents.store import ProtocolStore, rfc3339
from harn_mcp_mock.clock import Clock
from harn_mcp_mock.errors import HarnError

__all__ = [
    "ALL_SCOPES",
    "DEFAULT_WORKSPACE",
    "IDEMPOTENCY_RETENTION_MS",
    "SUPPORTED_VERSIONS",
    "Harness",
]

SUPPORTED_VERSIONS: tuple[str, ...] = (PROTOCOL_VERSION,)
IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000
DEFAULT_WORKSPACE = "ws_default"
ALL_SCOPES: frozenset[str] = frozenset(
    {
        "tasks:read",
        "tasks:write",
        "sessions:read",
        "sessions:write",
        "events:read",
        "artifacts:read",
        "receipts:read",
    }
)

_ROLES = frozenset({"user", "assistant", "system", "tool", "agent"})
_VISIBILITIES = frozenset({"public", "internal", "receipt_only"})
_END_EVENTS = {
    TaskState.COMPLETED: "task.completed",
    TaskState.FAILED: "task.failed",
    TaskState.CANCELED: "task.canceled",
}
_OUTCOME_STATUS = {
    TaskState.COMPLETED: "SUCCEEDED",
    TaskState.FAILED: "FAILED",
    TaskState.CANCELED: "CANCELED",
}


def not_found(kind: str, resource_id: str) -> ProtocolError:
    return ProtocolError(ErrorEnvelope.of("resource_not_found", f"no {kind} {resource_id!r}", param="id"))


def _invalid(message: str, param: str) -> ProtocolError:
    return ProtocolError.invalid(message, param=param)


class Harness:
    """The protocol's state machine over a :class:`ProtocolStore`. Thread-safe."""

    def __init__(
        self,
        store: ProtocolStore,
        *,
        clock: Clock | None = None,
        issuer: str = "harn-mcp-mock",
        world_root: Path | None = None,
    ) -> None:
        self.store = store
        self.clock = clock or store.clock
        self.issuer = issuer
        self.world_root = world_root or Path.cwd()
        self._listeners: list[Callable[[], None]] = []
        self._listeners_lock = threading.Lock()
        self.recovered: list[str] = self.recover()

    # -- plumbing ----------------------------------------------------------------------------

    def now(self) -> str:
        return rfc3339(self.clock.wall_ms())

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

    def _visible(self, kind: str, resource_id: str, actor: str) -> dict[str, Any]:
        found = self.store.get(resource_id, kind)
        if found is None or found[1] != actor:
            raise not_found(kind, resource_id)  # another actor's resource is not visible at all
        return found[0]

    # -- submit ------------------------------------------------------------------------------

    def submit(
        self, actor: str, body: Any, idempotency_key: str | None = None
    ) -> tuple[int, dict[str, Any], bool]:
        """``(http_status, task, replayed)``. The idempotency scope is actor + workspace_id +
        method + canonical target + key; the whole submit is one transaction, so concurrent
        identical submits create one task."""
        if not isinstance(body, Mapping):
            raise _invalid("the request body must be a JSON object", "body")
        task_input = body.get("input")
        if not isinstance(task_input, Mapping):
            raise _invalid("missing required field: input (an object)", "input")
        workspace_id = body.get("workspace_id", DEFAULT_WORKSPACE)
        if not isinstance(workspace_id, str) or not workspace_id:
            raise _invalid("workspace_id must be a non-empty string", "workspace_id")
        session_id = body.get("session_id")
        if session_id is not None and not isinstance(session_id, str):
            raise _invalid("session_id must be a string", "session_id")
        metadata = body.get("metadata", {})
        if not isinstance(metadata, Mapping):
            raise _invalid("metadata must be an object", "metadata")

        def create() -> tuple[int, dict[str, Any]]:
            now = self.now()
            if session_id is None:
                session = self.new_session(actor, workspace_id, now)
            else:
                session = self._visible("session", session_id, actor)
                if session["workspace_id"] != workspace_id:
                    raise not_found("session", session_id)
                self._check_open(session)
            task = self.new_task(actor, session, workspace_id, dict(task_input), dict(metadata), now)
            return 201, task

        return self.idempotent(actor, workspace_id, "POST /v1/tasks", idempotency_key, body, create)

    def new_task(
        self,
        actor: str,
        session: Mapping[str, Any],
        workspace_id: str,
        task_input: dict[str, Any],
        metadata: dict[str, Any],
        now: str,
        **fields: Any,
    ) -> dict[str, Any]:
        """A SUBMITTED task, its input message, ``user.message`` and ``task.submitted``."""
        task_id, task_ord = self.store.new_id("task")
        message = self.new_message(actor, session, "user", self._input_parts(task_input), task_id, now)
        task: dict[str, Any] = {
            "id": task_id,
            "object": "task",
            "created_at": now,
            "updated_at": now,
            "session_id": session["id"],
            "workspace_id": workspace_id,
            "status": TaskState.SUBMITTED.value,
            "input": task_input,
            "created_by": actor,
            **fields,
            "metadata": {**metadata, "input_message_id": message["id"]},
        }
        self.store.put(task, ord=task_ord, owner=actor)
        self.emit(
            "user.message",
            {"object": "session", "id": session["id"]},
            {"message_id": message["id"], "role": "user"},
            task_id=task_id,
        )
        self.emit(
            "task.submitted",
            {"object": "task", "id": task_id},
            {"status": "SUBMITTED", "session_id": session["id"]},
            task_id=task_id,
        )
        return task

    def idempotent(
        self,
        actor: str,
        workspace_id: str,
        target: str,
        key: str | None,
        body: Mapping[str, Any],
        create: Callable[[], tuple[int, dict[str, Any]]],
    ) -> tuple[int, dict[str, Any], bool]:
        """Run ``create`` in one transaction under the spec's idempotency scope (actor +
        workspace_id + method + canonical target + key): ``(status, response, replayed)``. The
        first completed response is kept for 24 hours; the same key with another body is 409
        ``idempotency_key_reused``. Concurrent identical writes create one resource."""
        if key is not None and not (0 < len(key) <= 255):
            raise _invalid("Idempotency-Key must be 1 to 255 characters", "Idempotency-Key")
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

    def new_session(
        self, actor: str, workspace_id: str, now: str, metadata: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        session_id, ord_ = self.store.new_id("sess")
        session = {
            "id": session_id,
            "object": "session",
            "created_at": now,
            "updated_at": now,
            "workspace_id": workspace_id,
            "state": "ACTIVE",
            "transcript": {"messages_url": f"/v1/sessions/{session_id}/messages"},
            "metadata": metadata or {},
        }
        self.store.put(session, ord=ord_, owner=actor)
        self.emit("session.created", {"object": "session", "id": session_id}, {}, task_id=None)
        return session

    @staticmethod
    def _input_parts(task_input: Mapping[str, Any]) -> list[dict[str, Any]]:
        parts = task_input.get("parts")
        if isinstance(parts, list) and all(isinstance(p, Mapping) for p in parts):
            return [dict(p) for p in parts]
        if isinstance(task_input.get("text"), str) and len(task_input) == 1:
            return [{"type": "text", "text": task_input["text"], "visibility": "public"}]
        return [{"type": "json", "value": dict(task_input), "visibility": "public"}]

    def new_message(
        self,
        actor: str,
        session: Mapping[str, Any],
        role: str,
        parts: list[dict[str, Any]],
        task_id: str | None,
        now: str,
    ) -> dict[str, Any]:
        message_id, ord_ = self.store.new_id("msg")
        message = {
            "id": message_id,
            "object": "message",
            "created_at": now,
            "role": role,
            "parts": parts,
            "session_id": session["id"],
            **({"task_id": task_id} if task_id is not None else {}),
            "metadata": {},
        }
        self.store.put(message, ord=ord_, owner=actor)
        return message

    # -- sessions ----------------------------------------------------------------------------

    def create_session(
        self, actor: str, body: Any, idempotency_key: str | None = None
    ) -> tuple[int, dict[str, Any], bool]:
        """``POST /v1/sessions``: an ACTIVE session (``session.created``)."""
        if not isinstance(body, Mapping):
            raise _invalid("the request body must be a JSON object", "body")
        workspace_id = body.get("workspace_id", DEFAULT_WORKSPACE)
        if not isinstance(workspace_id, str) or not workspace_id:
            raise _invalid("workspace_id must be a non-empty string", "workspace_id")
        metadata = body.get("metadata", {})
        if not isinstance(metadata, Mapping):
            raise _invalid("metadata must be an object", "metadata")
        persona_id = body.get("persona_id")
        if persona_id is not None and not isinstance(persona_id, str):
            raise _invalid("persona_id must be a string", "persona_id")

        def create() -> tuple[int, dict[str, Any]]:
            session = self.new_session(actor, workspace_id, self.now(), dict(metadata))
            if persona_id is not None:
                session["persona_id"] = persona_id
                self.store.put(session, ord=self.store.ord_of(session["id"]) or 0, owner=actor)
            return 201, session

        return self.idempotent(actor, workspace_id, "POST /v1/sessions", idempotency_key, body, create)

    @staticmethod
    def _check_open(session: Mapping[str, Any]) -> None:
        if session["state"] in ("CLOSED", "FAILED"):
            raise ProtocolError(
                ErrorEnvelope.of(
                    "conflict",
                    f"session {session['id']} is {session['state']}: it takes no new messages or tasks",
                    param="session_id",
                    details={"state": session["state"]},
                )
            )

    def append_message(
        self, actor: str, session_id: str, body: Any, idempotency_key: str | None = None
    ) -> tuple[int, dict[str, Any], bool]:
        """``POST /v1/sessions/{id}/messages``: append one message, in order, to an open session.

        The body is ``{"role": "user", "parts": [...]}`` or ``{"text": "..."}`` (a user text part)."""
        if not isinstance(body, Mapping):
            raise _invalid("the request body must be a JSON object", "body")
        role = body.get("role", "user")
        if role not in _ROLES:
            raise _invalid(f"role must be one of {', '.join(sorted(_ROLES))}", "role")
        parts = body.get("parts")
        if parts is None and isinstance(body.get("text"), str):
            parts = [{"type": "text", "text": body["text"], "visibility": "public"}]
        if not isinstance(parts, list) or not parts:
            raise _invalid("missing required field: parts (a non-empty list) or text", "parts")
        for index, part in enumerate(parts):
            if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
                raise _invalid("each part is an object with a string type", f"parts[{index}].type")
            if part.get("visibility", "public") not in _VISIBILITIES:
                raise _invalid(
                    f"visibility must be one of {', '.join(sorted(_VISIBILITIES))}",
                    f"parts[{index}].visibility",
                )
        session = self._visible("session", session_id, actor)

        def create() -> tuple[int, dict[str, Any]]:
            current = self._visible("session", session_id, actor)  # re-read inside the transaction
            self._check_open(current)
            normalized = [{**dict(part), "visibility": part.get("visibility", "public")} for part in parts]
            message = self.new_message(actor, current, role, normalized, None, self.now())
            self.emit(
                "user.message" if role == "user" else "session.message_appended",
                {"object": "session", "id": session_id},
                {"message_id": message["id"], "role": role},
                task_id=None,
            )
            current["updated_at"] = message["created_at"]
            self.store.put(current, ord=self.store.ord_of(session_id) or 0, owner=actor)
            return 201, message

        target = f"POST /v1/sessions/{session_id}/messages"
        return self.idempotent(actor, session["workspace_id"], target, idempotency_key, body, create)

    def close_session(self, actor: str, session_id: str) -> dict[str, Any]:
        """CLOSED (``session.closed``); closing a closed session returns it unchanged."""
        with self.store.transaction():
            session = self._visible("session", session_id, actor)
            if session["state"] == "CLOSED":
                return session
            session["state"] = "CLOSED"
            session["updated_at"] = self.now()
            self.store.put(session, ord=self.store.ord_of(session_id) or 0, owner=actor)
            self.emit("session.closed", {"object": "session", "id": session_id}, {}, task_id=None)
        self.notify()
        return session

    def session_events(
        self, actor: str, session_id: str, *, after: int = 0, limit: int = 1000
    ) -> dict[str, Any]:
        """The session's events and its tasks' events, in id order (a range read)."""
        self._visible("session", session_id, actor)
        self.check_issued(after)
        return _event_page(
            self.store.events_for_session(session_id, after=after, limit=limit + 1), limit, after
        )

    # -- reads -------------------------------------------------------------------------------

    def get(self, actor: str, kind: str, resource_id: str) -> dict[str, Any]:
        return self._visible(kind, resource_id, actor)

    def list_tasks(
        self,
        actor: str,
        *,
        status: str | None = None,
        session_id: str | None = None,
        limit: int = 50,
        after: str | None = None,
    ) -> dict[str, Any]:
        after_ord = 0
        if after is not None:
            self._visible("task", after, actor)
            after_ord = self.store.ord_of(after) or 0
        rows = self.store.find(
            "task", owner=actor, status=status, session_id=session_id, after_ord=after_ord, limit=limit + 1
        )
        data = [doc for _, doc in rows[:limit]]
        more = len(rows) > limit
        return {
            "object": "list",
            "data": data,
            "has_more": more,
            "next_cursor": data[-1]["id"] if more and data else None,
        }

    def session_messages(self, actor: str, session_id: str) -> dict[str, Any]:
        self._visible("session", session_id, actor)
        rows = self.store.find("message", owner=actor, session_id=session_id)
        return {"object": "list", "data": [doc for _, doc in rows], "has_more": False, "next_cursor": None}

    def task_events(self, actor: str, task_id: str, *, after: int = 0, limit: int = 1000) -> dict[str, Any]:
        self._visible("task", task_id, actor)
        self.check_cursor(task_id, after)
        return _event_page(self.store.events_for_task(task_id, after=after, limit=limit + 1), limit, after)

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

    def session_settled(self, session_id: str) -> bool:
        """A session stream ends once the session is CLOSED and every task in it is terminal."""
        found = self.store.get(session_id, "session")
        if found is None or found[0]["state"] != "CLOSED":
            return False
        return all(is_terminal(doc["status"]) for _, doc in self.store.find("task", session_id=session_id))

    def is_terminal(self, task_id: str) -> bool:
        found = self.store.get(task_id, "task")
        return found is not None and is_terminal(found[0]["status"])

    def pending(self) -> list[str]:
        """SUBMITTED tasks in submission order (what a runner should execute)."""
        return [doc["id"] for _, doc in self.store.find("task", status=TaskState.SUBMITTED.value)]

    # -- lifecycle ---------------------------------------------------------------------------

    def _move(
        self,
        task_id: str,
        target: TaskState,
        event: str,
        payload: Mapping[str, Any],
        updates: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """One lifecycle transition (checked against the spec's table) and its event."""
        with self.store.transaction():
            found = self.store.get(task_id, "task")
            if found is None:
                raise not_found("task", task_id)
            task, owner = found
            transition(task["status"], target)
            task.update(updates or {})
            task["status"] = target.value
            task["updated_at"] = self.now()
            self.store.put(task, ord=self.store.ord_of(task_id) or 0, owner=owner)
            self.emit(
                event,
                {"object": "task", "id": task_id},
                {"status": target.value, **payload},
                task_id=task_id,
            )
        return task

    def cancel(self, actor: str, task_id: str, reason: str | None = None) -> dict[str, Any]:
        """CANCELED (terminal). Canceling a CANCELED task returns it unchanged; a COMPLETED or
        FAILED one is refused with ``invalid_state_transition``."""
        with self.store.transaction():
            task = self._visible("task", task_id, actor)
            if task["status"] == TaskState.CANCELED.value:
                return task
            transition(task["status"], TaskState.CANCELED)  # refuse before recording the request
            self.emit(
                "user.cancel_requested",
                {"object": "task", "id": task_id},
                {"actor": actor, **({"reason": reason} if reason else {})},
                task_id=task_id,
            )
            task = self.finish_task(task_id, TaskState.CANCELED, f"canceled by {actor}", canceled_by=actor)
        self.notify()
        return task

    def finish_task(
        self,
        task_id: str,
        target: TaskState,
        summary: str,
        *,
        result: AgentResult | None = None,
        failure: Mapping[str, Any] | None = None,
        canceled_by: str | None = None,
        artifacts: list[str] | None = None,
        replay: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Terminal transition + outcome + receipt, in one transaction. ``artifacts`` are
        existing artifact ids to reference (a replay's); ``replay`` goes into the receipt's
        ``replay_input``."""
        with self.store.transaction():
            found = self.store.get(task_id, "task")
            if found is None:
                raise not_found("task", task_id)
            task, owner = found
            transition(task["status"], target)
            now = self.now()
            artifacts = list(artifacts or [])
            if result is not None and result.final_state is not None:
                artifacts.append(self._snapshot(task, owner or "", result.final_state, now))
            outcome_id, outcome_ord = self.store.new_id("out")
            outcome: dict[str, Any] = {
                "id": outcome_id,
                "object": "outcome",
                "created_at": now,
                "updated_at": now,
                "task_id": task_id,
                "status": _OUTCOME_STATUS[target],
                "summary": summary,
                "artifacts": artifacts,
                "metadata": {},
            }
            if failure is not None:
                outcome["failure"] = dict(failure)
            stamp = "canceled_at" if target is TaskState.CANCELED else "completed_at"
            updates: dict[str, Any] = {stamp: now, "outcome_id": outcome_id}
            if failure is not None:
                updates["failure"] = dict(failure)
            payload: dict[str, Any] = {"outcome_id": outcome_id}
            if canceled_by is not None:
                payload["canceled_by"] = canceled_by
            if failure is not None:
                payload["failure"] = dict(failure)
            task = self._move(task_id, target, _END_EVENTS[target], payload, updates)
            receipt = self._issue_receipt(task, owner or "", result, artifacts, replay)
            outcome["receipt_id"] = receipt["receipt_id"]
            self.store.put(outcome, ord=outcome_ord, owner=owner)
            task["receipt_id"] = receipt["receipt_id"]
            self.store.put(task, ord=self.store.ord_of(task_id) or 0, owner=owner)
            self.emit(
                "receipt.issued",
                {"object": "task", "id": task_id},
                {"receipt_id": receipt["receipt_id"], "receipt_hash": receipt["chain"]["receipt_hash"]},
                task_id=task_id,
            )
        return task

    def _snapshot(self, task: Mapping[str, Any], owner: str, state: Any, now: str) -> str:
        artifact_id, ord_ = self.store.new_id("art")
        artifact = {
            "id": artifact_id,
            "object": "artifact",
            "created_at": now,
            "updated_at": now,
            "kind": "snapshot",
            "mime_type": "application/json",
            "uri": None,
            "visibility": "public",
            "sha256": sha256_ref(state),
            "task_id": task["id"],
            "session_id": task["session_id"],
            "content": state,
            "metadata": {"description": "final world state"},
        }
        self.store.put(artifact, ord=ord_, owner=owner)
        self.emit(
            "artifact.created",
            {"object": "artifact", "id": artifact_id},
            {"kind": "snapshot", "sha256": artifact["sha256"]},
            task_id=task["id"],
        )
        return artifact_id

    def recover(self) -> list[str]:
        """Fail the tasks a dead process left WORKING; returns their ids."""
        failed = []
        for _, task in self.store.find("task", status=TaskState.WORKING.value):
            failure = {
                "type": "server_error",
                "message": "the Harness restarted while the task was WORKING; its tool calls may have partly happened",
            }
            self.finish_task(
                task["id"], TaskState.FAILED, "interrupted by a Harness restart", failure=failure
            )
            failed.append(task["id"])
        if failed:
            self.notify()
        return failed

    # -- running -----------------------------------------------------------------------------

    def start(self, task_id: str) -> bool:
        """SUBMITTED -> WORKING; False when the task is no longer SUBMITTED (canceled first)."""
        try:
            self._move(task_id, TaskState.WORKING, "task.started", {}, {"started_at": self.now()})
        except ProtocolError as exc:
            if str(exc.envelope.code) == "invalid_state_transition":
                return False
            raise
        finally:
            self.notify()
        return True

    def run_task(self, task_id: str, *, on_step: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Run one SUBMITTED task to a terminal state with the scripted agent; returns the task.

        ``on_step(tool_call_id)`` is called after each tool result (tests use it to interleave a
        cancel deterministically)."""
        found = self.store.get(task_id, "task")
        if found is not None and isinstance(found[0].get("metadata", {}).get("replay"), Mapping):
            from harn_mcp_mock.agents.server.replay import run_replay

            return run_replay(self, task_id)
        if self.start(task_id):
            found = self.store.get(task_id, "task")
            assert found is not None
            reporter = _Reporter(self, task_id, on_step)
            try:
                result = run_scripted(found[0]["input"], reporter, world_root=self.world_root)
            except HarnError as exc:
                self._end(task_id, None, {"type": "request_error", "message": exc.message})
            except Exception as exc:
                self._end(task_id, None, {"type": "server_error", "message": type(exc).__name__})
            else:
                self._end(task_id, result, None)
        found = self.store.get(task_id, "task")
        assert found is not None
        return found[0]

    def _end(self, task_id: str, result: AgentResult | None, failure: Mapping[str, Any] | None) -> None:
        with self.store.transaction():
            found = self.store.get(task_id, "task")
            if found is None or found[0]["status"] != TaskState.WORKING.value:
                return  # canceled while running: CANCELED stays, no later outcome replaces it
            task, owner = found
            if result is not None:
                message = self.new_message(
                    owner or "",
                    {"id": task["session_id"]},
                    "assistant",
                    [{"type": "text", "text": result.summary, "visibility": "public"}],
                    task_id,
                    self.now(),
                )
                self.emit(
                    "agent.message",
                    {"object": "session", "id": task["session_id"]},
                    {"message_id": message["id"], "role": "assistant"},
                    task_id=task_id,
                )
            if result is not None and result.succeeded:
                self.finish_task(task_id, TaskState.COMPLETED, result.summary, result=result)
            else:
                failure = failure or {"type": "runtime_error", "message": result.summary if result else ""}
                self.finish_task(
                    task_id,
                    TaskState.FAILED,
                    str(failure.get("message") or "failed"),
                    result=result,
                    failure=failure,
                )
        self.notify()

    # -- receipts ----------------------------------------------------------------------------

    def _issue_receipt(
        self,
        task: Mapping[str, Any],
        owner: str,
        result: AgentResult | None,
        artifacts: list[str],
        replay: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        events = self.store.events_for_task(task["id"])
        tool_calls = [
            {
                "tool_call_id": e["payload"].get("tool_call_id"),
                "name": e["payload"].get("name"),
                "server": e["payload"].get("server"),
                **({"replayed": True} if e.get("metadata", {}).get("replayed") else {}),
            }
            for e in events
            if e["event"] == "agent.mcp_tool_use"
        ]
        previous = self.store.last("receipt")
        receipt_id, ord_ = self.store.new_id("rcpt")
        receipt: dict[str, Any] = {
            "schema": RECEIPT_SCHEMA,
            "receipt_id": receipt_id,
            "subject": {"object": "task", "id": task["id"]},
            "issuer": {"id": self.issuer, "protocol_version": PROTOCOL_VERSION},
            "issued_at": self.now(),
            "identifiers": {
                "tenant_id": None,
                "persona_id": task.get("persona_id"),
                "workspace_id": task["workspace_id"],
                "session_id": task["session_id"],
                "task_id": task["id"],
                "branch_id": task.get("branch_id"),
                "trace_id": None,
            },
            "lifecycle": {
                "submitted_at": task["created_at"],
                "started_at": task.get("started_at"),
                "completed_at": task.get("completed_at"),
                "canceled_at": task.get("canceled_at"),
                "final_state": task["status"],
            },
            "trust": {"autonomy_tier_start": "act_auto", "autonomy_tier_end": "act_auto"},
            "autonomy_budget": {"consumed": len(tool_calls), "unit": "tool_calls"},
            "replay_input": {
                "task_input_hash": sha256_ref(task["input"]),
                "event_log": {
                    "task_id": task["id"],
                    "first_event_id": events[0]["id"] if events else None,
                    "last_event_id": events[-1]["id"] if events else None,
                },
                "world": result.world if result else None,
                "world_task": result.world_task if result else None,
                **({"replay": dict(replay)} if replay is not None else {}),
            },
            "model_route": {"chosen": "scripted", "alternatives": [], "reason": "scripted agent (no model)"},
            "cost": {"total_usd": 0, "providers": {}},
            "side_effects": {
                "file_writes": [],
                "network_egress": [],
                "tool_calls": tool_calls,
                "a2a_handoffs": [],
            },
            "final_artifacts": [{"object": "artifact", "id": a} for a in artifacts],
            "chain": {"merkle_root": None},
        }
        sealed = seal(receipt, previous["chain"]["receipt_hash"] if previous else None)
        self.store.put(sealed, ord=ord_, owner=owner, object="receipt", task_id=task["id"])
        return sealed

    def receipt(self, actor: str, receipt_id: str) -> dict[str, Any]:
        return self._visible("receipt", receipt_id, actor)

    def verify_receipt(self, actor: str, receipt_id: str) -> dict[str, Any]:
        """Check this receipt's hash and the Harness's chain up to it."""
        receipt = self._visible("receipt", receipt_id, actor)
        upto = self.store.ord_of(receipt_id) or 0
        chain = [doc for o, doc in self.store.find("receipt") if o <= upto]
        return verification(chain, receipt_id, receipt["chain"].get("receipt_hash"))


def _event_page(rows: list[dict[str, Any]], limit: int, after: int) -> dict[str, Any]:
    """A page of events read with ``limit + 1``; ``next_cursor`` is the last id delivered (or
    ``after`` when none was), so a client can always resume from it."""
    data = rows[:limit]
    return {
        "object": "list",
        "data": data,
        "has_more": len(rows) > limit,
        "next_cursor": data[-1]["id"] if data else after,
    }


def verification(receipts: list[Any], receipt_id: str | None, receipt_hash: Any) -> dict[str, Any]:
    report = verify_chain(receipts)
    return {
        "object": "receipt_verification",
        "receipt_id": receipt_id,
        "receipt_hash": receipt_hash,
        "ok": report.ok,
        "checked": report.checked,
        "problem": report.problem,
        "index": report.index,
        "expected": report.expected,
        "found": report.found,
        "message": report.describe(),
    }


class _Reporter:
    def __init__(self, harness: Harness, task_id: str, on_step: Callable[[str], None] | None) -> None:
        self.harness = harness
        self.task_id = task_id
        self.on_step = on_step

    def checkpoint(self) -> bool:
        found = self.harness.store.get(self.task_id, "task")
        return found is not None and found[0]["status"] == TaskState.WORKING.value

    def tool_use(self, tool_call_id: str, name: str, arguments: Mapping[str, Any], server: str) -> None:
        self.harness.emit(
            "agent.mcp_tool_use",
            {"object": "task", "id": self.task_id},
            {"tool_call_id": tool_call_id, "name": name, "input": dict(arguments), "server": server},
            task_id=self.task_id,
        )
        self.harness.notify()

    def tool_result(self, tool_call_id: str, status: str, output: Any) -> None:
        self.harness.emit(
            "agent.tool_result",
            {"object": "task", "id": self.task_id},
            {"tool_call_id": tool_call_id, "status": status, "output": output},
            task_id=self.task_id,
        )
        self.harness.notify()
        if self.on_step is not None:
            self.on_step(tool_call_id)
