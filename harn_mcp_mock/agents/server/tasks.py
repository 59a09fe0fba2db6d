"""Tasks: submit, the lifecycle, outcomes, and running the scripted agent.

Lifecycle events emitted (spec names only): ``task.submitted`` (accepted), ``task.started``
(SUBMITTED -> WORKING), ``task.completed`` / ``task.failed`` / ``task.canceled`` (terminal);
``user.message`` for the input, ``user.cancel_requested`` before a cancel, ``agent.mcp_tool_use``
and ``agent.tool_result`` per tool call, ``agent.message`` for the summary, ``artifact.created``
for the final world snapshot, ``receipt.issued`` after the terminal event.

Restart: :meth:`Tasks.recover` fails every task that was WORKING when the last process died (its
tool calls may have partly happened, so re-running it would not be honest), with a
``task.failed`` event, an outcome and a receipt; SUBMITTED tasks stay SUBMITTED and are listed
by :meth:`Tasks.pending` for the runner to pick up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from harn_mcp_mock.agents.envelopes import ProtocolError
from harn_mcp_mock.agents.lifecycle import TaskState, is_terminal, transition
from harn_mcp_mock.agents.receipts import sha256_ref
from harn_mcp_mock.agents.server.agent import AgentResult, run_scripted
from harn_mcp_mock.agents.server.issuer import Issuer
from harn_mcp_mock.agents.server.ledger import (
    DEFAULT_WORKSPACE,
    Created,
    Ledger,
    event_page,
    invalid,
    not_found,
)
from harn_mcp_mock.agents.server.sessions import Sessions
from harn_mcp_mock.errors import HarnError

__all__ = ["Tasks"]

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


def _input_parts(task_input: Mapping[str, Any]) -> list[dict[str, Any]]:
    parts = task_input.get("parts")
    if isinstance(parts, list) and all(isinstance(p, Mapping) for p in parts):
        return [dict(p) for p in parts]
    if isinstance(task_input.get("text"), str) and len(task_input) == 1:
        return [{"type": "text", "text": task_input["text"], "visibility": "public"}]
    return [{"type": "json", "value": dict(task_input), "visibility": "public"}]


class Tasks:
    """Tasks over one :class:`Ledger`; sessions and receipts come from their services."""

    def __init__(self, ledger: Ledger, sessions: Sessions, issuer: Issuer, *, world_root: Path) -> None:
        self.ledger = ledger
        self.sessions = sessions
        self.issuer = issuer
        self.world_root = world_root

    # -- submit ------------------------------------------------------------------------------

    def submit(self, actor: str, body: Any, idempotency_key: str | None = None) -> Created:
        """``(http_status, task, replayed)``. The idempotency scope is actor + workspace_id +
        method + canonical target + key; the whole submit is one transaction, so concurrent
        identical submits create one task."""
        if not isinstance(body, Mapping):
            raise invalid("the request body must be a JSON object", "body")
        task_input = body.get("input")
        if not isinstance(task_input, Mapping):
            raise invalid("missing required field: input (an object)", "input")
        workspace_id = body.get("workspace_id", DEFAULT_WORKSPACE)
        if not isinstance(workspace_id, str) or not workspace_id:
            raise invalid("workspace_id must be a non-empty string", "workspace_id")
        session_id = body.get("session_id")
        if session_id is not None and not isinstance(session_id, str):
            raise invalid("session_id must be a string", "session_id")
        metadata = body.get("metadata", {})
        if not isinstance(metadata, Mapping):
            raise invalid("metadata must be an object", "metadata")

        def create() -> tuple[int, dict[str, Any]]:
            now = self.ledger.now()
            if session_id is None:
                session = self.sessions.open(actor, workspace_id, now)
            else:
                session = self.ledger.visible("session", session_id, actor)
                if session["workspace_id"] != workspace_id:
                    raise not_found("session", session_id)
                self.sessions.check_open(session)
            task = self.create(actor, session, workspace_id, dict(task_input), dict(metadata), now)
            return 201, task

        return self.ledger.idempotent(actor, workspace_id, "POST /v1/tasks", idempotency_key, body, create)

    def create(
        self,
        actor: str,
        session: Mapping[str, Any],
        workspace_id: str,
        task_input: dict[str, Any],
        metadata: dict[str, Any],
        now: str,
        **fields: Any,
    ) -> dict[str, Any]:
        """A SUBMITTED task, its input message, ``user.message`` and ``task.submitted`` (inside
        the caller's transaction)."""
        ledger = self.ledger
        task_id, task_ord = ledger.store.new_id("task")
        message = self.sessions.add_message(actor, session, "user", _input_parts(task_input), task_id, now)
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
        ledger.store.put(task, ord=task_ord, owner=actor)
        ledger.emit(
            "user.message",
            {"object": "session", "id": session["id"]},
            {"message_id": message["id"], "role": "user"},
            task_id=task_id,
        )
        ledger.emit(
            "task.submitted",
            {"object": "task", "id": task_id},
            {"status": "SUBMITTED", "session_id": session["id"]},
            task_id=task_id,
        )
        return task

    # -- reads -------------------------------------------------------------------------------

    def find(
        self,
        actor: str,
        *,
        status: str | None = None,
        session_id: str | None = None,
        limit: int = 50,
        after: str | None = None,
    ) -> dict[str, Any]:
        store = self.ledger.store
        after_ord = 0
        if after is not None:
            self.ledger.visible("task", after, actor)
            after_ord = store.ord_of(after) or 0
        rows = store.find(
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

    def events(self, actor: str, task_id: str, *, after: int = 0, limit: int = 1000) -> dict[str, Any]:
        self.ledger.visible("task", task_id, actor)
        self.ledger.check_cursor(task_id, after)
        rows = self.ledger.store.events_for_task(task_id, after=after, limit=limit + 1)
        return event_page(rows, limit, after)

    def is_terminal(self, task_id: str) -> bool:
        found = self.ledger.store.get(task_id, "task")
        return found is not None and is_terminal(found[0]["status"])

    def is_working(self, task_id: str) -> bool:
        found = self.ledger.store.get(task_id, "task")
        return found is not None and found[0]["status"] == TaskState.WORKING.value

    def current(self, task_id: str) -> dict[str, Any]:
        """The task as stored now (it must exist)."""
        found = self.ledger.store.get(task_id, "task")
        if found is None:
            raise not_found("task", task_id)
        return found[0]

    def pending(self) -> list[str]:
        """SUBMITTED tasks in submission order (what a runner should execute)."""
        return [doc["id"] for _, doc in self.ledger.store.find("task", status=TaskState.SUBMITTED.value)]

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
        ledger = self.ledger
        with ledger.store.transaction():
            found = ledger.store.get(task_id, "task")
            if found is None:
                raise not_found("task", task_id)
            task, owner = found
            transition(task["status"], target)
            task.update(updates or {})
            task["status"] = target.value
            task["updated_at"] = ledger.now()
            ledger.put(task, owner)
            ledger.emit(
                event, {"object": "task", "id": task_id}, {"status": target.value, **payload}, task_id=task_id
            )
        return task

    def start(self, task_id: str) -> bool:
        """SUBMITTED -> WORKING; False when the task is no longer SUBMITTED (canceled first)."""
        try:
            self._move(task_id, TaskState.WORKING, "task.started", {}, {"started_at": self.ledger.now()})
        except ProtocolError as exc:
            if str(exc.envelope.code) == "invalid_state_transition":
                return False
            raise
        finally:
            self.ledger.notify()
        return True

    def cancel(self, actor: str, task_id: str, reason: str | None = None) -> dict[str, Any]:
        """CANCELED (terminal). Canceling a CANCELED task returns it unchanged; a COMPLETED or
        FAILED one is refused with ``invalid_state_transition``."""
        ledger = self.ledger
        with ledger.store.transaction():
            task = ledger.visible("task", task_id, actor)
            if task["status"] == TaskState.CANCELED.value:
                return task
            transition(task["status"], TaskState.CANCELED)  # refuse before recording the request
            ledger.emit(
                "user.cancel_requested",
                {"object": "task", "id": task_id},
                {"actor": actor, **({"reason": reason} if reason else {})},
                task_id=task_id,
            )
            task = self.finish(task_id, TaskState.CANCELED, f"canceled by {actor}", canceled_by=actor)
        ledger.notify()
        return task

    def finish(
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
        ledger = self.ledger
        store = ledger.store
        with store.transaction():
            found = store.get(task_id, "task")
            if found is None:
                raise not_found("task", task_id)
            task, owner = found
            transition(task["status"], target)
            now = ledger.now()
            artifacts = list(artifacts or [])
            if result is not None and result.final_state is not None:
                artifacts.append(self._snapshot(task, owner or "", result.final_state, now))
            outcome_id, outcome_ord = store.new_id("out")
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
            receipt = self.issuer.issue(task, owner or "", result, artifacts, replay)
            outcome["receipt_id"] = receipt["receipt_id"]
            store.put(outcome, ord=outcome_ord, owner=owner)
            task["receipt_id"] = receipt["receipt_id"]
            ledger.put(task, owner)
            ledger.emit(
                "receipt.issued",
                {"object": "task", "id": task_id},
                {"receipt_id": receipt["receipt_id"], "receipt_hash": receipt["chain"]["receipt_hash"]},
                task_id=task_id,
            )
        return task

    def _snapshot(self, task: Mapping[str, Any], owner: str, state: Any, now: str) -> str:
        artifact_id, ord_ = self.ledger.store.new_id("art")
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
        self.ledger.store.put(artifact, ord=ord_, owner=owner)
        self.ledger.emit(
            "artifact.created",
            {"object": "artifact", "id": artifact_id},
            {"kind": "snapshot", "sha256": artifact["sha256"]},
            task_id=task["id"],
        )
        return artifact_id

    def recover(self) -> list[str]:
        """Fail the tasks a dead process left WORKING; returns their ids."""
        failed = []
        for _, task in self.ledger.store.find("task", status=TaskState.WORKING.value):
            failure = {
                "type": "server_error",
                "message": "the Harness restarted while the task was WORKING; its tool calls may have partly happened",
            }
            self.finish(task["id"], TaskState.FAILED, "interrupted by a Harness restart", failure=failure)
            failed.append(task["id"])
        if failed:
            self.ledger.notify()
        return failed

    # -- running -----------------------------------------------------------------------------

    def run(self, task_id: str, *, on_step: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Run one SUBMITTED task to a terminal state with the scripted agent; returns the task.

        ``on_step(tool_call_id)`` is called after each tool result (tests use it to interleave a
        cancel deterministically)."""
        if self.start(task_id):
            reporter = _Reporter(self.ledger, task_id, on_step)
            try:
                result = run_scripted(self.current(task_id)["input"], reporter, world_root=self.world_root)
            except HarnError as exc:
                self._end(task_id, None, {"type": "request_error", "message": exc.message})
            except Exception as exc:
                self._end(task_id, None, {"type": "server_error", "message": type(exc).__name__})
            else:
                self._end(task_id, result, None)
        return self.current(task_id)

    def _end(self, task_id: str, result: AgentResult | None, failure: Mapping[str, Any] | None) -> None:
        ledger = self.ledger
        with ledger.store.transaction():
            found = ledger.store.get(task_id, "task")
            if found is None or found[0]["status"] != TaskState.WORKING.value:
                return  # canceled while running: CANCELED stays, no later outcome replaces it
            task, owner = found
            if result is not None:
                message = self.sessions.add_message(
                    owner or "",
                    {"id": task["session_id"]},
                    "assistant",
                    [{"type": "text", "text": result.summary, "visibility": "public"}],
                    task_id,
                    ledger.now(),
                )
                ledger.emit(
                    "agent.message",
                    {"object": "session", "id": task["session_id"]},
                    {"message_id": message["id"], "role": "assistant"},
                    task_id=task_id,
                )
            if result is not None and result.succeeded:
                self.finish(task_id, TaskState.COMPLETED, result.summary, result=result)
            else:
                failure = failure or {"type": "runtime_error", "message": result.summary if result else ""}
                self.finish(
                    task_id,
                    TaskState.FAILED,
                    str(failure.get("message") or "failed"),
                    result=result,
                    failure=failure,
                )
        ledger.notify()


class _Reporter:
    """What the scripted agent reports through: tool uses and results become events."""

    def __init__(self, ledger: Ledger, task_id: str, on_step: Callable[[str], None] | None) -> None:
        self.ledger = ledger
        self.task_id = task_id
        self.on_step = on_step

    def checkpoint(self) -> bool:
        found = self.ledger.store.get(self.task_id, "task")
        return found is not None and found[0]["status"] == TaskState.WORKING.value

    def tool_use(self, tool_call_id: str, name: str, arguments: Mapping[str, Any], server: str) -> None:
        self.ledger.emit(
            "agent.mcp_tool_use",
            {"object": "task", "id": self.task_id},
            {"tool_call_id": tool_call_id, "name": name, "input": dict(arguments), "server": server},
            task_id=self.task_id,
        )
        self.ledger.notify()

    def tool_result(self, tool_call_id: str, status: str, output: Any) -> None:
        self.ledger.emit(
            "agent.tool_result",
            {"object": "task", "id": self.task_id},
            {"tool_call_id": tool_call_id, "status": status, "output": output},
            task_id=self.task_id,
        )
        self.ledger.notify()
        if self.on_step is not None:
            self.on_step(tool_call_id)
