"""Start-up fast path for the commands spawned most: ``replay``, ``world``, ``record``, ``show``,
``verify``, ``lint``, ``world check``, ``eval``, ``run`` (the table ``COMMANDS`` below).

typer 0.29 coerces every parameter through pydantic: importing the typer apps and parsing one
command line costs about 0.2 s of CPU per process start, more than everything ``replay`` does
before answering ``initialize``, and more than the rest of a short ``record`` (which sits in front
of every server a test records). A well-formed invocation of one of these commands is
therefore parsed here with plain code from the command's flag table, and its body (a function of
``commands.py``, which the typer command calls too) is run directly. Anything else returns
``None`` and typer handles it, with its usual help and error messages: ``--help``, an unknown
flag, a missing required option, an option given twice, a value typer might read otherwise (an
int or float that is not plain ASCII digits, an existing path that cannot be read), an argument
where typer would stop reading options. So what the fast path accepts, typer reads the same way:
``tests/cli/test_main.py`` pins each table, required option, argument and default to the typer
command, compares both parsers on the same command lines and runs bad command lines on both
paths (same bytes, same exit code). ``benchmarks/bench_cli.py`` measures both paths.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from harn_mcp_mock import options

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# flag -> (typer parameter name, kind). Kinds: "str", "int", "float", "path", "flag" (bool),
# "list" (repeatable str), "paths" (repeatable path). A short alias is one more entry (-q).
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
    "--server": ("server", "str"),
}

RECORD_FLAGS: dict[str, tuple[str, str]] = {
    "--cassette": ("cassette", "path"),
    "--redact-policy": ("redact_policy", "path"),
    "--shutdown-timeout": ("shutdown_timeout", "float"),
    "--quiet": ("quiet", "flag"),
    "-q": ("quiet", "flag"),
    "--emit-tape": ("emit_tape", "path"),
    "--url": ("url", "str"),
    "--header": ("header", "list"),
    "--host": ("host", "str"),
    "--port": ("port", "int"),
    "--allow-remote": ("allow_remote", "flag"),
    "--allow-empty": ("allow_empty", "flag"),
    "--allow-origin": ("allow_origin", "list"),
    "--allow-host": ("allow_host", "list"),
    "--max-body-bytes": ("max_body_bytes", "int"),
}


def parse(
    argv: list[str], flags: dict[str, tuple[str, str]], *, interspersed: bool = False
) -> dict[str, Any] | None:
    """Options and the arguments (``command``: after ``--``, or anywhere if ``interspersed``), or
    None if typer should handle this argv."""
    values: dict[str, Any] = {"command": []}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            values["command"] += argv[i + 1 :]
            return values
        if interspersed and not arg.startswith("-"):
            values["command"].append(arg)
            i += 1
            continue
        name, eq, inline = arg.partition("=")
        spec = flags.get(name)
        if spec is None:
            return None  # an unknown flag, --help, an argument that ends typer's options
        param, kind = spec
        if kind == "flag":
            if eq:
                return None  # typer: "Option '--strict' does not take a value."
            values[param] = True
            i += 1
            continue
        if eq:
            text = inline
            i += 1
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            text = argv[i + 1]
            i += 2
        else:
            return None
        value = _value(text, kind)
        if value is None:
            return None  # typer says what is wrong with it
        if kind in ("list", "paths"):
            values.setdefault(param, []).append(value)
        elif param in values:
            return None  # given twice: let typer decide
        else:
            values[param] = value
    return values


def _value(text: str, kind: str) -> Any:
    """``text`` as typer would read it for ``kind``, or None where typer may read it otherwise."""
    if kind in ("str", "list"):
        return text
    if kind in ("path", "paths"):
        return _path(text)
    digits = text.removeprefix("-")
    whole, dot, fraction = digits.partition(".") if kind == "float" else (digits, "", "")
    plain = "0123456789"
    if (
        not whole
        or len(digits) > 15
        or whole.strip(plain)
        or (dot and (not fraction or fraction.strip(plain)))
    ):
        return None  # not plain ASCII digits: "+1", "1e3", "1_000", " 1", "inf", non-ASCII digits
    return float(text) if kind == "float" else int(text)


def _path(text: str) -> Path | None:
    """typer's Path option: refused (None) if it exists but cannot be read."""
    try:
        os.stat(text)
    except (OSError, ValueError):
        return Path(text)
    return Path(text) if os.access(text, os.R_OK) else None


SHOW_FLAGS: dict[str, tuple[str, str]] = {
    "--cassette": ("cassette", "path"),
    "--json": ("as_json", "flag"),
    "--format": ("fmt", "str"),
    "--out": ("out", "path"),
    **options.FAULT_FLAGS,
}

VERIFY_FLAGS: dict[str, tuple[str, str]] = {
    "--cassette": ("cassette", "path"),
    "--candidate": ("candidate", "path"),
    "--url": ("url", "str"),
    "--header": ("header", "list"),
    "--save-candidate": ("save_candidate", "path"),
    "--format": ("fmt", "str"),
    "--report": ("report", "path"),
    "--fail-on": ("fail_on", "str"),
    "--ignore-file": ("ignore_file", "path"),
    "--ignore-path": ("ignore_path", "list"),
    "--latency-ratio": ("latency_ratio", "float"),
    "--latency-floor-ms": ("latency_floor_ms", "float"),
    "--timeout": ("timeout", "float"),
    "--redact-policy": ("redact_policy", "path"),
}

LINT_FLAGS: dict[str, tuple[str, str]] = {
    "--format": ("fmt", "str"),
    "--report": ("report", "path"),
    "--fail-on": ("fail_on", "str"),
    "--max-age": ("max_age", "int"),
    "--config": ("config", "path"),
    "--usage": ("usage", "path"),
}

WORLD_CHECK_FLAGS: dict[str, tuple[str, str]] = {
    "--spec": ("spec", "path"),
    "--json": ("as_json", "flag"),
}

EVAL_FLAGS: dict[str, tuple[str, str]] = {
    "--spec": ("spec", "paths"),
    "--state": ("state", "paths"),
    "--task": ("task", "str"),
    "--faults": ("faults", "str"),
    "--k": ("k", "int"),
    "--format": ("fmt", "str"),
    "--report": ("report", "path"),
    "--confidence": ("confidence", "float"),
    "--power": ("power", "float"),
    "--alpha": ("alpha", "float"),
}

RUN_FLAGS: dict[str, tuple[str, str]] = {
    "--spec": ("spec", "paths"),
    "--task": ("task", "list"),
    "--k": ("k", "int"),
    "--seed": ("seed", "int"),
    "--faults": ("faults", "list"),
    "--workers": ("workers", "int"),
    "--out": ("out", "path"),
    "--timeout": ("timeout", "str"),
    "--grace": ("grace", "float"),
    "--output-cap": ("output_cap", "int"),
    "--preload": ("preload", "list"),
    "--sandbox": ("sandbox", "str"),
    "--max-retries": ("max_retries", "int"),
    "--min-pass-k": ("min_pass_k", "list"),
    "--min-pass-rate": ("min_pass_rate", "float"),
    "--force": ("force", "flag"),
    "--backend": ("backend", "str"),
    "--ray-address": ("ray_address", "str"),
    "--baseline": ("baseline", "path"),
    "--fail-on-regression": ("fail_on_regression", "flag"),
    "--strict-power": ("strict_power", "flag"),
    "--alpha": ("alpha", "float"),
    "--gate-on": ("gate_on", "str"),
    "--max-tokens": ("max_tokens", "int"),
    "--max-cost": ("max_cost", "float"),
    "--run-max-cost": ("run_max_cost", "float"),
    "--llm": ("llm", "str"),
    "--plan": ("plan", "flag"),
    "--verbose": ("verbose", "flag"),
    "--strict-exit": ("strict_exit", "flag"),
}


def _live(values: dict[str, Any]) -> options.LiveTarget:
    """The live server (its command, or ``--url`` and ``--header``, and ``--timeout``), out of
    ``values``, as the typer command builds it."""
    timeout = {"timeout": values.pop("timeout")} if "timeout" in values else {}
    return options.LiveTarget(
        values.pop("command", ()), values.pop("url", None), values.pop("header", ()), **timeout
    )


def _taken(values: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """The ``values`` given of the parameters ``names`` (parameter -> the value's field), taken out."""
    return {field: values.pop(param) for param, field in names.items() if param in values}


def _replay_values(values: dict[str, Any]) -> None:
    values["live"] = _live(values)
    fields = {name: name for name in options.ReplayOptions.names()}
    values["options"] = options.ReplayOptions.build(**_taken(values, fields))


def _record_values(values: dict[str, Any]) -> None:
    values["live"] = _live(values)
    names = {"redact_policy": "redact_policy", "shutdown_timeout": "grace", "allow_empty": "allow_empty"}
    values["options"] = options.RecordOptions(**_taken(values, names))


def _verify_values(values: dict[str, Any]) -> None:
    from harn_mcp_mock.verify.drift import VerifyOptions

    values["live"] = _live(values)
    names = {
        "ignore_path": "ignore_paths",
        "latency_ratio": "latency_ratio",
        "latency_floor_ms": "latency_floor_ms",
    }
    taken = _taken(values, names)
    taken["ignore_paths"] = tuple(taken.get("ignore_paths", ()))
    values["options"] = VerifyOptions(**taken)


class Command:
    """How the fast path runs one command: its flags, the options typer requires, the function
    of :mod:`harn_mcp_mock.cli.commands` that runs it (called with typer's parameter names, but
    those in ``rename``; ``values`` first turns the live server's flags and the options' into
    the values the typer command builds: a :class:`~harn_mcp_mock.options.LiveTarget` and the
    command's options), and its arguments (after ``--``, or anywhere if ``interspersed``)."""

    __slots__ = ("flags", "interspersed", "main", "rename", "required", "rest", "values")

    def __init__(
        self,
        flags: dict[str, tuple[str, str]],
        main: str,
        *,
        required: tuple[str, ...],
        rest: tuple[str, str] | None = None,
        interspersed: bool = False,
        rename: dict[str, str] | None = None,
        values: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.values = values
        self.flags = flags
        self.main = main
        self.required = required
        self.rest = rest  # (parameter, kind "list" or "paths"); None: the command takes none
        self.interspersed = interspersed  # typer reads arguments between options too
        self.rename = rename or {}


COMMANDS: dict[str, Command] = {
    "replay": Command(
        REPLAY_FLAGS, "replay_main", required=("cassette",), rest=("command", "list"), values=_replay_values
    ),
    "world": Command(WORLD_FLAGS, "world_main", required=("spec",)),
    "record": Command(
        RECORD_FLAGS, "record_main", required=("cassette",), rest=("command", "list"), values=_record_values
    ),
    "show": Command(SHOW_FLAGS, "show_main", required=("cassette",)),
    "verify": Command(
        VERIFY_FLAGS, "verify_main", required=("cassette",), rest=("command", "list"), values=_verify_values
    ),
    "lint": Command(LINT_FLAGS, "lint_main", required=(), rest=("paths", "paths"), interspersed=True),
    "world check": Command(WORLD_CHECK_FLAGS, "world_check_main", required=("spec",)),
    "run": Command(
        RUN_FLAGS, "run_main", required=(), rest=("agent", "list"), rename={"spec": "specs", "task": "tasks"}
    ),
    "eval": Command(
        EVAL_FLAGS, "eval_main", required=("spec", "state"), rename={"spec": "specs", "state": "states"}
    ),
}
"""Command (as typed after ``harn mcp mock``) -> how the fast path runs it."""

TABLES = {name: command.flags for name, command in COMMANDS.items()}
"""Each command's flag table (``tests/cli/test_main.py`` pins them to typer's options)."""


def run(argv: list[str]) -> int | None:
    """The exit code if the fast path handled ``argv`` (``[command, *args]``), else None."""
    if argv == ["--version"]:
        from harn_mcp_mock.cli._common import version_line

        print(version_line(), flush=True)
        return 0
    name = " ".join(argv[:2]) if argv[:2] == ["world", "check"] else argv[0] if argv else ""
    command = COMMANDS.get(name)
    if command is None:
        return None
    values = parse(argv[len(name.split()) :], command.flags, interspersed=command.interspersed)
    if values is None or any(param not in values for param in command.required):
        return None
    rest = values.pop("command")
    if command.rest is None:
        if rest:
            return None  # typer: "Got unexpected extra argument"
    else:
        param, kind = command.rest
        values[param] = [_value(text, kind) for text in rest]
        if None in values[param]:
            return None
    from harn_mcp_mock.cli import commands

    if command.values is not None:
        from harn_mcp_mock.cli._common import handle_errors

        with handle_errors(f"harn mcp mock {name}"):
            command.values(values)
    main = getattr(commands, command.main)
    kwargs = {command.rename.get(param, param): value for param, value in values.items()}
    return _as_typer_ends(main, kwargs)


def _as_typer_ends(main: Callable[..., int], kwargs: dict[str, Any]) -> int:
    """Run ``main`` ending as typer's ``main()`` ends the exceptions it catches: EOFError prints
    ``Aborted!`` and exits 1, a broken pipe exits 1 quietly (a KeyboardInterrupt exits 130 in
    both, in :mod:`harn_mcp_mock.cli.main`)."""
    try:
        return main(**kwargs)
    except EOFError:
        sys.stderr.write("\nAborted!\n")
        sys.stderr.flush()
        return 1
    except OSError as exc:
        import errno

        if exc.errno != errno.EPIPE:
            raise
        sys.stdout = _Pacified(sys.stdout)
        sys.stderr = _Pacified(sys.stderr)
        return 1


class _Pacified:
    """A stream whose ``flush()`` ignores a broken pipe (click's ``PacifyFlushWrapper``), so the
    interpreter's last flush of a closed stdout prints nothing."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        import errno

        try:
            self.wrapped.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)
