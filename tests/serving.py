"""How tests serve HTTP: an ASGI app in a thread (``server_in_thread``), or the CLI as a child
process that prints its URL (``url_process``); both on 127.0.0.1:0, always stopped."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harn_mcp_mock.http.server import HttpServer

READY_TIMEOUT_S = 30
HARN = [sys.executable, "-m", "harn_mcp_mock"]


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


@contextmanager
def url_process(args: list[str]) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``harn mcp mock ARGS`` printing its URL as stdout's first line; always reaped."""
    proc = subprocess.Popen([*HARN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout and proc.stderr
    try:
        url = proc.stdout.readline().decode().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read()
        yield proc, url
    finally:
        proc.kill()
        proc.wait(timeout=READY_TIMEOUT_S)
        proc.stdout.close()
        proc.stderr.close()
