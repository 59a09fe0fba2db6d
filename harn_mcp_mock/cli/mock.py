"""`harn mcp mock ...`: one thin function per command (parse -> one library call -> render)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harn_mcp_mock.cli._common import handle_errors, note, version_line
from harn_mcp_mock.cli._help import HarnGroup
from harn_mcp_mock.cli._http_opts import (
    AllowHostOpt,
    AllowOriginOpt,
    AllowRemoteOpt,
    HeaderOpt,
    HostOpt,
    IdleTimeoutOpt,
    LiveTimeoutOpt,
    MaxBodyOpt,
    MaxSessionsOpt,
    PortOpt,
    UrlOpt,
)
from harn_mcp_mock.runner.backend import BACKENDS, RAY_ADDRESS, backend_help

app = typer.Typer(
    cls=HarnGroup,
    help="Record, replay and verify MCP servers; simulated worlds and evals.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_SERVER_CMD = {"allow_interspersed_args": False}


def _print_version(value: bool) -> None:
    if value:
        typer.echo(version_line())
        raise typer.Exit()


VersionOpt = Annotated[
    bool,
    typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
]


@app.callback()
def _mock(version: VersionOpt = False) -> None:
    """Record, replay and verify MCP servers; simulated worlds and evals."""


CassetteOpt = Annotated[Path, typer.Option("--cassette", help="Cassette file (NAME.cassette.json).")]
EmitTapeOpt = Annotated[
    Path | None,
    typer.Option(
        "--emit-tape", help="Also write every exchange to an event tape (`harn mcp mock docs tape`)."
    ),
]


@app.command(context_settings=_SERVER_CMD, short_help="Record a server's traffic into a cassette.")
def record(
    cassette: CassetteOpt,
    command: Annotated[list[str] | None, typer.Argument(help="The server command, after `--`.")] = None,
    redact_policy: Annotated[
        Path | None, typer.Option("--redact-policy", help="Redaction policy JSON (merged over the default).")
    ] = None,
    shutdown_timeout: Annotated[
        float,
        typer.Option("--shutdown-timeout", help="Seconds the server gets to exit before SIGTERM/SIGKILL."),
    ] = 5.0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No summary line on stderr.")] = False,
    emit_tape: EmitTapeOpt = None,
    url: UrlOpt = None,
    header: HeaderOpt = None,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 0,
    allow_remote: AllowRemoteOpt = False,
    allow_empty: Annotated[
        bool,
        typer.Option(
            "--allow-empty",
            help="Write the cassette even if the client sent no message (by default an existing "
            "cassette is kept and nothing is written, exit 5).",
        ),
    ] = False,
    allow_origin: AllowOriginOpt = None,
    allow_host: AllowHostOpt = None,
    max_body_bytes: MaxBodyOpt = None,
) -> None:
    """Proxy a stdio MCP server transparently and record every message into a cassette.

    \b
    Usage: harn mcp mock record --cassette F [--redact-policy P] -- SERVER...
       or: harn mcp mock record --cassette F --url URL [--header K:V] [--port P]

    Exits with the server's exit code (128+N if signal N ended it); 0 for --url.
    Exit 5: the client sent no message, or the server none before it failed
    (nothing written, an old cassette kept).
    Exit 3, before the server starts: the cassette cannot be written there (a
    folder, a path under a file) or another recording holds it.

    Ctrl-C (SIGTERM, SIGHUP) stops: the server's stdin is closed and it gets
    --shutdown-timeout seconds to exit; a second Ctrl-C kills it. The cassette
    keeps what was recorded.
    """
    from harn_mcp_mock.cli.commands import record_main
    from harn_mcp_mock.options import LiveTarget, RecordOptions

    with handle_errors("harn mcp mock record"):
        live = LiveTarget(command or (), url, header or ())
        options = RecordOptions(redact_policy, shutdown_timeout, allow_empty)
    raise typer.Exit(
        record_main(
            cassette,
            live=live,
            options=options,
            quiet=quiet,
            emit_tape=emit_tape,
            host=host,
            port=port,
            allow_remote=allow_remote,
            allow_origin=allow_origin,
            allow_host=allow_host,
            max_body_bytes=max_body_bytes,
        )
    )


@app.command(short_help="Finish the cassette of a killed recording.")
def recover(cassette: CassetteOpt) -> None:
    """Turn the journal of a recording that was killed into a finished cassette."""
    prog = "harn mcp mock recover"
    with handle_errors(prog):
        from harn_mcp_mock.cassette.unanswered import unanswered_note
        from harn_mcp_mock.record.recover import recover_recording

        done = recover_recording(cassette)
        recovered = done.cassette
        note(prog, f"wrote {cassette} ({len(recovered.messages)} messages{unanswered_note(recovered)})")
        if done.tape is not None:  # what was done with the session's --emit-tape tape
            note(prog, done.tape)


@app.command(short_help="Summarise a cassette.")
def show(
    cassette: CassetteOpt,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable summary.")] = False,
    fmt: Annotated[
        str, typer.Option("--format", help="text | json | html (a timeline page; --json is json)")
    ] = "text",
    out: Annotated[Path | None, typer.Option("--out", help="Write it here instead of stdout.")] = None,
    faults: Annotated[
        str | None,
        typer.Option("--faults", help="Dry run: when each fault rule would fire on this cassette's calls."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="With --faults: the seed.")] = 0,
    run_id: Annotated[str, typer.Option("--run-id", help="With --faults: the run id.")] = "run",
) -> None:
    """Summarise a cassette: server, handshake, methods and tools seen, redactions.

    With --faults: when each rule would fire if a client repeated the recorded calls in order,
    and a warning (on stderr too) for each rule that can never fire on this cassette.
    """
    from harn_mcp_mock.cli.commands import show_main

    raise typer.Exit(
        show_main(cassette, as_json=as_json, fmt=fmt, out=out, faults=faults, seed=seed, run_id=run_id)
    )


@app.command(context_settings=_SERVER_CMD, short_help="Serve a cassette as an MCP server.")
def replay(
    cassette: CassetteOpt,
    command: Annotated[
        list[str] | None, typer.Argument(help="Live server command (only for modes that record), after `--`.")
    ] = None,
    mode: Annotated[
        str, typer.Option("--mode", help="none (default) | once | new_episodes | all; X07 aliases accepted.")
    ] = "none",
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Exit 1 at the end if any request missed or recorded interaction was unused."
        ),
    ] = False,
    report: Annotated[
        Path | None, typer.Option("--report", help="Write a JSON summary here at the end.")
    ] = None,
    latency: Annotated[str, typer.Option("--latency", help="none | recorded | scaled:X")] = "none",
    ignore_paths: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore-path", metavar="POINTER", help="JSON pointer pattern left out of matching (repeatable)."
        ),
    ] = None,
    repeat: Annotated[
        str, typer.Option("--repeat", help="After the recorded answers run out: last | cycle | error.")
    ] = "last",
    strict_order: Annotated[
        bool, typer.Option("--strict-order", help="Requests must come in recorded order.")
    ] = False,
    redact_policy: Annotated[
        Path | None,
        typer.Option("--redact-policy", help="The redaction policy the cassette was recorded with."),
    ] = None,
    faults: Annotated[
        str | None,
        typer.Option(
            "--faults", help="Fault rules (JSON) to fire on the replay (`harn mcp mock docs faults`)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="With --faults: seed for probabilistic faults.")] = 0,
    run_id: Annotated[
        str, typer.Option("--run-id", help="With --faults: run id, keyed with the seed.")
    ] = "run",
    emit_tape: EmitTapeOpt = None,
    http: Annotated[
        bool,
        typer.Option(
            "--http", help="Serve over Streamable HTTP instead of stdio (`harn mcp mock docs http`)."
        ),
    ] = False,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 0,
    allow_remote: AllowRemoteOpt = False,
    allow_origin: AllowOriginOpt = None,
    allow_host: AllowHostOpt = None,
    max_body_bytes: MaxBodyOpt = None,
    session_idle_timeout: IdleTimeoutOpt = None,
    max_sessions: MaxSessionsOpt = None,
    url: UrlOpt = None,
    header: HeaderOpt = None,
) -> None:
    """Serve a cassette as a stdio MCP server (no real server is started in the default mode).

    Exit codes: 0 served; 1 with --strict when a request missed or a recorded interaction went
    unused; 2 bad arguments or fault rules; 3 the cassette could not be read.
    Exit 5: a mode that records saw no client message (the cassette is kept).
    Exit 130 / 143 / 129: stopped by SIGINT / SIGTERM / SIGHUP (files written).
    """
    from harn_mcp_mock.cli.commands import replay_main
    from harn_mcp_mock.options import LiveTarget, ReplayOptions

    with handle_errors("harn mcp mock replay"):
        live = LiveTarget(command or (), url, header or ())
        options = ReplayOptions.build(
            ignore_paths=ignore_paths or (),
            repeat=repeat,
            strict_order=strict_order,
            latency=latency,
            redact_policy=redact_policy,
            faults=faults,
            seed=seed,
            run_id=run_id,
        )
    raise typer.Exit(
        replay_main(
            cassette,
            live=live,
            options=options,
            mode=mode,
            strict=strict,
            report=report,
            emit_tape=emit_tape,
            http=http,
            host=host,
            port=port,
            allow_remote=allow_remote,
            allow_origin=allow_origin,
            allow_host=allow_host,
            max_body_bytes=max_body_bytes,
            session_idle_timeout=session_idle_timeout,
            max_sessions=max_sessions,
        )
    )


@app.command(context_settings=_SERVER_CMD, short_help="Classify drift between a cassette and a candidate.")
def verify(
    cassette: CassetteOpt,
    command: Annotated[list[str] | None, typer.Argument(help="Live server command, after `--`.")] = None,
    candidate: Annotated[Path | None, typer.Option("--candidate", help="Compare with this cassette.")] = None,
    url: UrlOpt = None,
    header: HeaderOpt = None,
    save_candidate: Annotated[
        Path | None, typer.Option("--save-candidate", help="Keep the cassette recorded from the live server.")
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="text | json | markdown | junit | sarif | github | html")
    ] = "text",
    report: Annotated[
        Path | None, typer.Option("--report", help="Write the report here instead of stdout.")
    ] = None,
    fail_on: Annotated[
        str, typer.Option("--fail-on", help="ERR | WARN | INFO: lowest severity that fails.")
    ] = "ERR",
    ignore_file: Annotated[
        Path | None, typer.Option("--ignore-file", help="Accepted findings (rule, tool, pointer, reason).")
    ] = None,
    ignore_path: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore-path",
            metavar="POINTER",
            help="JSON pointer pattern (`harn mcp mock docs cli`) left out of comparisons (repeatable).",
        ),
    ] = None,
    latency_ratio: Annotated[float, typer.Option("--latency-ratio", help="B8 ratio threshold.")] = 2.0,
    latency_floor_ms: Annotated[float, typer.Option("--latency-floor-ms", help="B8 absolute floor.")] = 100.0,
    timeout: LiveTimeoutOpt = 30.0,
    redact_policy: Annotated[
        Path | None, typer.Option("--redact-policy", help="Redaction policy for the live recording.")
    ] = None,
) -> None:
    """Classify schema and behaviour drift between a cassette and a candidate.

    \b
    Usage: harn mcp mock verify --cassette A --candidate B
       or: harn mcp mock verify --cassette A --url URL [--header K:V ...]
       or: harn mcp mock verify --cassette A -- SERVER...

    Exit codes: 0 no drift at or above --fail-on; 1 drift at or above it; 2 the inputs could not
    be compared (bad file, server failed to start).
    """
    from harn_mcp_mock.cli.commands import verify_main
    from harn_mcp_mock.options import LiveTarget
    from harn_mcp_mock.verify.drift import VerifyOptions

    with handle_errors("harn mcp mock verify"):
        live = LiveTarget(command or (), url, header or (), timeout)
        options = VerifyOptions(tuple(ignore_path or ()), latency_ratio, latency_floor_ms)
    raise typer.Exit(
        verify_main(
            cassette,
            live=live,
            options=options,
            candidate=candidate,
            save_candidate=save_candidate,
            fmt=fmt,
            report=report,
            fail_on=fail_on,
            ignore_file=ignore_file,
            redact_policy=redact_policy,
        )
    )


world_app = typer.Typer(
    cls=HarnGroup,
    help="Serve a seeded simulated world as a stdio MCP server; `world list` lists the shipped "
    "worlds, `world check` checks a spec.",
    short_help="Serve a simulated world; list or check worlds.",
    invoke_without_command=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(world_app, name="world")

_SPEC_HELP = "World spec: a NAME.world.json file or a shipped world's name (`world list`)."
SpecOpt = Annotated[Path, typer.Option("--spec", help=_SPEC_HELP)]


@world_app.callback()
def world(
    ctx: typer.Context,
    spec: Annotated[Path | None, typer.Option("--spec", help=_SPEC_HELP)] = None,
    task: Annotated[
        str | None, typer.Option("--task", help="Task id (default: the spec's only task).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed for probabilistic faults.")] = 0,
    run_id: Annotated[
        str, typer.Option("--run-id", help="Run id (part of every fault decision's key).")
    ] = "run",
    faults: Annotated[str | None, typer.Option("--faults", help="Fault profile name from the spec.")] = None,
    state_out: Annotated[Path | None, typer.Option("--state-out", help="Write the final state here.")] = None,
    report: Annotated[Path | None, typer.Option("--report", help="Write the run report here.")] = None,
    emit_tape: Annotated[
        Path | None,
        typer.Option(
            "--emit-tape",
            "--tape",
            help="Also write every exchange to an event tape (`harn mcp mock docs tape`).",
        ),
    ] = None,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            help="A world of several servers: serve this one (its serverInfo and tools; default: "
            "every tool as one server).",
        ),
    ] = None,
) -> None:
    """Serve a world on stdio; when stdin closes, write the final state and the report.

    SIGINT, SIGTERM and SIGHUP end it the same way (the files are written), exiting 130, 143, 129.

    Usage: harn mcp mock world --spec W [--task T] [--seed N] [--run-id R] [--faults P]
    [--server NAME] --state-out S --report R
    """
    if ctx.invoked_subcommand is not None:
        return
    if spec is None:
        ctx.fail("Missing option '--spec': a spec file or a shipped world's name (`world list`).")
    from harn_mcp_mock.cli.commands import world_main

    raise typer.Exit(
        world_main(
            spec,
            task=task,
            seed=seed,
            run_id=run_id,
            faults=faults,
            state_out=state_out,
            report=report,
            emit_tape=emit_tape,
            server=server,
        )
    )


@world_app.command("list", short_help="List the shipped worlds and their tasks.")
def world_list(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable list.")] = False,
) -> None:
    """List the shipped worlds with their tasks and fault profiles (use a name as --spec)."""
    from harn_mcp_mock.cli.commands import world_list_main

    raise typer.Exit(world_list_main(as_json=as_json))


@world_app.command("check", short_help="Check a world spec.")
def world_check(
    spec: SpecOpt,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable result.")] = False,
) -> None:
    """Check a world spec: schema, effect modules, goals, reference solutions, truthful annotations.

    Exit codes: 0 the spec checks out; 1 problems found; 2 the spec is invalid or unreadable.
    """
    from harn_mcp_mock.cli.commands import world_check_main

    raise typer.Exit(world_check_main(spec, as_json=as_json))


@world_app.command("init", short_help="Scaffold a world spec from recorded cassettes.")
def world_init(
    from_cassette: Annotated[
        list[Path],
        typer.Option(
            "--from-cassette", help="A cassette recorded with `record` (repeatable; more may follow)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Write the spec here (NAME.world.json).")],
    more: Annotated[
        list[Path] | None, typer.Argument(metavar="CASSETTE", help="More cassettes of the same server.")
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="Also write the replay report here.")
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="The world's name (default: the server's).")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an existing --out file (a spec you may have edited).")
    ] = False,
) -> None:
    """Scaffold a world spec from cassettes of one server: tools, state, effects, result templates.

    Prints the recorded session replayed against the new world, step by step, with the share of
    answers reproduced and a diff of each miss; what could not be inferred is a `todo`. An existing
    --out file is left as it is unless --force is given.

    Exit codes: 0 written; 2 unusable input (no tools/list recorded, unwritable --out, --out
    exists without --force); 3 unreadable cassette.
    """
    from harn_mcp_mock.cli.commands import world_init_main

    raise typer.Exit(
        world_init_main([*from_cassette, *(more or [])], out, report=report, name=name, force=force)
    )


@app.command("eval", short_help="Score final states of world runs: pass_rate, pass^k.")
def eval_(
    spec: Annotated[
        list[Path], typer.Option("--spec", help="World spec(s) the runs belong to (repeatable).")
    ],
    state: Annotated[
        list[Path],
        typer.Option(
            "--state", help="A final state (--state-out), a world report, or a bare JSON state (repeatable)."
        ),
    ],
    task: Annotated[
        str | None, typer.Option("--task", help="Task of bare states (default: the spec's only task).")
    ] = None,
    faults: Annotated[
        str | None, typer.Option("--faults", help="Fault profile label for bare states.")
    ] = None,
    k: Annotated[
        int | None, typer.Option("--k", help="Report pass^1..pass^k (refused above a task's n).")
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="text | json | markdown (table: the old name of text)")
    ] = "text",
    report: Annotated[
        Path | None, typer.Option("--report", help="Write the result here instead of stdout.")
    ] = None,
    confidence: Annotated[
        float, typer.Option("--confidence", help="Level of the intervals (Wilson, bootstrap).")
    ] = 0.95,
    power: Annotated[
        float | None,
        typer.Option("--power", metavar="DROP", help="Trials per task that detect this drop in pass rate."),
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level of --power's test.")] = 0.05,
) -> None:
    """Score final states: goal match and collateral per run, (c, n) per task, pass_rate and pass^k.

    Exit codes: 0 scored; 2 unusable input (unreadable or invalid file, unknown world, task or
    fault profile, k above a task's number of runs).
    """
    from harn_mcp_mock.cli.commands import eval_main

    raise typer.Exit(
        eval_main(
            spec,
            state,
            task=task,
            faults=faults,
            k=k,
            fmt=fmt,
            report=report,
            confidence=confidence,
            power=power,
            alpha=alpha,
        )
    )


@app.command("lint", short_help="Check cassettes: secrets, tool poisoning, hygiene.")
def lint(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Cassette files or folders (default: every cassettes/ folder here)."),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="text | json | sarif | github | junit")] = "text",
    report: Annotated[
        Path | None, typer.Option("--report", help="Write the result here instead of stdout.")
    ] = None,
    fail_on: Annotated[
        str | None, typer.Option("--fail-on", help="ERR | WARN | INFO (default: config, else ERR).")
    ] = None,
    max_age: Annotated[
        int | None, typer.Option("--max-age", help="Days: older cassettes are flagged (H2).")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="pyproject.toml with [tool.harn-mcp-mock.lint].")
    ] = None,
    usage: Annotated[
        Path | None, typer.Option("--usage", help="The plugin's used.json (default: .pytest_cache).")
    ] = None,
) -> None:
    """Check cassettes for secrets left in them, tool poisoning and prompt injection in recorded
    tool surfaces and results, and hygiene (unused, old, unanswered, unreadable). Rules:
    `harn mcp mock docs lint`.

    Exit codes: 0 nothing at or above --fail-on; 1 findings; 2 bad arguments or configuration.
    """
    from harn_mcp_mock.cli.commands import lint_main

    raise typer.Exit(
        lint_main(
            paths or [], fmt=fmt, report=report, fail_on=fail_on, max_age=max_age, config=config, usage=usage
        )
    )


@app.command("report", short_help="One HTML page of a run (or of eval inputs).")
def report_(
    run_dir: Annotated[
        Path | None, typer.Argument(help="A `run --out` folder (or give --spec and --state).")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="The HTML file to write.")] = Path("report.html"),
    spec: Annotated[
        list[Path] | None, typer.Option("--spec", help="Instead of RUN_DIR: world spec(s) (repeatable).")
    ] = None,
    state: Annotated[
        list[Path] | None, typer.Option("--state", help="Instead of RUN_DIR: state or report files.")
    ] = None,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="An earlier run's folder: regressed/fixed per task.")
    ] = None,
) -> None:
    """Write one self-contained HTML page (no network) of a run: a task x trial grid per fault
    profile, pass^k charts, each trial's tool calls and state diff on click, filters.

    Exit codes: 0 written; 2 not a run folder, unreadable input, or both or neither of RUN_DIR
    and --spec/--state.
    """
    from harn_mcp_mock.cli.commands import report_main

    raise typer.Exit(report_main(run_dir, out=out, specs=spec or [], states=state or [], baseline=baseline))


@app.command(context_settings=_SERVER_CMD, short_help="Run an agent k times per task against fresh worlds.")
def run(
    agent: Annotated[list[str] | None, typer.Argument(help="The agent command, after `--`.")] = None,
    spec: Annotated[
        list[Path] | None, typer.Option("--spec", help="World spec or shipped world name (repeatable).")
    ] = None,
    task: Annotated[
        list[str] | None,
        typer.Option("--task", metavar="TASK", help="Task id to run (repeatable; default: all)."),
    ] = None,
    k: Annotated[int, typer.Option("--k", help="Trials per task and fault profile.")] = 1,
    seed: Annotated[
        int, typer.Option("--seed", help="The run's seed (each trial's is derived from it).")
    ] = 0,
    faults: Annotated[
        list[str] | None,
        typer.Option("--faults", metavar="PROFILE", help="Fault profile to run besides none (repeatable)."),
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Trials at a time (default: cores).")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for the trials and results.json.")] = Path(
        "harn-run"
    ),
    timeout: Annotated[
        str,
        typer.Option("--timeout", help="Seconds a trial may take (default 600; none: no limit)."),
    ] = "600",
    grace: Annotated[
        float, typer.Option("--grace", help="Seconds between SIGTERM and SIGKILL of a trial's processes.")
    ] = 5.0,
    output_cap: Annotated[
        int, typer.Option("--output-cap", help="Bytes of agent stdout/stderr kept per trial (the last).")
    ] = 1 << 20,
    preload: Annotated[
        list[str] | None,
        typer.Option(
            "--preload",
            metavar="MODULE",
            help="Module a Python agent imports, imported once, not per trial (repeatable).",
        ),
    ] = None,
    sandbox: Annotated[
        str,
        typer.Option(
            "--sandbox",
            metavar="[auto|bwrap|none]",
            help="Each agent in a bubblewrap sandbox: auto (where it runs), bwrap (or exit 2), none.",
        ),
    ] = "auto",
    max_retries: Annotated[
        int, typer.Option("--max-retries", help="Retries of an infrastructure error.")
    ] = 1,
    min_pass_k: Annotated[
        list[str] | None,
        typer.Option("--min-pass-k", metavar="K=V", help="Gate K=V: exit 1 when pass^K < V (repeatable)."),
    ] = None,
    min_pass_rate: Annotated[
        float | None, typer.Option("--min-pass-rate", help="Gate: exit 1 when a pass_rate < V.")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Rerun every trial, even with other settings.")
    ] = False,
    backend: Annotated[
        str, typer.Option("--backend", metavar=f"[{'|'.join(BACKENDS)}]", help=backend_help())
    ] = "local",
    ray_address: Annotated[str | None, typer.Option(RAY_ADDRESS.flag, help=RAY_ADDRESS.help)] = None,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="An earlier run's --out: regressed/fixed per task.")
    ] = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            help="Exit 1 when a task, or the run as a whole, regressed significantly against --baseline.",
        ),
    ] = False,
    strict_power: Annotated[
        bool,
        typer.Option(
            "--strict-power",
            help="Exit 2 before any agent starts when --baseline could detect no regression (k too small).",
        ),
    ] = False,
    alpha: Annotated[
        float,
        typer.Option("--alpha", help="Significance level of --baseline's tests (per task and run-level)."),
    ] = 0.05,
    gate_on: Annotated[
        str, typer.Option("--gate-on", help="point (the estimate) or lower (its interval's lower bound).")
    ] = "point",
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="A trial over this many tokens is scored over_budget.")
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option("--max-cost", help="A trial over this many US dollars is scored over_budget."),
    ] = None,
    run_max_cost: Annotated[
        float | None, typer.Option("--run-max-cost", help="Start no trial once the run has spent this (USD).")
    ] = None,
    llm: Annotated[
        str | None,
        typer.Option(
            "--llm",
            help="A harn mcp mock llm URL: each trial gets its own route (HARN_LLM_URL), its usage counted.",
        ),
    ] = None,
    plan: Annotated[
        bool, typer.Option("--plan", help="Print the trials and the drop k trials can detect; run nothing.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", help="One line per trial as it finishes (default: the summary only).")
    ] = False,
    strict_exit: Annotated[
        bool,
        typer.Option("--strict-exit", help="A trial whose agent exited non-zero is a FAIL, goal or not."),
    ] = False,
) -> None:
    """Run an agent command k times per task against fresh seeded worlds and score the runs.

    Each trial's agent gets HARN_MCP_CONFIG (an mcpServers file starting its world) and
    HARN_TASK_PROMPT (`harn mcp mock docs runner`). The same command with the same --out resumes.
    Exit codes: 0 every trial finished and every gate held; 1 a gate failed (or, with
    --fail-on-regression, a task or the run regressed); 2 refused before any agent started (bad
    arguments, specs, gates or run folder, nothing written; or, with --strict-power, a --baseline
    that can detect no regression); 3 --run-max-cost stopped the run with trials left (raise the
    cap to run them); 75 a trial ended as an infrastructure error, or none was scored; 130 / 143
    / 129 stopped by a signal (finished trials are kept and scored).
    """
    from harn_mcp_mock.cli.commands import run_main

    raise typer.Exit(
        run_main(
            spec or [],
            agent or [],
            tasks=task or [],
            k=k,
            seed=seed,
            faults=faults or [],
            workers=workers,
            out=out,
            timeout=timeout,
            grace=grace,
            output_cap=output_cap,
            preload=preload or [],
            sandbox=sandbox,
            max_retries=max_retries,
            min_pass_k=min_pass_k or [],
            min_pass_rate=min_pass_rate,
            force=force,
            backend=backend,
            ray_address=ray_address,
            baseline=baseline,
            fail_on_regression=fail_on_regression,
            strict_power=strict_power,
            alpha=alpha,
            gate_on=gate_on,
            max_tokens=max_tokens,
            max_cost=max_cost,
            run_max_cost=run_max_cost,
            llm=llm,
            plan=plan,
            verbose=verbose,
            strict_exit=strict_exit,
        )
    )


@app.command("llm", short_help="A scripted LLM endpoint that plays a world's tasks (OpenAI, Anthropic).")
def llm(
    spec: SpecOpt,
    policy: Annotated[
        str,
        typer.Option("--policy", help="reference (plays the plan, recovers), naive (retries blindly), noop."),
    ] = "reference",
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0: a free one).")] = 0,
) -> None:
    """Serve a scripted, deterministic model on loopback: OpenAI Chat Completions and Responses,
    Anthropic Messages (streaming too). It finds the world's task in the conversation and plays
    the task's reference plan as tool calls, one turn at a time, then a final answer. The first
    stdout line is its base URL (http://127.0.0.1:P/v1). Requests are logged to
    $HARN_TRIAL_DIR/llm.ndjson, token usage appended to $HARN_USAGE_FILE, when set. One endpoint
    serves every trial of `run --llm URL`: each trial's requests come on its own route
    (/t/ROUTE/v1, its HARN_LLM_URL) and their usage is counted into that trial's.

    Exit codes: 0 stopped (SIGINT/SIGTERM: 130/143); 2 bad spec, policy or port.
    """
    from harn_mcp_mock.cli.commands import llm_main

    raise typer.Exit(llm_main(spec, policy=policy, port=port))


@app.command("docs", short_help="Print a shipped doc (offline).")
def docs(
    topic: Annotated[
        str | None, typer.Argument(help="A topic, e.g. quickstart (default: list the topics).")
    ] = None,
) -> None:
    """Print a doc shipped with the package (`docs` alone lists the topics).

    The repository's docs, shipped in the package: they work offline after `pip install`.
    """
    from harn_mcp_mock.cli.commands import docs_main

    raise typer.Exit(docs_main(topic))
