"""The Harness over HTTP: REST + SSE on Starlette (Core, Receipts and Replay levels).

Every route except discovery needs ``Harn-Agents-Protocol-Version`` (426
``unsupported_protocol_version`` otherwise, listing the supported versions) and
``Authorization: Bearer <api-key>`` (401 ``unauthenticated``; 403 ``permission_denied`` when the
key's actor lacks the route's scope). Keys are compared in constant time and never appear in a
response, an event or a receipt. Errors are the spec's envelope, with a ``request_id`` that is also
sent as the ``Request-Id`` header. See ``docs/protocol.md`` for the route table.

Shape: :class:`ApiKeys` authenticates every request as Starlette authentication middleware
(``request.user`` is the actor, ``request.auth.scopes`` its scopes); :func:`requires` checks
the version, the actor and the route's scope and turns :class:`ProtocolError` into an envelope;
the route handlers are module-level functions reading the :class:`Served` on ``app.state``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import hmac
import itertools
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials, AuthenticationBackend, BaseUser, SimpleUser
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from harn_mcp_mock import deepjson
from harn_mcp_mock.agents import PROTOCOL_VERSION, VERSION_HEADER
from harn_mcp_mock.agents.db import ProtocolStore
from harn_mcp_mock.agents.envelopes import ErrorEnvelope, ProtocolError
from harn_mcp_mock.agents.server.card import agent_card
from harn_mcp_mock.agents.server.harness import ALL_SCOPES, SUPPORTED_VERSIONS, Harness
from harn_mcp_mock.agents.server.issuer import verification
from harn_mcp_mock.agents.server.replay import create_session_replay, create_task_replay
from harn_mcp_mock.agents.server.runner import EventBus, TaskRunner
from harn_mcp_mock.clock import Clock
from harn_mcp_mock.http.guard import BodyTooLarge, GuardSettings, guard_middleware

__all__ = ["MAX_BODY_BYTES", "MAX_BODY_DEPTH", "ROUTES", "ApiKeys", "Served", "create_app", "requires"]

MAX_BODY_BYTES = 1 << 20
MAX_BODY_DEPTH = 200
"""Deepest JSON nesting a request body may have (the store writes it back with orjson: 254 levels)."""

Handler = Callable[[Request, str], Awaitable[Response]]
Endpoint = Callable[[Request], Awaitable[Response]]


@dataclasses.dataclass(slots=True)
class Served:
    """What the route handlers share, kept on ``app.state.served``."""

    harness: Harness
    bus: EventBus
    runner: TaskRunner | None
    heartbeat_s: float
    request_ids: Iterator[int] = dataclasses.field(default_factory=lambda: itertools.count(1))

    def next_request_id(self) -> str:
        return f"req_{next(self.request_ids):06d}"

    def enqueue(self, task_id: str) -> None:
        """Hand a new task to the runner (when the app runs tasks itself)."""
        if self.runner is not None:
            self.runner.enqueue(task_id)


def served(request: HTTPConnection) -> Served:
    state: Served = request.app.state.served
    return state


# -- authentication ---------------------------------------------------------------------------


class ApiKeys(AuthenticationBackend):
    """Bearer API keys to actors; each actor's scopes from ``permissions`` (default: all)."""

    def __init__(
        self, keys: Mapping[str, str], permissions: Mapping[str, frozenset[str]] | None = None
    ) -> None:
        self._keys = [(key.encode(), actor) for key, actor in keys.items()]
        self._permissions = dict(permissions or {})

    def actor(self, authorization: str) -> str | None:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        presented = token.strip().encode()
        actor = None
        for key, who in self._keys:  # constant time per key, and no early exit
            if hmac.compare_digest(key, presented):
                actor = who
        return actor

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        actor = self.actor(conn.headers.get("authorization", ""))
        if actor is None:
            return None
        return AuthCredentials(sorted(self._permissions.get(actor, ALL_SCOPES))), SimpleUser(actor)


def _json(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def _error(envelope: ErrorEnvelope, request_id: str, headers: Mapping[str, str] | None = None) -> Response:
    body = dataclasses.replace(envelope, request_id=request_id)
    return _json(body.to_dict(), body.http_status, {"Request-Id": request_id, **(headers or {})})


def _refusal(request: Request, scope: str) -> tuple[ErrorEnvelope, dict[str, str]] | None:
    """Why this request may not reach a ``scope`` route (version, then key, then scope)."""
    version = request.headers.get(VERSION_HEADER)
    if version not in SUPPORTED_VERSIONS:
        envelope = ErrorEnvelope.of(
            "unsupported_protocol_version",
            f"send {VERSION_HEADER}: one of {', '.join(SUPPORTED_VERSIONS)}"
            + ("" if version is None else " (this version is not supported)"),
            param=VERSION_HEADER,
            details={"supported_versions": list(SUPPORTED_VERSIONS)},
        )
        return envelope, {"Upgrade": PROTOCOL_VERSION}
    if not request.user.is_authenticated:
        envelope = ErrorEnvelope.of(
            "unauthenticated", "missing or invalid API key (Authorization: Bearer <api-key>)"
        )
        return envelope, {"WWW-Authenticate": "Bearer"}
    if scope not in request.auth.scopes:
        envelope = ErrorEnvelope.of(
            "permission_denied",
            f"actor {request.user.display_name!r} lacks the {scope} permission",
            details={"scope": scope},
        )
        return envelope, {}
    return None


def requires(scope: str) -> Callable[[Handler], Endpoint]:
    """A route handler ``(request, actor)`` behind the version, key and ``scope`` checks; its
    :class:`ProtocolError` becomes the spec's envelope, any other exception ``internal_error``."""

    def wrap(handler: Handler) -> Endpoint:
        @functools.wraps(handler)
        async def endpoint(request: Request) -> Response:
            request_id = served(request).next_request_id()
            refused = _refusal(request, scope)
            if refused is not None:
                return _error(refused[0], request_id, refused[1])
            try:
                response = await handler(request, request.user.display_name)
            except ProtocolError as exc:
                return _error(exc.envelope, request_id)
            except Exception as exc:
                sys.stderr.write(f"harn protocol: {request_id}: {type(exc).__name__}: {exc}\n")
                return _error(ErrorEnvelope.of("internal_error", "unexpected Harness failure"), request_id)
            response.headers["Request-Id"] = request_id
            response.headers[VERSION_HEADER] = PROTOCOL_VERSION
            return response

        return endpoint

    return wrap


# -- request helpers --------------------------------------------------------------------------


async def _read_body(request: Request) -> Any:
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
        raise ProtocolError.invalid(f"the request body is not valid JSON: {reason}", param="body") from None
    if deepjson.depth(body) > MAX_BODY_DEPTH:
        raise ProtocolError.invalid(
            f"the request body is nested deeper than {MAX_BODY_DEPTH} levels", param="body"
        )
    return body


def _cursor(raw: str | None) -> int:
    if raw is None or raw == "":
        return 0
    if not raw.isdigit():
        raise ProtocolError(
            ErrorEnvelope.of(
                "cursor_expired", f"{raw!r} is not an event cursor this Harness issued", param="Last-Event-ID"
            )
        )
    return int(raw)


def _key(request: Request) -> str | None:
    return request.headers.get("idempotency-key")


def _created(status: int, resource: Mapping[str, Any], replayed: bool, location: str) -> Response:
    headers = {"Location": location}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return _json(resource, status, headers)


def _sse_frame(event: Mapping[str, Any]) -> str:
    return f"id: {event['id']}\nevent: {event['event']}\ndata: {orjson.dumps(event).decode()}\n\n"


def _sse_error(envelope: ErrorEnvelope) -> str:
    return f"event: error\ndata: {orjson.dumps(envelope.to_dict()).decode()}\n\n"


def _sse(
    request: Request,
    check: Callable[[int], None],
    read: Callable[[int], list[dict[str, Any]]],
    done: Callable[[], bool],
) -> Response:
    """An SSE stream of ``read(after)`` from the client's ``Last-Event-ID``, until ``done()``."""
    state = served(request)
    problem: ErrorEnvelope | None = None
    position = 0
    try:
        position = _cursor(request.headers.get("last-event-id") or request.query_params.get("last_event_id"))
        check(position)
    except ProtocolError as exc:
        problem = exc.envelope

    async def frames() -> AsyncIterator[str]:
        nonlocal position
        if problem is not None:
            yield _sse_error(problem)  # a clear error, then close: never pretend continuity
            return
        with state.bus.subscribe() as wake:
            while True:
                wake.clear()
                finished = done()
                for event in read(position):
                    yield _sse_frame(event)
                    position = int(event["id"])
                if finished:
                    return
                try:
                    await asyncio.wait_for(wake.wait(), state.heartbeat_s)
                except TimeoutError:
                    yield ": heartbeat\n\n"

    return StreamingResponse(frames(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})


# -- routes -----------------------------------------------------------------------------------


async def card(request: Request) -> Response:
    return _json(agent_card(str(request.base_url).rstrip("/")))


async def submit(request: Request, actor: str) -> Response:
    state = served(request)
    status, task, replayed = state.harness.tasks.submit(actor, await _read_body(request), _key(request))
    if not replayed:
        state.enqueue(task["id"])
    return _created(status, task, replayed, f"/v1/tasks/{task['id']}")


async def list_tasks(request: Request, actor: str) -> Response:
    q = request.query_params
    limit_raw = q.get("limit", "50")
    if not limit_raw.isdigit() or not 1 <= int(limit_raw) <= 500:
        raise ProtocolError.invalid("limit must be an integer from 1 to 500", param="limit")
    listing = served(request).harness.tasks.find(
        actor,
        status=q.get("status"),
        session_id=q.get("session_id"),
        limit=int(limit_raw),
        after=q.get("after"),
    )
    return _json(listing)


def reader(kind: str, param: str) -> Handler:
    """``GET`` one resource of ``kind`` named by the path parameter ``param``."""

    async def read(request: Request, actor: str) -> Response:
        return _json(served(request).harness.get(actor, kind, request.path_params[param]))

    read.__name__ = f"read_{kind}"
    return read


async def cancel(request: Request, actor: str) -> Response:
    body = await _read_body(request)
    reason = body.get("reason") if isinstance(body, Mapping) else None
    task_id = request.path_params["task_id"]
    return _json(
        served(request).harness.tasks.cancel(actor, task_id, reason if isinstance(reason, str) else None)
    )


async def task_events(request: Request, actor: str) -> Response:
    after = _cursor(request.query_params.get("after"))
    return _json(served(request).harness.tasks.events(actor, request.path_params["task_id"], after=after))


async def task_stream(request: Request, actor: str) -> Response:
    harness = served(request).harness
    task_id = request.path_params["task_id"]
    harness.get(actor, "task", task_id)  # 404 before the stream opens
    return _sse(
        request,
        lambda after: harness.ledger.check_cursor(task_id, after),
        lambda after: harness.store.events_for_task(task_id, after=after),
        lambda: harness.tasks.is_terminal(task_id),
    )


def _task_link(request: Request, actor: str, field: str, what: str) -> str:
    task = served(request).harness.get(actor, "task", request.path_params["task_id"])
    if not task.get(field):
        raise ProtocolError(
            ErrorEnvelope.of("resource_not_found", f"task {task['id']} has no {what} yet", param="task_id")
        )
    return str(task[field])


async def task_outcome(request: Request, actor: str) -> Response:
    outcome_id = _task_link(request, actor, "outcome_id", "outcome")
    return _json(served(request).harness.get(actor, "outcome", outcome_id))


async def task_receipt(request: Request, actor: str) -> Response:
    receipt_id = _task_link(request, actor, "receipt_id", "receipt")
    return _json(served(request).harness.receipts.get(actor, receipt_id))


async def replay_task_route(request: Request, actor: str) -> Response:
    state = served(request)
    body = await _read_body(request)
    status, task, replayed = create_task_replay(
        state.harness, actor, request.path_params["task_id"], body, _key(request)
    )
    if not replayed:
        state.enqueue(task["id"])
    return _created(status, task, replayed, f"/v1/tasks/{task['id']}")


async def create_session(request: Request, actor: str) -> Response:
    body = await _read_body(request)
    status, session, replayed = served(request).harness.sessions.create(actor, body, _key(request))
    return _created(status, session, replayed, f"/v1/sessions/{session['id']}")


async def session_messages(request: Request, actor: str) -> Response:
    return _json(served(request).harness.sessions.messages(actor, request.path_params["session_id"]))


async def append_message(request: Request, actor: str) -> Response:
    body = await _read_body(request)
    sessions = served(request).harness.sessions
    status, message, replayed = sessions.append(actor, request.path_params["session_id"], body, _key(request))
    return _created(status, message, replayed, f"/v1/messages/{message['id']}")


async def close_session(request: Request, actor: str) -> Response:
    return _json(served(request).harness.sessions.close(actor, request.path_params["session_id"]))


async def session_events(request: Request, actor: str) -> Response:
    after = _cursor(request.query_params.get("after"))
    return _json(
        served(request).harness.sessions.events(actor, request.path_params["session_id"], after=after)
    )


async def session_stream(request: Request, actor: str) -> Response:
    harness = served(request).harness
    session_id = request.path_params["session_id"]
    harness.get(actor, "session", session_id)
    return _sse(
        request,
        harness.ledger.check_issued,
        lambda after: harness.store.events_for_session(session_id, after=after),
        lambda: harness.sessions.settled(session_id),
    )


async def replay_session_route(request: Request, actor: str) -> Response:
    body = await _read_body(request)
    harness = served(request).harness
    status, session, replayed = create_session_replay(
        harness, actor, request.path_params["session_id"], body, _key(request)
    )
    return _created(status, session, replayed, f"/v1/sessions/{session['id']}")


async def receipt(request: Request, actor: str) -> Response:
    return _json(served(request).harness.receipts.get(actor, request.path_params["receipt_id"]))


async def receipt_verification(request: Request, actor: str) -> Response:
    return _json(served(request).harness.receipts.verify(actor, request.path_params["receipt_id"]))


async def verify_posted(request: Request, actor: str) -> Response:
    body = await _read_body(request)
    receipts = body.get("receipts") if isinstance(body, Mapping) else None
    if not isinstance(receipts, list) or not receipts:
        raise ProtocolError.invalid("receipts must be a non-empty array", param="receipts")
    last = receipts[-1] if isinstance(receipts[-1], Mapping) else {}
    chain = last.get("chain")
    receipt_hash = chain.get("receipt_hash") if isinstance(chain, Mapping) else None
    return _json(verification(receipts, last.get("receipt_id"), receipt_hash))


async def unrouted(request: Request, exc: Exception) -> Response:
    """Starlette's 404/405 (and other HTTP errors) as envelopes."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    code = "resource_not_found" if status == 404 else "invalid_request" if status < 500 else "internal_error"
    request_id = served(request).next_request_id()
    message = (
        f"{request.method} {request.url.path}: not a route of this Harness"
        if status in (404, 405)
        else "request failed"
    )
    envelope = ErrorEnvelope.of(code, message, request_id=request_id)
    return _json(envelope.to_dict(), status, {"Request-Id": request_id})


def _route(path: str, scope: str, handler: Handler, method: str) -> Route:
    return Route(path, requires(scope)(handler), methods=[method])


ROUTES: list[Route] = [
    Route("/.well-known/harn-agent-card.json", card, methods=["GET"]),
    Route("/v1/agent-card", card, methods=["GET"]),
    _route("/v1/tasks", "tasks:write", submit, "POST"),
    _route("/v1/tasks", "tasks:read", list_tasks, "GET"),
    _route("/v1/tasks/{task_id}", "tasks:read", reader("task", "task_id"), "GET"),
    _route("/v1/tasks/{task_id}/cancel", "tasks:write", cancel, "POST"),
    _route("/v1/tasks/{task_id}/events", "events:read", task_events, "GET"),
    _route("/v1/tasks/{task_id}/stream", "events:read", task_stream, "GET"),
    _route("/v1/tasks/{task_id}/outcome", "tasks:read", task_outcome, "GET"),
    _route("/v1/tasks/{task_id}/receipt", "receipts:read", task_receipt, "GET"),
    _route("/v1/tasks/{task_id}/replay", "tasks:write", replay_task_route, "POST"),
    _route("/v1/sessions", "sessions:write", create_session, "POST"),
    _route("/v1/sessions/{session_id}", "sessions:read", reader("session", "session_id"), "GET"),
    _route("/v1/sessions/{session_id}/messages", "sessions:read", session_messages, "GET"),
    _route("/v1/sessions/{session_id}/messages", "sessions:write", append_message, "POST"),
    _route("/v1/sessions/{session_id}/close", "sessions:write", close_session, "POST"),
    _route("/v1/sessions/{session_id}/events", "events:read", session_events, "GET"),
    _route("/v1/sessions/{session_id}/stream", "events:read", session_stream, "GET"),
    _route("/v1/sessions/{session_id}/replay", "sessions:write", replay_session_route, "POST"),
    _route("/v1/messages/{message_id}", "sessions:read", reader("message", "message_id"), "GET"),
    _route("/v1/artifacts/{artifact_id}", "artifacts:read", reader("artifact", "artifact_id"), "GET"),
    _route("/v1/outcomes/{outcome_id}", "tasks:read", reader("outcome", "outcome_id"), "GET"),
    _route("/v1/receipts/verify", "receipts:read", verify_posted, "POST"),
    _route("/v1/receipts/{receipt_id}", "receipts:read", receipt, "GET"),
    _route("/v1/receipts/{receipt_id}/verification", "receipts:read", receipt_verification, "GET"),
]
"""Every route of the Harness: path, scope, handler (one table, in the order of docs/protocol.md)."""


@contextlib.asynccontextmanager
async def _lifespan(app: Starlette) -> AsyncIterator[None]:
    runner: TaskRunner | None = app.state.served.runner
    if runner is not None:
        runner.start()
    try:
        yield
    finally:
        if runner is not None:
            runner.stop()


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
    harness.ledger.add_listener(bus.publish)
    state = Served(harness, bus, TaskRunner(harness) if auto_run else None, heartbeat_s)

    def refuse(status: int, kind: str, message: str) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        """The guard's refusals as envelopes: 403 for a foreign Origin or Host, 413 for a body."""
        request_id = state.next_request_id()
        code = "payload_too_large" if kind == "body" else "permission_denied"
        envelope = ErrorEnvelope.of(code, message, request_id=request_id)
        headers = [(b"content-type", b"application/json"), (b"request-id", request_id.encode())]
        return envelope.http_status, orjson.dumps(envelope.to_dict()), headers

    # Embedded (a test client, another server): the Host it is reached by is unknown, so only
    # ``serve`` (which knows its socket) checks Host.
    guard = guard or GuardSettings(max_body_bytes=MAX_BODY_BYTES, check_host=False)
    app = Starlette(
        routes=ROUTES,
        exception_handlers={HTTPException: unrouted},
        lifespan=_lifespan,
        middleware=[
            *guard_middleware(guard, refuse),
            Middleware(AuthenticationMiddleware, backend=ApiKeys(api_keys, permissions)),
        ],
    )
    app.state.served = state
    app.state.harness = harness
    app.state.store = store
    app.state.runner = state.runner
    return app
