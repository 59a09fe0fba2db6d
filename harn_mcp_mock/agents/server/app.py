"""The Harness over HTTP: REST + SSE on Starlette (Core and Receipts levels).

Every route except discovery needs ``Harn-Agents-Protocol-Version`` (426
``unsupported_protocol_version`` otherwise, listing the supported versions) and
``Authorization: Bearer <api-key>`` (401 ``unauthenticated``; 403 ``permission_denied`` when the
key's actor lacks the route's scope). Keys are compared in constant time and never appear in a
response, an event or a receipt. Errors are the spec's envelope, with a ``request_id`` that is also
sent as the ``Request-Id`` header. See ``docs/protocol.md`` for the route table.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hmac
import itertools
import queue
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from harn_mcp_mock import deepjson
from harn_mcp_mock.agents import PROTOCOL_VERSION, VERSION_HEADER
from harn_mcp_mock.agents.errors import ErrorEnvelope, ProtocolError
from harn_mcp_mock.agents.server.harness import ALL_SCOPES, SUPPORTED_VERSIONS, Harness, verification
from harn_mcp_mock.agents.server.replay import SUPPORTED_REPLAY_MODES, replay_session, replay_task
from harn_mcp_mock.agents.store import ProtocolStore
from harn_mcp_mock.clock import Clock
from harn_mcp_mock.http.guard import BodyTooLarge, GuardSettings, guard_middleware

__all__ = ["EventBus", "TaskRunner", "agent_card", "create_app"]

MAX_BODY_BYTES = 1 << 20
MAX_BODY_DEPTH = 200
"""Deepest JSON nesting a request body may have (the store writes it back with orjson: 254 levels)."""
Handler = Callable[[Request, str], Awaitable[Response]]


def _json(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


class EventBus:
    """Wakes SSE streams (on their event loops) when events are appended from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def publish(self) -> None:
        with self._lock:
            waiters = list(self._waiters)
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed: its stream is gone
                loop.call_soon_threadsafe(event.set)

    @contextlib.contextmanager
    def subscribe(self) -> Iterator[asyncio.Event]:
        item = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.add(item)
        try:
            yield item[1]
        finally:
            with self._lock:
                self._waiters.discard(item)


class TaskRunner:
    """Runs SUBMITTED tasks one at a time, in submission order, on a worker thread."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="harn-protocol-runner", daemon=True)
        self._thread.start()
        for task_id in self.harness.pending():
            self.enqueue(task_id)

    def enqueue(self, task_id: str) -> None:
        self._queue.put(task_id)

    def stop(self, timeout: float = 5.0) -> None:
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while (task_id := self._queue.get()) is not None:
            try:
                self.harness.run_task(task_id)
            except Exception as exc:  # a bug must not kill the runner; the task stays visible
                sys.stderr.write(f"harn protocol: task {task_id}: {type(exc).__name__}: {exc}\n")


def agent_card(base_url: str) -> dict[str, Any]:
    """The HarnAgentCard this Harness serves (public discovery)."""
    skill = {
        "id": "world-task",
        "name": "world-task",
        "description": "Run tool calls against an in-process MCP world (checking the world task's goal) "
        "or an MCP cassette replay.",
        "input_schema": {
            "type": "object",
            "properties": {
                "world": {"type": "string"},
                "world_task": {"type": "string"},
                "cassette": {"type": "string"},
                "steps": {"type": "array"},
                "text": {"type": "string"},
            },
        },
        "output_schema": None,
    }
    return {
        "id": "card_harn_mcp_mock",
        "object": "harn_agent_card",
        "name": "harn-mcp-mock scripted agent",
        "description": "A mock Harness of the Harn Agents Protocol v1 with a deterministic scripted agent.",
        "protocol_version": PROTOCOL_VERSION,
        "a2a_card": {
            "name": "harn-mcp-mock scripted agent",
            "description": "Deterministic scripted agent (mock Harness).",
            "url": f"{base_url}/v1",
            "version": "1.0.0",
            "preferredTransport": "HTTP+JSON",
            "additionalInterfaces": [],
            "capabilities": {"streaming": True, "pushNotifications": False},
            "defaultInputModes": ["application/json", "text/plain"],
            "defaultOutputModes": ["application/json", "text/plain"],
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
            "security": [{"apiKey": []}],
            "skills": [
                {"id": "world-task", "name": "world-task", "description": skill["description"], "tags": []}
            ],
        },
        "skills": [skill],
        "capabilities": {
            "conformance_levels": ["core", "receipts", "replay"],
            "replay_modes": list(SUPPORTED_REPLAY_MODES),
            "transports": ["rest", "sse"],
            "supported_versions": list(SUPPORTED_VERSIONS),
        },
        "auth_schemes": ["api_key"],
        "receipt_policy": "required",
        "harn_interfaces": {"rest": f"{base_url}/v1", "sse": f"{base_url}/v1/tasks/{{task_id}}/stream"},
        "public_url": base_url,
        "metadata": {},
    }


def _sse_frame(event: Mapping[str, Any]) -> str:
    return f"id: {event['id']}\nevent: {event['event']}\ndata: {orjson.dumps(event).decode()}\n\n"


def _sse_error(envelope: ErrorEnvelope) -> str:
    return f"event: error\ndata: {orjson.dumps(envelope.to_dict()).decode()}\n\n"


def create_app(
    store: ProtocolStore,
    api_keys: Mapping[str, str],
    clock: Clock | None = None,
    *,
    permissions: Mapping[str, frozenset[str]] | None = None,
    world_root: Path | None = None,
    auto_run: bool = False,
    heartbeat_s: float = 15.0,
    guard: GuardSettings | None = None,
) -> Starlette:
    """The Harness as an ASGI app. ``api_keys`` maps each key to its actor; ``permissions``
    maps an actor to its scopes (default: all of :data:`ALL_SCOPES`). With ``auto_run`` a
    worker thread runs submitted tasks (and tasks left SUBMITTED by a previous process); without
    it tasks stay SUBMITTED until ``app.state.harness.run_task(id)``. ``guard``: the Origin, Host
    and body-size checks (default: loopback origins, any Host, bodies up to :data:`MAX_BODY_BYTES`)."""
    harness = Harness(store, clock=clock, world_root=world_root)
    bus = EventBus()
    harness.add_listener(bus.publish)
    runner = TaskRunner(harness) if auto_run else None
    keys = dict(api_keys)
    request_ids = itertools.count(1)

    def error(envelope: ErrorEnvelope, request_id: str, headers: Mapping[str, str] | None = None) -> Response:
        body = dataclasses.replace(envelope, request_id=request_id)
        return _json(body.to_dict(), body.http_status, {"Request-Id": request_id, **(headers or {})})

    def authenticate(request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        presented = token.strip().encode()
        actor = None
        for key, who in keys.items():  # constant time per key, and no early exit
            if hmac.compare_digest(key.encode(), presented):
                actor = who
        return actor

    def guarded(scope: str, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            request_id = f"req_{next(request_ids):06d}"
            version = request.headers.get(VERSION_HEADER)
            if version not in SUPPORTED_VERSIONS:
                envelope = ErrorEnvelope.of(
                    "unsupported_protocol_version",
                    f"send {VERSION_HEADER}: one of {', '.join(SUPPORTED_VERSIONS)}"
                    + ("" if version is None else " (this version is not supported)"),
                    param=VERSION_HEADER,
                    details={"supported_versions": list(SUPPORTED_VERSIONS)},
                )
                return error(envelope, request_id, {"Upgrade": PROTOCOL_VERSION})
            actor = authenticate(request)
            if actor is None:
                envelope = ErrorEnvelope.of(
                    "unauthenticated", "missing or invalid API key (Authorization: Bearer <api-key>)"
                )
                return error(envelope, request_id, {"WWW-Authenticate": "Bearer"})
            granted = (permissions or {}).get(actor, ALL_SCOPES)
            if scope not in granted:
                envelope = ErrorEnvelope.of(
                    "permission_denied",
                    f"actor {actor!r} lacks the {scope} permission",
                    details={"scope": scope},
                )
                return error(envelope, request_id)
            try:
                response = await handler(request, actor)
            except ProtocolError as exc:
                return error(exc.envelope, request_id)
            except Exception as exc:
                sys.stderr.write(f"harn protocol: {request_id}: {type(exc).__name__}: {exc}\n")
                return error(ErrorEnvelope.of("internal_error", "unexpected Harness failure"), request_id)
            response.headers["Request-Id"] = request_id
            response.headers[VERSION_HEADER] = PROTOCOL_VERSION
            return response

        return endpoint

    # Embedded (a test client, another server): the Host it is reached by is unknown, so only
    # ``serve`` (which knows its socket) checks Host.
    guard = guard or GuardSettings(max_body_bytes=MAX_BODY_BYTES, check_host=False)

    def refuse(status: int, kind: str, message: str) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        """The guard's refusals as envelopes: 403 for a foreign Origin or Host, 413 for a body."""
        request_id = f"req_{next(request_ids):06d}"
        code = "payload_too_large" if kind == "body" else "permission_denied"
        envelope = ErrorEnvelope.of(code, message, request_id=request_id)
        headers = [(b"content-type", b"application/json"), (b"request-id", request_id.encode())]
        return envelope.http_status, orjson.dumps(envelope.to_dict()), headers

    async def read_body(request: Request) -> Any:
        try:  # the guard counts the body as it arrives (Content-Length or chunked)
            raw = await request.body()
        except BodyTooLarge as exc:
            raise ProtocolError(ErrorEnvelope.of("payload_too_large", str(exc))) from None
        if not raw:
            return {}
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            reason = str(exc).split(":")[0]  # "depth limit exceeded", ... (never the content)
            raise ProtocolError.invalid(
                f"the request body is not valid JSON: {reason}", param="body"
            ) from None
        if deepjson.depth(body) > MAX_BODY_DEPTH:
            raise ProtocolError.invalid(
                f"the request body is nested deeper than {MAX_BODY_DEPTH} levels", param="body"
            )
        return body

    # -- routes ------------------------------------------------------------------------------

    async def card(request: Request) -> Response:
        return _json(agent_card(str(request.base_url).rstrip("/")))

    async def submit(request: Request, actor: str) -> Response:
        body = await read_body(request)
        status, task, replayed = harness.submit(actor, body, request.headers.get("idempotency-key"))
        if runner is not None and not replayed:
            runner.enqueue(task["id"])
        headers = {"Location": f"/v1/tasks/{task['id']}"}
        if replayed:
            headers["Idempotent-Replayed"] = "true"
        return _json(task, status, headers)

    async def list_tasks(request: Request, actor: str) -> Response:
        q = request.query_params
        limit_raw = q.get("limit", "50")
        if not limit_raw.isdigit() or not 1 <= int(limit_raw) <= 500:
            raise ProtocolError.invalid("limit must be an integer from 1 to 500", param="limit")
        return _json(
            harness.list_tasks(
                actor, status=q.get("status"), session_id=q.get("session_id"), limit=int(limit_raw),
                after=q.get("after"),
            )
        )  # fmt: skip

    def reader(kind: str, param: str) -> Handler:
        async def read(request: Request, actor: str) -> Response:
            return _json(harness.get(actor, kind, request.path_params[param]))

        return read

    async def cancel(request: Request, actor: str) -> Response:
        body = await read_body(request)
        reason = body.get("reason") if isinstance(body, Mapping) else None
        return _json(
            harness.cancel(actor, request.path_params["task_id"], reason if isinstance(reason, str) else None)
        )

    def cursor(raw: str | None) -> int:
        if raw is None or raw == "":
            return 0
        if not raw.isdigit():
            raise ProtocolError(
                ErrorEnvelope.of(
                    "cursor_expired",
                    f"{raw!r} is not an event cursor this Harness issued",
                    param="Last-Event-ID",
                )
            )
        return int(raw)

    async def events(request: Request, actor: str) -> Response:
        after = cursor(request.query_params.get("after"))
        return _json(harness.task_events(actor, request.path_params["task_id"], after=after))

    async def task_outcome(request: Request, actor: str) -> Response:
        task = harness.get(actor, "task", request.path_params["task_id"])
        if not task.get("outcome_id"):
            raise ProtocolError(
                ErrorEnvelope.of(
                    "resource_not_found", f"task {task['id']} has no outcome yet", param="task_id"
                )
            )
        return _json(harness.get(actor, "outcome", task["outcome_id"]))

    async def task_receipt(request: Request, actor: str) -> Response:
        task = harness.get(actor, "task", request.path_params["task_id"])
        if not task.get("receipt_id"):
            raise ProtocolError(
                ErrorEnvelope.of(
                    "resource_not_found", f"task {task['id']} has no receipt yet", param="task_id"
                )
            )
        return _json(harness.receipt(actor, task["receipt_id"]))

    async def receipt(request: Request, actor: str) -> Response:
        return _json(harness.receipt(actor, request.path_params["receipt_id"]))

    async def receipt_verification(request: Request, actor: str) -> Response:
        return _json(harness.verify_receipt(actor, request.path_params["receipt_id"]))

    async def verify_posted(request: Request, actor: str) -> Response:
        body = await read_body(request)
        receipts = body.get("receipts") if isinstance(body, Mapping) else None
        if not isinstance(receipts, list) or not receipts:
            raise ProtocolError.invalid("receipts must be a non-empty array", param="receipts")
        last = receipts[-1] if isinstance(receipts[-1], Mapping) else {}
        chain = last.get("chain")
        return _json(
            verification(
                receipts,
                last.get("receipt_id"),
                chain.get("receipt_hash") if isinstance(chain, Mapping) else None,
            )
        )

    async def messages(request: Request, actor: str) -> Response:
        return _json(harness.session_messages(actor, request.path_params["session_id"]))

    def sse(
        request: Request,
        check: Callable[[int], None],
        read: Callable[[int], list[dict[str, Any]]],
        done: Callable[[], bool],
    ) -> Response:
        """An SSE stream of ``read(after)`` from the client's ``Last-Event-ID``, until ``done()``."""
        problem: ErrorEnvelope | None = None
        position = 0
        try:
            position = cursor(
                request.headers.get("last-event-id") or request.query_params.get("last_event_id")
            )
            check(position)
        except ProtocolError as exc:
            problem = exc.envelope

        async def frames() -> AsyncIterator[str]:
            nonlocal position
            if problem is not None:
                yield _sse_error(problem)  # a clear error, then close: never pretend continuity
                return
            with bus.subscribe() as wake:
                while True:
                    wake.clear()
                    finished = done()
                    for event in read(position):
                        yield _sse_frame(event)
                        position = int(event["id"])
                    if finished:
                        return
                    try:
                        await asyncio.wait_for(wake.wait(), heartbeat_s)
                    except TimeoutError:
                        yield ": heartbeat\n\n"

        return StreamingResponse(
            frames(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    async def stream(request: Request, actor: str) -> Response:
        task_id = request.path_params["task_id"]
        harness.get(actor, "task", task_id)  # 404 before the stream opens
        return sse(
            request,
            lambda after: harness.check_cursor(task_id, after),
            lambda after: store.events_for_task(task_id, after=after),
            lambda: harness.is_terminal(task_id),
        )

    async def session_stream(request: Request, actor: str) -> Response:
        session_id = request.path_params["session_id"]
        harness.get(actor, "session", session_id)
        return sse(
            request,
            harness.check_issued,
            lambda after: store.events_for_session(session_id, after=after),
            lambda: harness.session_settled(session_id),
        )

    def created(status: int, resource: Mapping[str, Any], replayed: bool, location: str) -> Response:
        headers = {"Location": location}
        if replayed:
            headers["Idempotent-Replayed"] = "true"
        return _json(resource, status, headers)

    async def create_session(request: Request, actor: str) -> Response:
        body = await read_body(request)
        status, session, replayed = harness.create_session(
            actor, body, request.headers.get("idempotency-key")
        )
        return created(status, session, replayed, f"/v1/sessions/{session['id']}")

    async def append_message(request: Request, actor: str) -> Response:
        body = await read_body(request)
        status, message, replayed = harness.append_message(
            actor, request.path_params["session_id"], body, request.headers.get("idempotency-key")
        )
        return created(status, message, replayed, f"/v1/messages/{message['id']}")

    async def close_session(request: Request, actor: str) -> Response:
        return _json(harness.close_session(actor, request.path_params["session_id"]))

    async def session_events(request: Request, actor: str) -> Response:
        after = cursor(request.query_params.get("after"))
        return _json(harness.session_events(actor, request.path_params["session_id"], after=after))

    async def replay_task_route(request: Request, actor: str) -> Response:
        body = await read_body(request)
        status, task, replayed = replay_task(
            harness, actor, request.path_params["task_id"], body, request.headers.get("idempotency-key")
        )
        if runner is not None and not replayed:
            runner.enqueue(task["id"])
        return created(status, task, replayed, f"/v1/tasks/{task['id']}")

    async def replay_session_route(request: Request, actor: str) -> Response:
        body = await read_body(request)
        status, session, replayed = replay_session(
            harness, actor, request.path_params["session_id"], body, request.headers.get("idempotency-key")
        )
        return created(status, session, replayed, f"/v1/sessions/{session['id']}")

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        code = (
            "resource_not_found" if status == 404 else "invalid_request" if status < 500 else "internal_error"
        )
        request_id = f"req_{next(request_ids):06d}"
        envelope = ErrorEnvelope.of(
            code,
            f"{request.method} {request.url.path}: not a route of this Harness"
            if status in (404, 405)
            else "request failed",
            request_id=request_id,
        )
        return _json(envelope.to_dict(), status, {"Request-Id": request_id})

    def route(path: str, scope: str, handler: Handler, methods: list[str]) -> Route:
        return Route(path, guarded(scope, handler), methods=methods)

    routes = [
        Route("/.well-known/harn-agent-card.json", card, methods=["GET"]),
        Route("/v1/agent-card", card, methods=["GET"]),
        route("/v1/tasks", "tasks:write", submit, ["POST"]),
        route("/v1/tasks", "tasks:read", list_tasks, ["GET"]),
        route("/v1/tasks/{task_id}", "tasks:read", reader("task", "task_id"), ["GET"]),
        route("/v1/tasks/{task_id}/cancel", "tasks:write", cancel, ["POST"]),
        route("/v1/tasks/{task_id}/events", "events:read", events, ["GET"]),
        route("/v1/tasks/{task_id}/stream", "events:read", stream, ["GET"]),
        route("/v1/tasks/{task_id}/outcome", "tasks:read", task_outcome, ["GET"]),
        route("/v1/tasks/{task_id}/receipt", "receipts:read", task_receipt, ["GET"]),
        route("/v1/tasks/{task_id}/replay", "tasks:write", replay_task_route, ["POST"]),
        route("/v1/sessions", "sessions:write", create_session, ["POST"]),
        route("/v1/sessions/{session_id}", "sessions:read", reader("session", "session_id"), ["GET"]),
        route("/v1/sessions/{session_id}/messages", "sessions:read", messages, ["GET"]),
        route("/v1/sessions/{session_id}/messages", "sessions:write", append_message, ["POST"]),
        route("/v1/sessions/{session_id}/close", "sessions:write", close_session, ["POST"]),
        route("/v1/sessions/{session_id}/events", "events:read", session_events, ["GET"]),
        route("/v1/sessions/{session_id}/stream", "events:read", session_stream, ["GET"]),
        route("/v1/sessions/{session_id}/replay", "sessions:write", replay_session_route, ["POST"]),
        route("/v1/messages/{message_id}", "sessions:read", reader("message", "message_id"), ["GET"]),
        route("/v1/artifacts/{artifact_id}", "artifacts:read", reader("artifact", "artifact_id"), ["GET"]),
        route("/v1/outcomes/{outcome_id}", "tasks:read", reader("outcome", "outcome_id"), ["GET"]),
        route("/v1/receipts/verify", "receipts:read", verify_posted, ["POST"]),
        route("/v1/receipts/{receipt_id}", "receipts:read", receipt, ["GET"]),
        route("/v1/receipts/{receipt_id}/verification", "receipts:read", receipt_verification, ["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if runner is not None:
            runner.start()
        try:
            yield
        finally:
            if runner is not None:
                runner.stop()

    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: not_found},
        lifespan=lifespan,
        middleware=guard_middleware(guard, refuse),
    )
    app.state.harness = harness
    app.state.store = store
    app.state.runner = runner
    return app
