"""``serve``: the Harness on a loopback socket (uvicorn), base URL printed once it listens."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from harn_mcp_mock.agents.db import ProtocolStore
from harn_mcp_mock.clock import SYSTEM_CLOCK, Clock
from harn_mcp_mock.http.guard import GuardSettings

__all__ = ["serve"]


def _print_url(url: str) -> None:
    sys.stdout.write(url + "\n")
    sys.stdout.flush()


def _default_guard(host: str) -> GuardSettings:
    from harn_mcp_mock.agents.server.app import MAX_BODY_BYTES

    return GuardSettings.for_host(host, max_body_bytes=MAX_BODY_BYTES)


def serve(
    *,
    db: str | Path,
    api_keys: Mapping[str, str],
    host: str = "127.0.0.1",
    port: int = 0,
    world_root: Path | None = None,
    clock: Clock = SYSTEM_CLOCK,
    on_ready: Callable[[str], None] | None = None,
    guard: GuardSettings | None = None,
) -> None:
    """Serve until interrupted. The socket is bound before ``on_ready(base_url)`` (port 0 picks
    a free port), so a client that connects right after it waits in the backlog."""
    from harn_mcp_mock.agents.server.app import create_app
    from harn_mcp_mock.http.server import HttpServer

    store = ProtocolStore(db, clock=clock)
    try:
        app = create_app(
            store, api_keys, clock, world_root=world_root, auto_run=True, guard=guard or _default_guard(host)
        )
        server = HttpServer(app, host=host, port=port, path="", lifespan="on")
        server.run(on_ready or _print_url)
    finally:
        store.close()
