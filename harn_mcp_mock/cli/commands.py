"""Command bodies that must not import typer: shared by the typer CLI and the start-up fast path."""

from __future__ import annotations

from pathlib import Path

from harn_mcp_mock.cli._common import handle_errors, note

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from harn_mcp_mock.http.guard import GuardSettings
    from harn_mcp_mock.options import LiveTarget, RecordOptions, ReplayOptions
    from harn_mcp_mock.stdio.run import ReplayOutcome
    from harn_mcp_mock.verify.drift import VerifyOptions


def replay_main(
    cassette: Path,
    *,
    live: LiveTarget | None = None,
    options: ReplayOptions | None = None,
    mode: str = "none",
    strict: bool = False,
    report: Path | None = None,
    emit_tape: Path | None = None,
    http: bool = False,
    host: str = "127.0.0.1",
    port: int = 0,
    allow_remote: bool = False,
    allow_origin: list[str] | None = None,
    allow_host: list[str] | None = None,
    max_body_bytes: int | None = None,
    session_idle_timeout: int | None = None,
    max_sessions: int | None = None,
) -> int:
    """`harn mcp mock replay`; returns the exit code. ``live`` (the live server, for the modes
    that record) and ``options`` (how to replay) are built where the command line is read."""
    prog = "harn mcp mock replay"
    from harn_mcp_mock.options import LiveTarget, ReplayOptions

    live = live if live is not None else LiveTarget()
    options = options if options is not None else ReplayOptions()
    with handle_errors(prog):
        _check_outputs(report)
        if options.fault_rules and not http:
            from harn_mcp_mock.errors import UsageError

            needs = next((r for r in options.fault_rules if r.kind == "http_status"), None)
            if needs is not None:
                raise UsageError(f"fault {needs.id!r}: kind http_status needs --http", where="--faults")
        if options.fault_rules and mode not in ("none", "once"):
            from harn_mcp_mock.errors import UsageError

            raise UsageError(f"--faults fires on a replay: use it with --mode none or once, not {mode}")
    http_only = {
        "--allow-origin": allow_origin,
        "--allow-host": allow_host,
        "--max-body-bytes": max_body_bytes,
        "--session-idle-timeout": session_idle_timeout,
        "--max-sessions": max_sessions,
        "--url": live.url,
        "--header": list(live.headers),
    }
    if http:
        from harn_mcp_mock.http.guard import GuardSettings

        with handle_errors(prog):
            guard = GuardSettings.for_host(
                host,
                allow_origins=allow_origin or [],
                allow_hosts=allow_host or [],
                max_body_bytes=max_body_bytes,
                session_idle_timeout=session_idle_timeout,
                max_sessions=max_sessions,
            )
        return _replay_http_main(
            prog,
            cassette,
            live=live,
            mode=mode,
            strict=strict,
            report=report,
            options=options,
            emit_tape=emit_tape,
            host=host,
            port=port,
            allow_remote=allow_remote,
            guard=guard,
        )
    from harn_mcp_mock.shutdown import StopSignals

    with StopSignals() as stop, handle_errors(prog):
        _only_with("--http", http_only)
        from harn_mcp_mock.stdio.run import run_replay

        outcome = run_replay(
            cassette,
            live=live,
            mode=mode,
            report_path=report,
            options=options,
            on_event=lambda text: note(prog, text),
            emit_tape=emit_tape,
            stop_fd=stop.fd,
        )
    return _replay_exit(prog, outcome, strict, stop.exit_code)


def _check_outputs(*paths: Path | None) -> None:
    """The files a command writes at its end, refused now (OutputError, exit 2) if they cannot be
    written there: before it serves, records or scores anything a user would lose."""
    if any(path is not None for path in paths):
        from harn_mcp_mock.store.cas import check_writable

        check_writable(*paths)


def _only_with(needed: str, flags: Mapping[str, object]) -> None:
    """A usage error naming the first of ``flags`` given (not None, not an empty list): each
    applies only with the ``needed`` flag, which the command line lacks."""
    given = [flag for flag, value in flags.items() if value is not None and value != []]
    if given:
        from harn_mcp_mock.errors import UsageError

        raise UsageError(f"{given[0]} applies to {needed} only", where=given[0])


def _replay_exit(prog: str, outcome: ReplayOutcome, strict: bool, stopped: int | None) -> int:
    """--strict's verdict, unless a stop signal ended the run (then 128 + N, as shells expect)."""
    if strict and not outcome.clean:
        note(prog, f"--strict: {outcome.problem_summary()}")
        return 1 if stopped is None else stopped
    return outcome.exit_code if stopped is None else stopped


def _replay_http_main(
    prog: str,
    cassette: Path,
    *,
    live: LiveTarget,
    mode: str,
    strict: bool,
    report: Path | None,
    options: ReplayOptions,
    emit_tape: Path | None,
    host: str,
    port: int,
    allow_remote: bool,
    guard: GuardSettings,
) -> int:
    """`harn mcp mock replay --http`: the session the mode plans, over Streamable HTTP (docs/http.md)."""
    from harn_mcp_mock.shutdown import StopSignals

    with StopSignals() as stop, handle_errors(prog):
        from harn_mcp_mock.http.run import run_http_session

        outcome = run_http_session(
            cassette,
            mode=mode,
            live=live,
            host=host,
            port=port,
            allow_remote=allow_remote,
            guard=guard,
            report_path=report,
            options=options,
            emit_tape=emit_tape,
            on_event=lambda text: note(prog, text),
            stop=stop,
        )
    return _replay_exit(prog, outcome, strict, stop.exit_code)


def record_main(
    cassette: Path,
    *,
    live: LiveTarget | None = None,
    options: RecordOptions | None = None,
    quiet: bool = False,
    emit_tape: Path | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    allow_remote: bool = False,
    allow_origin: list[str] | None = None,
    allow_host: list[str] | None = None,
    max_body_bytes: int | None = None,
) -> int:
    """`harn mcp mock record`: the server's exit code (stdio), 0 (``--url``), 5 nothing recorded.
    ``live`` (the server: a command, or a URL and headers) and ``options`` (how to record) are
    built where the command line is read."""
    prog = "harn mcp mock record"
    from harn_mcp_mock.options import LiveTarget, RecordOptions

    live = live if live is not None else LiveTarget()
    options = options if options is not None else RecordOptions()
    if live.url is not None:
        with handle_errors(prog):
            from harn_mcp_mock.http.guard import GuardSettings
            from harn_mcp_mock.http.record_proxy import record_http

            guard = GuardSettings.for_host(
                host,
                allow_origins=allow_origin or [],
                allow_hosts=allow_host or [],
                max_body_bytes=max_body_bytes,
            )
            recorded, _proxy = record_http(
                cassette,
                live,
                options,
                host=host,
                port=port,
                allow_remote=allow_remote,
                guard=guard,
                on_event=lambda text: note(prog, text),
                emit_tape=emit_tape,
            )
            if not quiet:
                from harn_mcp_mock.cassette.unanswered import unanswered_note

                note(
                    prog,
                    f"wrote {cassette} ({len(recorded.messages)} messages, {recorded.meta['exit']['reason']}"
                    f"{unanswered_note(recorded)})",
                )
        return 0
    with handle_errors(prog):
        http_only = {
            "--allow-origin": allow_origin,
            "--allow-host": allow_host,
            "--max-body-bytes": max_body_bytes,
        }
        _only_with("--url", http_only)
        from harn_mcp_mock.record.session import record_command

        result = record_command(
            live,
            cassette,
            options,
            emit_tape=emit_tape,
            on_event=lambda text: note(prog, text),
        )
        if not quiet:
            from harn_mcp_mock.cassette.unanswered import unanswered_note

            counts = result.counts
            note(
                prog,
                f"wrote {cassette} ({counts['client']} client, {counts['server']} server, "
                f"{counts['invalid']} invalid messages; server exit {result.exit_code}, {result.reason}"
                f"{unanswered_note(result.cassette)})",
            )
    return result.exit_code


def show_main(
    cassette: Path,
    *,
    as_json: bool = False,
    fmt: str = "text",
    out: Path | None = None,
    faults: str | None = None,
    seed: int = 0,
    run_id: str = "run",
) -> int:
    """`harn mcp mock show`: the summary (or its page) on stdout or in ``out``; 0, or an error's code."""
    prog = "harn mcp mock show"
    with handle_errors(prog):
        from harn_mcp_mock.cassette.model import load_cassette
        from harn_mcp_mock.cassette.summary import render_summary, summarise
        from harn_mcp_mock.errors import UsageError

        if fmt not in ("text", "json", "html"):
            raise UsageError(f"unknown format {fmt!r}: use text, json, html", where="--format")
        as_json = as_json or fmt == "json"
        loaded = load_cassette(cassette)
        summary = summarise(loaded)
        if fmt == "html":
            if faults is not None:
                raise UsageError("--faults is a text or JSON dry run, not part of the page", where="--faults")
            from harn_mcp_mock.report import cassette_report_data, render_page

            _emit(render_page(cassette_report_data(loaded, summary)).encode(), out)
            if out is not None:
                note(prog, f"wrote {out}")
            return 0
        plan = None
        if faults is not None:
            from harn_mcp_mock.faults.overlay import fault_plan, render_plan
            from harn_mcp_mock.faults.rules import load_rules

            plan = fault_plan(load_rules(faults), loaded, seed=seed, run_id=run_id)
        if as_json:
            import orjson

            doc = orjson.loads(render_summary(summary, as_json=True))
            if plan is not None:
                doc["faults"] = plan
            text = orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"
        else:
            text = render_summary(summary, as_json=False)
            if plan is not None:
                text += render_plan(plan)
        _emit(text.encode(), out)
        for rule in (plan or {}).get("rules", ()):
            if rule["never"]:
                note(prog, f"warning: fault {rule['fault']!r} can never fire: {rule['never']}")
    return 0


def _emit(data: bytes, out: Path | None) -> None:
    """``data`` written to ``out`` (atomically), or to stdout."""
    if out is None:
        import os

        os.write(1, data)
        return
    from harn_mcp_mock.store.cas import atomic_write

    atomic_write(out, data)


def verify_main(
    cassette: Path,
    *,
    live: LiveTarget | None = None,
    options: VerifyOptions | None = None,
    candidate: Path | None = None,
    save_candidate: Path | None = None,
    fmt: str = "text",
    report: Path | None = None,
    fail_on: str = "ERR",
    ignore_file: Path | None = None,
    redact_policy: Path | None = None,
) -> int:
    """`harn mcp mock verify`; returns 0 (no drift at or above --fail-on), 1 (drift) or 2 (cannot
    compare). ``live`` (the live server and its answers' timeout) and ``options`` (how to
    compare) are built where the command line is read."""
    import os
    import sys

    from harn_mcp_mock.errors import HarnError, UsageError

    prog = "harn mcp mock verify"
    try:
        from harn_mcp_mock.findings.model import Severity
        from harn_mcp_mock.store.cas import atomic_write
        from harn_mcp_mock.verify.report import FORMATS, github_step_summary, render
        from harn_mcp_mock.verify.run import verify

        if fmt not in FORMATS:
            raise UsageError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}", where="--format")
        threshold = Severity.parse(fail_on)
        _check_outputs(report, save_candidate)
        result = verify(
            cassette,
            candidate=candidate,
            live=live,
            save_candidate=save_candidate,
            ignore_file=ignore_file,
            options=options,
            policy_path=redact_policy,
            on_event=lambda text: note(prog, text),
        )
    except HarnError as exc:
        note(prog, f"error: {exc}")
        return 2  # the inputs could not be compared
    color = fmt == "text" and report is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    text = render(result, fmt, fail_on=threshold, color=color)
    if report is not None:
        try:
            atomic_write(report, text.encode())
        except HarnError as exc:
            note(prog, f"error: {exc}")
            return 2  # not 1: that would say the cassette drifted
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if fmt == "github" and summary_file:
        with open(summary_file, "a", encoding="utf-8") as fh:
            fh.write(github_step_summary(result, threshold))
    return result.exit_code(threshold)


def world_main(
    spec: Path,
    *,
    task: str | None = None,
    seed: int = 0,
    run_id: str = "run",
    faults: str | None = None,
    state_out: Path | None = None,
    report: Path | None = None,
    emit_tape: Path | None = None,
    server: str | None = None,
) -> int:
    """`harn mcp mock world`: serve the world on stdio; on stdin close write the state and report."""
    from harn_mcp_mock.shutdown import StopSignals

    prog = "harn mcp mock world"
    with StopSignals() as stop, handle_errors(prog):
        from harn_mcp_mock.shipped import resolve_spec
        from harn_mcp_mock.world.run import serve_world

        _check_outputs(state_out, report)
        engine = serve_world(
            resolve_spec(spec),
            task=task,
            seed=seed,
            run_id=run_id,
            faults=faults,
            emit_tape=emit_tape,
            stop_fd=stop.fd,
            server=server,
        )
        if state_out is not None or report is not None:
            from harn_mcp_mock.scoring.world_report import write_world_files

            write_world_files(engine, state_out=state_out, report=report)
    return stop.exit_code or 0


def llm_main(spec: Path, *, policy: str, port: int) -> int:
    """`harn mcp mock llm`: serve the scripted endpoint until a stop signal."""
    from harn_mcp_mock.errors import UsageError

    prog = "harn mcp mock llm"
    with handle_errors(prog):
        from harn_mcp_mock.http.server import HttpServer
        from harn_mcp_mock.llm.policy import POLICIES
        from harn_mcp_mock.llm.server import LlmEndpoint, load_world

        if policy not in POLICIES:
            raise UsageError(f"unknown policy {policy!r} (policies: {', '.join(POLICIES)})", where="--policy")
        app = LlmEndpoint.from_env(load_world(spec), policy)  # type: ignore[arg-type]
        server = HttpServer(app, port=port, path="/v1")
        server.run()
    return 128 + server.stopped_by if server.stopped_by else 0


def world_check_main(spec: Path, *, as_json: bool = False) -> int:
    """`harn mcp mock world check`; 0 ok, 1 problems, 2 invalid spec."""
    import sys

    import orjson

    prog = "harn mcp mock world check"
    with handle_errors(prog):
        from harn_mcp_mock.scoring.world_check import check_world
        from harn_mcp_mock.shipped import resolve_spec

        result = check_world(resolve_spec(spec))
    if as_json:
        doc = {"spec": result.spec, "ok": result.ok, "problems": result.problems, "notes": result.notes}
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        for line in result.problems:
            sys.stdout.write(f"problem: {line}\n")
        for line in result.notes:
            sys.stdout.write(f"note: {line}\n")
        verdict = "ok" if result.ok else f"{len(result.problems)} problem(s)"
        sys.stdout.write(f"{spec}: {verdict}\n")
    return 0 if result.ok else 1


def world_init_main(
    cassettes: list[Path],
    out: Path,
    *,
    report: Path | None = None,
    name: str | None = None,
    force: bool = False,
) -> int:
    """`harn mcp mock world init`: scaffold a spec from cassettes; 0 written, 2 bad input (an
    existing ``out``, a spec its user may have edited, is kept unless ``force``)."""
    import sys

    prog = "harn mcp mock world init"
    with handle_errors(prog):
        from harn_mcp_mock.errors import UsageError
        from harn_mcp_mock.store.cas import atomic_write
        from harn_mcp_mock.world.scaffold import report_lines, scaffold, write_scaffold

        if not force and out.is_file():
            raise UsageError(
                "exists: a spec you may have edited is kept; give --force to replace it, or another --out",
                path=out,
            )
        _check_outputs(out, report)
        result = scaffold(cassettes, name=name)
        write_scaffold(result, out)
        lines = [
            f"wrote {out}: {len(result.spec['tools'])} tools, collections "
            + (
                ", ".join(c.name + (f" (key {c.key})" if c.key else " (list)") for c in result.collections)
                or "none"
            ),
            "the recorded session replayed against it:",
            *report_lines(result.outcomes, result.spec),
            f"next: edit the todo fields, then `harn mcp mock world check --spec {out}`",
        ]
        text = "\n".join(lines) + "\n"
        if report is not None:
            atomic_write(report, text.encode())
        sys.stdout.write(text)
    return 0


def eval_main(
    specs: list[Path],
    states: list[Path],
    *,
    task: str | None = None,
    faults: str | None = None,
    k: int | None = None,
    fmt: str = "text",
    report: Path | None = None,
    confidence: float = 0.95,
    power: float | None = None,
    alpha: float = 0.05,
) -> int:
    """`harn mcp mock eval`; 0 scored, 2 unusable input."""
    import sys

    prog = "harn mcp mock eval"
    with handle_errors(prog):
        from harn_mcp_mock.scoring.eval import score_runs
        from harn_mcp_mock.scoring.render import render
        from harn_mcp_mock.shipped import resolve_spec
        from harn_mcp_mock.store.cas import atomic_write
        from harn_mcp_mock.world.spec import load_spec

        _check_outputs(report)
        result = score_runs(
            [load_spec(resolve_spec(p)) for p in specs],
            states,
            task=task,
            faults=faults,
            max_k=k,
            confidence=confidence,
            power_drop=power,
            alpha=alpha,
        )
        text = render(result, fmt)
        if report is not None:
            atomic_write(report, text.encode())
        else:
            sys.stdout.write(text)
    return 0


def world_list_main(*, as_json: bool = False) -> int:
    """`harn mcp mock world list`: the shipped worlds with their tasks (and where the agent is)."""
    import sys
    import textwrap

    import orjson

    from harn_mcp_mock.shipped import agent_example, shipped_worlds

    worlds = shipped_worlds()
    if as_json:
        doc = {"worlds": [w.to_dict() for w in worlds], "agent_example": str(agent_example())}
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    out = []
    for w in worlds:
        out.append(f"{w.name}  ({w.path})")
        out += textwrap.wrap(w.description, 78, initial_indent="  ", subsequent_indent="  ")
        out += textwrap.wrap(
            "tasks: " + ", ".join(t["id"] for t in w.tasks),
            78,
            initial_indent="  ",
            subsequent_indent="    ",
            break_on_hyphens=False,
        )
        if w.fault_profiles:
            out.append("  fault profiles: " + ", ".join(w.fault_profiles))
        if len(w.servers) > 1:
            out.append("  servers: " + ", ".join(f"{s['name']} ({len(s['tools'])} tools)" for s in w.servers))
        out.append("")
    first = worlds[0] if worlds else None
    if first is not None:
        out.append(f"serve one:  harn mcp mock world --spec {first.name} --task {first.tasks[0]['id']}")
    out.append(f"agent:      python {agent_example()} --spec NAME --task TASK")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def docs_main(topic: str | None) -> int:
    """`harn mcp mock docs [TOPIC]`: print a shipped doc, or list the topics with their titles."""
    import sys

    with handle_errors("harn mcp mock docs"):
        from harn_mcp_mock.shipped import doc_path, doc_topics

        if topic is not None:
            sys.stdout.write(doc_path(topic).read_text(encoding="utf-8"))
            return 0
        lines = []
        for name in doc_topics():
            first = doc_path(name).read_text(encoding="utf-8").split("\n", 1)[0]
            lines.append(f"{name:<22} {first.lstrip('# ').strip()}")
        sys.stdout.write("\n".join(lines) + "\n\nprint one: harn mcp mock docs TOPIC\n")
    return 0


def parse_timeout(text: str) -> float | None:
    """``--timeout``: seconds above 0, or ``none`` / ``off`` for no limit (UsageError otherwise)."""
    from harn_mcp_mock.errors import UsageError

    if text.strip().lower() in ("none", "off"):
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise UsageError(
            f"must be a number of seconds above 0, or none for no limit; got {text!r}", where="--timeout"
        )
    return value


def run_main(
    specs: list[Path] | None = None,
    agent: list[str] | None = None,
    *,
    tasks: list[str] | None = None,
    k: int = 1,
    seed: int = 0,
    faults: list[str] | None = None,
    workers: int | None = None,
    out: Path = Path("harn-run"),
    timeout: str | float | None = "600",
    max_retries: int = 1,
    min_pass_k: list[str] | None = None,
    min_pass_rate: float | None = None,
    force: bool = False,
    backend: str = "local",
    ray_address: str | None = None,
    baseline: Path | None = None,
    fail_on_regression: bool = False,
    strict_power: bool = False,
    grace: float = 5.0,
    output_cap: int = 1 << 20,
    alpha: float = 0.05,
    gate_on: str = "point",
    max_tokens: int | None = None,
    max_cost: float | None = None,
    run_max_cost: float | None = None,
    plan: bool = False,
    preload: list[str] | None = None,
    sandbox: str = "auto",
    llm: str | None = None,
    verbose: bool = False,
    strict_exit: bool = False,
) -> int:
    """`harn mcp mock run`: the episode runner (docs/runner.md); returns the exit code."""
    import signal
    import sys

    specs, agent, tasks, faults = specs or [], agent or [], tasks or [], faults or []
    min_pass_k = min_pass_k or []

    from harn_mcp_mock.runner.process import Control
    from harn_mcp_mock.shutdown import StopSignals

    prog = "harn mcp mock run"
    if plan:
        with handle_errors(prog):
            sys.stdout.write(_run_plan(specs, tasks, k, seed, faults, baseline, alpha))
        return 0
    control = Control(grace)

    def on_signal(signum: int) -> None:
        if control.stopping and signum == signal.SIGINT:
            control.kill_now()
            sys.stderr.write(f"{prog}: stopping the running trials now\n")
        elif not control.stopping:
            control.stop()
            sys.stderr.write(
                f"{prog}: stopping: waiting up to {control.grace:g} s for {control.running} running "
                "trial(s) (Ctrl-C again to stop them now)\n"
            )

    with StopSignals() as signals, handle_errors(prog):
        signals.on_signal(on_signal)
        from harn_mcp_mock.cli.progress import trial_progress
        from harn_mcp_mock.runner.run import parse_gates, run_episodes, summarise_failures

        gates = parse_gates(min_pass_k, min_pass_rate, gate_on)
        from harn_mcp_mock.runner.budget import Budget

        budget = Budget(max_tokens, max_cost, run_max_cost)
        if not 0 < alpha < 1:
            from harn_mcp_mock.errors import UsageError

            raise UsageError(f"alpha must be between 0 and 1, got {alpha!r}", where="--alpha")
        if fail_on_regression and baseline is None:
            from harn_mcp_mock.errors import UsageError

            raise UsageError("--fail-on-regression needs --baseline DIR", where="--fail-on-regression")
        if strict_power and baseline is None:
            from harn_mcp_mock.errors import UsageError

            raise UsageError("--strict-power needs --baseline DIR", where="--strict-power")
        if baseline is not None and _blind_baseline(prog, specs, tasks, k, seed, faults, alpha, strict_power):
            return 2
        from harn_mcp_mock.runner.backend import BackendOptions
        from harn_mcp_mock.runner.run import RunOptions
        from harn_mcp_mock.runner.trial import TrialSettings

        trial = TrialSettings(
            timeout=parse_timeout(timeout) if isinstance(timeout, str) else timeout,
            grace=grace,
            max_retries=max_retries,
            output_cap=output_cap,
            preload=tuple(preload or ()),
            budget=budget,
            strict_exit=strict_exit,
            llm=llm,
            sandbox=sandbox,
        )
        options = RunOptions(
            tasks=tuple(tasks),
            k=k,
            seed=seed,
            faults=tuple(faults),
            trial=trial,
            gates=tuple(gates),
            force=force,
            backend=backend,
            backend_options=BackendOptions(workers=workers, address=ray_address),
            baseline=baseline,
            alpha=alpha,
        )
        with trial_progress(sys.stdout, lines=verbose) as progress:
            outcome = run_episodes(
                specs,
                agent,
                out=out,
                options=options,
                on_trial=progress,
                stop=control,
                on_note=lambda text: note(prog, text),
            )
        from harn_mcp_mock.runner.summary import nonzero_passes, render_summary, shown_path

        sys.stdout.write(
            ("\n" if verbose else "") + render_summary(outcome.trials, outcome.result, out.resolve())
        )
        kinds = summarise_failures(outcome.trials, outcome.result)
        failures = ", ".join(f"{n} {kind}" for kind, n in kinds.items() if n)
        odd = nonzero_passes(outcome.trials, outcome.result)
        apart = f"; {odd} passed, but the agent exited non-zero" if odd else ""
        results = shown_path((out / "results.json").resolve())
        sys.stdout.write(f"\nfailures by kind: {failures or 'none'}{apart}\nresults: {results}\n")
        if outcome.comparison is not None:
            from harn_mcp_mock.runner.baseline import render_comparison

            sys.stdout.write("\n" + render_comparison(outcome.comparison))
        if outcome.cap_advice is not None:
            note(prog, outcome.cap_advice)
        elif outcome.pending:
            note(prog, f"{outcome.pending} trial(s) not run: run the same command again to resume")
        for failed in outcome.failed_gates:
            note(prog, f"gate failed: {failed}")
        regressed = outcome.comparison.regressed if outcome.comparison is not None else []
        run_regressed = outcome.comparison is not None and outcome.comparison.run_regressed
        if fail_on_regression and run_regressed and outcome.comparison is not None and outcome.comparison.run:
            note(
                prog,
                f"the run as a whole regressed significantly against the baseline (alpha {alpha:g}, "
                f"p = {outcome.comparison.run.p_value:.3g}, stratified exact test over tasks)",
            )
        if fail_on_regression and regressed:
            names = ", ".join(change.label for change in regressed[:3])
            more = f" (+{len(regressed) - 3} more)" if len(regressed) > 3 else ""
            note(
                prog,
                f"{len(regressed)} task(s) regressed significantly against the baseline "
                f"(alpha {alpha:g}): {names}{more}",
            )
        if outcome.infra_errors:
            note(
                prog,
                f"{outcome.infra_errors} trial(s) ended as infrastructure errors (exit 75: see trial.json)",
            )
        elif not outcome.scored and signals.exit_code is None:
            note(prog, "no trial was scored (exit 75)")
    if signals.exit_code is not None:
        return signals.exit_code
    if outcome.exit_code in (75, 3):  # untrusted figures; a run --run-max-cost stopped
        return outcome.exit_code
    return 1 if outcome.exit_code or (fail_on_regression and (regressed or run_regressed)) else 0


def _blind_baseline(
    prog: str,
    specs: list[Path],
    tasks: list[str],
    k: int,
    seed: int,
    faults: list[str],
    alpha: float,
    strict: bool,
) -> bool:
    """Before any agent of a run with ``--baseline``: say what its comparison can detect, warn
    in one line when it can detect nothing, and with ``--strict-power`` refuse it (True: exit 2)."""
    import sys

    from harn_mcp_mock.runner.baseline import matrix_detectable, power_note
    from harn_mcp_mock.runner.matrix import build_matrix
    from harn_mcp_mock.shipped import resolve_spec
    from harn_mcp_mock.world.spec import read_spec_json

    if not specs:
        return False  # the run refuses it itself
    loaded = [(resolve_spec(spec).resolve(), read_spec_json(resolve_spec(spec))) for spec in specs]
    matrix = build_matrix(loaded, tasks=list(tasks) or None, k=k, seed=seed, faults=list(faults))
    line, warning = power_note(matrix_detectable(matrix, alpha))
    note(prog, line)
    if warning is not None:
        sys.stderr.write(f"{prog}: {'error' if strict else 'warning'}: {warning}\n")
    return strict and warning is not None


def _run_plan(
    specs: list[Path],
    tasks: list[str],
    k: int,
    seed: int,
    faults: list[str],
    baseline: Path | None,
    alpha: float,
) -> str:
    """`run --plan`: the trials the run would start, and the smallest drop in a task's pass rate
    that k trials per task (here and in the run it is compared with) detect at 80% power."""
    from harn_mcp_mock.errors import UsageError
    from harn_mcp_mock.runner.matrix import build_matrix
    from harn_mcp_mock.scoring.stats import detectable_drop
    from harn_mcp_mock.shipped import resolve_spec
    from harn_mcp_mock.world.spec import read_spec_json

    if not 0 < alpha < 1:
        raise UsageError(f"alpha must be between 0 and 1, got {alpha!r}", where="--alpha")
    loaded = [(resolve_spec(spec).resolve(), read_spec_json(resolve_spec(spec))) for spec in specs]
    if not loaded:
        raise UsageError("give at least one --spec", where="--spec")
    matrix = build_matrix(loaded, tasks=list(tasks) or None, k=k, seed=seed, faults=list(faults))
    worlds = sorted({t.world for t in matrix})
    cells = sorted({(t.world, t.task, t.profile) for t in matrix})
    lines = [
        f"plan: {len(matrix)} trials: {len(cells)} task x fault profile pairs of {', '.join(worlds)}, "
        f"k={k} each (nothing runs with --plan)",
        f"with {k} trials per task in this run and in the one it is compared with, two-sided Fisher at "
        f"alpha {alpha:g} detects, 80% of the time, a fall in a task's pass rate of at least:",
    ]

    def drop(rate: float) -> str:
        found = detectable_drop(rate, k, alpha=alpha)
        return f"{found:.3f}" if found is not None else "none (even a fall to 0 needs more trials)"

    lines += [f"  from {rate:.2f}: {drop(rate)}" for rate in (1.0, 0.9, 0.75, 0.5)]
    from harn_mcp_mock.runner.baseline import matrix_detectable

    together = matrix_detectable(matrix, alpha).run_level
    lines.append(
        f"and the run-level test (stratified exact, over its {len(cells)} task(s)) a fall of every "
        f"task's pass rate from 1.00 of at least: {'none' if together is None else f'{together:.3f}'}"
    )
    if baseline is not None:
        from harn_mcp_mock.runner.baseline import load_baseline

        earlier = load_baseline(baseline)
        lines.append(f"from the pass rates of {earlier.path}:")
        for group in earlier.result.groups:
            for task in group.tasks:
                if task.n:
                    rate = task.c / task.n
                    lines.append(
                        f"  {group.world}/{task.task} (faults {group.faults or 'none'}) at {rate:.2f}: {drop(rate)}"
                    )
    lines.append("(harn mcp mock eval --power DROP: the trials a given drop needs)")
    return "\n".join(lines) + "\n"


def report_main(
    run_dir: Path | None, *, out: Path, specs: list[Path], states: list[Path], baseline: Path | None
) -> int:
    """`harn mcp mock report`: 0 written, 2 bad input."""
    prog = "harn mcp mock report"
    with handle_errors(prog):
        from harn_mcp_mock.errors import UsageError
        from harn_mcp_mock.report import eval_report_data, render_page, run_report_data
        from harn_mcp_mock.store.cas import atomic_write

        if run_dir is not None and (specs or states):
            raise UsageError("give a run folder or --spec/--state, not both", where="RUN_DIR")
        if run_dir is not None:
            data = run_report_data(run_dir, baseline=baseline)
        elif specs and states:
            if baseline is not None:
                raise UsageError("--baseline compares run folders: give RUN_DIR", where="--baseline")
            data = eval_report_data(specs, states)
        else:
            raise UsageError(
                "give a run folder (harn mcp mock run --out), or --spec and --state", where="RUN_DIR"
            )
        atomic_write(out, render_page(data).encode())
        note(prog, f"wrote {out} ({len(data['trials'])} trials)")
        return 0
    return 2


def lint_main(
    paths: list[Path],
    *,
    fmt: str = "text",
    report: Path | None = None,
    fail_on: str | None = None,
    max_age: int | None = None,
    config: Path | None = None,
    usage: Path | None = None,
) -> int:
    """`harn mcp mock lint`: 0 clean, 1 findings at or above fail-on, 2 bad input."""
    prog = "harn mcp mock lint"
    with handle_errors(prog):
        import os

        from harn_mcp_mock.errors import UsageError
        from harn_mcp_mock.findings.model import Severity
        from harn_mcp_mock.lint import LINT_FORMATS, lint_paths, load_config, read_usage, render_lint
        from harn_mcp_mock.lint.usage import USAGE_FILE
        from harn_mcp_mock.store.cas import atomic_write

        LINT_FORMATS.get(fmt)  # a bad --format is refused before any work
        root = Path.cwd()
        settings = load_config(root, config)
        if fail_on is not None:
            try:
                settings.fail_on = Severity[fail_on.upper()]
            except KeyError:
                raise UsageError(
                    f"{fail_on!r} is not a severity (ERR, WARN, INFO)", where="--fail-on"
                ) from None
        if max_age is not None:
            if max_age < 0:
                raise UsageError(
                    f"must be a whole number of days, 0 or more, got {max_age}", where="--max-age"
                )
            settings.max_age_days = max_age
        used = read_usage(usage if usage is not None else root / ".pytest_cache" / USAGE_FILE)
        if usage is not None and used is None:
            raise UsageError(
                f"{usage}: not a usage record (the plugin writes .pytest_cache/{USAGE_FILE})", where="--usage"
            )
        result = lint_paths(paths, settings, root=root, used=used)
        text = render_lint(result, fmt, settings.fail_on)
        if report is not None:
            atomic_write(report, text.encode())
        else:
            os.write(1, text.encode())
        return result.exit_code(settings.fail_on)
    return 2
