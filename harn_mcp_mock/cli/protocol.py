"""`harn protocol ...`: the Harn Agents Protocol v1 mock Harness (one thin function per command).

``serve`` opens the SQLite store, binds 127.0.0.1 (port 0 picks a free port), prints the base
URL as the first line of stdout, and serves REST + SSE until interrupted. API keys come from
``--api-key KEY`` (the whole value is the key, never split: base64 ``=`` padding, ``:``, ``+``,
``/`` are key characters; its actor is ``actor_N``), ``--api-key-for ACTOR=KEY`` (split at the
first ``=``; ACTOR is ``[A-Za-z0-9_.-]+``) and ``HARN_PROTOCOL_API_KEYS`` (comma-separated
entries of the ``--api-key-for`` form, or bare keys without any ``=``; keeps keys out of the
process list). A key shorter than 16 characters is refused. Keys are never printed or logged.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

import typer

from harn_mcp_mock.cli._common import handle_errors, note
from harn_mcp_mock.cli._help import HarnGroup
from harn_mcp_mock.cli._http_opts import AllowHostOpt, AllowOriginOpt, MaxBodyOpt
from harn_mcp_mock.errors import UsageError, check_number

PROG = "harn protocol"
DEFAULT_DB = ".harn-protocol.sqlite3"
KEYS_ENV = "HARN_PROTOCOL_API_KEYS"
MIN_KEY_LENGTH = 16
_ACTOR = re.compile(r"[A-Za-z0-9_.-]+")

app = typer.Typer(
    cls=HarnGroup,
    help="Harn Agents Protocol v1: a mock Harness (REST + SSE, SQLite-durable, scripted agent).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _group() -> None:
    """Harn Agents Protocol v1 tools."""


PortOpt = Annotated[int, typer.Option("--port", help="TCP port on 127.0.0.1 (0 picks a free one).")]
DbOpt = Annotated[Path, typer.Option("--db", help=f"SQLite file (default {DEFAULT_DB}).")]
KeyOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--api-key",
        metavar="KEY",
        help="An API key, taken whole (never split; actor actor_N; repeatable); also $HARN_PROTOCOL_API_KEYS.",
    ),
]
KeyForOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--api-key-for",
        metavar="ACTOR=KEY",
        help="ACTOR=KEY: an API key for a named actor (split at the first '='; repeatable).",
    ),
]
WorldRootOpt = Annotated[
    Path | None,
    typer.Option("--world-root", help="Folder task inputs' world paths are relative to (default .)."),
]


def parse_api_keys(
    keys: list[str], keys_for: list[str] | None = None, env_entries: list[str] | None = None
) -> dict[str, str]:
    """``--api-key`` values (whole keys), ``--api-key-for`` values and ``$HARN_PROTOCOL_API_KEYS``
    entries (``ACTOR=KEY``) -> ``{key: actor}``; a bare key's actor is ``actor_N``.

    An env entry without ``=`` is a bare key. Raises a one-line UsageError (never quoting a key)
    for an empty or short key or a bad actor name.
    """
    out: dict[str, str] = {}
    count = 0

    def add(key: str, actor: str | None, where: str) -> None:
        nonlocal count
        count += 1
        if len(key) < MIN_KEY_LENGTH:
            raise UsageError(
                f"API key is {'empty' if not key else f'{len(key)} characters'}: "
                f"use at least {MIN_KEY_LENGTH} (e.g. `openssl rand -base64 24`)",
                where=where,
            )
        out[key] = actor or f"actor_{count}"

    def add_for(value: str, where: str) -> None:
        actor, sep, key = value.partition("=")
        if not sep or not _ACTOR.fullmatch(actor):
            raise UsageError(
                "expected ACTOR=KEY with ACTOR made of letters, digits, '_', '.', '-'", where=where
            )
        add(key, actor, where)

    for index, value in enumerate(keys, start=1):
        add(value, None, f"--api-key #{index}")
    for index, value in enumerate(keys_for or [], start=1):
        add_for(value, f"--api-key-for #{index}")
    for index, value in enumerate(env_entries or [], start=1):
        where = f"${KEYS_ENV} entry {index}"
        if "=" in value:
            add_for(value, where)
        else:
            add(value, None, where)
    return out


def _old_style(values: list[str]) -> bool:
    """Whether an ``--api-key`` value looks like the ``ACTOR=KEY`` form it took before 0.2."""
    return any(re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]*=[^=].*", v) for v in values)


@app.command("serve")
def serve_cmd(
    port: PortOpt = 0,
    db: DbOpt = Path(DEFAULT_DB),
    api_key: KeyOpt = None,
    api_key_for: KeyForOpt = None,
    world_root: WorldRootOpt = None,
    allow_origin: AllowOriginOpt = None,
    allow_host: AllowHostOpt = None,
    max_body_bytes: MaxBodyOpt = None,
) -> None:
    """Serve the Harness; the first stdout line is its base URL."""
    with handle_errors(PROG):
        env_entries = [e.strip() for e in os.environ.get(KEYS_ENV, "").split(",") if e.strip()]
        keys = parse_api_keys(list(api_key or []), list(api_key_for or []), env_entries)
        if not keys:
            raise UsageError(
                f"no API key: pass --api-key KEY, --api-key-for ACTOR=KEY or set ${KEYS_ENV}",
                where="--api-key",
            )
        if _old_style(list(api_key or [])):
            note(PROG, "--api-key takes the whole value as the key; for ACTOR=KEY use --api-key-for")
        from harn_mcp_mock.agents.server.app import MAX_BODY_BYTES
        from harn_mcp_mock.agents.server.serve import serve
        from harn_mcp_mock.http.guard import GuardSettings

        guard = GuardSettings.for_host(
            "127.0.0.1",
            allow_origins=allow_origin or [],
            allow_hosts=allow_host or [],
            max_body_bytes=MAX_BODY_BYTES if max_body_bytes is None else max_body_bytes,
        )

        note(PROG, f"store {db}; {len(keys)} API key(s) for {len(set(keys.values()))} actor(s)")
        try:
            serve(db=db, api_keys=keys, port=port, world_root=world_root, guard=guard)
        except KeyboardInterrupt:
            pass


ConformLevelOpt = Annotated[
    str, typer.Option("--level", help="core, receipts (core+receipts), replay (core+replay) or all.")
]
ConformFormatOpt = Annotated[str, typer.Option("--format", help="table or json (stdout).")]


@app.command("conform", short_help="Check a Harness against the spec's MUSTs.")
def conform_cmd(
    url: Annotated[
        str | None, typer.Option("--url", help="The Harness base URL, e.g. http://127.0.0.1:8080.")
    ] = None,
    api_key: Annotated[
        str | None, typer.Option("--api-key", help="The bearer API key (or $HARN_PROTOCOL_API_KEY).")
    ] = None,
    level: ConformLevelOpt = "core",
    fmt: ConformFormatOpt = "table",
    report: Annotated[Path | None, typer.Option("--report", help="Also write the JSON report here.")] = None,
    check: Annotated[
        list[str] | None, typer.Option("--check", help="Run only checks whose id matches (glob; repeatable).")
    ] = None,
    task_input: Annotated[
        str | None,
        typer.Option("--task-input", help='Task input JSON (default {"text": "conformance probe"}).'),
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds a task may take to finish.")] = 10.0,
    list_checks: Annotated[bool, typer.Option("--list", help="List the checks and exit.")] = False,
) -> None:
    """Check a Harness against the spec's MUSTs; exit 0 conforms, 1 a check failed, 2 usage/unreachable."""
    with handle_errors(PROG):
        from harn_mcp_mock.agents.conform import (
            LEVELS,
            Settings,
            render_json,
            render_list,
            render_table,
            run_conformance,
        )

        exit_code = 0
        if list_checks:
            typer.echo(render_list(), nl=False)
            return
        if fmt not in ("table", "json"):
            raise UsageError(f"unknown format {fmt!r} (use table or json)", where="--format")
        if level not in LEVELS:
            raise UsageError(f"unknown level {level!r} (use one of {', '.join(LEVELS)})", where="--level")
        if not url:
            raise UsageError("pass the Harness base URL with --url", where="--url")
        key = api_key or os.environ.get("HARN_PROTOCOL_API_KEY", "")
        if not key:
            raise UsageError("pass --api-key KEY or set $HARN_PROTOCOL_API_KEY", where="--api-key")
        check_number("--timeout", timeout, "a number of seconds above 0")
        if report is not None:
            from harn_mcp_mock.store.cas import check_writable

            check_writable(report)  # before the checks run, not after
        settings = Settings(url=url, api_key=key, task_timeout=timeout)
        if task_input is not None:
            settings = Settings(
                url=url, api_key=key, task_input=_task_input(task_input), task_timeout=timeout
            )
        result = run_conformance(settings, level=level, patterns=check or ())
        text = render_json(result) if fmt == "json" else render_table(result)
        typer.echo(text, nl=False)
        if report is not None:
            from harn_mcp_mock.store.cas import atomic_write

            atomic_write(report, render_json(result).encode())  # an OutputError: one line, exit 2
        exit_code = result.exit_code
    if exit_code:  # outside handle_errors: it reads typer.Exit as an internal error
        raise typer.Exit(exit_code)


def _task_input(raw: str) -> dict[str, object]:
    import json

    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"not JSON: {exc.msg}", where="--task-input") from None
    if not isinstance(value, dict):
        raise UsageError("the task input must be a JSON object", where="--task-input")
    return value
