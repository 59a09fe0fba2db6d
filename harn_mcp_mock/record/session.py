"""Record a stdio server end to end: policy -> redactor -> proxy -> cassette."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from harn_mcp_mock.cassette.claim import CassetteClaim, recording_claim
from harn_mcp_mock.clock import SYSTEM_CLOCK, Clock
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.options import LiveTarget, RecordOptions
from harn_mcp_mock.record.proxy import RecordResult, record_stdio
from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.session.recorder import MessageRedactor, Recorder
from harn_mcp_mock.session.recorders import new_recorder


def load_policy(policy_path: str | Path | None) -> RedactionPolicy:
    return RedactionPolicy.load(policy_path) if policy_path is not None else RedactionPolicy.default()


def record_command(
    live: LiveTarget | Sequence[str],
    cassette: str | Path,
    options: RecordOptions | None = None,
    *,
    env: Mapping[str, str] | None = None,
    clock: Clock = SYSTEM_CLOCK,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    emit_tape: str | Path | None = None,
    claim: CassetteClaim | None = None,
    on_event: Callable[[str], None] | None = None,
) -> RecordResult:
    """Record ``live`` (a stdio MCP server: a :class:`~harn_mcp_mock.options.LiveTarget` with a
    command, or the command itself) into ``cassette`` while proxying our stdio to it.

    ``options`` says how (policy, shutdown grace, ``allow_empty``). ``emit_tape`` also writes
    every exchange, redacted, as ``mcp_json_rpc`` records of an event tape. ``claim`` is the
    cassette's recording claim when the caller holds it already (record mode once). A session
    in which the client sent no message raises
    :class:`~harn_mcp_mock.errors.NothingRecordedError` and leaves ``cassette`` as it was, unless
    ``options.allow_empty``. ``on_event`` gets the lines for the human (what a stop signal does).
    """
    target = live if isinstance(live, LiveTarget) else LiveTarget(live)
    if target.url is not None:
        raise UsageError("a stdio recording needs the server's command, not a URL", where="--url")
    command = target.command
    if not command:
        raise UsageError("no server command: put it after `--`, e.g. `-- mcp-server-time`")
    opts = options if options is not None else RecordOptions()
    with recording_claim(cassette, claim):  # one recorder per cassette; see cassette/claim.py
        return _record_claimed(
            command,
            Path(cassette),
            opts,
            env=env,
            clock=clock,
            stdin_fd=stdin_fd,
            stdout_fd=stdout_fd,
            emit_tape=emit_tape,
            on_event=on_event,
        )


def _record_claimed(
    command: Sequence[str],
    cassette: Path,
    options: RecordOptions,
    *,
    env: Mapping[str, str] | None,
    clock: Clock,
    stdin_fd: int,
    stdout_fd: int,
    emit_tape: str | Path | None,
    on_event: Callable[[str], None] | None,
) -> RecordResult:
    policy = load_policy(options.redact_policy)
    server_env = dict(os.environ if env is None else env)
    redactor = policy.redactor(argv=list(command), env=server_env)
    tape = observer = None
    if emit_tape is not None:
        from harn_mcp_mock.session.tape import RecordingTape

        shown = redactor.redact_argv(list(command))
        tape = RecordingTape(emit_tape, clock=clock, script_path=shown[0], argv=shown[1:])
        tape.redactors.append(redactor)
        observer = tape.observer(Path(shown[0]).name)
    recorder = new_recorder(
        cassette, policy, list(command), redactor=redactor, clock=clock, observer=observer
    )
    try:
        return record_stdio(
            command,
            recorder,
            env=server_env,
            stdin_fd=stdin_fd,
            stdout_fd=stdout_fd,
            grace=options.grace,
            on_event=on_event,
            allow_empty=options.allow_empty,
        )
    finally:
        if tape is not None:  # the requests never answered (the server died, the client left) too
            tape.close()


def command_recorder(
    command: Sequence[str], cassette: str | Path, policy: RedactionPolicy
) -> tuple[Recorder, list[str]]:
    """(recorder, the redacted command) for recording the stdio server ``command``."""
    recorder = new_recorder(cassette, policy, list(command))
    return recorder, recorder.command


def http_recorder(
    cassette: str | Path,
    live: LiveTarget,
    *,
    policy_path: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[Recorder, MessageRedactor, dict[str, str]]:
    """(recorder, redactor, parsed ``--header`` values) for recording the Streamable HTTP
    server ``live`` (its URL and headers) into ``cassette``; the header values are secrets to
    the redactor."""
    from harn_mcp_mock.cassette.claim import check_no_journal

    cassette = Path(cassette)
    check_no_journal(cassette)
    # Every `--header` value is a secret to the redactor (but for harmless headers such as
    # Accept): replaced in the recorded command line and wherever it comes back.
    recorder = new_recorder(cassette, load_policy(policy_path), live.argv, env=env, transport="http")
    return recorder, recorder.redactor, live.header_map()
