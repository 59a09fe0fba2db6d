"""`harn test-bench ...`: run a Python script hermetically (one thin function per command).

``run`` builds one :class:`~harn_mcp_mock.testbench.Testbench` from the flags, runs the script
in-process with :func:`runpy.run_path` under it (``sys.argv`` = the script and the arguments after
``--``), finalizes, and exits with the script's own exit code. Defaults fail loud: paused clock,
network denied, no LLM fixture (any ``llm_call`` errors). See ``docs/testbench.md``.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from harn_mcp_mock.cli._common import handle_errors, note
from harn_mcp_mock.cli._help import HarnGroup
from harn_mcp_mock.errors import UsageError

if TYPE_CHECKING:  # the testbench loads when a command runs, not when `harn --help` does
    from harn_mcp_mock.testbench import Testbench, TestbenchResult

PROG = "harn test-bench"
DEFAULT_START_MS = 1_767_225_600_000
"""2026-01-01T00:00:00Z (= ``harn_mcp_mock.testbench.DEFAULT_START_MS``; a test pins the two)."""

app = typer.Typer(
    cls=HarnGroup,
    help="Run Python scripts hermetically: paused clock, LLM fixtures, FS overlay, taped subprocesses, no network.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

ScriptArg = Annotated[Path, typer.Argument(help="The Python script to run (in-process, as __main__).")]
ArgsArg = Annotated[list[str] | None, typer.Argument(help="Arguments for the script, after `--`.")]
StartAtOpt = Annotated[
    int,
    typer.Option("--start-at", help="Initial virtual wall clock, Unix ms (default 2026-01-01T00:00:00Z)."),
]
LlmFixtureOpt = Annotated[
    Path | None, typer.Option("--llm-fixture", help="Replay LLM responses from this JSONL.")
]
FsOverlayOpt = Annotated[
    Path | None, typer.Option("--fs-overlay", help="Mount a copy-on-write overlay on DIR.")
]
EmitDiffOpt = Annotated[
    Path | None, typer.Option("--emit-diff", help="Write the overlay's unified diff here.")
]
EmitTapeOpt = Annotated[
    Path | None, typer.Option("--emit-tape", help="Write the event tape here (+ PATH.cas/).")
]
NetworkOpt = Annotated[str, typer.Option("--network", help="deny (default) or real.")]
AllowHostOpt = Annotated[
    list[str] | None,
    typer.Option("--allow-host", metavar="HOST", help="Allow a host name, IP or CIDR (repeatable)."),
]
DenyLoopbackOpt = Annotated[
    bool, typer.Option("--deny-loopback", help="Also deny loopback (allowed by default).")
]


def build_bench(
    *,
    script: Path,
    args: Sequence[str],
    clock: str = "paused",
    start_at: int = DEFAULT_START_MS,
    llm_fixture: Path | None = None,
    llm_record: Path | None = None,
    fs_overlay: Path | None = None,
    process_record: Path | None = None,
    process_replay: Path | None = None,
    network: str = "deny",
    allow_host: Sequence[str] = (),
    deny_loopback: bool = False,
    emit_diff: Path | None = None,
    emit_tape: Path | None = None,
) -> Testbench:
    """The :class:`Testbench` the flags describe; :class:`UsageError` for a contradiction, an
    :class:`~harn_mcp_mock.errors.OutputError` for a file it could not write after the script ran."""
    from harn_mcp_mock.store.cas import check_writable
    from harn_mcp_mock.testbench import Testbench

    check_writable(llm_record, process_record, emit_diff)

    b = Testbench.builder()
    if clock == "paused":
        b.paused_clock_at_ms(start_at)
    elif clock == "recorded":
        b.recorded_clock()
    elif clock == "real":
        b.real_clock()
    else:
        raise UsageError(f"--clock must be paused, recorded or real, not {clock!r}")
    if clock != "paused" and start_at != DEFAULT_START_MS:
        raise UsageError("--start-at needs --clock paused")
    if llm_fixture is not None and llm_record is not None:
        raise UsageError("--llm-fixture and --llm-record exclude each other")
    if llm_fixture is not None:
        b.replay_llm(llm_fixture)
    if llm_record is not None:
        b.record_llm(llm_record)
    if fs_overlay is not None:
        b.fs_overlay(fs_overlay)
    if process_record is not None and process_replay is not None:
        raise UsageError("--process-record and --process-replay exclude each other")
    if process_record is not None:
        b.record_subprocesses(process_record)
    if process_replay is not None:
        b.replay_subprocesses(process_replay)
    if network == "deny":
        b.deny_network(list(allow_host), allow_loopback=not deny_loopback)
    elif network == "real":
        if allow_host or deny_loopback:
            raise UsageError("--allow-host/--deny-loopback need --network deny")
        b.real_network()
    else:
        raise UsageError(f"--network must be deny or real, not {network!r}")
    if emit_diff is not None:
        if fs_overlay is None:
            raise UsageError("--emit-diff needs --fs-overlay")
        b.emit_diff(emit_diff)
    if emit_tape is not None:
        b.emit_tape(emit_tape, script_path=script.as_posix(), argv=list(args))
    return b.build()


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    sys.stderr.write(f"{exc.code}\n")
    return 1


def run_script(bench: Testbench, script: Path, args: Sequence[str]) -> tuple[int, TestbenchResult]:
    """Run ``script`` as ``__main__`` under ``bench``; its exit code and the finalized result.

    A :class:`~harn_mcp_mock.errors.HarnError` escaping the script (a denied connection, no LLM
    fixture left, a process divergence) propagates after the artifacts are written.
    """
    if not script.is_file():
        raise UsageError("no such script", path=script)
    saved_argv, saved_path0 = sys.argv, list(sys.path)
    sys.argv = [str(script), *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    code = 0
    try:
        with bench:
            try:
                runpy.run_path(str(script), run_name="__main__")
            except SystemExit as exc:
                code = _exit_code(exc)
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path0
        result = bench.finalize()
    return code, result


def _report(code: int, result: TestbenchResult) -> int:
    if result.fs_diff:
        note(PROG, f"fs diff: {len(result.fs_diff)} change(s)")
    for path in result.written:
        note(PROG, f"wrote {path}")
    if result.unused_process_entries:
        first = result.unused_process_entries[0]
        note(
            PROG,
            f"error: process replay diverged: {len(result.unused_process_entries)} taped call(s) never made "
            f"(next: {first.program} {list(first.args)})",
        )
        return code or 1
    return code


@app.command()
def run(
    script: ScriptArg,
    args: ArgsArg = None,
    clock: Annotated[str, typer.Option("--clock", help="paused (default), recorded or real.")] = "paused",
    start_at: StartAtOpt = DEFAULT_START_MS,
    llm_fixture: LlmFixtureOpt = None,
    llm_record: Annotated[
        Path | None, typer.Option("--llm-record", help="Record LLM calls (script passes provider=).")
    ] = None,
    fs_overlay: FsOverlayOpt = None,
    process_record: Annotated[
        Path | None, typer.Option("--process-record", help="Record subprocess calls to this tape.")
    ] = None,
    process_replay: Annotated[
        Path | None, typer.Option("--process-replay", help="Replay subprocess calls from this tape.")
    ] = None,
    network: NetworkOpt = "deny",
    allow_host: AllowHostOpt = None,
    deny_loopback: DenyLoopbackOpt = False,
    emit_diff: EmitDiffOpt = None,
    emit_tape: EmitTapeOpt = None,
) -> None:
    """Run SCRIPT hermetically; exits with the script's exit code.

    Usage: harn test-bench run script.py [--clock paused] [--network deny] [...] -- arg1 arg2
    """
    with handle_errors(PROG):
        bench = build_bench(
            script=script,
            args=args or [],
            clock=clock,
            start_at=start_at,
            llm_fixture=llm_fixture,
            llm_record=llm_record,
            fs_overlay=fs_overlay,
            process_record=process_record,
            process_replay=process_replay,
            network=network,
            allow_host=allow_host or [],
            deny_loopback=deny_loopback,
            emit_diff=emit_diff,
            emit_tape=emit_tape,
        )
        code, result = run_script(bench, script, args or [])
        raise SystemExit(_report(code, result))


@app.command(short_help="Re-run a script against a recorded process tape.")
def replay(
    script: ScriptArg,
    process_tape: Annotated[
        Path, typer.Option("--process-tape", help="The tape a --process-record run wrote.")
    ],
    args: ArgsArg = None,
    start_at: StartAtOpt = DEFAULT_START_MS,
    llm_fixture: LlmFixtureOpt = None,
    fs_overlay: FsOverlayOpt = None,
    emit_diff: EmitDiffOpt = None,
    emit_tape: EmitTapeOpt = None,
) -> None:
    """Re-run SCRIPT against a recorded process tape; any divergence fails the run.

    Usage: harn test-bench replay script.py --process-tape run.tape [-- args]
    """
    with handle_errors(PROG):
        bench = build_bench(
            script=script,
            args=args or [],
            start_at=start_at,
            llm_fixture=llm_fixture,
            fs_overlay=fs_overlay,
            process_replay=process_tape,
            emit_diff=emit_diff,
            emit_tape=emit_tape,
        )
        code, result = run_script(bench, script, args or [])
        raise SystemExit(_report(code, result))


@app.command(short_help="Export a tape as OpenTelemetry spans (OTLP/JSON, OTLP/HTTP).")
def export(
    tape: Annotated[Path, typer.Argument(help="The event tape (a run's tape.ndjson, --emit-tape).")],
    otlp: Annotated[
        Path | None, typer.Option("--otlp", help="Write OTLP/JSON (ExportTraceServiceRequest) here.")
    ] = None,
    otlp_endpoint: Annotated[
        str | None,
        typer.Option(
            "--otlp-endpoint", help="POST it to this OTLP/HTTP receiver (http://host:4318).", metavar="URL"
        ),
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="The world's report: its fired faults become span events.")
    ] = None,
) -> None:
    """Turn TAPE into one OpenTelemetry trace (MCP/GenAI semantic conventions, virtual time as span time).

    Usage: harn test-bench export run.tape --otlp trace.json [--otlp-endpoint http://localhost:4318]
    Exit codes: 0 exported; 2 bad arguments or input; 3 an unreadable tape; 4 the receiver failed.
    """
    with handle_errors(PROG):
        from harn_mcp_mock.tape.otlp import export_otlp, span_names, traces_url

        document = export_otlp(tape, out=otlp, endpoint=otlp_endpoint, report=report)
        spans = len(span_names(document))
        if otlp is not None:
            sys.stdout.write(f"wrote {spans} spans to {otlp}\n")
        if otlp_endpoint is not None:
            sys.stdout.write(f"sent {spans} spans to {traces_url(otlp_endpoint)}\n")


try:
    from harn_mcp_mock.cli import fidelity as _fidelity
except ImportError:  # the fidelity command lands separately
    pass
else:
    _fidelity.register(app)
