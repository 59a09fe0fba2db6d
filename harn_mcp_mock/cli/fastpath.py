"""Start-up fast path for the commands that must start fast (``replay``).

typer coerces every parameter through pydantic, which costs about 50 ms per process start,
more than everything else replay does before answering ``initialize``. A well-formed
``replay`` invocation is therefore parsed here with plain code from the table below and run
directly; anything else (``--help``, an unknown or malformed flag, another command) returns
``False`` and typer handles it, with its usual help and error messages. The table mirrors the
typer command's options exactly: ``tests/cli/test_main.py`` pins the two together.
"""

from __future__ import annotations

from pathlib import Path

from harn_mcp_mock import options

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

# flag -> (parameter name, kind): "str", "int", "path", "flag" (bool), "list" (repeatable str).
# The matching options come from harn_mcp_mock.options (REPLAY_FLAGS there), the rest are the
# command's own (where the cassette is, the mode, what to write, how to serve it).
REPLAY_FLAGS: dict[str, tuple[str, str]] = {
    "--cassette": ("cassette", "path"),
    "--mode": ("mode", "str"),
    "--strict": ("strict", "flag"),
    "--report": ("report", "path"),
    **options.REPLAY_FLAGS,
    "--emit-tape": ("emit_tape", "path"),
    "--http": ("http", "flag"),
    "--host": ("host", "str"),
    "--port": ("port", "int"),
    "--allow-remote": ("allow_remote", "flag"),
    "--allow-origin": ("allow_origin", "list"),
    "--allow-host": ("allow_host", "list"),
    "--max-body-bytes": ("max_body_bytes", "int"),
    "--session-idle-timeout": ("session_idle_timeout", "int"),
    "--max-sessions": ("max_sessions", "int"),
    "--url": ("url", "str"),
    "--header": ("header", "list"),
}


# `world` (not `world check`): its start-up must stay under 150 ms too
WORLD_FLAGS: dict[str, tuple[str, str]] = {
    "--spec": ("spec", "path"),
    "--task": ("task", "str"),
    **options.FAULT_FLAGS,
    "--state-out": ("state_out", "path"),
    "--report": ("report", "path"),
    "--emit-tape": ("emit_tape", "path"),
    "--tape": ("emit_tape", "path"),
}


def parse(argv: list[str], flags: dict[str, tuple[str, str]]) -> dict[str, Any] | None:
    """Options and the command after ``--``, or None if typer should handle this argv."""
    values: dict[str, Any] = {"command": []}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            values["command"] = argv[i + 1 :]
            return values
        name, _, inline = arg.partition("=")
        spec = flags.get(name)
        if spec is None:
            return None  # positional, unknown flag, --help: typer's job
        param, kind = spec
        if kind == "flag":
            if inline:
                return None
            values[param] = True
            i += 1
            continue
        if inline:
            value = inline
            i += 1
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            value = argv[i + 1]
            i += 2
        else:
            return None
        if kind == "list":
            values.setdefault(param, []).append(value)
        elif param in values:
            return None  # given twice: let typer decide
        elif kind == "int":
            if not value.lstrip("-").isdigit():
                return None  # typer says what is wrong
            values[param] = int(value)
        else:
            values[param] = Path(value) if kind == "path" else value
    return values


def run(argv: list[str]) -> int | None:
    """The exit code if the fast path handled ``argv`` (``[command, *args]``), else None."""
    if argv == ["--version"]:
        from harn_mcp_mock.cli._common import version_line

        print(version_line(), flush=True)
        return 0
    if argv[:1] == ["world"]:
        return _world(argv[1:])
    if not argv or argv[0] != "replay":
        return None
    values = parse(argv[1:], REPLAY_FLAGS)
    if values is None or "cassette" not in values:
        return None
    from harn_mcp_mock.cli.commands import replay_main

    cassette = values.pop("cassette")
    return replay_main(cassette, **values)


def _world(args: list[str]) -> int | None:
    values = parse(args, WORLD_FLAGS)
    if values is None or "spec" not in values or values.pop("command"):
        return None
    from harn_mcp_mock.cli.commands import world_main

    spec = values.pop("spec")
    return world_main(spec, **values)
