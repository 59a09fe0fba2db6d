"""The CLI surface: entry points, the start-up fast path, one-line errors and exit codes."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from harn_mcp_mock.cli import apps, fastpath

runner = CliRunner()
TIME_CASSETTE = Path(__file__).resolve().parents[2] / "cassettes" / "time.cassette.json"


def click_command(name: str) -> Any:
    group: Any = typer.main.get_command(apps.mock.app)  # typer vendors its own click
    command = group
    for part in name.split():
        command = command.commands[part]
    return command


def typer_function(name: str) -> Any:
    """The Python function typer builds the command ``name`` from (its type hints are the kinds)."""
    if name == "world":
        return apps.mock.world_app.registered_callback.callback  # type: ignore[union-attr]
    if name.startswith("world "):
        infos = apps.mock.world_app.registered_commands
        return next(c.callback for c in infos if c.name == name.removeprefix("world "))
    infos = apps.mock.app.registered_commands
    return next(c.callback for c in infos if (c.name or c.callback.__name__) == name)  # type: ignore[union-attr]


KINDS = {
    bool: "flag",
    int: "int",
    float: "float",
    str: "str",
    Path: "path",
    list[str]: "list",
    list[Path]: "paths",
}


def typer_options(name: str) -> dict[str, tuple[str, str]]:
    """Every flag of the typer command ``name`` (aliases too) -> (parameter, the fast path's kind
    for its annotation: ``int | None`` is ``int``, ``list[Path]`` is ``paths``)."""
    hints = typing.get_type_hints(typer_function(name))
    out: dict[str, tuple[str, str]] = {}
    for param in click_command(name).params:
        if type(param).__name__.endswith("Option"):
            assert not param.secondary_opts, f"{name} {param.opts}: the fast path has no --no-X"
            hint = hints[str(param.name)]
            plain = [arg for arg in typing.get_args(hint) if arg is not type(None)]
            kind = KINDS[plain[0] if typing.get_origin(hint) is types.UnionType and len(plain) == 1 else hint]
            for flag in param.opts:
                out[flag] = (str(param.name), kind)
    return out


@pytest.mark.parametrize("name", sorted(fastpath.COMMANDS))
def test_the_fast_path_tables_mirror_the_typer_options_exactly(name: str) -> None:
    command = fastpath.COMMANDS[name]
    assert command.flags == typer_options(name)
    typer_command = click_command(name)
    required = tuple(str(p.name) for p in typer_command.params if p.required)
    if name == "world":
        required = ("spec",)  # the group's callback fails itself without --spec (`world list` has none)
    assert command.required == required
    hints = typing.get_type_hints(typer_function(name))
    arguments = [p for p in typer_command.params if type(p).__name__.endswith("Argument")]
    if command.rest is None:
        assert arguments == []
    else:
        [argument] = arguments
        param, kind = command.rest
        assert argument.name == param
        assert KINDS[typing.get_args(hints[param])[0]] == kind  # list[X] | None
        interspersed = typer_command.context_settings.get("allow_interspersed_args", True)
        assert command.interspersed == interspersed


@pytest.mark.parametrize("name", sorted(fastpath.COMMANDS))
def test_what_the_fast_path_leaves_out_the_command_gets_typer_s_default(name: str) -> None:
    from harn_mcp_mock.cli import commands

    command = fastpath.COMMANDS[name]
    signature = inspect.signature(getattr(commands, command.main))
    params = [
        p
        for p in click_command(name).params
        if p.name not in command.required and p.name != (command.rest or ("",))[0]  # always given
    ]
    if command.values is not None:  # the values (LiveTarget, options) the typer command builds
        from_typer = {str(p.name): () if p.multiple and p.default is None else p.default for p in params}
        command.values(from_typer)
        from_nothing: dict[str, Any] = {}
        command.values(from_nothing)
        assert from_nothing == {key: from_typer[key] for key in from_nothing}, name
        params = [p for p in params if p.name in from_typer]  # the flags passed as they are
    for param in params:
        default = signature.parameters[command.rename.get(str(param.name), str(param.name))].default
        assert default == param.default or (param.multiple and default is None), (name, param.name)


def test_the_fast_path_leaves_help_unknown_flags_and_other_commands_to_typer() -> None:
    assert fastpath.run(["replay", "--help"]) is None
    assert fastpath.run(["replay", "--cassette"]) is None
    assert fastpath.run(["replay", "--cassette", "x", "--bogus"]) is None
    assert fastpath.run(["replay", "--strict"]) is None  # no --cassette: typer says what is missing
    assert fastpath.run(["world", "check", "--spec", "w.json", "--bogus"]) is None
    assert fastpath.run(["world", "--spec", "w.json", "--seed", "x"]) is None
    assert fastpath.run(["world", "--spec", "w.json", "--", "srv"]) is None
    assert fastpath.run(["recover", "--cassette", "x"]) is None
    for malformed in (
        ["--help"],
        ["--cassette", "x", "-h"],
        ["--url", "http://h"],  # no --cassette
        ["--cassette"],
        ["--cassette", "x", "--cassette", "y"],  # twice: typer keeps the last
        ["--cassette", "x", "--quiet=yes"],
        ["--cassette", "x", "-q=1"],
        ["--cassette", "x", "-qq"],
        ["--cassette", "x", "--port", "+1"],
        ["--cassette", "x", "--port", "1_000"],
        ["--cassette", "x", "--port", "--url"],
        ["--cassette", "x", "--shutdown-timeout", "1e3"],
        ["--cassette", "x", "--shutdown-timeout", "nan"],
        ["--cassette", "x", "--shutdown-timeout", "1."],
        ["--cassette", "x", "--shutdown-timeout", "--", "srv"],
        ["--cassette", "x", "srv"],  # a positional ends typer's options: it is the command
        ["--cassette", "x", "--no-quiet", "--", "srv"],
        ["--cassette=x", "--bogus=1", "--", "srv"],
    ):
        assert fastpath.run(["record", *malformed]) is None, malformed
    for malformed in (
        ["show", "--json"],  # no --cassette
        ["show", "--cassette", "a.json", "--json=1"],
        ["show", "--cassette", "a.json", "extra"],
        ["show", "--cassette", "a.json", "--seed", "0x10"],
        ["verify", "--cassette", "a.json", "srv"],  # typer: the command, without `--`
        ["verify", "--cassette", "a.json", "--timeout", "1e1", "--", "srv"],
        ["lint", "-x"],
        ["lint", "-", "a"],  # "-": typer's argument, the fast path's unknown flag
        ["lint", "a", "--max-age", "1.5"],
        ["lint", "a", "--format"],
        ["world", "check", "--spec", "w.json", "extra"],
        ["world", "check", "--spec", "w.json", "--", "extra"],
        ["world", "check"],
        ["eval", "--spec", "notes"],  # no --state
        ["eval", "--spec", "notes", "--state", "s.json", "extra"],
        ["eval", "--spec", "notes", "--state", "s.json", "--k", "two"],
        ["run", "--spec", "notes", "agent.py"],  # typer: the agent, without `--`
        ["run", "--spec", "notes", "--force=no", "--", "agent"],
        ["run", "--spec", "notes", "--k", "1", "--k", "2", "--", "agent"],
    ):
        assert fastpath.run(malformed) is None, malformed


def test_an_existing_path_that_cannot_be_read_is_left_to_typer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text("{}")
    assert fastpath.parse(["--redact-policy", str(policy)], fastpath.RECORD_FLAGS) is not None
    monkeypatch.setattr(fastpath.os, "access", lambda path, mode: False)  # root reads everything
    assert fastpath.parse(["--redact-policy", str(policy)], fastpath.RECORD_FLAGS) is None
    absent = str(tmp_path / "absent.json")
    assert fastpath.parse(["--redact-policy", absent], fastpath.RECORD_FLAGS) is not None


# Command lines the fast path must read as typer does, or leave to typer (None).
SAME_AS_TYPER = {
    "record": [
        ["--cassette", "a.json", "--", "srv", "--flag", "--"],
        ["--cassette=a.json", "-q", "--quiet", "--allow-empty", "--", "srv"],
        ["--cassette", "-q", "--", "srv"],  # a value may look like a short flag, as in typer
        ["--cassette", "", "--", "srv"],
        ["--cassette", "a.json", "--cassette=", "--", "srv"],
        ["--cassette", "a.json", "--url", "http://h/mcp", "--header", "A: 1", "--header=B:2", "--port", "-0"],
        "--cassette a.json --port 007 --host ::1 --allow-remote --max-body-bytes 10".split(),
        ["--cassette", "a.json", "--port", "1.0"],
        ["--cassette", "a.json", "--shutdown-timeout", "0.25", "--emit-tape", "t.ndjson", "--", "s"],
        ["--cassette", "a.json", "--shutdown-timeout=-1", "--", "s"],
        ["--cassette", "a.json", "--shutdown-timeout", "007.50", "--", "s"],
        ["--cassette", "a.json", "--shutdown-timeout", "2", "--", "s"],
        ["--cassette", "a.json", "--shutdown-timeout", ".5", "--", "s"],
        ["--cassette", "a.json", "--allow-origin", "http://a", "--allow-host", "h", "--allow-origin=*"],
        ["--cassette", "a.json", "--redact-policy", "p.json", "--", "s"],
        ["--cassette", "a.json", "--port", "99999999999999999999"],
        ["--cassette", "a.json", "--", "s", "--cassette", "b.json"],
    ],
    "replay": [
        ["--cassette", "a.json", "--mode=once", "--strict", "--ignore-path", "/a", "--ignore-path", "/b"],
        "--cassette a.json --seed -3 --run-id r --faults f.json --http --port 0".split(),
        ["--cassette", "a.json", "--latency", "scaled:2", "--repeat", "cycle", "--strict-order"],
        ["--cassette", "a.json", "--max-sessions", "1", "--session-idle-timeout", "0", "--", "srv"],
    ],
    "world": [
        ["--spec", "notes", "--task", "t", "--seed", "2", "--tape", "x.ndjson", "--state-out", "s.json"],
        ["--spec", "notes", "--emit-tape", "x.ndjson", "--tape", "y.ndjson"],
    ],
    "world check": [
        ["--spec", "notes", "--json"],
        ["--json", "--spec=notes"],
    ],
    "show": [
        ["--cassette", "a.json", "--json", "--format", "html", "--out", "o.html"],
        ["--cassette", "a.json", "--faults", "f.json", "--seed", "7", "--run-id", "r1"],
    ],
    "verify": [
        ["--cassette", "a.json", "--candidate", "b.json", "--format", "json", "--fail-on", "WARN"],
        ["--cassette", "a.json", "--url", "http://h/mcp", "--header", "A:1", "--timeout", "2.5"],
        ["--cassette", "a.json", "--latency-ratio", "3", "--latency-floor-ms", "0.5", "--", "srv", "-x"],
        ["--cassette", "a.json", "--ignore-path", "/a", "--ignore-path=/b", "--ignore-file", "i.json"],
        ["--cassette", "a.json", "--save-candidate", "c.json", "--redact-policy", "p.json", "--report", "r"],
    ],
    "lint": [
        ["cassettes", "--format", "sarif", "x.cassette.json", "--fail-on", "WARN"],
        ["--max-age", "30", "--config", "pyproject.toml", "--usage", "u.json", "--report", "r.txt"],
        ["a", "--", "--b", "c"],
        [],
    ],
    "run": [
        "--spec notes --spec w.json --task a --task b --k 3 --seed 7 --faults f --workers 2 -- python a.py".split(),
        "--out o --timeout none --grace 0.5 --output-cap 100 --preload m --max-retries 0 --force".split(),
        "--min-pass-k 2=0.5 --min-pass-rate 0.9 --backend ray --ray-address auto --baseline b".split(),
        "--fail-on-regression --alpha 0.1 --gate-on lower --max-tokens 10 --max-cost 1.5 --plan".split(),
        "--run-max-cost 2 --timeout=600 --spec=notes -- agent --spec x".split(),
    ],
    "eval": [
        ["--spec", "notes", "--state", "s1.json", "--state", "s2.json", "--k", "2", "--format", "json"],
        ["--spec=notes", "--spec", "w.json", "--state", "s", "--confidence", "0.9", "--power", "0.2"],
        [
            "--spec",
            "notes",
            "--state",
            "s",
            "--alpha",
            "0.01",
            "--task",
            "t",
            "--faults",
            "f",
            "--report",
            "r",
        ],
    ],
}


def typer_reads(name: str, argv: list[str]) -> dict[str, Any] | None:
    """The parameters typer's parser gives the command ``name`` for ``argv`` (None: an error)."""
    try:
        with click_command(name).make_context(name, list(argv)) as ctx:
            return dict(ctx.params)
    except Exception:  # click's usage errors
        return None


@pytest.mark.parametrize("name", sorted(fastpath.COMMANDS))
def test_what_the_fast_path_accepts_typer_reads_the_same_way(name: str) -> None:
    command = fastpath.COMMANDS[name]
    taken = 0
    for argv in SAME_AS_TYPER[name]:
        fast = fastpath.parse(argv, command.flags, interspersed=command.interspersed)
        if fast is None:
            continue
        taken += 1
        slow = typer_reads(name, argv)
        assert slow is not None, argv
        rest = fast.pop("command")
        for param, value in fast.items():
            if isinstance(value, list):
                assert list(slow[param]) == value, (argv, param)
                assert [type(v) for v in slow[param]] == [type(v) for v in value], (argv, param)
            else:
                assert slow[param] == value and type(slow[param]) is type(value), (argv, param)
        positional = next((p.name for p in click_command(name).params if p.nargs == -1), None)
        if positional is not None:
            assert [str(x) for x in slow[positional]] == rest, argv
        else:
            assert rest == [], argv
        defaults = {
            str(p.name): p.default for p in click_command(name).params if p.name not in (*fast, positional)
        }
        for param, default in defaults.items():
            assert slow[param] in (default, ()), (argv, param)
    assert taken >= len(SAME_AS_TYPER[name]) - 5  # the fast path takes the common command lines
    assert taken > 0


def test_every_entry_point_runs_the_same_commands() -> None:
    for cmd in (
        ["harn", "mcp", "mock", "--help"],
        ["harn-mcp-mock", "--help"],
        [sys.executable, "-m", "harn_mcp_mock", "--help"],
    ):
        exe = cmd if cmd[0] == sys.executable else [str(Path(sys.executable).parent / cmd[0]), *cmd[1:]]
        out = subprocess.run(exe, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        for command in ("record", "replay", "show", "recover"):
            assert command in out.stdout


def test_version_is_printed() -> None:
    result = runner.invoke(apps.harn, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("harn-mcp-mock ")


def test_a_bad_cassette_is_one_line_on_stderr_with_exit_3(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cassette.json"
    bad.write_text('{"format": "harn-mcp-mock/cassette", "version": 7, "messages": []}')
    for command in (["show", "--cassette", str(bad)], ["replay", "--cassette", str(bad)]):
        out = subprocess.run(
            [sys.executable, "-m", "harn_mcp_mock", *command],
            capture_output=True,
            text=True,
            timeout=60,
            input="",
        )
        assert out.returncode == 3
        assert out.stderr.count("\n") == 1
        assert f"{bad}:version: written by cassette format version 7" in out.stderr
        assert "Traceback" not in out.stderr


def test_recover_without_a_journal_is_one_line_exit_3(tmp_path: Path) -> None:
    result = runner.invoke(apps.mock.app, ["recover", "--cassette", str(tmp_path / "x.cassette.json")])
    assert result.exit_code == 3
    assert "no unfinished recording (journal) to recover" in result.output


def test_a_typer_exit_inside_handle_errors_keeps_its_exit_code() -> None:
    import typer

    from harn_mcp_mock.cli._common import handle_errors

    with pytest.raises(typer.Exit) as raised, handle_errors("harn test"):
        raise typer.Exit(5)
    assert raised.value.exit_code == 5


TYPER_ONLY = (
    "import sys\n"
    "from harn_mcp_mock.cli import main\n"
    "main._fast = lambda args: None  # the typer path, as before the fast path took the command\n"
    "main.mock_main()\n"
)


def both_paths(argv: list[str], cwd: Path) -> list[tuple[int, str, str]]:
    """(exit code, stdout, stderr) of ``harn-mcp-mock ARGV`` on the fast path, then on typer's.

    A recording whose server exits at once while the client's input is already empty ends by
    whichever `record` sees first (``client-eof`` or ``server-exit``): a race between two
    processes, not a difference between the parsers, so that one word is left out."""
    runs = []
    for prefix in ([sys.executable, "-m", "harn_mcp_mock"], [sys.executable, "-c", TYPER_ONLY]):
        done = subprocess.run(
            [*prefix, *argv], capture_output=True, text=True, cwd=cwd, timeout=60, input="", check=False
        )
        stderr = re.sub(r"(\(server exit \d+), (?:client-eof|server-exit)\)", r"\1, ...)", done.stderr)
        runs.append((done.returncode, done.stdout, stderr))
    return runs


@pytest.mark.parametrize(
    "argv",
    [
        ["record", "--cassette", "x.cassette.json", "--url", "http://127.0.0.1:9/mcp", "--", "srv"],
        ["record", "--cassette", "x.cassette.json", "--allow-origin", "http://a", "--", "true"],
        ["record", "--cassette", "x.cassette.json", "--", "/nonexistent/server"],
        ["record", "--cassette", "x.cassette.json", "-q"],
        ["record", "--cassette", "x.cassette.json", "--shutdown-timeout", "-1", "--", "true"],
        ["record", "--cassette", "x.cassette.json", "--", "sh", "-c", "exit 3"],
        ["show", "--cassette", str(TIME_CASSETTE), "--format", "yaml"],
        ["show", "--cassette", "absent.cassette.json", "--json"],
        ["verify", "--cassette", str(TIME_CASSETTE), "--candidate", "absent.json"],
        ["lint", "--format", "xml", "."],
        ["world", "check", "--spec", "absent.world.json"],
        ["eval", "--spec", "notes", "--state", "absent.json"],
        ["run", "--spec", "notes", "--timeout", "soon", "--", "true"],
    ],
)
def test_the_fast_path_and_typer_end_a_bad_command_line_byte_for_byte_alike(
    argv: list[str], tmp_path: Path
) -> None:
    fast, slow = both_paths(argv, tmp_path)
    assert fast == slow
    prog = "harn mcp mock " + " ".join(argv[: 2 if argv[0] == "world" else 1])
    assert fast[0] != 0 and fast[2].count("\n") == 1 and fast[2].startswith(f"{prog}: ")


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["verify", "--cassette", str(TIME_CASSETTE), "--candidate", str(TIME_CASSETTE), "--latency-ratio", "-1"], "--latency-ratio"),
        (["verify", "--cassette", str(TIME_CASSETTE), "--candidate", str(TIME_CASSETTE), "--latency-ratio", "nan"], "--latency-ratio"),
        (["verify", "--cassette", str(TIME_CASSETTE), "--candidate", str(TIME_CASSETTE), "--timeout", "0"], "--timeout"),
        (["lint", "--max-age", "-1", str(TIME_CASSETTE)], "--max-age"),
    ],
)  # fmt: skip
def test_a_numeric_flag_no_run_can_use_is_one_usage_line_naming_it_on_both_paths(
    argv: list[str], flag: str, tmp_path: Path
) -> None:
    """-1, 0 or nan were taken silently: verify compared with a ratio no latency can pass."""
    fast, slow = both_paths(argv, tmp_path)
    assert fast == slow
    assert fast[0] == 2 and fast[2].count("\n") == 1
    assert fast[2].startswith(f"harn mcp mock {argv[0]}: error: {flag}: must be ")


@pytest.mark.parametrize(
    "argv",
    [
        ["record", "--cassette", "x.cassette.json", "--", "true"],
        ["show", "--cassette", "x.cassette.json"],
        ["world", "check", "--spec", "x.world.json"],
        ["run", "--spec", "x.world.json", "--plan"],
    ],
)
def test_the_fast_commands_start_without_typer_or_pydantic(argv: list[str], tmp_path: Path) -> None:
    script = (
        "import runpy, sys\n"
        f"sys.argv = ['harn-mcp-mock', *{argv!r}]\n"
        "try:\n    runpy.run_module('harn_mcp_mock', run_name='__main__')\n"
        "except SystemExit as exc:\n    sys.stderr.write(f'EXIT {exc.code}\\n')\n"
        "sys.stderr.write('MODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input="", capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert done.stderr.startswith("harn mcp mock ") and "EXIT " in done.stderr  # ran, ended on an error
    [line] = [x for x in done.stderr.splitlines() if x.startswith("MODULES ")]
    assert {"typer", "click", "pydantic"} & set(line.split()[1:]) == set()


def test_the_fast_path_ends_eof_and_a_broken_pipe_as_typer_does(capfd: pytest.CaptureFixture[str]) -> None:
    def eof() -> int:
        raise EOFError

    def broken_pipe() -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def other() -> int:
        raise PermissionError(13, "Permission denied")

    assert fastpath._as_typer_ends(eof, {}) == 1
    assert capfd.readouterr().err == "\nAborted!\n"  # typer: echo(), then "Aborted!"
    stdout, stderr = sys.stdout, sys.stderr
    try:
        assert fastpath._as_typer_ends(broken_pipe, {}) == 1
        assert sys.stdout is not stdout  # wrapped: the interpreter's last flush stays quiet
    finally:
        sys.stdout, sys.stderr = stdout, stderr
    with pytest.raises(PermissionError):
        fastpath._as_typer_ends(other, {})
