"""Harnesses for the conformance tests: the real mock app on a uvicorn thread, optionally wrapped.

``serve(app)`` runs an ASGI app on 127.0.0.1:0 and yields its URL. ``Rewrite`` is a small ASGI
wrapper that changes requests and/or buffered JSON responses, to build deliberately broken
Harnesses around ``create_app`` without touching the server code. ``gate_runner`` makes the
mock's agent wait (bounded) until the client's next request, so a cancel or a replay of a
just-submitted task deterministically meets it non-terminal.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock.agents.db import ProtocolStore
from harn_mcp_mock.agents.server import create_app
from harn_mcp_mock.clock import PausedClock
from tests.serving import server_in_thread

KEY = "conform-key-s3cr3t"
READY_TIMEOUT_S = 10.0
GATE_TIMEOUT_S = 10.0

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ResponseHook = Callable[[Scope, int, Any], tuple[int, Any]]


def mock_app(db: Path) -> tuple[Any, ProtocolStore]:
    clock = PausedClock()
    store = ProtocolStore(db, clock=clock)
    return create_app(store, {KEY: "alice"}, clock, auto_run=True), store


def serve(app: Any) -> AbstractContextManager[str]:
    return server_in_thread(app, path="", lifespan="on")


@contextmanager
def serve_mock(db: Path, wrap: Callable[[Any], Any] | None = None) -> Iterator[str]:
    app, store = mock_app(db)
    try:
        with serve(wrap(app) if wrap else app) as url:
            yield url
    finally:
        store.close()


class Rewrite:
    """``request(scope)`` may change the scope (headers); ``response(scope, status, json)`` may
    change a buffered JSON response (event streams pass through untouched)."""

    def __init__(
        self,
        app: Any,
        *,
        request: Callable[[Scope], Scope] | None = None,
        response: ResponseHook | None = None,
    ) -> None:
        self.app = app
        self.request = request
        self.response = response

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.request is not None:
            scope = self.request(scope)
        if self.response is None or scope["path"].endswith("/stream"):
            await self.app(scope, receive, send)
            return
        start: Message = {}
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            else:
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, capture)
        body = b"".join(chunks)
        try:
            status, data = self.response(scope, start["status"], orjson.loads(body) if body else None)
            body = orjson.dumps(data)
        except orjson.JSONDecodeError:
            status = start["status"]
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def header(scope: Scope, name: str) -> str | None:
    for k, v in scope.get("headers", []):
        if k.decode().lower() == name.lower():
            return str(v.decode())
    return None


def without_header(scope: Scope, name: str) -> Scope:
    return {**scope, "headers": [(k, v) for k, v in scope["headers"] if k.decode().lower() != name.lower()]}


class Gate:
    """Tasks run only after a request following their submission has been answered."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.generation = 0
        self.born: dict[str, int] = {}

    def install(self, app: Any) -> Any:
        runner, harness = app.state.runner, app.state.harness
        enqueue, run_task = runner.enqueue, harness.run_task

        def gated_enqueue(task_id: str) -> None:
            with self.cond:
                self.born[task_id] = self.generation
            enqueue(task_id)

        def gated_run(task_id: str, **kw: Any) -> Any:
            with self.cond:
                self.cond.wait_for(lambda: self.generation > self.born.get(task_id, -1), GATE_TIMEOUT_S)
            return run_task(task_id, **kw)

        runner.enqueue = gated_enqueue
        harness.run_task = gated_run
        return self.releasing(app)

    def release(self) -> None:
        with self.cond:
            self.generation += 1
            self.cond.notify_all()

    def releasing(self, app: Any) -> Any:
        async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or (scope["method"] == "POST" and scope["path"] == "/v1/tasks"):
                await app(scope, receive, send)
                return

            async def send_then_release(message: Message) -> None:
                if message["type"] == "http.response.body" and not message.get("more_body", False):
                    self.release()  # before the client can have the answer and send its next request
                await send(message)

            await app(scope, receive, send_then_release)

        return wrapped
