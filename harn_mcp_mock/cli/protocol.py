"""`harn protocol ...`: the Harn Agents Protocol v1 mock Harness (one thin function per command).

``serve`` opens the SQLite store, binds 127.0.0.1 (port 0 picks a free port), prints the base
URL as the first line of stdout, and serves REST + SSE until interrupted. API keys come from
``--api-key [ACTOR=]KEY`` (repeatable) and from ``HARN_PROTOCOL_API_KEYS`` (comma-separated, same
form; keeps keys out of the process list). Keys are never printed or logged.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from harn_mcp_mock.cli._common import handle_errors, note
from harn_mcp_mock.errors import UsageError

PROG = "harn protocol"
DEFAULT_DB = ".harn-protocol.sqlite3"
KEYS_ENV = "HARN_PROTOCOL_API_KEYS"

app = typer.Typer(
    help="Harn Agents Protocol v1: a mock Harness (REST + SSE, SQLite-durable, scripted agent).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _group() -> None:
    """Harn Agents Protocol v1 tools."""


PortOpt = Annotated[int, typer.Option("--port", help="TCP port on 127.0.0.1 (0 picks a free one).")]
DbOpt = Annotated[Path, typer.Option("--db", help=f"SQLite file (default {DEFAULT_DB}).")]
KeyOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--api-key", help="An API key, KEY or ACTOR=KEY (repeatable); also $HARN_PROTOCOL_API_KEYS."
    ),
]
WorldRootOpt = Annotated[
    Path | None,
    typer.Option("--world-root", help="Folder task inputs' world paths are relative to (default .)."),
]


def parse_api_keys(values: list[str]) -> dict[str, str]:
    """``KEY`` or ``ACTOR=KEY`` entries -> ``{key: actor}`` (a bare key's actor is ``actor_N``)."""
    keys: dict[str, str] = {}
    for index, value in enumerate(values, start=1):
        actor, sep, key = value.partition("=")
        if not sep:
            actor, key = f"actor_{index}", value
        if not key or not actor:
            raise UsageError(f"API key #{index} is empty (use KEY or ACTOR=KEY)", where="--api-key")
        keys[key] = actor
    return keys


@app.command("serve")
def serve_cmd(
    port: PortOpt = 0,
    db: DbOpt = Path(DEFAULT_DB),
    api_key: KeyOpt = None,
    world_root: WorldRootOpt = None,
) -> None:
    """Serve the Harness; the first stdout line is its base URL."""
    with handle_errors(PROG):
        entries = list(api_key or [])
        entries += [e.strip() for e in os.environ.get(KEYS_ENV, "").split(",") if e.strip()]
        keys = parse_api_keys(entries)
        if not keys:
            raise UsageError(f"no API key: pass --api-key [ACTOR=]KEY or set ${KEYS_ENV}", where="--api-key")
        from harn_mcp_mock.protocol.server.serve import serve

        note(PROG, f"store {db}; {len(keys)} API key(s) for {len(set(keys.values()))} actor(s)")
        try:
            serve(db=db, api_keys=keys, port=port, world_root=world_root)
        except KeyboardInterrupt:
            pass
