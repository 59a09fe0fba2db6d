"""`harn mcp mock replay` on stdio: run the session :func:`~harn_mcp_mock.cassette.modes.plan_session`
plans (replay, record, or episodes)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson

from harn_mcp_mock._record import record
from harn_mcp_mock.cassette.modes import RecordMode, SessionKind, parse_record_mode, plan_session
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.options import RecordOptions, ReplayOptions
from harn_mcp_mock.replay.engine import ReplayReport
from harn_mcp_mock.store.cas import atomic_write

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    pass


@record
class ReplayOutcome:
    mode: RecordMode
    report: ReplayReport | None
    exit_code: int = 0

    @property
    def clean(self) -> bool:
        return self.report is None or self.report.clean

    def problem_summary(self) -> str:
        if self.report is None:
            return "recorded"
        r = self.report
        return (
            f"{len(r.misses)} missed request(s), {len(r.unused)} unused recorded interaction(s), "
            f"{len(r.answer_mismatches)} client answer(s) different from the recording"
            + (
                f", {len(r.unanswered)} request(s) recorded without an answer (the session ended there)"
                if r.unanswered
                else ""
            )
        )


def run_replay(
    cassette: str | Path,
    *,
    command: list[str],
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
    to be (a recording tapes what the client and the live server exchanged)."""
    record_mode = parse_record_mode(mode)
    cassette = Path(cassette)
    options = options if options is not None else ReplayOptions()
    if command and record_mode is RecordMode.NONE:
        raise UsageError(
            "--mode none never starts a server: drop the command after `--`, or pick a mode that records"
        )
    plan = plan_session(
        record_mode,
        cassette,
        live=bool(command),
        needs_live="the live server command after `--`",
        on_wait=on_event,
    )
    if plan.kind is SessionKind.RECORD:
        from harn_mcp_mock.record.session import record_command

        result = record_command(
            command,
            cassette,
            RecordOptions(options.redact_policy),
            stdin_fd=stdin_fd,
            stdout_fd=stdout_fd,
            emit_tape=emit_tape,  # the exchanges with the live server, as `record --emit-tape`
            on_event=on_event,
            claim=plan.claim,
        )
        return ReplayOutcome(record_mode, None, result.exit_code)
    if plan.kind is SessionKind.EPISODES:
        from harn_mcp_mock.cassette.claim import recording_claim
        from harn_mcp_mock.replay.episodes import serve_new_episodes

        with recording_claim(cassette, plan.claim):  # appends to the cassette: one writer at a time
            report = serve_new_episodes(
                cassette,
                command,
                options=options,
                on_event=on_event,
                stdin_fd=stdin_fd,
                stdout_fd=stdout_fd,
                stop_fd=stop_fd,
                emit_tape=emit_tape,  # every exchange served, replayed or live
            )
    else:
        from harn_mcp_mock.jsonrpc.server import serve_stdio
        from harn_mcp_mock.replay.session import open_engine

        engine = open_engine(cassette, options, on_event=on_event)
        engine.raw_lines = True  # stdio: the recorded server's non-JSON lines go out where it printed them
        if emit_tape is not None:
            from harn_mcp_mock.tape import TapeWriter
            from harn_mcp_mock.tape.mcp import McpTapeObserver, TapedEngine, redact_again

            server = str((engine.cassette.server.get("serverInfo") or {}).get("name") or cassette.name)
            with TapeWriter(emit_tape, script_path=str(cassette), argv=["replay"]) as writer:
                observer = McpTapeObserver(writer, server)
                if options.fault_rules:  # the tape marks the exchanges that got an injected fault
                    engine.on_fire = lambda fired: observer.mark_fault(fired["id"], fired)  # type: ignore[attr-defined]
                taped = TapedEngine(engine, observer, engine.redactor.redact_message)
                try:
                    serve_stdio(
                        taped, stdin_fd=stdin_fd, stdout_fd=stdout_fd, on_event=on_event, stop_fd=stop_fd
                    )
                    observer.finish()  # requests never answered (a hang, a disconnect) are on the tape too
                finally:
                    writer.close()
                    redact_again([engine.redactor], tape=writer.path)
        else:
            serve_stdio(engine, stdin_fd=stdin_fd, stdout_fd=stdout_fd, on_event=on_event, stop_fd=stop_fd)
        report = engine.finish()
    if report_path is not None:
        atomic_write(Path(report_path), orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2) + b"\n")
    return ReplayOutcome(record_mode, report)
