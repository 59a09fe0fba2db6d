"""The one way tests run an ASGI app: ``HttpServer`` (uvicorn) on 127.0.0.1:0, in a thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harn_mcp_mock.http.replay_server import HttpServer

READY_TIMEOUT_S = 30


@contextmanager
def server_in_thread(app: Any, **server_options: Any) -> Iterator[str]:
    """Serve ``app`` (``server_options`` go to ``HttpServer``: ``lifespan="on"``, ``path``...)
    until the block ends; yields the URL. Waits are bounded; the thread must stop."""
    server = HttpServer(app, **server_options)
    ready = threading.Event()
    urls: list[str] = []

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    thread = threading.Thread(target=server.run, kwargs={"on_ready": on_ready}, daemon=True)
    thread.start()
    assert ready.wait(READY_TIMEOUT_S), "the server never became ready"
    try:
        yield urls[0]
    finally:
        server.stop()
        thread.join(READY_TIMEOUT_S)
        assert not thread.is_alive(), "the server did not stop"
