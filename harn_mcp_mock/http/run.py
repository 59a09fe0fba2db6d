"""What the CLI calls for ``replay --http`` (:func:`run_http_session`, whatever the record mode)
and ``record --url`` (:func:`~harn_mcp_mock.http.record_proxy.record_http`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from harn_mcp_mock.http.guard import GuardSettings
from harn_mcp_mock.http.replay_server import SseMode, build_app, redirect_paths
from harn_mcp_mock.http.server import HttpServer, print_url
from harn_mcp_mock.jsonrpc.codes import INVALID_REQUEST
from harn_mcp_mock.jsonrpc.server import Engine, Out
from harn_mcp_mock.options import ReplayOptions
from harn_mcp_mock.replay.engine import ReplayEngine, ReplayReport

if TYPE_CHECKING:
    from harn_mcp_mock.cassette.claim import CassetteClaim
    from harn_mcp_mock.cassette.model import Cassette
    from harn_mcp_mock.cassette.modes import SessionPlan
    from harn_mcp_mock.replay.run import ReplayOutcome
    from harn_mcp_mock.session.recorder import MessageRedactor
    from harn_mcp_mock.session.tape import RecordingTape
    from harn_mcp_mock.shutdown import StopSignals


class ReportMerger:
    """Folds the reports of sessions' engines into one, an engine at a time (an ended session's
    engine is folded in and then freed): counts and misses add up; an interaction is unused
    only if no session used it (sessions of one replay share their interactions, see
    :meth:`ReplayEngine.continue_from`, so that is one judgement over all of them)."""

    def __init__(self, cassette: str | None) -> None:
        self.merged = ReplayReport(cassette)
        self.count = 0
        self._unused: dict[int, dict[str, object]] | None = None

    def add(self, engine: ReplayEngine) -> None:
        report = engine.finish()
        merged = self.merged
        merged.requests += report.requests
        merged.hits += report.hits
        merged.recorded += report.recorded
        merged.misses.extend(report.misses)
        merged.answer_mismatches.extend(report.answer_mismatches)
        merged.unanswered.extend(report.unanswered)
        if report.faults_fired is not None:
            merged.faults_fired = [*(merged.faults_fired or []), *report.faults_fired]
        mine = {int(entry["seq"]): entry for entry in report.unused}
        unused = self._unused
        self._unused = mine if unused is None else {seq: e for seq, e in unused.items() if seq in mine}
        self.count += 1

    def result(self) -> ReplayReport:
        self.merged.unused = list((self._unused or {}).values())
        return self.merged


def merge_reports(engines: Sequence[ReplayEngine], cassette: str | None) -> ReplayReport:
    """One report for every session's engine (see :class:`ReportMerger`)."""
    merger = ReportMerger(cassette)
    for engine in engines:
        merger.add(engine)
    return merger.result()


def run_replay_http(
    cassette: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    allow_remote: bool = False,
    sse: SseMode = "auto",
    report_path: str | Path | None = None,
    options: ReplayOptions | None = None,
    on_event: Callable[[str], None] | None = None,
    on_ready: Callable[[str], None] | None = print_url,
    on_server: Callable[[HttpServer], None] | None = None,
    stop: StopSignals | None = None,
    guard: GuardSettings | None = None,
    emit_tape: str | Path | None = None,
) -> ReplayReport:
    """Serve ``cassette`` over Streamable HTTP until ``server.stop()`` or a stop signal (caught by
    ``stop``, see :meth:`HttpServer.run`); write ``report_path``; the merged report of all sessions.
    ``guard``: the Origin/Host/body-size checks and session limits (defaults for ``host``).
    ``emit_tape``: also write every exchange of every session, in the order served, to one event
    tape (as stdio replay's ``--emit-tape``)."""
    from harn_mcp_mock.replay.session import engine_factory
    from harn_mcp_mock.store.cas import atomic_write

    redactors: list[Any] = []  # each session's request redactor, when a tape is written
    try:
        with contextlib.ExitStack() as stack:
            make = engine_factory(cassette, options, on_event=on_event)  # fails now, before a URL
            if emit_tape is not None:
                make = _taped(make, cassette, emit_tape, options, stack, redactors)
            report = _serve_replay(
                make, cassette, host, port, allow_remote, sse, on_event, on_ready, on_server, stop, guard
            )
    finally:
        if emit_tape is not None and Path(emit_tape).exists():
            from harn_mcp_mock.tape.mcp import redact_again

            redact_again(redactors, tape=Path(emit_tape))  # a secret a later request told
    if report_path is not None:
        atomic_write(Path(report_path), orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2) + b"\n")
    return report


def _taped(
    make: Callable[[], ReplayEngine],
    cassette: str | Path,
    emit_tape: str | Path,
    options: ReplayOptions | None,
    stack: contextlib.ExitStack,
    redactors: list[Any],
) -> Callable[[], ReplayEngine]:
    """``make``, with each engine's exchanges also written to the tape at ``emit_tape``; each
    engine's redactor is added to ``redactors``."""
    from harn_mcp_mock.tape import TapeWriter
    from harn_mcp_mock.tape.mcp import McpTapeObserver, TapedEngine

    writer = stack.enter_context(TapeWriter(emit_tape, script_path=str(cassette), argv=["replay", "--http"]))
    holder: list[McpTapeObserver] = []

    def taped() -> ReplayEngine:
        engine = make()
        redactors.append(engine.redactor)
        if not holder:
            server = str((engine.cassette.server.get("serverInfo") or {}).get("name") or Path(cassette).name)
            holder.append(McpTapeObserver(writer, server))
            stack.callback(holder[0].finish)  # requests never answered are on the tape too
        observer = holder[0]
        if options is not None and options.fault_rules:
            engine.on_fire = lambda fired: observer.mark_fault(fired["id"], fired)  # type: ignore[attr-defined]
        return TapedEngine(engine, observer, engine.redactor.redact_message)  # type: ignore[return-value]

    return taped


def _serve_replay(
    make: Callable[[], ReplayEngine],
    cassette: str | Path,
    host: str,
    port: int,
    allow_remote: bool,
    sse: SseMode,
    on_event: Callable[[str], None] | None,
    on_ready: Callable[[str], None] | None,
    on_server: Callable[[HttpServer], None] | None,
    stop: StopSignals | None,
    guard: GuardSettings | None,
) -> ReplayReport:

    engines: list[ReplayEngine] = []
    origin: list[ReplayEngine] = []
    # The first engine made (the check below): every session's engine shares its interactions.

    def factory() -> ReplayEngine:
        engine = make()
        if origin:  # every session goes on with the one recorded sequence (a reconnecting client)
            engine.continue_from(origin[0])
        else:
            origin.append(engine)
        engines.append(engine)
        return engine

    merger = ReportMerger(str(cassette))

    def retire(engine: Engine) -> None:  # an ended session's: fold its report in, then forget it
        engines.remove(engine)  # type: ignore[arg-type]
        merger.add(engine)  # type: ignore[arg-type]

    first = factory()
    engines.clear()
    _serve_engines(
        factory, retire, host, port, allow_remote, sse, on_event, on_ready, on_server, stop, guard,
        also=redirect_paths(first),
    )  # fmt: skip
    if not merger.count:  # no session came: the report of the cassette as it stands
        merger.add(first)
    return merger.result()


def run_http_session(
    cassette: str | Path,
    *,
    mode: str = "none",
    command: Sequence[str] = (),
    url: str | None = None,
    headers: Sequence[str] = (),
    host: str = "127.0.0.1",
    port: int = 0,
    allow_remote: bool = False,
    sse: SseMode = "auto",
    report_path: str | Path | None = None,
    options: ReplayOptions | None = None,
    emit_tape: str | Path | None = None,
    on_event: Callable[[str], None] | None = None,
    on_ready: Callable[[str], None] | None = print_url,
    on_server: Callable[[HttpServer], None] | None = None,
    stop: StopSignals | None = None,
    guard: GuardSettings | None = None,
    plan: SessionPlan | None = None,
) -> ReplayOutcome:
    """``replay --http`` in any record mode: serve what :func:`~harn_mcp_mock.cassette.modes.plan_session`
    plans over Streamable HTTP until a stop signal or ``server.stop()``.

    The live server is ``command`` (a stdio server) or ``url`` (a Streamable HTTP server, with
    ``headers``, ``NAME:VALUE``). A replay serves ``cassette`` (:func:`run_replay_http`);
    a recording forwards every session's messages to the live server and writes the cassette
    when the serving stops (``url``: the recording reverse proxy; ``command``: one recorded
    session, :class:`~harn_mcp_mock.http.live.RecordEngine`); episodes replay what the cassette
    holds and forward the rest (:class:`~harn_mcp_mock.http.live.EpisodesEngine`), appending it.
    ``emit_tape``: also write every exchange to an event tape, whatever the session is (a
    recording tapes what the clients and the live server exchanged; episodes every exchange
    served, replayed or live), redacted again at the end with what the redactors learned.
    ``plan``: one made already (the pytest plugin's; then ``mode`` is not read again)."""
    from harn_mcp_mock.cassette.modes import RecordMode, SessionKind, parse_record_mode, plan_session
    from harn_mcp_mock.errors import UsageError
    from harn_mcp_mock.replay.run import ReplayOutcome

    record_mode = parse_record_mode(mode)
    if command and url is not None:
        raise UsageError(
            "give the live server once: its command after `--`, or --url, not both", where="--url"
        )
    live = bool(command) or url is not None
    if live and record_mode is RecordMode.NONE and plan is None:
        raise UsageError(
            "--mode none never starts a server: drop the live server (`--` or --url), or pick a mode that records"
        )
    if headers and url is None:
        raise UsageError("--header applies to --url only", where="--header")
    opts = options if options is not None else ReplayOptions()
    if plan is None:
        plan = plan_session(
            record_mode,
            cassette,
            live=live,
            needs_live="the live server: its command after `--`, or --url URL",
            on_wait=on_event,
        )
    with plan:
        if plan.kind is SessionKind.REPLAY:
            report = run_replay_http(
                cassette,
                host=host,
                port=port,
                allow_remote=allow_remote,
                sse=sse,
                report_path=report_path,
                options=opts,
                on_event=on_event,
                on_ready=on_ready,
                on_server=on_server,
                stop=stop,
                guard=guard,
                emit_tape=emit_tape,
            )
            return ReplayOutcome(plan.mode, report)
        if opts.fault_rules:
            raise UsageError("--faults fires on a replay, not on a session that records", where="--faults")
        server_args = (host, port, allow_remote, sse, on_event, on_ready, on_server, stop, guard)
        if plan.kind is SessionKind.EPISODES:
            from harn_mcp_mock.upstream.http import parse_header_option

            parsed = dict(parse_header_option(h) for h in headers)
            report = _serve_episodes(
                Path(cassette), list(command), url, parsed, opts, emit_tape, *server_args
            )
            if report_path is not None:
                from harn_mcp_mock.store.cas import atomic_write

                data = orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2) + b"\n"
                atomic_write(Path(report_path), data)
            return ReplayOutcome(plan.mode, report)
        if url is not None:
            from harn_mcp_mock.http.record_proxy import record_http
            from harn_mcp_mock.options import RecordOptions

            recorded, _proxy = record_http(
                cassette,
                url,
                RecordOptions(opts.redact_policy, headers=tuple(headers)),
                host=host,
                port=port,
                allow_remote=allow_remote,
                on_ready=on_ready,
                on_event=on_event,
                on_server=on_server,
                guard=guard,
                claim=plan.claim,
                stop=stop,
                emit_tape=emit_tape,
            )
            _wrote(on_event, cassette, recorded)
            return ReplayOutcome(plan.mode, None)
        recorded = _serve_recording(Path(cassette), list(command), opts, plan.claim, emit_tape, *server_args)
        _wrote(on_event, cassette, recorded)
        return ReplayOutcome(plan.mode, None)


def _wrote(on_event: Callable[[str], None] | None, path: str | Path, cassette: Cassette) -> None:
    if on_event is not None:
        on_event(f"recorded {path} ({len(cassette.messages)} messages)")


def _serve_engines(
    factory: Callable[[], Engine],
    retire: Callable[[Engine], None],
    host: str,
    port: int,
    allow_remote: bool,
    sse: SseMode,
    on_event: Callable[[str], None] | None,
    on_ready: Callable[[str], None] | None,
    on_server: Callable[[HttpServer], None] | None,
    stop: StopSignals | None,
    guard: GuardSettings | None,
    also: Iterable[str] = (),
) -> None:
    guard = guard or GuardSettings.for_host(host)
    app, endpoint = build_app(factory, sse=sse, on_event=on_event, also=also, guard=guard)
    endpoint.on_retire = retire
    server = HttpServer(app, host=host, port=port, allow_remote=allow_remote, on_shutdown=endpoint.close)
    if on_server is not None:
        on_server(server)
    server.run(on_ready, stop=stop)
    for engine in list(endpoint.engines):  # the sessions still open when the serving stopped
        retire(engine)


def _serve_episodes(
    cassette: Path,
    command: list[str],
    url: str | None,
    headers: dict[str, str],
    options: ReplayOptions,
    emit_tape: str | Path | None,
    *server_args: Any,
) -> ReplayReport:
    """``new_episodes`` over HTTP: each session replays the cassette and forwards its misses
    to a live server of its own; an ended session's new messages are appended at once.
    ``emit_tape``: every session's exchanges, replayed or live, on one tape."""
    with contextlib.ExitStack() as stack:
        tape = _tape(stack, emit_tape, cassette, ["replay", "--http", "--mode", "new_episodes"])
        return _serve_sessions(cassette, command, url, headers, options, tape, *server_args)


def _serve_sessions(
    cassette: Path,
    command: list[str],
    url: str | None,
    headers: dict[str, str],
    options: ReplayOptions,
    tape: RecordingTape | None,
    *server_args: Any,
) -> ReplayReport:
    from harn_mcp_mock.http.live import EpisodesEngine
    from harn_mcp_mock.replay.episodes import NewEpisodes, tape_server_name

    on_event = server_args[4]
    merger = ReportMerger(str(cassette))
    count = [0]
    retired: set[int] = set()

    def factory() -> Engine:
        session = NewEpisodes(cassette, command, options=options, on_event=on_event, url=url, headers=headers)
        if tape is not None:
            session.observer = tape.observer(tape_server_name(session.engine.cassette, cassette))
            tape.redactors.extend(session.redactors)
        count[0] += 1
        if count[0] > 1:  # sessions record side by side: one scratch recording each
            session.scratch = session.scratch.with_name(f"{count[0]}.{session.scratch.name}")
        return EpisodesEngine(session)

    def retire(engine: Engine) -> None:
        if id(engine) in retired:
            return
        retired.add(id(engine))
        assert isinstance(engine, EpisodesEngine)
        try:
            merger.add(engine)  # type: ignore[arg-type]  # finish(): stops its live server, appends
        except BaseException:
            engine.abort()
            raise

    _serve_engines(factory, retire, *server_args)
    return merger.result()


def _serve_recording(
    cassette: Path,
    command: list[str],
    options: ReplayOptions,
    claim: CassetteClaim | None,
    emit_tape: str | Path | None,
    *server_args: Any,
) -> Cassette:
    """Record ``command`` (a stdio server) while serving its first session over HTTP; later
    sessions are answered with an error saying so. The cassette is written when that session
    ends (``DELETE``) or the serving stops. ``emit_tape``: its exchanges on a tape too."""
    from harn_mcp_mock.cassette.claim import recording_claim
    from harn_mcp_mock.errors import ServerError
    from harn_mcp_mock.session.open import open_record
    from harn_mcp_mock.session.record import RecordEngine

    with recording_claim(cassette, claim), contextlib.ExitStack() as stack:
        tape = _tape(stack, emit_tape, cassette, ["replay", "--http"])  # (the command unredacted: not here)
        recording: list[RecordEngine] = []

        def factory() -> Engine:
            if recording and recording[0].only_probed:  # the probe's session-less engine, then
                return recording[0]  # the same client's initialize: one stdio session, as over stdio
            if recording:
                return _Refusing(
                    f"this server records one session of the stdio server into {cassette.name}; "
                    "restart it (or use --url for a Streamable HTTP server) to record another"
                )
            try:
                recording.append(
                    open_record(command, cassette, policy_path=options.redact_policy, observe=observe)
                )
            except ServerError as exc:  # the session is told; a later one may try again
                return _Refusing(f"the live server could not be started: {exc}")
            return recording[0]

        def observe(shown: list[str], redactor: MessageRedactor) -> Any:
            if tape is None:
                return None
            tape.redactors.append(redactor)
            return tape.observer(Path(shown[0]).name)  # the server's name, as `record --emit-tape` gives it

        def retire(engine: Engine) -> None:
            if isinstance(engine, RecordEngine) and engine.cassette is None:
                try:
                    engine.finish()
                except BaseException:
                    engine.abort()
                    raise

        _serve_engines(factory, retire, *server_args)
        if recording and recording[0].nothing is not None:
            raise recording[0].nothing
        if not recording or recording[0].cassette is None:
            from harn_mcp_mock.errors import NothingRecordedError

            raise NothingRecordedError(
                "no client opened a session: nothing was recorded (the cassette is as it was)", path=cassette
            )
        return recording[0].cassette


def _tape(
    stack: contextlib.ExitStack, emit_tape: str | Path | None, cassette: Path, argv: list[str]
) -> RecordingTape | None:
    """The tape at ``emit_tape`` (None without one), closed when ``stack`` unwinds."""
    if emit_tape is None:
        return None
    from harn_mcp_mock.session.tape import RecordingTape

    tape = RecordingTape(emit_tape, script_path=str(cassette), argv=argv)
    stack.callback(tape.close)
    return tape


class _Refusing:
    """The engine of a session that cannot be recorded: every request gets an error saying why
    (a stdio server is recorded one session at a time; the server could not be started)."""

    def __init__(self, text: str) -> None:
        self.cassette = None
        self.text = text

    def receive(self, message: Any) -> list[Out]:
        if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message:
            error = {"code": INVALID_REQUEST, "message": self.text}
            return [Out({"jsonrpc": "2.0", "id": message["id"], "error": error})]
        return []
