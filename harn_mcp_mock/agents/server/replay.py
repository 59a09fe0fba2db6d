"""The Replay level: ``POST /v1/tasks/{id}/replay`` and ``POST /v1/sessions/{id}/replay``.

A replay creates a new Task (``parent_task_id`` = the source) in a new Session and plays the
source Task's EventLog back instead of running the agent again: every recorded agent event
(tool uses, tool results, agent messages, artifacts) is appended to the new task's log with the
same kind and payload, marked ``metadata.replayed = true`` with ``metadata.replay_of =
{"task_id", "event_id"}`` naming the source event (the replay's own event ids are the new
cursor, so the mapping is explicit). Nothing is executed: no tool, world or cassette is touched,
which is what makes the replay deterministic. The replay ends in the source's terminal state.

Modes:

* ``exact``: the events as recorded.
* ``with_overrides``: keyed deterministic substitutions of recorded nondeterministic
  dependencies. This Harness's only such dependency is the MCP tool return, keyed
  ``tool_result:<tool_call_id>`` (value: the substituted ``output``). Every substitution is
  listed in ``replay.completed`` and in the receipt's ``replay_input.replay.substitutions`` with
  the key, the source event and JSON pointer, and the before/after hashes.
* ``from_checkpoint`` is refused (400): resuming live from a checkpoint needs the world state at
  that point, which this mock does not snapshot per event.

What cannot be replayed is named before anything is created: a source that is not terminal
(409 ``conflict``), pruned source events (410 ``cursor_expired`` with ``first_unavailable``), a
referenced artifact or receipt that is gone (409 ``conflict`` with ``first_unavailable``). If the
source's events disappear between the request and the run, the replay task fails with a
``replay.failed`` event naming the first missing one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harn_mcp_mock.agents.envelopes import ErrorEnvelope, ProtocolError
from harn_mcp_mock.agents.lifecycle import TaskState, is_terminal
from harn_mcp_mock.agents.receipts import sha256_ref

if TYPE_CHECKING:
    from harn_mcp_mock.agents.server.harness import Harness

__all__ = [
    "REPLAY_MODES",
    "SUPPORTED_REPLAY_MODES",
    "create_session_replay",
    "create_task_replay",
    "run_replay",
]

REPLAY_MODES = ("exact", "with_overrides", "from_checkpoint")
SUPPORTED_REPLAY_MODES = ("exact", "with_overrides")
OVERRIDE_PREFIX = "tool_result:"

# Events a replay task emits for itself (its own lifecycle) instead of copying them.
_OWN_EVENTS = frozenset(
    {
        "user.message",
        "user.cancel_requested",
        "task.submitted",
        "task.started",
        "task.input_required",
        "task.auth_required",
        "task.completed",
        "task.failed",
        "task.canceled",
        "task.status_changed",
        "receipt.issued",
        "replay.started",
        "replay.completed",
        "replay.failed",
    }
)


@dataclass(frozen=True, slots=True)
class _Request:
    mode: str
    overrides: dict[str, Any]
    metadata: dict[str, Any]


def _invalid(message: str, param: str, **details: Any) -> ProtocolError:
    return ProtocolError(ErrorEnvelope.of("invalid_request", message, param=param, details=details))


def _parse(body: Any, *, allow_overrides: bool = True) -> _Request:
    if not isinstance(body, Mapping):
        raise _invalid("the request body must be a JSON object", "body")
    mode = body.get("mode", "exact")
    if mode not in REPLAY_MODES:
        raise _invalid(f"mode must be one of {', '.join(REPLAY_MODES)}", "mode", supported=list(REPLAY_MODES))
    if mode not in SUPPORTED_REPLAY_MODES:
        raise _invalid(
            f"mode {mode} is not supported by this Harness (it supports {', '.join(SUPPORTED_REPLAY_MODES)})",
            "mode",
            supported=list(SUPPORTED_REPLAY_MODES),
        )
    overrides = body.get("overrides", {})
    if not isinstance(overrides, Mapping):
        raise _invalid("overrides must be an object keyed by override key", "overrides")
    if mode == "exact" and overrides:
        raise _invalid("an exact replay takes no overrides (use mode with_overrides)", "overrides")
    if mode == "with_overrides":
        if not allow_overrides:
            raise _invalid(
                "a session replay is exact; replay a single task to substitute its tool results", "mode"
            )
        if not overrides:
            raise _invalid("mode with_overrides needs at least one override", "overrides")
    metadata = body.get("metadata", {})
    if not isinstance(metadata, Mapping):
        raise _invalid("metadata must be an object", "metadata")
    return _Request(str(mode), dict(overrides), dict(metadata))


def _conflict(message: str, param: str, **details: Any) -> ProtocolError:
    return ProtocolError(ErrorEnvelope.of("conflict", message, param=param, details=details))


def _check_source(harness: Harness, source: Mapping[str, Any], overrides: Mapping[str, Any]) -> None:
    """Refuse a replay whose material is incomplete, naming the first missing dependency."""
    source_id = source["id"]
    if not is_terminal(source["status"]):
        raise _conflict(
            f"task {source_id} is {source['status']}: only a terminal task can be replayed",
            "task_id",
            status=source["status"],
        )
    floor = harness.store.pruned_through(source_id)
    if floor > 0:
        raise ProtocolError(
            ErrorEnvelope.of(
                "cursor_expired",
                f"events of task {source_id} up to {floor} were pruned; the task can no longer be replayed",
                param="task_id",
                details={
                    "first_unavailable": {"object": "event", "task_id": source_id, "at_or_before": floor}
                },
            )
        )
    events = harness.store.events_for_task(source_id)
    for event in events:
        artifact = event["payload"].get("artifact_id") or (
            event["resource"]["id"] if event["resource"]["object"] == "artifact" else None
        )
        if artifact is not None and harness.store.get(artifact, "artifact") is None:
            raise _conflict(
                f"artifact {artifact} (event {event['id']}) is gone",
                "task_id",
                first_unavailable={"object": "artifact", "id": artifact, "event_id": event["id"]},
            )
    receipt_id = source.get("receipt_id")
    if receipt_id is not None and harness.store.get(receipt_id, "receipt") is None:
        raise _conflict(
            f"receipt {receipt_id} of task {source_id} is gone",
            "task_id",
            first_unavailable={"object": "receipt", "id": receipt_id},
        )
    if overrides:
        recorded = {
            f"{OVERRIDE_PREFIX}{e['payload'].get('tool_call_id')}"
            for e in events
            if e["event"] == "agent.tool_result"
        }
        for key in overrides:
            if key not in recorded:
                raise _invalid(
                    f"override key {key!r} names no recorded dependency of task {source_id}",
                    f"overrides.{key}",
                    available=sorted(recorded),
                )


def _new_replay_task(
    harness: Harness,
    actor: str,
    source: Mapping[str, Any],
    session: Mapping[str, Any],
    request: _Request,
) -> dict[str, Any]:
    plan = {"mode": request.mode, "source_task_id": source["id"], "overrides": request.overrides}
    return harness.tasks.create(
        actor,
        session,
        source["workspace_id"],
        dict(source["input"]),
        {**request.metadata, "replay": plan},
        harness.ledger.now(),
        parent_task_id=source["id"],
    )


def create_task_replay(
    harness: Harness, actor: str, task_id: str, body: Any, idempotency_key: str | None = None
) -> tuple[int, dict[str, Any], bool]:
    """``(status, task, idempotent_replay)`` for ``POST /v1/tasks/{task_id}/replay``."""
    request = _parse(body)
    source = harness.get(actor, "task", task_id)

    def create() -> tuple[int, dict[str, Any]]:
        current = harness.get(actor, "task", task_id)
        _check_source(harness, current, request.overrides)
        session = harness.sessions.open(
            actor,
            current["workspace_id"],
            harness.ledger.now(),
            {"replay_of": {"session_id": current["session_id"]}},
        )
        return 201, _new_replay_task(harness, actor, current, session, request)

    target = f"POST /v1/tasks/{task_id}/replay"
    return harness.ledger.idempotent(actor, source["workspace_id"], target, idempotency_key, body, create)


def create_session_replay(
    harness: Harness, actor: str, session_id: str, body: Any, idempotency_key: str | None = None
) -> tuple[int, dict[str, Any], bool]:
    """``POST /v1/sessions/{id}/replay``: a new Session holding an exact replay of every task of
    the source session, in order (``session.replayed``); answers the new Session, whose
    ``metadata.replay_of`` lists the source session and the task pairs. A replay only copies
    events, so the tasks are replayed at once, one after the other (the new transcript keeps
    the source's message order); they are terminal when the response is sent."""
    request = _parse(body, allow_overrides=False)
    source_session = harness.get(actor, "session", session_id)

    def create() -> tuple[int, dict[str, Any]]:
        tasks = [doc for _, doc in harness.store.find("task", owner=actor, session_id=session_id)]
        if not tasks:
            raise _conflict(f"session {session_id} has no task to replay", "session_id")
        for task in tasks:
            _check_source(harness, task, {})
        now = harness.ledger.now()
        session = harness.sessions.open(actor, source_session["workspace_id"], now, dict(request.metadata))
        pairs = []
        for task in tasks:  # one after the other, so the new transcript keeps the source's order
            replica = _new_replay_task(harness, actor, task, session, request)
            finished = run_replay(harness, replica["id"])
            pairs.append(
                {"source_task_id": task["id"], "task_id": replica["id"], "status": finished["status"]}
            )
        session["metadata"]["replay_of"] = {"session_id": session_id, "tasks": pairs}
        harness.ledger.put(session, actor)
        harness.ledger.emit(
            "session.replayed",
            {"object": "session", "id": session["id"]},
            {"source_session_id": session_id, "mode": request.mode, "tasks": pairs},
            task_id=None,
        )
        return 201, session

    target = f"POST /v1/sessions/{session_id}/replay"
    return harness.ledger.idempotent(
        actor, source_session["workspace_id"], target, idempotency_key, body, create
    )


def run_replay(harness: Harness, task_id: str) -> dict[str, Any]:
    """Play the source's EventLog into the replay task (:meth:`Harness.run_task` calls this)."""
    if not harness.tasks.start(task_id):
        return harness.tasks.current(task_id)
    found = harness.store.get(task_id, "task")
    assert found is not None
    task, owner = found
    plan = task["metadata"]["replay"]
    source_id = plan["source_task_id"]
    overrides: dict[str, Any] = dict(plan.get("overrides") or {})
    me = {"object": "task", "id": task_id}
    source_found = harness.store.get(source_id, "task")
    events = harness.store.events_for_task(source_id)
    floor = harness.store.pruned_through(source_id)
    if source_found is None or not events or floor > 0:
        missing = (
            {"object": "task", "id": source_id}
            if source_found is None
            else {"object": "event", "task_id": source_id, "at_or_before": floor or None}
        )
        return _fail(
            harness, task_id, source_id, missing, "the source task's event log is no longer available"
        )
    source = source_found[0]

    harness.ledger.emit(
        "replay.started",
        me,
        {
            "source_task_id": source_id,
            "mode": plan["mode"],
            "source_events": [events[0]["id"], events[-1]["id"]],
        },
        task_id=task_id,
    )
    harness.ledger.notify()
    substitutions: list[dict[str, Any]] = []
    replayed = 0
    artifacts: list[str] = []
    for event in events:
        if event["event"] in _OWN_EVENTS:
            continue
        if not _still_working(harness, task_id):
            return _current(harness, task_id)  # canceled mid-replay: CANCELED stays
        payload = dict(event["payload"])
        resource = dict(event["resource"])
        if resource["object"] == "task":
            resource["id"] = task_id
        elif resource["object"] == "session":
            resource["id"] = task["session_id"]
        replay_of: dict[str, Any] = {"task_id": source_id, "event_id": event["id"]}
        if event["event"] == "agent.tool_result":
            key = f"{OVERRIDE_PREFIX}{payload.get('tool_call_id')}"
            if key in overrides:
                before, after = payload.get("output"), overrides[key]
                payload["output"] = after
                delta = {
                    "key": key,
                    "source_event_id": event["id"],
                    "path": "/payload/output",
                    "before_hash": sha256_ref(before),
                    "after_hash": sha256_ref(after),
                }
                substitutions.append(delta)
                replay_of["substitution"] = key
        if event["event"] == "agent.message" and isinstance(payload.get("message_id"), str):
            copied = _copy_message(harness, owner or "", payload["message_id"], task)
            replay_of["message_id"] = payload["message_id"]
            payload["message_id"] = copied
        if event["event"] == "artifact.created" and resource["object"] == "artifact":
            artifacts.append(resource["id"])  # artifacts are immutable: the replay references them
        harness.ledger.emit(
            event["event"],
            resource,
            payload,
            task_id=task_id,
            metadata={"replayed": True, "replay_of": replay_of},
        )
        replayed += 1
        harness.ledger.notify()
    harness.ledger.emit(
        "replay.completed",
        me,
        {"source_task_id": source_id, "replayed_events": replayed, "substitutions": substitutions},
        task_id=task_id,
    )
    return _end_like(harness, task_id, source, artifacts, plan, substitutions)


def _copy_message(harness: Harness, owner: str, message_id: str, task: Mapping[str, Any]) -> str:
    found = harness.store.get(message_id, "message")
    parts = found[0]["parts"] if found is not None else []
    role = found[0]["role"] if found is not None else "assistant"
    message = harness.sessions.add_message(
        owner, {"id": task["session_id"]}, role, parts, task["id"], harness.ledger.now()
    )
    message["metadata"] = {"replay_of": {"message_id": message_id}}
    harness.ledger.put(message, owner)
    return str(message["id"])


def _still_working(harness: Harness, task_id: str) -> bool:
    return harness.tasks.is_working(task_id)


def _current(harness: Harness, task_id: str) -> dict[str, Any]:
    harness.ledger.notify()
    return harness.tasks.current(task_id)


def _end_like(
    harness: Harness,
    task_id: str,
    source: Mapping[str, Any],
    artifacts: list[str],
    plan: Mapping[str, Any],
    substitutions: list[dict[str, Any]],
) -> dict[str, Any]:
    """Finish in the source's terminal state, with the source's outcome summary."""
    outcome_found = harness.store.get(source["outcome_id"], "outcome") if source.get("outcome_id") else None
    summary = outcome_found[0]["summary"] if outcome_found is not None else source["status"].lower()
    source_receipt = harness.store.get(source["receipt_id"], "receipt") if source.get("receipt_id") else None
    replay = {
        "mode": plan["mode"],
        "source_task_id": source["id"],
        "source_receipt": {
            "receipt_id": source.get("receipt_id"),
            "receipt_hash": source_receipt[0]["chain"]["receipt_hash"]
            if source_receipt is not None
            else None,
        },
        "substitutions": substitutions,
    }
    target = TaskState(source["status"])
    with harness.store.transaction():
        if not _still_working(harness, task_id):
            return _current(harness, task_id)
        failure = source.get("failure") if target is TaskState.FAILED else None
        harness.tasks.finish(
            task_id,
            target,
            f"replay of {source['id']}: {summary}",
            failure=failure if isinstance(failure, Mapping) else None,
            canceled_by=f"replay of {source['id']}" if target is TaskState.CANCELED else None,
            artifacts=artifacts,
            replay=replay,
        )
    return _current(harness, task_id)


def _fail(
    harness: Harness, task_id: str, source_id: str, missing: Mapping[str, Any], message: str
) -> dict[str, Any]:
    harness.ledger.emit(
        "replay.failed",
        {"object": "task", "id": task_id},
        {"source_task_id": source_id, "first_unavailable": dict(missing), "message": message},
        task_id=task_id,
    )
    with harness.store.transaction():
        if _still_working(harness, task_id):
            harness.tasks.finish(
                task_id,
                TaskState.FAILED,
                f"replay of {source_id} failed: {message}",
                failure={
                    "type": "runtime_error",
                    "message": message,
                    "details": {"first_unavailable": dict(missing)},
                },
            )
    return _current(harness, task_id)
