"""`harn mcp mock replay` on stdio: run the session :func:`~harn_mcp_mock.cassette.modes.plan_session`
plans (replay, record, or episodes), built by :func:`~harn_mcp_mock.session.open.open_session`.

A replay's engine and episodes' are served by :func:`~harn_mcp_mock.jsonrpc.server.serve_stdio`
(episodes line by line: the client's lines and the live server's output as they come); a
recording by the byte-faithful stdio proxy (:func:`~harn_mcp_mock.record.session.record_command`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import orjson

from harn_mcp_mock.cassette.modes import RecordMode, SessionKind, SessionPlan, parse_record_mode, plan_session
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.options import LiveTarget, RecordOptions, ReplayOptions
from harn_mcp_mock.replay.engine import ReplayReport
from harn_mcp_mock.session.open import ReplayOutcome, Session, open_session
from harn_mcp_mock.store.cas import atomic_write

__all__ = ["ReplayOutcome", "run_replay", "serve_new_episodes"]


def run_replay(
    cassette: str | Path,
    *,
    live: LiveTarget | None = None,
    mode: str = "none",
    report_path: str | Path | None = None,
    options: ReplayOptions | None = None,
    on_event: Callable[[str], None] | None = None,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    emit_tape: str | Path | None = None,
    stop_fd: int | None = None,
) -> ReplayOutcome:
    """Replay (or record, as ``mode`` says) until the client disconnects or ``stop_fd`` turns
    readable (a stop signal: :mod:`harn_mcp_mock.shutdown`); then write ``report_path``.
    ``emit_tape``: also write every exchange to an event tape, whatever the session turned out
    to be (a recording tapes what the client and the live server exchanged). ``live``: the live
    server's command, for the modes that record."""
    record_mode = parse_record_mode(mode)
    cassette = Path(cassette)
    options = options if options is not None else ReplayOptions()
    live = live if live is not None else LiveTarget()
    if live.url is not None:
        raise UsageError("--url applies to --http only", where="--url")
    if live and record_mode is RecordMode.NONE:
        raise UsageError(
            "--mode none never starts a server: drop the command after `--`, or pick a mode that records"
        )
    plan = plan_session(
        record_mode,
        cassette,
        live=bool(live),
        needs_live="the live server command after `--`",
        on_wait=on_event,
    )
    if plan.kind is SessionKind.RECORD:
        from harn_mcp_mock.record.session import record_command

        result = record_command(
            live,
            cassette,
            RecordOptions(options.redact_policy),
            stdin_fd=stdin_fd,
            stdout_fd=stdout_fd,
            emit_tape=emit_tape,  # the exchanges with the live server, as `record --emit-tape`
            on_event=on_event,
            claim=plan.claim,
        )
        return ReplayOutcome(record_mode, None, result.exit_code)
    argv = ["replay", "--mode", "new_episodes"] if plan.kind is SessionKind.EPISODES else ["replay"]
    with open_session(
        plan, live, options, tape=emit_tape, tape_argv=argv, on_event=on_event, raw_lines=True
    ) as session:
        report = _serve(session, stdin_fd, stdout_fd, on_event, stop_fd)
    if report_path is not None:
        atomic_write(Path(report_path), orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2) + b"\n")
    return ReplayOutcome(record_mode, report)


def serve_new_episodes(
    cassette: str | Path,
    live: LiveTarget | Sequence[str],
    *,
    options: ReplayOptions | None = None,
    on_event: Callable[[str], None] | None = None,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    grace: float = 5.0,
    stop_fd: int | None = None,
    emit_tape: str | Path | None = None,
) -> ReplayReport:
    """Serve until the client's EOF (or ``stop_fd`` turns readable: a stop signal); append
    what the live server (``live``, or its command) recorded. ``emit_tape``: also write every exchange served, replayed
    or live, redacted, to an event tape (wired by
    :func:`~harn_mcp_mock.session.open.open_session`)."""
    plan = SessionPlan.of(SessionKind.EPISODES, Path(cassette))
    argv = ["replay", "--mode", "new_episodes"]
    with open_session(
        plan, LiveTarget.of(live), options, tape=emit_tape, tape_argv=argv, on_event=on_event, grace=grace
    ) as session:
        return _serve(session, stdin_fd, stdout_fd, on_event, stop_fd)


def _serve(
    session: Session,
    stdin_fd: int,
    stdout_fd: int,
    on_event: Callable[[str], None] | None,
    stop_fd: int | None,
) -> ReplayReport:
    """Serve the session's engine on stdio (a replay; episodes line by line, the live server's
    output relayed as it comes) until the client's EOF or ``stop_fd``; its report."""
    from harn_mcp_mock.jsonrpc.server import serve_stdio

    engine = session.engine(stop_fd)
    try:
        serve_stdio(engine, stdin_fd=stdin_fd, stdout_fd=stdout_fd, on_event=on_event, stop_fd=stop_fd)
    except BaseException:
        abort = getattr(engine, "abort", None)  # episodes: the live server killed, the journal kept
        if abort is not None:
            abort()
        raise
    session.retire(engine)
    return session.report()
