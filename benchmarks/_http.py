"""Shared by the HTTP benchmarks: start a server subprocess that prints its URL, serve a
baseline ASGI app the way our servers run, and drive N keep-alive workers over a request list."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
HARN = (
    [str(BIN / "harn-mcp-mock")]
    if (BIN / "harn-mcp-mock").exists()
    else [sys.executable, "-m", "harn_mcp_mock"]
)
"""How the benchmarks start `harn mcp mock`: the venv's console script, else `python -m`."""


def start(argv: list[str], env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``argv`` (in ``env``, ours when None); its first stdout line must be its URL."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    url = proc.stdout.readline().decode().strip()
    if not url.startswith("http://"):
        proc.kill()
        raise SystemExit(f"the server did not print its URL: {argv}")
    return proc, url


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(10)


def serve_app(app: Any) -> None:
    """Serve a baseline app under the same uvicorn settings as ``replay --http`` (prints its URL)."""
    from harn_mcp_mock.http.server import HttpServer

    try:
        HttpServer(app).run()
    except KeyboardInterrupt:
        pass


async def hammer(count: int, connections: int, send: Callable[[int], Awaitable[bool]]) -> tuple[float, int]:
    """``send(k)`` for k in range(count) from ``connections`` concurrent workers:
    (requests per second, how many answered False)."""
    errors = 0
    next_index = 0

    async def worker() -> None:
        nonlocal errors, next_index
        while next_index < count:
            k = next_index
            next_index += 1
            if not await send(k):
                errors += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(connections)))
    return count / (time.perf_counter() - started), errors
