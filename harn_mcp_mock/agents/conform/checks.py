"""The conformance checks, one per observable requirement of the spec, in run order.

Each check quotes the spec sentence it tests (``spec``). A check passes by returning (optionally
with a short note), and otherwise raises :class:`Fail` ("expected ..., got ..."), :class:`Skip`
or :class:`Prerequisite`. Importing this module registers the checks in :data:`CHECKS`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from harn_mcp_mock.agents import PROTOCOL_VERSION
from harn_mcp_mock.agents.conform.client import Reply
from harn_mcp_mock.agents.conform.fixtures import (
    CARD_PATHS,
    Finished,
    event_list,
    finished_task,
    list_page,
    probe,
    probe_events,
    receipt_of,
    submit,
    submit_body,
    unique,
)
from harn_mcp_mock.agents.conform.registry import CHECKS, Context, Fail, Level, Prerequisite, Skip, check
from harn_mcp_mock.agents.envelopes import ERROR_CODES, ErrorEnvelope, ProtocolError
from harn_mcp_mock.agents.lifecycle import TASK_EVENT_STATES, apply_event, is_terminal
from harn_mcp_mock.agents.models import Event, HarnAgentCard, Receipt, Task
from harn_mcp_mock.agents.receipts import HASH_PREFIX, RECEIPT_SCHEMA, receipt_hash
from harn_mcp_mock.textclip import clip

__all__ = ["CHECKS"]

CORE, RECEIPTS, REPLAY = Level.CORE, Level.RECEIPTS, Level.REPLAY
KEY_RULE = "API keys MUST NOT be logged in Events, Receipts, or error details."


# --------------------------------------------------------------------------- helpers


def expect_error(reply: Reply, status: int, code: str) -> None:
    """Fail unless ``reply`` is ``status`` with the envelope's ``error.code == code``."""
    if reply.status != status or reply.error_code != code:
        raise Fail(f"expected {status} {code}, got {reply.describe()}")


def envelope_problem(reply: Reply) -> str | None:
    """Why ``reply`` is not the spec's error envelope (None when it is)."""
    try:
        envelope = ErrorEnvelope.from_dict(reply.json)
    except ProtocolError as exc:
        return f"{reply.describe()}: {exc.message}"
    info = ERROR_CODES.get(str(envelope.code))
    if info is not None and info.http_status != reply.status:
        return f"{reply.describe()}: code {envelope.code} belongs with HTTP {info.http_status}"
    return None


def as_task(reply: Reply, what: str) -> Task:
    try:
        return Task.from_dict(reply.json)
    except ProtocolError as exc:
        raise Fail(f"{what}: {reply.describe()} is not a Task: {exc.message}") from None


def contains_secret(reply: Reply, secret: str) -> bool:
    return secret in reply.text or any(secret in v for v in reply.headers.values())


def event_ids(events: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(e.get("id")) for e in events]


def task_path(events: Sequence[Mapping[str, Any]], task_id: str) -> list[str]:
    """Fold a task's ``task.*`` events into its status path; Fail on an illegal step."""
    state = None
    path: list[str] = []
    for event in events:
        name = str(event.get("event"))
        resource = event.get("resource")
        if name not in TASK_EVENT_STATES and name != "task.status_changed":
            continue
        if isinstance(resource, Mapping) and resource.get("id") not in (None, task_id):
            continue
        payload = event.get("payload")
        try:
            state = apply_event(state, name, payload if isinstance(payload, Mapping) else None)
        except ProtocolError as exc:
            shown = " -> ".join(path) or "(start)"
            raise Fail(f"event {event.get('id')} {name} after {shown}: {exc.message}") from None
        if state is not None and (not path or path[-1] != state.value):
            path.append(state.value)
    return path


QUEUE_DEPTH = 4


def queued_tasks(ctx: Context) -> list[str]:
    """Submit :data:`QUEUE_DEPTH` tasks back to back; the last is the likeliest still to be
    non-terminal when the next request arrives (a Harness that runs tasks in order)."""
    ids = []
    for _ in range(QUEUE_DEPTH):
        reply = submit(ctx)
        if not reply.ok() or not isinstance(reply.json, Mapping):
            raise Prerequisite(f"cannot submit: {reply.describe()}")
        ids.append(str(reply.json.get("id")))
    return ids


# --------------------------------------------------------------------------- core: versions


@check(
    "core.version.missing.426",
    CORE,
    "Versioning",
    "Every request except public discovery endpoints MUST include: Harn-Agents-Protocol-Version: "
    "agents-protocol-2026-04-25 / 426 | unsupported_protocol_version | Version header is absent or unsupported.",
)
def version_missing(ctx: Context) -> None:
    expect_error(ctx.client.get("/v1/tasks", version=None), 426, "unsupported_protocol_version")


@check(
    "core.version.unsupported.426",
    CORE,
    "Versioning",
    "Servers MUST reject unsupported protocol versions with 426 Upgrade Required and error code "
    "unsupported_protocol_version.",
)
def version_unsupported(ctx: Context) -> None:
    reply = ctx.client.get("/v1/tasks", version="agents-protocol-1999-01-01")
    expect_error(reply, 426, "unsupported_protocol_version")


@check(
    "core.version.supported_list",
    CORE,
    "Versioning",
    "The response SHOULD list supported versions.",
    requirement="SHOULD",
)
def version_supported_list(ctx: Context) -> str:
    reply = ctx.client.get("/v1/tasks", version="agents-protocol-1999-01-01")
    if reply.status != 426:
        raise Prerequisite(f"no 426 to inspect: {reply.describe()}")
    if PROTOCOL_VERSION in reply.text:
        return "the 426 body names " + PROTOCOL_VERSION
    raise Fail(f"the 426 body does not list {PROTOCOL_VERSION} among supported versions")


# --------------------------------------------------------------------------- core: discovery


def card_reply(ctx: Context) -> Reply:
    def fetch() -> Reply:
        first = None
        for path in CARD_PATHS:
            reply = ctx.client.get(path, version=None, auth=None)
            first = first or reply
            if reply.ok():
                return reply
        assert first is not None
        return first

    return ctx.once("card", fetch)


@check(
    "core.discovery.public",
    CORE,
    "Versioning",
    "Every request except public discovery endpoints MUST include: Harn-Agents-Protocol-Version",
)
def discovery_public(ctx: Context) -> str:
    reply = card_reply(ctx)
    if not reply.ok():
        raise Fail(
            f"expected 200 from {' or '.join(CARD_PATHS)} without version header or key, got {reply.describe()}"
        )
    return f"{reply.path} answers without a version header or key"


@check(
    "core.discovery.card_fields",
    CORE,
    "HarnAgentCard",
    "Required fields: id: stable card id. name: display name. description: agent description. "
    "protocol_version: supported Harn Agents Protocol version. a2a_card: current A2A AgentCard [...] "
    "skills: callable skills or exported functions.",
)
def discovery_card_fields(ctx: Context) -> None:
    reply = card_reply(ctx)
    if not reply.ok():
        raise Prerequisite(f"no agent card: {reply.describe()}")
    try:
        HarnAgentCard.from_dict(reply.json)
    except ProtocolError as exc:
        raise Fail(f"{reply.path}: {exc.message}") from None


# --------------------------------------------------------------------------- core: authentication


@check(
    "core.auth.missing.401",
    CORE,
    "Error taxonomy",
    "401 | unauthenticated | Authentication is missing or invalid.",
)
def auth_missing(ctx: Context) -> None:
    expect_error(ctx.client.get("/v1/tasks", auth=None), 401, "unauthenticated")


@check(
    "core.auth.bad_key.401",
    CORE,
    "API key",
    "API key authentication uses: Authorization: Bearer <api-key> / 401 | unauthenticated | "
    "Authentication is missing or invalid.",
)
def auth_bad_key(ctx: Context) -> None:
    wrong = unique("conform-wrong-key")
    reply = ctx.client.get("/v1/tasks", auth=f"Bearer {wrong}")
    expect_error(reply, 401, "unauthenticated")
    if contains_secret(reply, wrong):
        raise Fail(f"{reply.describe()} echoes the presented bearer token")


@check("core.auth.key_not_echoed", CORE, "API key", KEY_RULE)
def auth_key_not_echoed(ctx: Context) -> str:
    key = ctx.settings.api_key
    replies = [
        ctx.client.get(f"/v1/tasks/{unique('task_conform_missing')}"),
        ctx.client.get("/v1/tasks", version="agents-protocol-1999-01-01"),
        ctx.client.post("/v1/tasks", raw_body=b'{"input": '),
        ctx.client.post("/v1/tasks", {"input": "not an object", "metadata": []}),
    ]
    errors = [r for r in replies if r.status >= 400]
    for reply in errors:
        if contains_secret(reply, key):
            raise Fail(f"{reply.describe()} contains the API key")
    if not errors:
        raise Prerequisite("none of the error-provoking requests was answered with an error")
    return f"{len(errors)} error responses checked"


# --------------------------------------------------------------------------- core: errors


@check(
    "core.errors.envelope",
    CORE,
    "Error taxonomy",
    "Errors use HTTP status codes plus machine-readable error codes. Error response shape:",
)
def errors_envelope(ctx: Context) -> str:
    replies = [
        ctx.client.get("/v1/tasks", version=None),
        ctx.client.get("/v1/tasks", auth=None),
        ctx.client.get(f"/v1/tasks/{unique('task_conform_missing')}"),
        ctx.client.post("/v1/tasks", raw_body=b'{"input": '),
    ]
    checked = 0
    for reply in replies:
        if reply.status < 400:
            continue
        checked += 1
        problem = envelope_problem(reply)
        if problem is not None:
            raise Fail(problem)
    if not checked:
        raise Prerequisite("none of the error-provoking requests was answered with an error")
    return f"{checked} error responses have the envelope"


@check(
    "core.errors.not_found.404",
    CORE,
    "Error taxonomy",
    "404 | resource_not_found | Resource is absent or hidden from caller.",
)
def errors_not_found(ctx: Context) -> None:
    expect_error(ctx.client.get(f"/v1/tasks/{unique('task_conform_missing')}"), 404, "resource_not_found")


# --------------------------------------------------------------------------- core: tasks


@check(
    "core.task.submit",
    CORE,
    "Task",
    "Required fields: id: stable task id. session_id: owning Session. workspace_id: owning Workspace. "
    "status: Task lifecycle state. input: initial Message or structured task payload. created_by: actor "
    "id or connector id.",
)
def task_submit(ctx: Context) -> str:
    reply = ctx.once("probe.submit", lambda: submit(ctx))
    if not reply.ok():
        raise Fail(f"expected 2xx and a Task, got {reply.describe()}")
    task = as_task(reply, "submit")
    if not task.status.known:
        raise Fail(f"status {task.status!r} is not a v1 Task state")
    return f"{reply.status} {task.id} {task.status}"


@check("core.task.get", CORE, "Task", "Tasks MUST be durable once accepted.")
def task_get(ctx: Context) -> None:
    submitted = ctx.once("probe.submit", lambda: submit(ctx))
    if not submitted.ok() or not isinstance(submitted.json, Mapping):
        raise Prerequisite(f"cannot submit the probe task: {submitted.describe()}")
    task_id = submitted.json.get("id")
    reply = ctx.client.get(f"/v1/tasks/{task_id}")
    if not reply.ok():
        raise Fail(f"expected 200 for the accepted task, got {reply.describe()}")
    task = as_task(reply, "get")
    if task.id != task_id:
        raise Fail(f"GET /v1/tasks/{task_id} answered task {task.id}")


@check("core.task.list", CORE, "REST", "Task submit, get, cancel, and list")
def task_list(ctx: Context) -> None:
    submitted = ctx.once("probe.submit", lambda: submit(ctx))
    if not submitted.ok() or not isinstance(submitted.json, Mapping):
        raise Prerequisite(f"cannot submit the probe task: {submitted.describe()}")
    task_id, session_id = submitted.json.get("id"), submitted.json.get("session_id")
    path = f"/v1/tasks?session_id={session_id}"
    for _ in range(50):
        reply = ctx.client.get(path)
        if not reply.ok():
            raise Fail(f"expected 200 and a task list, got {reply.describe()}")
        page = list_page(reply)
        if page is None:
            raise Fail(f"{reply.describe()}: the body is neither a list nor {{data: [...]}}")
        data, cursor = page
        if any(isinstance(t, Mapping) and t.get("id") == task_id for t in data):
            return
        if cursor is None:
            break
        path = f"/v1/tasks?session_id={session_id}&after={cursor}"
    raise Fail(f"the task list does not contain the submitted task {task_id}")


@check(
    "core.task.terminal",
    CORE,
    "Task lifecycle",
    "COMPLETED means the Task reached a successful terminal Outcome. FAILED means the Task reached an "
    "unsuccessful terminal state.",
)
def task_terminal(ctx: Context) -> str:
    try:
        finished = probe(ctx)
    except Prerequisite as exc:
        raise Fail(exc.reason) from None
    return f"{finished.id}: {' -> '.join(finished.seen)}"


@check(
    "core.lifecycle.events",
    CORE,
    "Task lifecycle",
    "Servers MUST emit a Task state event for every lifecycle transition.",
)
def lifecycle_events(ctx: Context) -> str:
    finished = probe(ctx)
    path = task_path(probe_events(ctx), finished.id)
    if not path:
        raise Fail(f"task {finished.id} ended {finished.status} but has no task.* lifecycle events")
    if path[-1] != finished.status:
        raise Fail(f"the task.* events end at {path[-1]}, the task is {finished.status}")
    missing = [s for s in finished.seen if s not in path]
    if missing:
        raise Fail(
            f"status {missing[0]} was observed but no task event announces it (events: {' -> '.join(path)})"
        )
    return " -> ".join(path)


@check(
    "core.events.fields",
    CORE,
    "Event",
    "Required fields: id: monotonic event id within the stream. event: event kind. resource: {object, id} "
    "pointer. created_at: timestamp. sequence: per-resource sequence number. payload: event-specific object.",
)
def events_fields(ctx: Context) -> str:
    events = probe_events(ctx)
    if not events:
        raise Fail(f"task {probe(ctx).id} has no events")
    for event in events:
        try:
            Event.from_dict(event)
        except ProtocolError as exc:
            raise Fail(f"event {event.get('id')}: {exc.message}") from None
    return f"{len(events)} events"


@check("core.events.causal_order", CORE, "Event", "Servers MUST emit Events in causal order per resource.")
def events_causal_order(ctx: Context) -> None:
    events = probe_events(ctx)
    last: dict[tuple[str, str], int] = {}
    for event in events:
        resource = event.get("resource")
        sequence = event.get("sequence")
        if not isinstance(resource, Mapping) or not isinstance(sequence, int):
            raise Fail(f"event {event.get('id')} lacks resource or an integer sequence")
        key = (str(resource.get("object")), str(resource.get("id")))
        if key in last and sequence <= last[key]:
            raise Fail(
                f"event {event.get('id')} of {key[0]} {key[1]} has sequence {sequence} after {last[key]}"
            )
        last[key] = sequence
    ids = event_ids(events)
    if all(i.isdigit() for i in ids) and [int(i) for i in ids] != sorted({int(i) for i in ids}):
        raise Fail(f"decimal event ids are not strictly increasing: {', '.join(ids)}")
    if len(set(ids)) != len(ids):
        raise Fail("an event id appears twice in one task's events")


@check("core.events.no_api_key", CORE, "API key", KEY_RULE)
def events_no_api_key(ctx: Context) -> None:
    if ctx.settings.api_key in orjson.dumps(probe_events(ctx)).decode():
        raise Fail(f"an event of task {probe(ctx).id} contains the API key")


@check(
    "core.cancel.terminal_rejected",
    CORE,
    "Task lifecycle",
    "COMPLETED | terminal / FAILED | terminal / 400 | invalid_state_transition | Requested lifecycle "
    "transition is not allowed.",
)
def cancel_terminal(ctx: Context) -> str:
    finished = probe(ctx)
    if finished.status == "CANCELED":
        raise Skip("the probe task ended CANCELED, not COMPLETED or FAILED")
    reply = ctx.client.post(f"/v1/tasks/{finished.id}/cancel", {})
    after = ctx.client.get(f"/v1/tasks/{finished.id}")
    now = after.json.get("status") if isinstance(after.json, Mapping) else None
    if now != finished.status:
        raise Fail(f"after {reply.describe()} the {finished.status} task is {now}")
    expect_error(reply, 400, "invalid_state_transition")
    return f"{finished.status} task stays {now}"


@check(
    "core.cancel.never_completed",
    CORE,
    "Task lifecycle",
    "Cancellation is cooperative: a Task MAY finish before a cancel request is observed, but once the server "
    "records CANCELED, no later success Outcome may replace it.",
)
def cancel_never_completed(ctx: Context) -> str:
    task_id = queued_tasks(ctx)[-1]
    reply = ctx.client.post(f"/v1/tasks/{task_id}/cancel", {})
    if reply.status == 400 and reply.error_code == "invalid_state_transition":
        raise Skip("the task finished before the cancel arrived (cooperative cancel allows it)")
    if not reply.ok():
        raise Fail(f"expected 200 and the canceled task, got {reply.describe()}")
    # give a worker time to (wrongly) complete it: wait for a task submitted after it to finish
    finished_task(ctx, submit(ctx), "follow-up task")
    final = ctx.client.wait_terminal(task_id, timeout=ctx.settings.task_timeout)
    status = final.json.get("status") if isinstance(final.json, Mapping) else None
    path = task_path(event_list(ctx, task_id), task_id)
    if "CANCELED" not in path and status != "CANCELED":
        raise Skip(f"the cancel was not recorded (task ended {status}; cooperative cancel allows it)")
    if status != "CANCELED":
        raise Fail(f"the task was CANCELED and later became {status} (events: {' -> '.join(path)})")
    if path and path[-1] != "CANCELED":
        raise Fail(f"events after task.canceled move it on: {' -> '.join(path)}")
    outcome = ctx.client.get(f"/v1/tasks/{task_id}/outcome")
    if outcome.ok() and isinstance(outcome.json, Mapping) and outcome.json.get("status") == "SUCCEEDED":
        raise Fail(f"the CANCELED task {task_id} has a SUCCEEDED outcome")
    return f"{task_id} stays CANCELED"


# --------------------------------------------------------------------------- core: idempotency


def idempotent_pair(ctx: Context) -> tuple[str, Reply, Reply]:
    def make() -> tuple[str, Reply, Reply]:
        key = unique("conform-idem")
        return key, submit(ctx, key=key), submit(ctx, key=key)

    return ctx.once("idempotent.pair", make)


@check(
    "core.idempotency.same_body",
    CORE,
    "Idempotency",
    "Retries with the same key and equivalent request body MUST return the same resource id and a "
    "semantically equivalent response.",
)
def idempotency_same_body(ctx: Context) -> str:
    _, first, second = idempotent_pair(ctx)
    if not first.ok():
        raise Prerequisite(f"cannot submit with an Idempotency-Key: {first.describe()}")
    if not second.ok():
        raise Fail(f"expected the first response again, got {second.describe()}")
    a, b = as_task(first, "first submit"), as_task(second, "retry")
    if a.id != b.id:
        raise Fail(f"the retry created task {b.id}; the first submit created {a.id}")
    if (a.session_id, a.workspace_id, dict(a.input)) != (b.session_id, b.workspace_id, dict(b.input)):
        raise Fail(f"the retry of {a.id} answered a different session, workspace or input")
    return f"both answered {a.id}"


@check(
    "core.idempotency.different_body.409",
    CORE,
    "Idempotency",
    "Retries with the same key and a different body MUST fail with 409 Conflict and error code "
    "idempotency_key_reused.",
)
def idempotency_different_body(ctx: Context) -> None:
    key, first, _ = idempotent_pair(ctx)
    if not first.ok():
        raise Prerequisite(f"cannot submit with an Idempotency-Key: {first.describe()}")
    reply = submit(ctx, key=key, body=submit_body(ctx, variant="different-body"))
    expect_error(reply, 409, "idempotency_key_reused")


@check(
    "core.idempotency.concurrent",
    CORE,
    "Idempotency",
    "A server MUST NOT create duplicate Tasks, Messages, Artifacts, or approval actions for equivalent "
    "retried writes.",
)
def idempotency_concurrent(ctx: Context) -> str:
    key = unique("conform-concurrent")
    n = ctx.settings.concurrency
    barrier = threading.Barrier(n)
    replies: list[Reply | BaseException] = []
    lock = threading.Lock()

    def one() -> None:
        client = ctx.client.clone()
        try:
            barrier.wait(timeout=ctx.settings.request_timeout)
            result: Reply | BaseException = submit_via(client, ctx, key)
        except BaseException as exc:
            result = exc
        finally:
            client.close()
        with lock:
            replies.append(result)

    threads = [threading.Thread(target=one, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(ctx.settings.request_timeout * 3)
    if len(replies) < n:
        raise Prerequisite(f"only {len(replies)} of {n} concurrent submits returned in time")
    ids: set[str] = set()
    for result in replies:
        if isinstance(result, BaseException):
            raise Prerequisite(f"a concurrent submit failed: {result}")
        if result.status >= 500:
            raise Fail(f"a concurrent identical submit got {result.describe()}")
        if result.ok() and isinstance(result.json, Mapping) and isinstance(result.json.get("id"), str):
            ids.add(result.json["id"])
    if len(ids) > 1:
        raise Fail(f"{n} concurrent identical submits created {len(ids)} tasks: {', '.join(sorted(ids))}")
    if not ids:
        raise Fail(f"none of {n} concurrent identical submits answered a task")
    return f"{n} submits -> {ids.pop()}"


def submit_via(client: Any, ctx: Context, key: str) -> Reply:
    reply: Reply = client.post("/v1/tasks", submit_body(ctx), extra={"Idempotency-Key": key})
    return reply


@check(
    "core.ids.not_recycled",
    CORE,
    "Normative language",
    "A Harness MUST NOT recycle an identifier for a different resource.",
)
def ids_not_recycled(ctx: Context) -> str:
    a, b = submit(ctx), submit(ctx)
    for reply in (a, b):
        if not reply.ok() or not isinstance(reply.json, Mapping):
            raise Prerequisite(f"cannot submit: {reply.describe()}")
    ids = [a.json.get("id"), b.json.get("id")]
    probe_id = ctx.once("probe.submit", lambda: submit(ctx)).json
    if isinstance(probe_id, Mapping):
        ids.append(probe_id.get("id"))
    if len(set(map(str, ids))) != len(ids):
        raise Fail(f"distinct submits got the same task id: {', '.join(map(str, ids))}")
    return ", ".join(map(str, ids))


# --------------------------------------------------------------------------- core: SSE


def stream_path(task_id: str) -> str:
    return f"/v1/tasks/{task_id}/stream"


@check(
    "core.sse.frames",
    CORE,
    "Server-sent events",
    "Each SSE frame MUST include: id: Event id as a decimal or opaque string cursor. event: Event kind. "
    "data: JSON Event object.",
)
def sse_frames(ctx: Context) -> str:
    finished, events = probe(ctx), probe_events(ctx)
    read = ctx.client.stream(
        stream_path(finished.id), max_frames=len(events), timeout=ctx.settings.stream_timeout
    )
    if read.status != 200 or not read.content_type.startswith("text/event-stream"):
        raise Fail(f"expected 200 text/event-stream, got {read.status} {read.content_type or '(no type)'}")
    if not read.frames:
        raise Fail(f"the stream of {finished.id} delivered no frame within {ctx.settings.stream_timeout:g} s")
    for frame in read.frames:
        fid, kind, data = frame.get("id"), frame.get("event"), frame.get("data")
        if fid is None or kind is None or data is None:
            raise Fail(
                f"a frame lacks {'id' if fid is None else 'event' if kind is None else 'data'}: {dict(frame.fields)}"
            )
        try:
            event = Event.from_dict(orjson.loads(data))
        except (orjson.JSONDecodeError, ProtocolError) as exc:
            raise Fail(f"frame {fid}: data is not a JSON Event ({exc})") from None
        if str(event.id) != fid or event.event != kind:
            raise Fail(f"frame id/event {fid}/{kind} differ from its data's {event.id}/{event.event}")
    return f"{len(read.frames)} frames"


def resume_point(ctx: Context) -> tuple[list[str], int]:
    ids = event_ids(probe_events(ctx))
    if len(ids) < 2:
        raise Prerequisite(f"the probe task has {len(ids)} events; resuming needs at least 2")
    return ids, max(0, min(len(ids) // 2, len(ids) - 2))


@check(
    "core.sse.resume",
    CORE,
    "Server-sent events",
    "Clients resume by sending Last-Event-ID. [...] servers MUST return a clear error event and close the "
    "stream instead of pretending the stream is continuous.",
)
def sse_resume(ctx: Context) -> str:
    ids, k = resume_point(ctx)
    read = ctx.client.stream(
        stream_path(probe(ctx).id),
        last_event_id=ids[k],
        max_frames=len(ids) - k - 1,
        timeout=ctx.settings.stream_timeout,
    )
    if read.status != 200:
        raise Fail(f"resuming after {ids[k]}: expected 200 text/event-stream, got {read.status}")
    earlier = set(ids[: k + 1])
    for frame in read.frames:
        if frame.get("event") == "error":
            raise Fail(f"resuming after a valid cursor {ids[k]} gave an error event: {frame.get('data')}")
        if frame.get("id") in earlier:
            raise Fail(f"resuming after event {ids[k]} re-delivered event {frame.get('id')}")
    return f"after {ids[k]}: {len(read.frames)} later frames"


@check(
    "core.sse.resume_replays",
    CORE,
    "Server-sent events",
    "Servers SHOULD replay missed events from the durable event log when possible.",
    requirement="SHOULD",
)
def sse_resume_replays(ctx: Context) -> str:
    ids, k = resume_point(ctx)
    read = ctx.client.stream(
        stream_path(probe(ctx).id),
        last_event_id=ids[k],
        max_frames=len(ids) - k - 1,
        timeout=ctx.settings.stream_timeout,
    )
    got = [f.get("id") for f in read.frames]
    missing = [i for i in ids[k + 1 :] if i not in got]
    if missing:
        raise Fail(f"resuming after {ids[k]} did not replay event(s) {', '.join(missing)}")
    return f"{len(got)} missed events replayed"


@check(
    "core.sse.cursor_expired",
    CORE,
    "Server-sent events",
    "If the cursor is too old or unavailable, servers MUST return a clear error event and close the stream "
    "instead of pretending the stream is continuous.",
)
def sse_cursor_expired(ctx: Context) -> str:
    ids = event_ids(probe_events(ctx))
    numeric = bool(ids) and all(i.isdigit() for i in ids)
    cursor = str(max(int(i) for i in ids) + 10**12) if numeric else unique("conform-unknown-cursor")
    read = ctx.client.stream(
        stream_path(probe(ctx).id), last_event_id=cursor, timeout=ctx.settings.stream_timeout
    )
    if read.status == 410 and "cursor_expired" in read.body:
        return "answered HTTP 410 cursor_expired before opening the stream"
    if read.status != 200:
        raise Fail(
            f"unknown cursor {cursor}: expected an error event (cursor_expired), got HTTP {read.status}"
        )
    errors = [f for f in read.frames if f.get("event") == "error"]
    if not errors:
        kinds = [f.get("event") for f in read.frames]
        raise Fail(f"unknown cursor {cursor}: no error event (frames: {kinds or 'none'})")
    before = read.frames.index(errors[0])
    if before:
        raise Fail(f"unknown cursor {cursor}: {before} event(s) before the error event, as if continuous")
    if "cursor_expired" not in (errors[0].get("data") or ""):
        raise Fail(f"unknown cursor {cursor}: the error event is not cursor_expired: {errors[0].get('data')}")
    if not read.closed or len(read.frames) > 1:
        raise Fail(f"unknown cursor {cursor}: the stream stayed open after the error event")
    return "error event cursor_expired, then closed"


# --------------------------------------------------------------------------- receipts


def receipt_task(ctx: Context) -> tuple[Finished, dict[str, Any]]:
    finished = probe(ctx)
    return finished, ctx.once("probe.receipt", lambda: receipt_of(ctx, finished))


@check(
    "receipts.task.reference",
    RECEIPTS,
    "Conformance levels: Receipts",
    "receipt references from Tasks, Outcomes, Events, and Artifacts",
)
def receipts_task_reference(ctx: Context) -> str:
    finished = probe(ctx)
    again = ctx.client.get(f"/v1/tasks/{finished.id}")
    receipt_id = again.json.get("receipt_id") if isinstance(again.json, Mapping) else None
    if not isinstance(receipt_id, str) or not receipt_id:
        raise Fail(f"terminal task {finished.id} ({finished.status}) has no receipt_id")
    return f"{finished.id} -> {receipt_id}"


@check(
    "receipts.get.fields",
    RECEIPTS,
    "Receipt",
    "schema: receipt format discriminator. Current value: receipt-2026-04-25.",
)
def receipts_fields(ctx: Context) -> None:
    finished, receipt = receipt_task(ctx)
    try:
        parsed = Receipt.from_dict(receipt)
    except ProtocolError as exc:
        raise Fail(f"receipt {receipt.get('receipt_id')}: {exc.message}") from None
    if parsed.schema != RECEIPT_SCHEMA:
        raise Fail(f"expected schema {RECEIPT_SCHEMA}, got {parsed.schema}")
    if parsed.subject.id != finished.id:
        raise Fail(f"receipt subject is {parsed.subject.object} {parsed.subject.id}, not task {finished.id}")


@check(
    "receipts.hash",
    RECEIPTS,
    "Receipt wire format",
    "The chain.receipt_hash value is computed over the canonical receipt with chain.receipt_hash and "
    "signatures removed. The stored value uses the sha256: prefix.",
)
def receipts_hash(ctx: Context) -> str:
    _, receipt = receipt_task(ctx)
    chain = receipt.get("chain")
    stored = chain.get("receipt_hash") if isinstance(chain, Mapping) else None
    if not isinstance(stored, str) or not stored.startswith(HASH_PREFIX):
        raise Fail(f"chain.receipt_hash {stored!r} lacks the {HASH_PREFIX} prefix")
    expected = receipt_hash(receipt)
    if stored != expected:
        raise Fail(f"chain.receipt_hash is {stored}, RFC 8785 recomputes {expected}")
    return stored


@check(
    "receipts.chain.previous",
    RECEIPTS,
    "Receipt",
    "chain: previous receipt hash, current receipt hash, and optional Merkle root.",
)
def receipts_chain(ctx: Context) -> str:
    first = finished_task(ctx, submit(ctx), "first chained task")
    a = receipt_of(ctx, first)
    second = finished_task(ctx, submit(ctx), "second chained task")
    b = receipt_of(ctx, second)
    a_hash = a.get("chain", {}).get("receipt_hash")
    b_prev = b.get("chain", {}).get("previous_receipt_hash")
    if b_prev != a_hash:
        raise Fail(
            f"receipt {b.get('receipt_id')} has previous_receipt_hash {b_prev}, expected {a_hash} "
            f"(receipt {a.get('receipt_id')} of the task finished just before; other traffic may interleave)"
        )
    return f"{b.get('receipt_id')} chains to {a.get('receipt_id')}"


@check(
    "receipts.verification",
    RECEIPTS,
    "Receipt wire format",
    "Clients MUST NOT infer cryptographic validity from the presence of a receipt_id; they must call the "
    "receipt verification surface when available.",
)
def receipts_verification(ctx: Context) -> None:
    _, receipt = receipt_task(ctx)
    reply = ctx.client.get(f"/v1/receipts/{receipt.get('receipt_id')}/verification")
    if not reply.ok() or not isinstance(reply.json, Mapping):
        raise Fail(f"expected 200 and a verification report, got {reply.describe()}")
    verdict = reply.json.get("ok", reply.json.get("valid"))
    if verdict is not True:
        raise Fail(
            f"the verification API reports {verdict!r} for a receipt the Harness issued: {clip(reply.text, 120)}"
        )


@check("receipts.no_api_key", RECEIPTS, "API key", KEY_RULE)
def receipts_no_api_key(ctx: Context) -> None:
    _, receipt = receipt_task(ctx)
    if ctx.settings.api_key in orjson.dumps(receipt).decode():
        raise Fail(f"receipt {receipt.get('receipt_id')} contains the API key")


# --------------------------------------------------------------------------- replay

NO_ROUTE = (404, 405, 501)


def replay_post(ctx: Context, task_id: str, body: Mapping[str, Any]) -> Reply:
    reply = ctx.client.post(f"/v1/tasks/{task_id}/replay", dict(body))
    if reply.status in NO_ROUTE:
        raise Skip(f"no replay route on this Harness ({reply.describe()})")
    return reply


def exact_replay(ctx: Context) -> tuple[Finished, Reply]:
    source = probe(ctx)
    return source, ctx.once("replay.exact", lambda: replay_post(ctx, source.id, {"mode": "exact"}))


def replayed_task(ctx: Context) -> tuple[Finished, Finished]:
    source, reply = exact_replay(ctx)
    if not reply.ok():
        raise Prerequisite(f"exact replay failed: {reply.describe()}")
    return source, ctx.once("replay.finished", lambda: finished_task(ctx, reply, "replay task"))


@check(
    "replay.exact.creates_task",
    REPLAY,
    "Replay contract",
    "POST /v1/tasks/{task_id}/replay creates a new Task by replaying the source Task EventLog. The new Task "
    "MUST expose the source Task as parent_task_id.",
)
def replay_exact(ctx: Context) -> str:
    source, reply = exact_replay(ctx)
    if not reply.ok():
        raise Fail(f"expected 201 and a Task, got {reply.describe()}")
    task = as_task(reply, "replay")
    if task.id == source.id:
        raise Fail("the replay answered the source task instead of a new one")
    parent = task.optional.get("parent_task_id")
    if parent != source.id:
        raise Fail(f"the replay task's parent_task_id is {parent!r}, expected {source.id}")
    try:
        finished = replayed_task(ctx)[1]
    except Prerequisite as exc:
        raise Fail(exc.reason) from None
    return f"{reply.status} {task.id} (parent {source.id}) ended {finished.status}"


@check("replay.events.marked", REPLAY, "Replay contract", "Replayed stream events are marked as replayed.")
def replay_marked(ctx: Context) -> str:
    source, replay = replayed_task(ctx)
    source_kinds = {str(e.get("id")): e.get("event") for e in probe_events(ctx)}
    marked = []
    for event in event_list(ctx, replay.id):
        meta = event.get("metadata")
        if not isinstance(meta, Mapping) or meta.get("replayed") is not True:
            continue
        of = meta.get("replay_of")
        if not isinstance(of, Mapping) or of.get("task_id") != source.id:
            raise Fail(
                f"replayed event {event.get('id')}: metadata.replay_of {of!r} does not name task {source.id}"
            )
        pointed = str(of.get("event_id"))
        if pointed not in source_kinds:
            raise Fail(
                f"replayed event {event.get('id')}: replay_of.event_id {pointed} is not a source event"
            )
        if source_kinds[pointed] != event.get("event"):
            raise Fail(
                f"replayed event {event.get('id')} ({event.get('event')}) points at source event {pointed} "
                f"({source_kinds[pointed]})"
            )
        marked.append(event)
    if not marked:
        raise Fail(f"no event of replay task {replay.id} has metadata.replayed == true")
    return f"{len(marked)} replayed events"


@check(
    "replay.events.started_completed",
    REPLAY,
    "Event taxonomy: Receipt and replay events",
    "replay.started [...] replay.completed",
)
def replay_started_completed(ctx: Context) -> None:
    _, replay = replayed_task(ctx)
    kinds = [str(e.get("event")) for e in event_list(ctx, replay.id)]
    for kind in ("replay.started", "replay.completed"):
        if kind not in kinds:
            raise Fail(f"replay task {replay.id} has no {kind} event (events: {', '.join(kinds)})")
    if kinds.index("replay.started") > kinds.index("replay.completed"):
        raise Fail("replay.completed comes before replay.started")


@check(
    "replay.overrides.invalid",
    REPLAY,
    "Replay contract",
    "Overrides MUST be keyed deterministic substitutions for recorded nondeterministic dependencies such as "
    "model responses, MCP tool returns, secret values, clock reads, and host facts.",
)
def replay_overrides(ctx: Context) -> None:
    source = probe(ctx)
    for overrides in ({}, {unique("conform.unknown-key"): "x"}):
        reply = replay_post(ctx, source.id, {"mode": "with_overrides", "overrides": overrides})
        if reply.status != 400 or reply.error_code != "invalid_request":
            raise Fail(
                f"overrides {orjson.dumps(overrides).decode()}: expected 400 invalid_request, got {reply.describe()}"
            )


@check(
    "replay.mode.unknown",
    REPLAY,
    "Replay contract",
    "Replay requests support exact, with_overrides, and from_checkpoint modes.",
)
def replay_unknown_mode(ctx: Context) -> None:
    expect_error(replay_post(ctx, probe(ctx).id, {"mode": "conform-unknown-mode"}), 400, "invalid_request")


@check(
    "replay.source.non_terminal.409",
    REPLAY,
    "Error taxonomy",
    "409 | conflict | Request conflicts with current resource state.",
)
def replay_non_terminal(ctx: Context) -> str:
    probe(ctx)  # the Harness runs tasks at all
    task_id = queued_tasks(ctx)[-1]
    reply = replay_post(ctx, task_id, {"mode": "exact"})
    if reply.status == 409 and reply.error_code == "conflict":
        return f"replay of non-terminal {task_id} refused"
    after = ctx.client.get(f"/v1/tasks/{task_id}")
    status = after.json.get("status") if isinstance(after.json, Mapping) else None
    if isinstance(status, str) and not is_terminal(status):
        raise Fail(
            f"replay of {task_id} while it was {status}: expected 409 conflict, got {reply.describe()}"
        )
    raise Skip(f"the source finished before the replay request could be judged ({reply.describe()})")


@check(
    "replay.events.after",
    REPLAY,
    "Conformance levels: Replay",
    "event range reads with durable cursors",
)
def replay_events_after(ctx: Context) -> str:
    events = probe_events(ctx)
    ids = event_ids(events)
    if len(ids) < 2:
        raise Prerequisite(f"the probe task has {len(ids)} events; a range read needs at least 2")
    k = len(ids) // 2
    task_id = probe(ctx).id
    first = event_ids(event_list(ctx, task_id, after=ids[k]))
    second = event_ids(event_list(ctx, task_id, after=ids[k]))
    if first != ids[k + 1 :]:
        raise Fail(f"events?after={ids[k]} returned {first}, expected {ids[k + 1 :]}")
    if second != first:
        raise Fail(f"reading events?after={ids[k]} twice gave different events")
    return f"after={ids[k]}: {len(first)} events"
